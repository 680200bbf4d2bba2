#include "test.h"
#include "../../src/layout/keys.h"

#include <stdlib.h>

static void ref_names(t_ctx *t)
{
	fdl_error err;
	const char *good[] = {"main", "feature/x", "release-2026.1", "a_b", "v1", NULL};
	const char *bad[] = {"", "HEAD", "@", "a..b", "a//b", "/a", "a/", "a.", ".hidden", "a/.x", "x.lock",
			     "a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", "a\\b", "a@{b", "-a", "a\tb", NULL};
	for (const char **g = good; *g; g++)
		CHECK(t, fdl_ref_name_check(*g, &err) == 0);
	for (const char **b = bad; *b; b++) {
		int rc = fdl_ref_name_check(*b, &err);
		CHECK(t, rc == FDL_EINVALID);
		if (rc != FDL_EINVALID)
			fprintf(stderr, "    accepted bad ref name '%s'\n", *b);
	}
	char longname[300];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	CHECK(t, fdl_ref_name_check(longname, &err) == FDL_EINVALID);
}

static void head_parse(t_ctx *t)
{
	fdl_error err;
	char *b = NULL;
	CHECK(t, fdl_head_parse(&b, "ref: refs/heads/main\n", 21, &err) == 0 && b && !strcmp(b, "main"));
	free(b);
	b = NULL;
	CHECK(t, fdl_head_parse(&b, "ref: refs/heads/dev", 19, &err) == 0 && b && !strcmp(b, "dev"));
	free(b);
	CHECK(t, fdl_head_parse(&b, "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c\n", 37, &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "HEAD");
	CHECK(t, fdl_head_parse(&b, "ref: refs/heads/../x\n", 21, &err) == FDL_EINVALID);
	CHECK(t, fdl_head_parse(&b, "ref: refs/heads/a\nref: refs/heads/b\n", 36, &err) == FDL_EINVALID);
}

static void paths(t_ctx *t)
{
	fdl_error err;
	CHECK(t, fdl_path_check_relative("main/t/ducklake-1.parquet", "p", &err) == 0);
	const char *bad[] = {"", "/a", "../a", "a/../b", "a/./b", "a\\b", "a//b", "https://x/y", "a\nb", NULL};
	for (const char **b = bad; *b; b++)
		CHECK(t, fdl_path_check_relative(*b, "data file path", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "data file path");
	char longp[1100];
	memset(longp, 'a', sizeof longp - 1);
	longp[sizeof longp - 1] = '\0';
	CHECK(t, fdl_path_check_relative(longp, "p", &err) == FDL_EINVALID);
}

static void times(t_ctx *t)
{
	CHECK(t, fdl_time_is_iso_utc("2026-10-30T09:00:00Z"));
	CHECK(t, fdl_time_is_iso_utc("2026-10-30T09:00:00.123456Z"));
	CHECK(t, fdl_time_is_iso_utc("2026-10-30T09:00:00+00:00"));
	CHECK(t, !fdl_time_is_iso_utc("2026-10-30T09:00:00+09:00"));
	CHECK(t, !fdl_time_is_iso_utc("2026-10-30 09:00:00Z"));
	CHECK(t, !fdl_time_is_iso_utc("2026-10-30"));
	char now[32];
	fdl_error err;
	CHECK(t, fdl_time_now_iso(now, &err) == 0 && fdl_time_is_iso_utc(now));
}

static void closest(t_ctx *t)
{
	const char *keys[] = {"name", "title", "licenses", "keywords", "sources", NULL};
	CHECK(t, fdl_closest("licences", keys, 5) == keys[2]);
	CHECK(t, fdl_closest("tilte", keys, 5) == keys[1]); /* a swap is one edit */
	CHECK(t, fdl_closest("keyword", keys, 5) == keys[3]);
	CHECK(t, fdl_closest("homepage", keys, 5) == NULL);
	CHECK(t, fdl_closest("nmae", keys, 5) == keys[0]);
	CHECK(t, fdl_closest("", keys, 5) == NULL);
	const char *refs[] = {"main", "correction", "v2025"};
	CHECK(t, fdl_closest("corection", refs, 3) == refs[1]);
	CHECK(t, fdl_closest("w", refs, 3) == NULL);
	CHECK(t, fdl_closest("main", refs, 3) == NULL); /* the word itself is not a suggestion */
}

/* The name a ref spec starts from: the history index fdl log reads. */
static void spec_names(t_ctx *t)
{
	const struct {
		const char *spec, *name;
	} cases[] = {
		{"main", "main"}, {"main:12", "main"}, {"refs/heads/main", "main"}, {"refs/heads/main:3", "main"},
		{"refs/tags/v1", "v1"}, {"feature/x:2", "feature/x"}, {"12", "12"}, {"refs/heads/:2", "refs/heads/"},
		{NULL, NULL}, {"", NULL}, {"HEAD", NULL}, {"@", NULL}, {":4", NULL}, {"HEAD:4", NULL},
		{"019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c", NULL}, {"main~2", "main"}, {"main:3^", "main"},
		{"feature/x^2", "feature/x"}, {"HEAD~1", NULL}, {"@~1", NULL}, {"~1", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t n = 0;
		const char *got = fdl_ref_spec_name(cases[i].spec, &n);
		bool ok = cases[i].name ? got && n == strlen(cases[i].name) && !strncmp(got, cases[i].name, n) : !got;
		CHECK(t, ok);
		if (!ok)
			fprintf(stderr, "    spec '%s': got '%.*s'\n", cases[i].spec ? cases[i].spec : "(null)",
				got ? (int)n : 6, got ? got : "(null)");
	}
	CHECK(t, !strcmp(fdl_ref_dir(FDL_REF_BRANCH), "refs/heads") && !strcmp(fdl_ref_dir(FDL_REF_TAG), "refs/tags"));
}

/* What a key is: the read cache and the server's Cache-Control decide by it. */
static void key_classes(t_ctx *t)
{
	const char *id = "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c";
	const struct {
		const char *key;
		fdl_key_class want;
	} cases[] = {
		{"fdl.json", FDL_KEY_MOVING},
		{"HEAD", FDL_KEY_MOVING},
		{"refs/heads/main", FDL_KEY_MOVING},
		{"refs/tags/v1", FDL_KEY_MOVING},
		{"refs/heads/main.lock", FDL_KEY_LOCK},
		{"refs/heads/main.tmp-12-34-abcdef", FDL_KEY_TEMPORARY},
		{"VERSION/version.json", FDL_KEY_IMMUTABLE},
		{"VERSION/ducklake.duckdb", FDL_KEY_IMMUTABLE},
		{"VERSION/catalogs/0.3.duckdb", FDL_KEY_IMMUTABLE},
		{"VERSION/expired.json", FDL_KEY_MOVING},
		{"versions/not-an-id/version.json", FDL_KEY_OTHER},
		{"history/packs/x.jsonl", FDL_KEY_IMMUTABLE},
		{"history/heads/main.json", FDL_KEY_MOVING},
		{"history/refs.json", FDL_KEY_MOVING},
		{"iceberg/l/metadata/v1.metadata.json", FDL_KEY_MOVING},
		{"iceberg/l/manifests/m.avro", FDL_KEY_IMMUTABLE},
		{"iceberg/l/deletes/d.parquet", FDL_KEY_IMMUTABLE},
		{"data/main/t/x.parquet", FDL_KEY_DATA},
		{"work/x.json", FDL_KEY_TEMPORARY},
		{"stray.txt", FDL_KEY_OTHER},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		bool v = !strncmp(cases[i].key, "VERSION/", 8);
		char *key = v ? fdl_version_key(id, cases[i].key + 8) : fdl_strdup(cases[i].key);
		fdl_key_class got = key ? fdl_key_classify_in("data", key) : FDL_KEY_OTHER;
		CHECK(t, got == cases[i].want);
		if (got != cases[i].want)
			fprintf(stderr, "    %s: class %d, expected %d\n", key, (int)got, (int)cases[i].want);
		free(key);
	}
	CHECK(t, fdl_key_classify_in(NULL, "data/main/t/x.parquet") == FDL_KEY_OTHER);
}

const t_case refs_tests[] = {
	{"suggest: the closest candidate to a mistyped word", closest},
	{"refs: Git's ref-name rules", ref_names},
	{"refs: HEAD is a symbolic ref to a branch", head_parse},
	{"keys: the name a ref spec starts from", spec_names},
	{"keys: what a key is (immutable, moving, data, temporary, lock)", key_classes},
	{"paths: relative-path checks", paths},
	{"time: UTC ISO 8601", times},
	{NULL, NULL},
};
