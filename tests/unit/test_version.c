/* version.json validation: one case per must field missing and mistyped,
 * the id/directory rule, and the seq/parents rules. */
#include "test.h"
#include "../../src/layout/files_scan.h"
#include "../../src/layout/layout.h"

#include <stdlib.h>

#define ID "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"
#define PARENT "019a2f10-0c4d-7e88-a1b2-55c0d9e3f7aa"
#define SHA "9f2c000000000000000000000000000000000000000000000000000000000000"

static json_t *valid_doc(void)
{
	return json_pack("{s:s, s:s, s:i, s:[s], s:s, s:{s:s}, s:s,"
			 " s:{s:s, s:s, s:i, s:s}, s:{s:s, s:i, s:s}, s:{s:s, s:i, s:[i, i]},"
			 " s:{s:s, s:i, s:s}, s:[], s:[], s:{}}",
			 "fdl", "0.1", "id", ID, "seq", 12, "parents", PARENT, "created_at", "2026-10-30T09:00:00Z",
			 "author", "name", "example", "message", "Add the final 2025 figures",
			 "catalog", "path", "ducklake.duckdb", "storage", "duckdb-v1.5.0", "bytes", 4194304, "sha256", SHA,
			 "dataset", "path", "dataset.json", "bytes", 2048, "sha256", SHA,
			 "ducklake", "format", "1.0", "snapshot_id", 345, "snapshots", 301, 345,
			 "files", "path", "files.json", "bytes", 1536, "sha256", SHA,
			 "changes", "inputs", "annotations");
}

/* Parse `doc`; returns the code, and the message in msg. */
static int parse(json_t *doc, const char *dir, char *msg, size_t msz)
{
	char *text = json_dumps(doc, 0);
	fdl_version *v = NULL;
	fdl_error err = {0};
	int rc = fdl_version_parse(&v, text, strlen(text), dir, "versions/x/version.json", &err);
	snprintf(msg, msz, "%s", rc ? err.message : "");
	fdl_version_free(v);
	free(text);
	json_decref(doc);
	return rc;
}

/* The object holding the last key of a dotted path ("catalog.path"). */
static json_t *parent_of(json_t *doc, const char *path, const char **last)
{
	const char *dot = strchr(path, '.');
	if (!dot) {
		*last = path;
		return doc;
	}
	*last = dot + 1;
	return json_object_getn(doc, path, (size_t)(dot - path));
}

static const char *must_fields[] = {
	"fdl", "id", "seq", "parents", "created_at", "author", "author.name", "message",
	"catalog", "catalog.path", "catalog.bytes", "catalog.sha256", "catalog.storage",
	"ducklake", "ducklake.format", "ducklake.snapshot_id", "ducklake.snapshots", NULL,
};

static void valid(t_ctx *t)
{
	json_t *d = valid_doc();
	char *text = json_dumps(d, 0);
	json_decref(d);
	fdl_version *v = NULL;
	fdl_error err = {0};
	CHECK(t, fdl_version_parse(&v, text, strlen(text), ID, "v.json", &err) == 0);
	if (v) {
		CHECK(t, !strcmp(fdl_version_id(v), ID));
		CHECK(t, fdl_version_seq(v) == 12);
		CHECK(t, fdl_version_parent_count(v) == 1);
		CHECK(t, !strcmp(fdl_version_parent(v, 0), PARENT));
		CHECK(t, fdl_version_parent(v, 1) == NULL);
		CHECK(t, !strcmp(fdl_version_author_name(v), "example"));
		CHECK(t, fdl_version_author_email(v) == NULL);
		CHECK(t, fdl_version_catalog_bytes(v) == 4194304);
		CHECK(t, fdl_version_snapshot_id(v) == 345);
		CHECK(t, !strcmp(fdl_version_ducklake_format(v), "1.0"));
	}
	fdl_version_free(v);
	free(text);
}

static void each_must_field_missing(t_ctx *t)
{
	for (const char **f = must_fields; *f; f++) {
		json_t *doc = valid_doc();
		const char *last;
		json_t *holder = parent_of(doc, *f, &last);
		json_object_del(holder, last);
		char msg[2048];
		int rc = parse(doc, ID, msg, sizeof msg);
		CHECK(t, rc == FDL_EINVALID);
		char want[160];
		snprintf(want, sizeof want, "'%s' is missing", *f);
		CHECK_CONTAINS(t, msg, want);
		CHECK_CONTAINS(t, msg, "versions/x/version.json");
	}
}

static void each_must_field_mistyped(t_ctx *t)
{
	for (const char **f = must_fields; *f; f++) {
		json_t *doc = valid_doc();
		const char *last;
		json_t *holder = parent_of(doc, *f, &last);
		json_t *old = json_object_get(holder, last);
		/* a string where something else is expected, else a number */
		json_object_set_new(holder, last, json_is_string(old) ? json_integer(7) : json_string("oops"));
		char msg[2048];
		int rc = parse(doc, ID, msg, sizeof msg);
		CHECK(t, rc == FDL_EINVALID);
		char want[160];
		snprintf(want, sizeof want, "'%s'", *f);
		CHECK_CONTAINS(t, msg, want);
		CHECK_CONTAINS(t, msg, "expected");
	}
}

static void id_must_match_directory(t_ctx *t)
{
	char msg[2048];
	CHECK(t, parse(valid_doc(), "019a3c4e-7b21-7f3a-9c55-000000000000", msg, sizeof msg) == FDL_EINVALID);
	CHECK_CONTAINS(t, msg, "directory");
	CHECK_CONTAINS(t, msg, "refusing");
}

static void unknown_fields_ignored(t_ctx *t)
{
	json_t *doc = valid_doc();
	json_object_set_new(doc, "future_field", json_pack("{s:i}", "x", 1));
	char msg[2048];
	CHECK(t, parse(doc, ID, msg, sizeof msg) == 0);
}

static void dataset_optional_but_checked(t_ctx *t)
{
	char msg[2048];
	json_t *doc = valid_doc();
	json_object_del(doc, "dataset");
	CHECK(t, parse(doc, ID, msg, sizeof msg) == 0); /* versions from before it was required */
	doc = valid_doc();
	json_object_set_new(json_object_get(doc, "dataset"), "sha256", json_string("short"));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);
	CHECK_CONTAINS(t, msg, "dataset.sha256");
}

static void seq_and_parents_rules(t_ctx *t)
{
	char msg[2048];
	json_t *doc = valid_doc(); /* first version: no parent, seq 1 */
	json_object_set_new(doc, "parents", json_array());
	json_object_set_new(doc, "seq", json_integer(1));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == 0);

	doc = valid_doc(); /* no parent but seq 12 */
	json_object_set_new(doc, "parents", json_array());
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);
	CHECK_CONTAINS(t, msg, "seq");

	doc = valid_doc(); /* a parent but seq 1 */
	json_object_set_new(doc, "seq", json_integer(1));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);

	doc = valid_doc(); /* seq 0 */
	json_object_set_new(doc, "seq", json_integer(0));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);

	doc = valid_doc(); /* parents of any length are accepted (future merges) */
	json_array_append_new(json_object_get(doc, "parents"), json_string(ID));
	json_array_append_new(json_object_get(doc, "parents"), json_string(PARENT));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == 0);

	doc = valid_doc(); /* a parent that is not an id */
	json_array_append_new(json_object_get(doc, "parents"), json_string("../x"));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);
	CHECK_CONTAINS(t, msg, "parents[1]");
}

static void values_checked(t_ctx *t)
{
	char msg[2048];
	json_t *doc = valid_doc();
	json_object_set_new(doc, "created_at", json_string("2026-10-30 09:00:00+09:00"));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);
	CHECK_CONTAINS(t, msg, "created_at");

	doc = valid_doc();
	json_object_set_new(json_object_get(doc, "catalog"), "path", json_string("../../etc/passwd"));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);
	CHECK_CONTAINS(t, msg, "catalog.path");

	doc = valid_doc();
	json_object_set_new(json_object_get(doc, "catalog"), "path", json_string("/abs/ducklake.duckdb"));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);

	doc = valid_doc();
	json_object_set_new(json_object_get(doc, "catalog"), "bytes", json_integer(-1));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);

	doc = valid_doc();
	json_object_set_new(json_object_get(doc, "ducklake"), "snapshots", json_pack("[i]", 345));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);
	CHECK_CONTAINS(t, msg, "ducklake.snapshots");

	doc = valid_doc();
	json_object_set_new(json_object_get(doc, "ducklake"), "snapshots", json_pack("[i, i]", 301, 300));
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);

	doc = valid_doc();
	json_object_set_new(doc, "id", json_string("019A3C4E-7B21-7F3A-9C55-2F0D8E1A4B6C"));
	CHECK(t, parse(doc, NULL, msg, sizeof msg) == FDL_EINVALID);

	doc = valid_doc();
	json_object_set_new(doc, "changes", json_object());
	CHECK(t, parse(doc, ID, msg, sizeof msg) == FDL_EINVALID);
	CHECK_CONTAINS(t, msg, "changes");
}

static void not_json(t_ctx *t)
{
	fdl_version *v = NULL;
	fdl_error err = {0};
	CHECK(t, fdl_version_parse(&v, "{\"fdl\": ", 8, ID, "v.json", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "line 1");
	CHECK(t, fdl_version_parse(&v, "[1]", 3, ID, "v.json", &err) == FDL_EINVALID);
	const char *dup = "{\"fdl\":\"0.1\",\"fdl\":\"0.2\"}";
	CHECK(t, fdl_version_parse(&v, dup, strlen(dup), ID, "v.json", &err) == FDL_EINVALID);
	CHECK(t, v == NULL);
}

/* files.json's sha256 (fdl's field): optional; when present a map of clean
 * relative paths to 64 lower-case hex digits. */
static void files_json_hashes(t_ctx *t)
{
	fdl_error err;
	const char *tables = "{\"tables\": {\"main.t\": {\"files\": [{\"path\": \"main/t/a.parquet\", \"rows\": 1, "
			     "\"bytes\": 9}]}}";
	struct {
		const char *tail;
		int rc;
		const char *says;
	} cases[] = {
		{"}", 0, NULL},
		{", \"sha256\": {\"main/t/a.parquet\": \"" SHA "\"}}", 0, NULL},
		{", \"sha256\": []}", FDL_EINVALID, "field 'sha256' is not an object"},
		{", \"sha256\": {\"main/t/a.parquet\": \"9F2C\"}}", FDL_EINVALID, "is not 64 lower-case hex digits"},
		{", \"sha256\": {\"main/t/a.parquet\": 7}}", FDL_EINVALID, "is not 64 lower-case hex digits"},
		{", \"sha256\": {\"../x.parquet\": \"" SHA "\"}}", FDL_EINVALID, "'..'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *text = fdl_asprintf("%s%s", tables, cases[i].tail);
		json_t *doc = json_loads(text, 0, NULL);
		CHECK(t, doc != NULL);
		CHECK(t, fdl_files_json_check(doc, "files.json", &err) == cases[i].rc);
		if (cases[i].says)
			CHECK_CONTAINS(t, err.message, cases[i].says);
		json_decref(doc);
		free(text);
	}
}

/* files.json's data files read from the text (verify's default depth)
 * are what jansson's tree gives, for fdl's compact layout and another
 * writer's indented one; an escape in a kept string or text that is not
 * JSON is left to jansson (1). */
static void files_scan_matches_the_tree(t_ctx *t)
{
	static const char *const texts[] = {
		"{\"tables\":{\"main.t\":{\"renamed_columns\":false,\"files\":[{\"path\":\"main/t/b.parquet\",\"rows\":2,"
		"\"bytes\":812,\"footer_bytes\":400,\"deletes\":{\"path\":\"main/t/b-delete.parquet\",\"rows\":1,"
		"\"bytes\":90}},{\"path\":\"main/t/a.parquet\",\"rows\":1,\"bytes\":700,\"deletes\":null}],"
		"\"columns\":[{\"name\":\"k\",\"field_id\":1,\"type\":\"BIGINT\",\"initial_default\":\"4\\\"2\"}]},"
		"\"main.e\":{\"files\":[]}},\"sha256\":{\"main/t/b.parquet\":\"" SHA "\",\"main/t/a.parquet\":\"" SHA "\"}}",
		"{ \"sha256\": { \"main/t/z.parquet\": \"" SHA "\" },\n  \"tables\": { \"s.u\": { \"files\": [ { \"bytes\": 5,\n"
		"    \"path\": \"main/u/x.parquet\", \"x\": [1, 2.5e3, true, null, {\"y\": [\"\\u00e9\"]}] } ] } } }\n",
		"{\"tables\":{}}",
	};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		fdl_files_scan a, b;
		fdl_error err;
		json_t *doc = json_loads(texts[i], 0, NULL);
		CHECK(t, doc != NULL);
		bool plain = false;
		CHECK(t, fdl_files_scan_text(&plain, &a, texts[i], strlen(texts[i]), &err) == 0 && plain);
		CHECK(t, fdl_files_scan_tree(&b, doc, &err) == 0);
		CHECK(t, a.nlive == b.nlive && a.nmap == b.nmap && a.has_map == b.has_map);
		for (size_t k = 0; k < a.nlive && k < b.nlive; k++) {
			CHECK(t, !strcmp(fdl_files_str(&a, a.live[k].table), fdl_files_str(&b, b.live[k].table)));
			CHECK(t, !strcmp(fdl_files_str(&a, a.live[k].path), fdl_files_str(&b, b.live[k].path)));
			CHECK(t, a.live[k].bytes == b.live[k].bytes);
		}
		for (size_t k = 0; k < a.nmap && k < b.nmap; k++) {
			CHECK(t, !strcmp(fdl_files_str(&a, a.map[k].path), fdl_files_str(&b, b.map[k].path)));
			CHECK(t, !strcmp(fdl_files_str(&a, a.map[k].sha), fdl_files_str(&b, b.map[k].sha)));
		}
		if (i == 0)
			CHECK(t, a.nlive == 3 && a.nmap == 2 && a.live[1].bytes == 90 &&
				 !strcmp(fdl_files_str(&a, a.map[0].path), "main/t/a.parquet"));
		fdl_files_scan_free(&a);
		fdl_files_scan_free(&b);
		json_decref(doc);
	}
	static const char *const other[] = {"{\"tables\":{\"main.t\":{\"files\":[{\"path\":\"a\\/b.parquet\"}]}}}",
					    "{\"tables\":", "[1]", "{\"tables\":{}} x", "{\"sha256\":{\"a\":1}}",
					    "{\"tables\":{\"t\":{\"files\":[{\"path\":\"a\",\"bytes\":1.5}]}}}"};
	for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
		fdl_files_scan a;
		fdl_error err;
		bool plain = true;
		CHECK(t, fdl_files_scan_text(&plain, &a, other[i], strlen(other[i]), &err) == 0 && !plain);
		CHECK(t, a.nlive == 0 && a.live == NULL);
	}
}

const t_case version_tests[] = {
	{"version.json: the seed's example is valid", valid},
	{"version.json: each must field missing is refused", each_must_field_missing},
	{"version.json: each must field mistyped is refused", each_must_field_mistyped},
	{"version.json: id must equal the directory", id_must_match_directory},
	{"version.json: unknown fields are ignored", unknown_fields_ignored},
	{"version.json: dataset may be absent, is checked when present", dataset_optional_but_checked},
	{"version.json: seq and parents rules", seq_and_parents_rules},
	{"version.json: values are checked", values_checked},
	{"version.json: not JSON, not an object, duplicate keys", not_json},
	{"files.json: fdl's sha256 of the data files is checked when present", files_json_hashes},
	{"files.json: its data files read from the text are jansson's", files_scan_matches_the_tree},
	{NULL, NULL},
};
