/* The pages' two ways of writing text: as HTML text (every character that
 * could open markup escaped) and as JSON that stays JSON inside a <script>
 * element (no '<', '>' or '&' at all, so "</script>" cannot end it). */
#include "site_int.h"

#include <stdlib.h>
#include <string.h>

int fdl__site_esc(fdl_buf *out, const char *s, fdl_error *err)
{
	int rc = 0;
	for (const char *p = s ? s : ""; !rc && *p; p++) {
		size_t n = strcspn(p, "&<>\"'");
		rc = fdl_buf_add(out, p, n, err);
		p += n;
		if (rc || !*p)
			break;
		rc = fdl_buf_puts(out,
				  *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '"' ? "&quot;" : "&#39;",
				  err);
	}
	return rc;
}

int fdl__site_json(fdl_buf *out, const json_t *j, bool script, fdl_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = fdl_json_dump(&text, &len, j, err);
	for (size_t i = 0; !rc && i < len; i++) {
		char c = text[i];
		if (script && (c == '<' || c == '>' || c == '&'))
			rc = fdl_buf_printf(out, err, "\\u%04x", (unsigned)c);
		else
			rc = fdl_buf_add(out, &c, 1, err);
	}
	free(text);
	return rc;
}
