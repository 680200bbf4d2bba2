/* The Iceberg REST catalog's names (layout/iceberg.c), the keys a store
 * takes for it (the unit separator), the empty folders a store prunes and
 * the request targets fdl serve lets through (serve/uri.c). */
#include "test.h"
#include "../../src/layout/iceberg.h"
#include "../../src/serve/serve.h"
#include "../../src/store/store.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void names(t_ctx *t)
{
	const char *ok[] = {"main", "v1.0", "feature/x", "release/2025/q1", "_private", "a-b_c", "tables-2", NULL};
	const char *no[] = {"a+b", "caf\xc3\xa9", "a b", "x/tables", "tables", "index.html", "a/index.html", "", "a%2F",
			    NULL};
	for (const char **r = ok; *r; r++)
		CHECK(t, fdl_iceberg_namespace_ok(*r));
	for (const char **r = no; *r; r++)
		CHECK(t, !fdl_iceberg_namespace_ok(*r));
	struct {
		const char *name, *want;
	} cases[] = {{"people", "people"}, {"v1.2", "v1.2"}, {"my table", "_7"}, {"_x", "_7"}, {".hidden", "_7"},
		     {"index.html", "_7"}, {"Caf\xc3\xa9", "_7"}, {"a/b", "_7"}, {"tables", "tables"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = fdl_iceberg_catalog_name(cases[i].name, 7);
		CHECK(t, got && !strcmp(got, cases[i].want));
		free(got);
	}
	char *k = fdl_iceberg_catalog_key("0123456789abcdef", "v1/namespaces/main\x1fgeo", true, true);
	CHECK(t, k && !strcmp(k, "iceberg/0123456789abcdef/catalog/v1/namespaces/main\x1fgeo/index.html"));
	free(k);
	k = fdl_iceberg_catalog_key("0123456789abcdef", "v1/namespaces/main", true, false); /* a bucket */
	CHECK(t, k && !strcmp(k, "iceberg/0123456789abcdef/catalog/v1/namespaces/main"));
	free(k);
	k = fdl_iceberg_catalog_key("0123456789abcdef", "v1/config", false, true);
	CHECK(t, k && !strcmp(k, "iceberg/0123456789abcdef/catalog/v1/config"));
	free(k);
}

/* A key may hold the unit separator and no other control character; the
 * stricter check of paths read from records refuses it too. */
static void unit_separator(t_ctx *t)
{
	char *dir = t_tempdir();
	fdl_store *s = NULL;
	fdl_error err;
	fdl_buf b = {0};
	CHECK(t, fdl_store_open(&s, dir, &err) == 0);
	CHECK(t, fdl_store_put_if_absent(s, "c/main\x1fgeo/index.html", "{}", 2, &err) == 0);
	CHECK(t, fdl_store_get(s, "c/main\x1fgeo/index.html", 10, &b, NULL, &err) == 0 && b.len == 2);
	CHECK(t, fdl_store_put_if_absent(s, "c/a\x01" "b", "x", 1, &err) == FDL_EINVALID);
	CHECK(t, fdl_store_put_if_absent(s, "c/a\nb", "x", 1, &err) == FDL_EINVALID);
	CHECK(t, fdl_path_check_relative("a\x1f" "b", "a path", &err) == FDL_EINVALID);
	CHECK(t, fdl_path_check_key("a\x1f" "b", "a key", &err) == 0);
	fdl_buf_free(&b);
	fdl_store_free(s);
	fdl_rm_rf(dir);
	free(dir);
}

/* Empty folders go, a folder holding a file stays, a symlink is never followed. */
static void prune(t_ctx *t)
{
	char *dir = t_tempdir(), *outside = t_tempdir();
	fdl_store *s = NULL;
	fdl_error err;
	CHECK(t, fdl_store_open(&s, dir, &err) == 0);
	CHECK(t, fdl_store_put_if_absent(s, "c/a/b/one", "1", 1, &err) == 0);
	CHECK(t, fdl_store_put_if_absent(s, "c/keep/two", "2", 2, &err) == 0);
	char *empty = fdl_asprintf("%s/empty", outside), *link = fdl_asprintf("%s/c/link", dir);
	CHECK(t, mkdir(empty, 0755) == 0 && symlink(empty, link) == 0);
	CHECK(t, fdl_store_del(s, "c/a/b/one", &err) == 0);
	CHECK(t, fdl_store_prune(s, "c", &err) == 0);
	struct stat st;
	char *gone = fdl_asprintf("%s/c/a", dir), *kept = fdl_asprintf("%s/c/keep/two", dir);
	CHECK(t, stat(gone, &st) != 0);
	CHECK(t, stat(kept, &st) == 0);
	CHECK(t, lstat(link, &st) == 0 && stat(empty, &st) == 0); /* neither the link nor what it names */
	CHECK(t, fdl_store_prune(s, "nothing/here", &err) == 0);
	free(empty);
	free(link);
	free(gone);
	free(kept);
	fdl_store_free(s);
	fdl_rm_rf(dir);
	fdl_rm_rf(outside);
	free(dir);
	free(outside);
}

/* A version's snapshot id: the sha256 of its id, top bits 01 (the values
 * Python's hashlib gives), positive and above every seq. */
static void snapshot_ids(t_ctx *t)
{
	fdl_error err;
	int64_t a = 0, b = 0;
	CHECK(t, fdl_iceberg_snapshot_id(&a, "01a24cd4-c3f3-774d-bc7d-184d465b2c5c", &err) == 0);
	CHECK(t, a == INT64_C(8816408134552094459)); /* fa5a2c7caed786fb */
	CHECK(t, fdl_iceberg_snapshot_id(&b, "00000000-0000-7000-8000-000000000000", &err) == 0);
	CHECK(t, b == INT64_C(6833529864787088010)); /* 1ed59334d8a8528a: the top bit set */
	CHECK(t, a >= INT64_C(0x4000000000000000) && b >= INT64_C(0x4000000000000000));
}

static void targets(t_ctx *t)
{
	CHECK(t, fdl_http_uri_check("/iceberg/x/catalog/v1/namespaces/main%1Fgeo/tables") == 0);
	CHECK(t, fdl_http_uri_check("/iceberg/x/catalog/v1/namespaces/feature%2Fx") == 0);
	CHECK(t, fdl_http_uri_check("/a%01b") != 0);
	CHECK(t, fdl_http_uri_check("/a%1Fb?x=%1F") != 0); /* the query: no reason to have one */
	CHECK(t, fdl_http_uri_check("/a\x1f" "b") != 0);   /* raw, never */
	CHECK(t, fdl_serve_path_allowed("data", "iceberg/x/catalog/v1/namespaces/main\x1fgeo") == 1);
	CHECK(t, fdl_serve_path_allowed("data", "iceberg/x/../../etc") == -1);
}

const t_case iceberg_tests[] = {
	{"iceberg catalog: namespace and table names, keys on a folder and a bucket", names},
	{"store keys may hold the unit separator, no other control character", unit_separator},
	{"folder store: empty folders pruned, none followed through a symlink", prune},
	{"serve: %1F in a path, never raw or in a query", targets},
	{"iceberg views: a version's snapshot id from its id", snapshot_ids},
	{NULL, NULL},
};
