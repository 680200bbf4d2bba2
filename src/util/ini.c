/* AWS-style INI files (~/.aws/config, ~/.aws/credentials): sections, keys,
 * and the nested blocks of the config file ("s3 =" then indented lines).
 * Any bytes parse (fuzzed: tests/fuzz/fuzz_ini.c). */
#include "ini.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static size_t trim_len(const char *p, size_t n)
{
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	return n;
}

static bool span_eq(const char *p, size_t n, const char *s)
{
	return strlen(s) == n && strncmp(p, s, n) == 0;
}

int fdl_ini_get(char **out, const char *text, size_t len, const char *section, const char *key)
{
	*out = NULL;
	const char *dot = strchr(key, '.');
	size_t parent_len = dot ? (size_t)(dot - key) : 0;
	const char *leaf = dot ? dot + 1 : key;
	bool in_section = false;
	bool in_parent = false; /* inside the nested block `parent =` */
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		bool indented = p < eol && (*p == ' ' || *p == '\t');
		const char *s = skip_blank(p, eol);
		size_t n = trim_len(s, (size_t)(eol - s));
		p = eol < end ? eol + 1 : end;
		if (!n || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			in_parent = false;
			const char *close = memchr(s, ']', n);
			if (!close)
				continue;
			const char *name = skip_blank(s + 1, close);
			size_t nl = trim_len(name, (size_t)(close - name));
			in_section = span_eq(name, nl, section);
			continue;
		}
		if (!in_section)
			continue;
		const char *eq = memchr(s, '=', n);
		if (!eq)
			continue;
		size_t kl = trim_len(s, (size_t)(eq - s));
		const char *v = skip_blank(eq + 1, s + n);
		size_t vl = (size_t)(s + n - v);
		if (!indented) {
			in_parent = dot && vl == 0 && kl == parent_len && strncmp(s, key, parent_len) == 0;
			if (dot || !span_eq(s, kl, leaf))
				continue;
		} else if (!in_parent || !span_eq(s, kl, leaf)) {
			continue;
		}
		free(*out);
		*out = strndup(v, vl);
		if (!*out)
			return FDL_ENOMEM;
	}
	return 0;
}

