#include "test.h"
#include "../../src/serve/serve.h"

static void ranges(t_ctx *t)
{
	fdl_range r[4];
	size_t n;
	CHECK(t, fdl_http_parse_ranges(NULL, 100, r, 4, &n) == FDL_RANGE_NONE);
	CHECK(t, fdl_http_parse_ranges("items=0-1", 100, r, 4, &n) == FDL_RANGE_NONE);
	CHECK(t, fdl_http_parse_ranges("bytes=0-9", 100, r, 4, &n) == FDL_RANGE_OK && n == 1 && r[0].start == 0 &&
		     r[0].end == 9);
	CHECK(t, fdl_http_parse_ranges("bytes=90-", 100, r, 4, &n) == FDL_RANGE_OK && r[0].start == 90 && r[0].end == 99);
	CHECK(t, fdl_http_parse_ranges("bytes=-10", 100, r, 4, &n) == FDL_RANGE_OK && r[0].start == 90 && r[0].end == 99);
	CHECK(t, fdl_http_parse_ranges("bytes=-1000", 100, r, 4, &n) == FDL_RANGE_OK && r[0].start == 0);
	CHECK(t, fdl_http_parse_ranges("bytes=95-200", 100, r, 4, &n) == FDL_RANGE_OK && r[0].end == 99);
	CHECK(t, fdl_http_parse_ranges("bytes=0-0, 5-6 ,-1", 100, r, 4, &n) == FDL_RANGE_OK && n == 3 && r[2].start == 99);
	CHECK(t, fdl_http_parse_ranges("bytes=100-", 100, r, 4, &n) == FDL_RANGE_UNSATISFIABLE);
	CHECK(t, fdl_http_parse_ranges("bytes=-0", 100, r, 4, &n) == FDL_RANGE_UNSATISFIABLE);
	CHECK(t, fdl_http_parse_ranges("bytes=0-", 0, r, 4, &n) == FDL_RANGE_UNSATISFIABLE);
	CHECK(t, fdl_http_parse_ranges("bytes=200-300,0-1", 100, r, 4, &n) == FDL_RANGE_OK && n == 1);
	const char *bad[] = {"bytes=", "bytes=a-b", "bytes=5-1", "bytes=-", "bytes=1-2;3-4", "bytes=1-2,",
			     "bytes=99999999999999999999-", NULL};
	for (const char **b = bad; *b; b++)
		CHECK(t, fdl_http_parse_ranges(*b, 100, r, 4, &n) == FDL_RANGE_INVALID);
	CHECK(t, fdl_http_parse_ranges("bytes=0-1,2-3,4-5,6-7,8-9", 100, r, 4, &n) == FDL_RANGE_TOO_MANY);
}

const t_case range_tests[] = {
	{"serve: Range header parsing", ranges},
	{NULL, NULL},
};
