/* The raw request target, checked before libmicrohttpd decodes it: its
 * decoder stops at a decoded NUL and passes invalid escapes through, so
 * "/fdl.json%00.txt" would reach the handler as "/fdl.json". */
#include "serve.h"

#include <string.h>

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Length of the UTF-8 sequence starting with lead byte b (0: invalid lead). */
static size_t utf8_length(unsigned char b)
{
	if (b < 0x80)
		return 1;
	if (b >= 0xc2 && b <= 0xdf)
		return 2;
	if (b >= 0xe0 && b <= 0xef)
		return 3;
	if (b >= 0xf0 && b <= 0xf4)
		return 4;
	return 0;
}

/* Is decoded[0..n) well-formed UTF-8 (no overlong forms, no surrogates,
 * nothing past U+10FFFF)? */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t len = utf8_length(s[i]);
		if (len == 0 || i + len > n)
			return false;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		if (len == 3 && ((s[i] == 0xe0 && s[i + 1] < 0xa0) || (s[i] == 0xed && s[i + 1] >= 0xa0)))
			return false; /* overlong, or a UTF-16 surrogate */
		if (len == 4 && ((s[i] == 0xf0 && s[i + 1] < 0x90) || (s[i] == 0xf4 && s[i + 1] >= 0x90)))
			return false; /* overlong, or past U+10FFFF */
		i += len;
	}
	return true;
}

int fdl_http_uri_check(const char *raw)
{
	if (!raw)
		return -1;
	size_t path_len = strcspn(raw, "?#");
	unsigned char decoded[4096];
	size_t n = 0;
	for (size_t i = 0; raw[i]; i++) {
		unsigned char c = (unsigned char)raw[i];
		bool escaped = c == '%';
		if (escaped) {
			int hi = hex_value(raw[i + 1]), lo = hi < 0 ? -1 : hex_value(raw[i + 2]);
			if (hi < 0 || lo < 0)
				return -1; /* an escape that is not %XX */
			c = (unsigned char)(hi * 16 + lo);
			i += 2;
		}
		/* %1F, the unit separator, parts the levels of an Iceberg namespace */
		if (c == '\0' || (c < 0x20 && !(escaped && c == 0x1f && i < path_len)) || c == 0x7f)
			return -1; /* a NUL or a control character, raw or decoded */
		if (i < path_len) {
			if (n == sizeof decoded)
				return -1; /* no path of a repository is this long */
			decoded[n++] = c;
		}
	}
	return utf8_valid(decoded, n) ? 0 : -1;
}
