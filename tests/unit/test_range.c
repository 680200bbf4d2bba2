#include "test.h"
#include "../../src/serve/serve.h"
#include "../../src/serve/tokens.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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

static char *write_tokens(const char *dir, const char *text, mode_t mode)
{
	char *p = fdl_asprintf("%s/tokens", dir);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(p, mode);
	return p;
}

/* The token file: its checks, Bearer and Basic, a reload that fails keeps
 * the old tokens. */
static void token_file(t_ctx *t)
{
	char *dir = t_tempdir();
	fdl_serve_tokens *tk = NULL;
	fdl_error e = {0};
	char name[FDL_TOKEN_NAME_MAX + 1] = "";
	char *p = write_tokens(dir, "# readers\nalice 0123456789abcdef0123\n\nbob  fedcba9876543210fedc read\n", 0644);
	CHECK(t, fdl_serve_tokens_new(&tk, p, &e) == FDL_EINVALID && strstr(e.message, "chmod 600"));
	free(p);
	const char *bad[] = {"alice\n", "alice short\n", "a 0123456789abcdef0123\na 0123456789abcdef0124\n",
			     "a 0123456789abcdef0123 write\n", "# nothing\n", NULL};
	p = write_tokens(dir, "# readers\n\nalice 0123456789abcdef0123\n\nbob tiny\n", 0600);
	CHECK(t, fdl_serve_tokens_new(&tk, p, &e) == FDL_EINVALID && strstr(e.message, "tokens:5:")); /* blank lines count */
	free(p);
	for (const char **b = bad; *b; b++) {
		p = write_tokens(dir, *b, 0600);
		CHECK(t, fdl_serve_tokens_new(&tk, p, &e) == FDL_EINVALID && !strstr(e.message, "0123456789abcdef"));
		free(p);
	}
	p = write_tokens(dir, "# readers\nalice 0123456789abcdef0123\n\nbob  fedcba9876543210fedc read\n", 0600);
	CHECK(t, fdl_serve_tokens_new(&tk, p, &e) == 0);
	CHECK(t, fdl_serve_tokens_check(tk, "Bearer 0123456789abcdef0123", name) && !strcmp(name, "alice"));
	CHECK(t, fdl_serve_tokens_check(tk, "bearer fedcba9876543210fedc", name) && !strcmp(name, "bob"));
	/* Basic: any user, the token as the password (x:fedcba9876543210fedc) */
	CHECK(t, fdl_serve_tokens_check(tk, "Basic eDpmZWRjYmE5ODc2NTQzMjEwZmVkYw==", name) && !strcmp(name, "bob"));
	const char *wrong[] = {"Bearer 0123456789abcdef012", "Bearer 0123456789abcdef01234", "0123456789abcdef0123",
			       "Bearer ", "Basic eDp3cm9uZw==", "Basic !!!!", "Basic MDEyMzQ1Njc4OWFiY2RlZjAxMjM=", NULL};
	for (const char **w = wrong; *w; w++)
		CHECK(t, !fdl_serve_tokens_check(tk, *w, name));
	CHECK(t, !fdl_serve_tokens_check(tk, NULL, name));
	/* rotated: the new file's tokens alone; a broken one changes nothing */
	free(write_tokens(dir, "carol 11112222333344445555\n", 0600));
	CHECK(t, fdl_serve_tokens_reload(tk, &e) == 0);
	CHECK(t, !fdl_serve_tokens_check(tk, "Bearer 0123456789abcdef0123", name));
	CHECK(t, fdl_serve_tokens_check(tk, "Bearer 11112222333344445555", name) && !strcmp(name, "carol"));
	free(write_tokens(dir, "carol\n", 0600));
	CHECK(t, fdl_serve_tokens_reload(tk, &e) == FDL_EINVALID && strstr(e.message, "not changed"));
	CHECK(t, fdl_serve_tokens_check(tk, "Bearer 11112222333344445555", name));
	fdl_serve_tokens_free(tk);
	free(p);
	fdl_rm_rf(dir);
	free(dir);
}

const t_case range_tests[] = {
	{"serve: Range header parsing", ranges},
	{"serve: the token file, Bearer and Basic, a reload", token_file},
	{NULL, NULL},
};
