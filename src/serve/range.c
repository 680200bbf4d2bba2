/* The Range header (RFC 9110, bytes ranges only), kept apart from the
 * server so it can be tested and fuzzed on its own. */
#include "serve.h"

#include <stdlib.h>
#include <string.h>

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A non-negative decimal of at most 18 digits (no overflow). */
static const char *number(const char *p, int64_t *out, bool *present)
{
	int64_t v = 0;
	int digits = 0;
	while (*p >= '0' && *p <= '9') {
		if (++digits > 18)
			return NULL;
		v = v * 10 + (*p - '0');
		p++;
	}
	*present = digits > 0;
	*out = v;
	return p;
}

int fdl_http_parse_ranges(const char *header, int64_t size, fdl_range *out, size_t max, size_t *count)
{
	*count = 0;
	if (!header)
		return FDL_RANGE_NONE;
	const char *p = skip_ws(header);
	if (strncmp(p, "bytes=", 6) != 0)
		return FDL_RANGE_NONE; /* another unit: ignore the header, as RFC 9110 allows */
	p += 6;
	bool any_satisfiable = false;
	for (;;) {
		p = skip_ws(p);
		int64_t a = 0, b = 0;
		bool has_a, has_b;
		p = number(p, &a, &has_a);
		if (!p || *p != '-')
			return FDL_RANGE_INVALID;
		p = number(p + 1, &b, &has_b);
		if (!p || (!has_a && !has_b) || (has_a && has_b && b < a))
			return FDL_RANGE_INVALID;
		fdl_range r;
		bool ok;
		if (!has_a) { /* suffix: the last b bytes */
			ok = b > 0 && size > 0;
			r.start = b >= size ? 0 : size - b;
			r.end = size - 1;
		} else {
			ok = a < size;
			r.start = a;
			r.end = (!has_b || b >= size) ? size - 1 : b;
		}
		if (ok) {
			any_satisfiable = true;
			if (*count >= max)
				return FDL_RANGE_TOO_MANY;
			out[(*count)++] = r;
		}
		p = skip_ws(p);
		if (*p == '\0')
			break;
		if (*p != ',')
			return FDL_RANGE_INVALID;
		p++;
	}
	return any_satisfiable ? FDL_RANGE_OK : FDL_RANGE_UNSATISFIABLE;
}
