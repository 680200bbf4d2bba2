/* Growable buffers and string lists, and SQL quoting into a buffer. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fdl_buf_grow(fdl_buf *b, size_t extra, fdl_error *err)
{
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1) {
		if (cap > SIZE_MAX / 2)
			return fdl_fail(err, FDL_ENOMEM, "out of memory (buffer of %zu bytes)", b->len + extra);
		cap *= 2;
	}
	char *p = realloc(b->data, cap);
	if (!p)
		return fdl_fail(err, FDL_ENOMEM, "out of memory (buffer of %zu bytes)", cap);
	b->data = p;
	b->cap = cap;
	return 0;
}

int fdl_buf_add(fdl_buf *b, const void *data, size_t len, fdl_error *err)
{
	if (fdl_buf_grow(b, len, err))
		return FDL_ENOMEM;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int fdl_buf_puts(fdl_buf *b, const char *s, fdl_error *err)
{
	return fdl_buf_add(b, s, strlen(s), err);
}

int fdl_buf_printf(fdl_buf *b, fdl_error *err, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		va_end(ap2);
		return fdl_fail(err, FDL_ERROR, "formatting failed");
	}
	if (fdl_buf_grow(b, (size_t)n, err)) {
		va_end(ap2);
		return FDL_ENOMEM;
	}
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	b->len += (size_t)n;
	return 0;
}

static int buf_quoted(fdl_buf *b, const char *s, char q, fdl_error *err)
{
	if (fdl_buf_add(b, &q, 1, err))
		return FDL_ENOMEM;
	for (const char *p = s; *p; p++) {
		if (*p == q && fdl_buf_add(b, &q, 1, err))
			return FDL_ENOMEM;
		if (fdl_buf_add(b, p, 1, err))
			return FDL_ENOMEM;
	}
	return fdl_buf_add(b, &q, 1, err);
}

int fdl_buf_sql_str(fdl_buf *b, const char *s, fdl_error *err)
{
	return buf_quoted(b, s, '\'', err);
}

int fdl_buf_sql_ident(fdl_buf *b, const char *s, fdl_error *err)
{
	return buf_quoted(b, s, '"', err);
}

char *fdl_buf_detach(fdl_buf *b)
{
	char *p = b->data;
	if (!p)
		p = calloc(1, 1);
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

void fdl_buf_free(fdl_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *fdl_strdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

char *fdl_asprintf(const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = n < 0 ? NULL : malloc((size_t)n + 1);
	if (p)
		vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

int fdl_strlist_add(fdl_strlist *l, const char *s, fdl_error *err)
{
	if (l->len == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **p = realloc(l->items, cap * sizeof *p);
		if (!p)
			return fdl_fail(err, FDL_ENOMEM, "out of memory (list of %zu)", cap);
		l->items = p;
		l->cap = cap;
	}
	char *copy = fdl_strdup(s);
	if (!copy)
		return fdl_oom(err);
	l->items[l->len++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void fdl_strlist_sort(fdl_strlist *l)
{
	if (l->len > 1)
		qsort(l->items, l->len, sizeof *l->items, cmp_str);
}

void fdl_strlist_free(fdl_strlist *l)
{
	for (size_t i = 0; i < l->len; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->len = l->cap = 0;
}

bool fdl_strlist_has_sorted(const fdl_strlist *l, const char *s)
{
	size_t lo = 0, hi = l->len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->items[mid], s);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int fdl_finding_add(fdl_strlist *l, const char *key, const char *fmt, ...)
{
	char msg[1536];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char *line = fdl_asprintf("%s\t%s", key, msg);
	int rc = line ? fdl_strlist_add(l, line, NULL) : FDL_ENOMEM;
	free(line);
	return rc ? FDL_ENOMEM : 0;
}

int fdl_finding_list_add(fdl_finding_list *l, const char *where, const char *fmt, ...)
{
	fdl_finding *grown = realloc(l->items, (l->len + 1) * sizeof *grown);
	if (!grown)
		return FDL_ENOMEM;
	l->items = grown;
	char msg[1536]; /* as long as fdl_finding_add's */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fdl_finding *f = &l->items[l->len];
	f->where = strdup(where);
	f->what = strdup(msg);
	if (!f->where || !f->what) {
		free(f->where);
		free(f->what);
		return FDL_ENOMEM;
	}
	l->len++;
	return 0;
}

void fdl_finding_list_free(fdl_finding_list *l)
{
	for (size_t i = 0; i < l->len; i++) {
		free(l->items[i].where);
		free(l->items[i].what);
	}
	free(l->items);
	l->items = NULL;
	l->len = 0;
}
