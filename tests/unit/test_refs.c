#include "test.h"
#include "../../src/layout/layout.h"

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

const t_case refs_tests[] = {
	{"suggest: the closest candidate to a mistyped word", closest},
	{"refs: Git's ref-name rules", ref_names},
	{"refs: HEAD is a symbolic ref to a branch", head_parse},
	{"paths: relative-path checks", paths},
	{"time: UTC ISO 8601", times},
	{NULL, NULL},
};
