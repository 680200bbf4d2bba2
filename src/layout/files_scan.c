/* files.json's data files read straight from its text (files_scan.h): a
 * recursive descent over JSON that keeps only tables.*.files[] (path,
 * bytes, deletes) and the sha256 map and skips every other value. Any text
 * it does not read plainly is left to jansson (fdl_files_scan_text's
 * *plain unset). */
#include "files_scan.h"
#include "layout.h"

#include <stdlib.h>
#include <string.h>

enum { SCAN_OK = 0, SCAN_FALLBACK = 1, SCAN_OOM = -1 };

typedef struct cursor {
	const char *p, *end;
	fdl_files_scan *out;
	int depth;
} cursor;

static void ws(cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
		c->p++;
}

static bool eat(cursor *c, char ch)
{
	ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

/* A string kept as it is: no escape, no control character. */
static int raw_string(cursor *c, const char **s, size_t *n)
{
	if (!eat(c, '"'))
		return SCAN_FALLBACK;
	const char *start = c->p;
	while (c->p < c->end && *c->p != '"') {
		if (*c->p == '\\' || (unsigned char)*c->p < 0x20)
			return SCAN_FALLBACK;
		c->p++;
	}
	if (c->p >= c->end)
		return SCAN_FALLBACK;
	*s = start;
	*n = (size_t)(c->p++ - start);
	return SCAN_OK;
}

static bool key_is(const char *s, size_t n, const char *want)
{
	return n == strlen(want) && !memcmp(s, want, n);
}

static int skip_value(cursor *c);

/* "{" key ":" value ("," ...)* "}" or "[" value ("," ...)* "]", each
 * element handed to `each` (NULL: skipped). */
typedef int (*member_fn)(cursor *c, const char *key, size_t klen, void *ctx);

static int members(cursor *c, bool object, member_fn each, void *ctx)
{
	if (!eat(c, object ? '{' : '[') || ++c->depth > 64)
		return SCAN_FALLBACK;
	int rc = SCAN_OK;
	if (!eat(c, object ? '}' : ']')) {
		do {
			const char *key = NULL;
			size_t klen = 0;
			if (object && ((rc = raw_string(c, &key, &klen)) || !eat(c, ':')))
				return rc ? rc : SCAN_FALLBACK;
			if ((rc = each ? each(c, key, klen, ctx) : skip_value(c)))
				return rc;
		} while (eat(c, ','));
		if (!eat(c, object ? '}' : ']'))
			return SCAN_FALLBACK;
	}
	c->depth--;
	return SCAN_OK;
}

static int skip_string(cursor *c)
{
	if (!eat(c, '"'))
		return SCAN_FALLBACK;
	for (; c->p < c->end && *c->p != '"'; c->p++)
		if ((unsigned char)*c->p < 0x20)
			return SCAN_FALLBACK;
		else if (*c->p == '\\' && ++c->p >= c->end)
			return SCAN_FALLBACK;
	if (c->p >= c->end)
		return SCAN_FALLBACK;
	c->p++;
	return SCAN_OK;
}

static int skip_value(cursor *c)
{
	ws(c);
	if (c->p >= c->end)
		return SCAN_FALLBACK;
	if (*c->p == '{' || *c->p == '[')
		return members(c, *c->p == '{', NULL, NULL);
	if (*c->p == '"')
		return skip_string(c);
	const char *start = c->p;
	while (c->p < c->end && strchr("+-0123456789.eEtruefalsn", *c->p) && *c->p)
		c->p++;
	return c->p > start ? SCAN_OK : SCAN_FALLBACK;
}

/* A whole number, as "bytes" is. */
static int integer(cursor *c, int64_t *v)
{
	ws(c);
	const char *start = c->p;
	int64_t n = 0;
	bool neg = c->p < c->end && *c->p == '-';
	c->p += neg;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && n < INT64_MAX / 10 - 9)
		n = n * 10 + (*c->p++ - '0');
	if (c->p == start + neg || (c->p < c->end && strchr(".eE0123456789", *c->p) && *c->p))
		return SCAN_FALLBACK; /* not a plain whole number: jansson says what it is */
	*v = neg ? -n : n;
	return SCAN_OK;
}

static int keep(fdl_files_scan *s, const char *str, size_t n, size_t *off)
{
	fdl_error e;
	*off = s->text.len;
	return fdl_buf_add(&s->text, str, n, &e) || fdl_buf_add(&s->text, "", 1, &e) ? SCAN_OOM : SCAN_OK;
}

static int add_live(fdl_files_scan *s, size_t table, const char *path, size_t n, int64_t bytes)
{
	if (s->nlive == s->caplive) {
		size_t cap = s->caplive ? s->caplive * 2 : 64;
		fdl_files_live *grown = realloc(s->live, cap * sizeof *grown);
		if (!grown)
			return SCAN_OOM;
		s->live = grown;
		s->caplive = cap;
	}
	fdl_files_live *l = &s->live[s->nlive];
	l->table = table;
	l->bytes = bytes;
	int rc = keep(s, path, n, &l->path);
	s->nlive += !rc;
	return rc;
}

static int add_hash(fdl_files_scan *s, const char *path, size_t n, const char *sha, size_t shan)
{
	if (s->nmap == s->capmap) {
		size_t cap = s->capmap ? s->capmap * 2 : 64;
		fdl_files_hash *grown = realloc(s->map, cap * sizeof *grown);
		if (!grown)
			return SCAN_OOM;
		s->map = grown;
		s->capmap = cap;
	}
	fdl_files_hash *h = &s->map[s->nmap];
	int rc = keep(s, path, n, &h->path);
	if (!rc)
		rc = keep(s, sha, shan, &h->sha);
	s->nmap += !rc;
	return rc;
}

/* ---- the members fdl verify reads ------------------------------------------- */

typedef struct file_entry {
	const char *path;
	size_t n;
	int64_t bytes;
	bool deletes;
	const char *dpath;
	size_t dn;
	int64_t dbytes;
} file_entry;

static int deletes_member(cursor *c, const char *key, size_t klen, void *ctx)
{
	file_entry *f = ctx;
	if (key_is(key, klen, "path"))
		return raw_string(c, &f->dpath, &f->dn);
	if (key_is(key, klen, "bytes"))
		return integer(c, &f->dbytes);
	return skip_value(c);
}

static int file_member(cursor *c, const char *key, size_t klen, void *ctx)
{
	file_entry *f = ctx;
	if (key_is(key, klen, "path"))
		return raw_string(c, &f->path, &f->n);
	if (key_is(key, klen, "bytes"))
		return integer(c, &f->bytes);
	if (key_is(key, klen, "deletes")) {
		ws(c);
		if (c->p < c->end && *c->p == 'n')
			return skip_value(c); /* null */
		f->deletes = true;
		return members(c, true, deletes_member, f);
	}
	return skip_value(c);
}

static int file_item(cursor *c, const char *key, size_t klen, void *ctx)
{
	(void)key;
	(void)klen;
	size_t table = *(size_t *)ctx;
	file_entry f = {0};
	int rc = members(c, true, file_member, &f);
	if (!rc && f.path)
		rc = add_live(c->out, table, f.path, f.n, f.bytes);
	if (!rc && f.dpath)
		rc = add_live(c->out, table, f.dpath, f.dn, f.dbytes);
	return rc;
}

static int table_member(cursor *c, const char *key, size_t klen, void *ctx)
{
	return key_is(key, klen, "files") ? members(c, false, file_item, ctx) : skip_value(c);
}

static int table(cursor *c, const char *key, size_t klen, void *ctx)
{
	(void)ctx;
	size_t name;
	int rc = keep(c->out, key, klen, &name);
	return rc ? rc : members(c, true, table_member, &name);
}

static int map_entry(cursor *c, const char *key, size_t klen, void *ctx)
{
	(void)ctx;
	const char *sha;
	size_t n;
	int rc = raw_string(c, &sha, &n);
	return rc ? rc : add_hash(c->out, key, klen, sha, n);
}

static int top_member(cursor *c, const char *key, size_t klen, void *ctx)
{
	(void)ctx;
	if (key_is(key, klen, "tables"))
		return members(c, true, table, NULL);
	if (key_is(key, klen, FDL_FILES_SHA256)) {
		c->out->has_map = true;
		return members(c, true, map_entry, NULL);
	}
	return skip_value(c);
}

static int by_path(const void *a, const void *b, void *ctx)
{
	const fdl_files_scan *s = ctx;
	return strcmp(fdl_files_str(s, ((const fdl_files_hash *)a)->path),
		      fdl_files_str(s, ((const fdl_files_hash *)b)->path));
}

int fdl_files_scan_text(bool *plain, fdl_files_scan *out, const char *json, size_t len, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	cursor c = {json, json + len, out, 0};
	int rc = members(&c, true, top_member, NULL);
	ws(&c);
	if (!rc && c.p != c.end)
		rc = SCAN_FALLBACK;
	if (!rc && out->nmap)
		qsort_r(out->map, out->nmap, sizeof *out->map, by_path, out);
	if (rc)
		fdl_files_scan_free(out);
	*plain = rc == SCAN_OK;
	return rc == SCAN_OOM ? fdl_oom(err) : 0;
}

int fdl_files_scan_tree(fdl_files_scan *out, const json_t *doc, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	const char *name, *path;
	const json_t *t, *v;
	int rc = SCAN_OK;
	json_object_foreach((json_t *)json_object_get(doc, "tables"), name, t)
	{
		size_t tn, i;
		const json_t *f;
		if (!rc)
			rc = keep(out, name, strlen(name), &tn);
		json_array_foreach(json_object_get(t, "files"), i, f)
		for (int del = 0; del < 2 && !rc; del++) {
			const json_t *one = del ? json_object_get(f, "deletes") : f;
			const char *p = json_string_value(json_object_get(one, "path"));
			if (p)
				rc = add_live(out, tn, p, strlen(p), (int64_t)json_integer_value(json_object_get(one, "bytes")));
		}
	}
	const json_t *map = json_object_get(doc, FDL_FILES_SHA256);
	out->has_map = map != NULL;
	json_object_foreach((json_t *)map, path, v) if (!rc)
	{
		const char *sha = json_string_value(v);
		rc = add_hash(out, path, strlen(path), sha ? sha : "", sha ? strlen(sha) : 0);
	}
	if (!rc && out->nmap)
		qsort_r(out->map, out->nmap, sizeof *out->map, by_path, out);
	if (rc)
		fdl_files_scan_free(out);
	return rc ? fdl_oom(err) : 0;
}

void fdl_files_scan_free(fdl_files_scan *s)
{
	fdl_buf_free(&s->text);
	free(s->live);
	free(s->map);
	memset(s, 0, sizeof *s);
}
