/* What fdl serve parses from a request: the raw target, the path and the
 * Range header. */
#include "fuzz.h"
#include "../../src/serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	if (!s)
		return 0;
	fdl_range r[8];
	size_t n;
	int64_t sizes[] = {0, 1, 100, 1 << 30};
	for (size_t i = 0; i < 4; i++) {
		if (fdl_http_parse_ranges(s, sizes[i], r, 8, &n) == FDL_RANGE_OK)
			for (size_t k = 0; k < n; k++)
				if (r[k].start < 0 || r[k].end < r[k].start || r[k].end >= sizes[i])
					abort(); /* a range outside the file would be served */
	}
	if (fdl_http_uri_check(s) == 0) {
		/* an accepted target has no NUL or control character, raw or escaped */
		for (const char *p = s; *p; p++) {
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				abort();
			if (p[0] == '%' && (p[1] == '0' || p[1] == '1') && p[2])
				abort();
		}
	}
	int allowed = fdl_serve_path_allowed("data", s);
	if (allowed > 0 && (strstr(s, "..") || s[0] == '/'))
		abort(); /* traversal would be served */
	free(s);
	return 0;
}
