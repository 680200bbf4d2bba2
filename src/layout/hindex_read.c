/* The history index, reading: entries, the pointer and its packs, fdl_history_read and
 * find_seq (hindex.h; writing in hindex_write.c, verify in hindex_check.c). */
#include "hindex_int.h"
#include "../util/pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- entries ---------------------------------------------------------- */

const char *fdl__hix_entry_parent(const fdl_hentry *e)
{
	const json_t *parents = json_is_array(e->doc) ? json_array_get(e->doc, FDL_HEAD_PARENTS)
						      : json_object_get(e->doc, "parents");
	return json_string_value(json_array_get(parents, 0));
}

void fdl__hix_entry_clear(fdl_hentry *e)
{
	json_decref(e->doc);
	e->doc = NULL;
}

void fdl_hist_free(fdl_hist *h)
{
	for (size_t i = 0; h && i < h->len; i++)
		fdl__hix_entry_clear(&h->items[i]);
	if (h) {
		free(h->items);
		memset(h, 0, sizeof *h);
	}
}

int fdl__hix_hist_push(fdl_hist *h, const fdl_hentry *e, fdl_error *err)
{
	if (h->len == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		fdl_hentry *p = realloc(h->items, cap * sizeof *p);
		if (!p)
			return fdl_oom(err);
		h->items = p;
		h->cap = cap;
	}
	h->items[h->len] = *e;
	h->items[h->len].doc = json_incref(e->doc);
	h->len++;
	return 0;
}

json_t *fdl_hentry_head(const json_t *version)
{
	const json_t *author = json_object_get(version, "author");
	json_t *changes = json_object_get(version, "changes");
	json_t *email = json_object_get(author, "email");
	/* the order of FDL_HEAD_* */
	return json_pack("[O, O, O, O, O, O, O, O]", json_object_get(version, "seq"), json_object_get(version, "id"),
			 json_object_get(version, "parents"), json_object_get(version, "created_at"),
			 json_object_get(author, "name"), email ? email : json_null(), json_object_get(version, "message"),
			 changes ? changes : json_null());
}

/* {"id", "seq", "sha256", "version"} as written in packs and the tail. */
static int entry_from_json(fdl_hentry *e, const json_t *j, const char *src, fdl_error *err)
{
	memset(e, 0, sizeof *e);
	const char *id = json_string_value(json_object_get(j, "id"));
	const char *sha = json_string_value(json_object_get(j, "sha256"));
	const json_t *doc = json_object_get(j, "version");
	json_int_t seq = json_integer_value(json_object_get(j, "seq"));
	if (!id || !fdl_id_is_valid(id) || !fdl_is_sha256_hex(sha) || !json_is_object(doc) || seq < 1 ||
	    !json_is_integer(json_object_get(j, "seq")))
		return fdl_fail(err, FDL_EINVALID, "%s: an entry needs id (a version id), seq (>= 1), sha256 and version",
				src);
	const char *vid = json_string_value(json_object_get(doc, "id"));
	if (!vid || strcmp(vid, id) || json_integer_value(json_object_get(doc, "seq")) != seq)
		return fdl_fail(err, FDL_EINVALID, "%s: the entry of %s holds a version.json with another id or seq", src,
				id);
	memcpy(e->id, id, FDL_ID_LEN + 1);
	memcpy(e->sha256, sha, 65);
	e->seq = (int64_t)seq;
	e->doc = json_incref((json_t *)doc);
	e->whole = true;
	return 0;
}

json_t *fdl__hix_entry_to_json(const fdl_hentry *e)
{
	return json_pack("{s:s, s:I, s:s, s:O}", "id", e->id, "seq", (json_int_t)e->seq, "sha256", e->sha256, "version",
			 e->doc);
}

/* A version read from the store, with the sha256 of its bytes. */
int fdl__hix_entry_read(fdl_hentry *e, fdl_repo *repo, const char *id, fdl_error *err)
{
	memset(e, 0, sizeof *e);
	char *key = fdl_id_is_valid(id) ? fdl_version_key(id, "version.json") : NULL;
	if (!key)
		return fdl_id_is_valid(id) ? fdl_oom(err)
					   : fdl_fail(err, FDL_EINVALID, "'%s' is not a version id", id);
	char *src = fdl_asprintf("%s/%s", repo->root, key);
	fdl_buf b = {0};
	fdl_version *v = NULL;
	int rc = src ? fdl_store_get(repo->store, key, FDL_META_MAX_BYTES, &b, NULL, err)
		     : fdl_oom(err);
	if (rc == FDL_ENOTFOUND)
		rc = fdl_fail(err, FDL_ENOTFOUND, "version %s not found in %s (no %s)", id, repo->root, key);
	if (!rc)
		rc = fdl_version_parse(&v, b.data, b.len, id, src, err);
	if (!rc)
		rc = fdl_sha256_mem(e->sha256, b.data, b.len, err);
	if (!rc) {
		memcpy(e->id, id, FDL_ID_LEN + 1);
		e->seq = fdl_version_seq(v);
		e->doc = json_incref((json_t *)fdl_version_json(v));
		e->whole = true;
	}
	fdl_version_free(v);
	fdl_buf_free(&b);
	free(key);
	free(src);
	return rc;
}

/* ---- the pointer and its packs ----------------------------------------- */


void fdl__hix_free(hindex *ix)
{
	for (size_t i = 0; i < ix->npacks; i++) {
		for (size_t k = 0; k < ix->packs[i].n; k++)
			fdl__hix_entry_clear(&ix->packs[i].e[k]);
		free(ix->packs[i].e);
	}
	for (size_t k = 0; k < ix->ntail; k++)
		fdl__hix_entry_clear(&ix->tail[k]);
	free(ix->tail);
	free(ix->key);
	memset(ix, 0, sizeof *ix);
}

static char *pointer_key(const char *branch)
{
	if (!strncmp(branch, "refs/heads/", 11))
		branch += 11;
	return fdl_asprintf("history/heads/%s.json", branch);
}

char *fdl__hix_pack_key(const char *name)
{
	return fdl_asprintf("history/packs/%s", name);
}

/* Consecutive entries link: seq rises by one and each names the one
 * before as its first parent. */
bool fdl__hix_entries_link(const fdl_hentry *older, const fdl_hentry *newer)
{
	const char *p = fdl__hix_entry_parent(newer);
	return newer->seq == older->seq + 1 && p && !strcmp(p, older->id);
}

static int unusable(hindex *ix, const char *why, const char *detail)
{
	ix->usable = false;
	snprintf(ix->why, sizeof ix->why, "%.120s%s%.380s", why, detail ? ": " : "", detail ? detail : "");
	return 0;
}

/* Parse a pointer's bytes into ix (ix->key names it in messages): ix->usable
 * says whether it holds together, ix->why why not. */
int fdl__hix_pointer_parse(hindex *ix, const char *data, size_t len)
{
	json_t *doc = NULL;
	fdl_error e;
	if (fdl_json_parse(&doc, data, len, ix->key, &e))
		return unusable(ix, e.message, NULL);
	const char *tip = json_string_value(json_object_get(doc, "tip"));
	json_int_t seq = json_integer_value(json_object_get(doc, "seq"));
	const json_t *packs = json_object_get(doc, "packs"), *tail = json_object_get(doc, "tail");
	int64_t next = 1;
	json_int_t format = json_integer_value(json_object_get(doc, "fdl_history"));
	if (format != HIST_FORMAT && format != HIST_FORMAT_OLD) {
		unusable(ix, "fdl_history is not 1 or 2", NULL);
		goto out;
	}
	ix->format = (int)format;
	if (!tip || !fdl_id_is_valid(tip) || seq < 1 || !json_is_array(packs) || !json_is_array(tail) ||
	    json_array_size(packs) > HIST_MAX_PACKS) {
		unusable(ix, "it needs tip, seq, packs (at most 8) and tail", NULL);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(packs); i++) {
		const json_t *p = json_array_get(packs, i);
		const char *name = json_string_value(json_object_get(p, "name"));
		hpack *hp = &ix->packs[ix->npacks];
		hp->first = json_integer_value(json_object_get(p, "first_seq"));
		hp->last = json_integer_value(json_object_get(p, "last_seq"));
		hp->bytes = json_integer_value(json_object_get(p, "bytes"));
		/* a hostile pointer must not make a reader allocate much: a pack
		 * is a metadata file, and an entry takes far more than 64 bytes */
		if (!name || strlen(name) != 70 || strcmp(name + 64, ".jsonl") || hp->first != next || hp->last < hp->first ||
		    hp->bytes < 1 || (uint64_t)hp->bytes > (uint64_t)FDL_META_MAX_BYTES ||
		    hp->last - hp->first + 1 > hp->bytes / 64) {
			unusable(ix, "a pack is not a named, contiguous range of seqs", NULL);
			goto out;
		}
		char hex[65];
		memcpy(hex, name, 64);
		hex[64] = '\0';
		if (!fdl_is_sha256_hex(hex)) {
			unusable(ix, "a pack name is not <sha256>.jsonl", name);
			goto out;
		}
		memcpy(hp->name, name, 71);
		next = hp->last + 1;
		ix->npacks++;
	}
	size_t n = json_array_size(tail);
	ix->tail = n ? calloc(n, sizeof *ix->tail) : NULL;
	if (n && !ix->tail) {
		unusable(ix, "out of memory", NULL);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (entry_from_json(&ix->tail[i], json_array_get(tail, i), ix->key, &e)) {
			unusable(ix, e.message, NULL);
			goto out;
		}
		ix->ntail++;
		if (ix->tail[i].seq != next || (i > 0 && !fdl__hix_entries_link(&ix->tail[i - 1], &ix->tail[i]))) {
			unusable(ix, "its inline versions do not follow each other", NULL);
			goto out;
		}
		next++;
	}
	if (next - 1 != seq || (n && strcmp(ix->tail[n - 1].id, tip))) {
		unusable(ix, "its packs and inline versions do not end at its tip", NULL);
		goto out;
	}
	memcpy(ix->tip, tip, FDL_ID_LEN + 1);
	ix->seq = (int64_t)seq;
	ix->usable = true;
out:
	json_decref(doc);
	return 0;
}

/* Read `branch`'s pointer. Only a failure to reach the store is an error:
 * an absent or malformed pointer is an index that is not usable. */
int fdl__hix_load(hindex *ix, fdl_repo *repo, const char *branch, bool want_etag, fdl_error *err)
{
	memset(ix, 0, sizeof *ix);
	if (!(ix->key = pointer_key(branch)))
		return fdl_oom(err);
	fdl_error pe;
	if (fdl_path_check_relative(ix->key, "an index path", &pe) != 0)
		return unusable(ix, "the branch name gives no index path", NULL);
	fdl_buf b = {0};
	fdl_error e;
	int rc = fdl_store_get(repo->store, ix->key, FDL_META_MAX_BYTES, &b, want_etag ? ix->etag : NULL, &e);
	if (rc == FDL_ENOTFOUND) {
		fdl_buf_free(&b);
		return unusable(ix, "there is none", NULL);
	}
	if (rc) {
		fdl_buf_free(&b);
		*err = e;
		return rc;
	}
	ix->exists = true;
	fdl__hix_pointer_parse(ix, b.data, b.len);
	fdl_buf_free(&b);
	return 0;
}

/* One line of a pack. Format 2: "<head>\t<sha256>\t<version.json>",
 * both JSON compact (so neither holds a tab); only the part asked for is
 * parsed, and with the whole version.json the head is checked to be its
 * head. Format 1: a whole entry. */
static int line_parse(fdl_hentry *e, const char *line, size_t len, int format, bool whole, const char *key,
		      fdl_error *err)
{
	json_t *j = NULL;
	int rc;
	memset(e, 0, sizeof *e);
	if (format == HIST_FORMAT_OLD) {
		if (!(rc = fdl_json_parse(&j, line, len, key, err)))
			rc = entry_from_json(e, j, key, err);
		json_decref(j);
		return rc;
	}
	const char *t1 = memchr(line, '\t', len);
	size_t head_len = t1 ? (size_t)(t1 - line) : len;
	if (!t1 || len - head_len < 67 || t1[65] != '\t')
		return fdl_fail(err, FDL_EINVALID, "%s: a line is <head> TAB <sha256> TAB <version.json>", key);
	memcpy(e->sha256, t1 + 1, 64);
	e->sha256[64] = '\0';
	if (!fdl_is_sha256_hex(e->sha256))
		return fdl_fail(err, FDL_EINVALID, "%s: a line's second field is not a sha256", key);
	const char *text = whole ? t1 + 66 : line;
	if ((rc = fdl_json_parse(&j, text, whole ? len - head_len - 66 : head_len, key, err)))
		return rc;
	const char *id = json_string_value(whole ? json_object_get(j, "id") : json_array_get(j, FDL_HEAD_ID));
	const json_t *seq = whole ? json_object_get(j, "seq") : json_array_get(j, FDL_HEAD_SEQ);
	if (!(whole ? json_is_object(j) : json_is_array(j)) || !id || !fdl_id_is_valid(id) || !json_is_integer(seq) ||
	    json_integer_value(seq) < 1) {
		json_decref(j);
		return fdl_fail(err, FDL_EINVALID, "%s: a line's %s has no id (a version id) or seq (>= 1)", key,
				whole ? "version.json" : "head");
	}
	if (whole) { /* the head shown by log must be this version's */
		json_t *head = NULL, *want = fdl_hentry_head(j);
		bool same = want && !fdl_json_parse(&head, line, head_len, key, err) && json_equal(head, want);
		json_decref(head);
		json_decref(want);
		if (!same) {
			fdl_fail(err, FDL_EINVALID, "%s: the head of version %s differs from its version.json", key, id);
			json_decref(j);
			return FDL_EINVALID;
		}
	}
	memcpy(e->id, id, FDL_ID_LEN + 1);
	e->seq = (int64_t)json_integer_value(seq);
	e->doc = j;
	e->whole = whole;
	return 0;
}

/* Parse the lines of [data, data + len) into items (at most cap);
 * false at the first that is not an entry (why in e), or past cap. */
typedef struct pack_part {
	const char *data, *key;
	size_t len, cap, n;
	int format;
	bool whole;
	fdl_hentry *items;
	bool ok;
	fdl_error e;
} pack_part;

static int pack_part_job(void *ctx, void *state, size_t job, fdl_error *err)
{
	(void)state, (void)err;
	pack_part *p = (pack_part *)ctx + job;
	p->ok = true;
	for (size_t off = 0; p->ok && off < p->len;) {
		const char *nl = memchr(p->data + off, '\n', p->len - off);
		size_t len = nl ? (size_t)(nl - (p->data + off)) : p->len - off;
		if (p->n >= p->cap) {
			fdl_fail(&p->e, FDL_EINVALID, "%s: more lines than the pointer says", p->key);
			p->ok = false;
		} else {
			p->ok = !line_parse(&p->items[p->n], p->data + off, len, p->format, p->whole, p->key, &p->e);
		}
		p->n += p->ok;
		off += len + 1;
	}
	return 0;
}

/* A pack past this size is parsed in two halves at once: parsing is
 * almost all of what a long `fdl log` costs. */
#define PACK_SPLIT_BYTES (1u << 20)

/* Parse a pack's bytes into p's entries (p->first to p->last, each linked
 * to the one before); false when it does not hold them (ix->why says). */
bool fdl__hix_pack_parse(hindex *ix, hpack *p, const char *data, size_t len, const char *key)
{
	size_t want = (size_t)(p->last - p->first + 1);
	pack_part part[2] = {{.key = key, .cap = want, .format = ix->format, .whole = ix->whole},
			     {.key = key, .cap = want, .format = ix->format, .whole = ix->whole}};
	part[0].items = calloc(want, sizeof(fdl_hentry));
	bool ok = part[0].items != NULL;
	/* split after the line that crosses the middle */
	const char *mid = ok && len > PACK_SPLIT_BYTES ? memchr(data + len / 2, '\n', len - len / 2) : NULL;
	part[0].data = data;
	part[0].len = mid ? (size_t)(mid + 1 - data) : len;
	part[1].data = data + part[0].len;
	part[1].len = len - part[0].len;
	if (ok && part[1].len && !(part[1].items = calloc(want, sizeof(fdl_hentry))))
		ok = false;
	fdl_pool_task t = {.jobs = part[1].len ? 2 : 1, .threads = 2, .ctx = part, .job = pack_part_job};
	fdl_error e;
	if (ok)
		fdl_pool_run(&t, &e); /* the jobs only record what they parse */
	ok = ok && part[0].ok && (!part[1].len || part[1].ok) && part[0].n + part[1].n == want;
	if (ok && part[1].n) {
		memcpy(part[0].items + part[0].n, part[1].items, part[1].n * sizeof(fdl_hentry));
		part[0].n += part[1].n;
		part[1].n = 0;
	}
	for (size_t n = 0; ok && n < want; n++)
		ok = part[0].items[n].seq == p->first + (int64_t)n &&
		     (n == 0 || fdl__hix_entries_link(&part[0].items[n - 1], &part[0].items[n]));
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; !ok && i < part[k].n; i++)
			fdl__hix_entry_clear(&part[k].items[i]);
	}
	free(part[1].items);
	if (!ok) {
		free(part[0].items);
		const char *why = !part[0].ok ? part[0].e.message : part[1].len && !part[1].ok ? part[1].e.message : NULL;
		unusable(ix, "a pack is missing or does not hold what the pointer says", why ? why : p->name);
	} else {
		p->e = part[0].items;
		p->n = want;
	}
	return ok;
}

/* Load a pack's entries (once); false when it cannot be used. */
bool fdl__hix_pack_load(hindex *ix, hpack *p, fdl_repo *repo)
{
	if (p->e)
		return true;
	char *key = fdl__hix_pack_key(p->name);
	fdl_buf b = {0};
	fdl_error e;
	bool ok = key && !fdl_store_get(repo->store, key, (size_t)p->bytes, &b, NULL, &e) && (int64_t)b.len == p->bytes;
	if (ok)
		ok = fdl__hix_pack_parse(ix, p, b.data, b.len, key);
	else
		unusable(ix, "a pack is missing or does not hold what the pointer says", p->name);
	fdl_buf_free(&b);
	free(key);
	return ok;
}

/* The indexed version with `seq`, or NULL (not indexed, or unusable). */
const fdl_hentry *fdl__hix_index_at(hindex *ix, fdl_repo *repo, int64_t seq)
{
	if (!ix || !ix->usable || seq < 1 || seq > ix->seq)
		return NULL;
	int64_t tail_first = ix->seq - (int64_t)ix->ntail + 1;
	if (seq >= tail_first)
		return &ix->tail[seq - tail_first];
	for (size_t i = 0; i < ix->npacks; i++) {
		hpack *p = &ix->packs[i];
		if (seq >= p->first && seq <= p->last)
			return fdl__hix_pack_load(ix, p, repo) ? &p->e[seq - p->first] : NULL;
	}
	return NULL;
}

/* The index to read `tip`'s history with: `branch`'s, else HEAD's
 * branch's (one that is absent is not an error). */
static int hindex_for_reading(hindex *ix, fdl_repo *repo, const char *branch, bool whole, fdl_error *err)
{
	char *head = NULL;
	int rc = 0;
	if (branch) {
		rc = fdl__hix_load(ix, repo, branch, false, err);
		ix->whole = whole;
		if (rc || ix->usable)
			return rc;
		fdl__hix_free(ix);
	}
	fdl_error e;
	if (fdl_repo_head_branch(&head, repo, &e)) {
		memset(ix, 0, sizeof *ix);
		return 0;
	}
	if (!branch || strcmp(head, branch))
		rc = fdl__hix_load(ix, repo, head, false, err);
	else
		memset(ix, 0, sizeof *ix);
	ix->whole = whole;
	free(head);
	return rc;
}

/* ---- reading --------------------------------------------------------------- */

/* One step of a history: the version `id` with `expect` seq (-1: unknown),
 * from the index when it holds exactly that version there, else from the
 * store. */
static int step(fdl_hentry *out, bool *indexed, hindex *ix, fdl_repo *repo, const char *id, int64_t expect,
		fdl_error *err)
{
	int64_t s = expect >= 0 ? expect : ix && ix->usable && !strcmp(id, ix->tip) ? ix->seq : -1;
	const fdl_hentry *h = s > 0 ? fdl__hix_index_at(ix, repo, s) : NULL;
	*indexed = h && !strcmp(h->id, id);
	if (*indexed) {
		*out = *h;
		out->doc = json_incref(h->doc);
		return 0;
	}
	return fdl__hix_entry_read(out, repo, id, err);
}

int fdl_history_read(fdl_hist *out, fdl_repo *repo, const char *branch, const char *tip, long long limit,
		     bool whole, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	hindex ix;
	int rc = hindex_for_reading(&ix, repo, branch, whole, err);
	char cur[FDL_ID_LEN + 1];
	snprintf(cur, sizeof cur, "%s", tip);
	int64_t expect = -1;
	while (!rc && (limit < 0 || (long long)out->len < limit)) {
		fdl_hentry e;
		bool indexed;
		if ((rc = step(&e, &indexed, &ix, repo, cur, expect, err)))
			break;
		if (expect >= 0 && e.seq != expect) {
			rc = fdl_fail(err, FDL_EINVALID, "version %s has seq %lld, but its child has seq %lld; expected %lld",
				      cur, (long long)e.seq, (long long)expect + 1, (long long)expect);
			fdl__hix_entry_clear(&e);
			break;
		}
		rc = fdl__hix_hist_push(out, &e, err);
		out->from_index += indexed;
		out->read += !indexed;
		const char *parent = fdl__hix_entry_parent(&e);
		bool more = parent && fdl_id_is_valid(parent);
		if (more)
			memcpy(cur, parent, FDL_ID_LEN + 1);
		expect = e.seq - 1;
		fdl__hix_entry_clear(&e);
		if (!more)
			break;
	}
	fdl__hix_free(&ix);
	return rc; /* what was read before a failure stays in *out */
}

int fdl_history_find_seq(char id[FDL_ID_LEN + 1], bool *found, fdl_repo *repo, const char *branch, const char *tip,
			 int64_t seq, fdl_error *err)
{
	*found = false;
	hindex ix;
	int rc = hindex_for_reading(&ix, repo, branch, false, err);
	if (rc || !ix.usable || seq < 1) {
		fdl__hix_free(&ix);
		return rc;
	}
	/* tip must be indexed: the index's own tip, or a version it holds;
	 * an index a few versions behind is caught up by reading those */
	int64_t at = !strcmp(tip, ix.tip) ? ix.seq : -1;
	char cur[FDL_ID_LEN + 1];
	snprintf(cur, sizeof cur, "%s", tip);
	for (int steps = 0; at < 0 && steps < 256; steps++) {
		fdl_hentry t = {0};
		if ((rc = fdl__hix_entry_read(&t, repo, cur, err))) {
			fdl__hix_free(&ix);
			return rc;
		}
		const char *parent = fdl__hix_entry_parent(&t);
		if (t.seq == seq) { /* read from its own file: the answer itself */
			memcpy(id, cur, FDL_ID_LEN + 1);
			*found = true;
			fdl__hix_entry_clear(&t);
			fdl__hix_free(&ix);
			return 0;
		}
		const fdl_hentry *h = t.seq <= ix.seq ? fdl__hix_index_at(&ix, repo, t.seq) : NULL;
		if (h && !strcmp(h->id, cur))
			at = t.seq;
		bool more = at < 0 && t.seq > seq && parent && fdl_id_is_valid(parent);
		if (more)
			memcpy(cur, parent, FDL_ID_LEN + 1);
		fdl__hix_entry_clear(&t);
		if (!more)
			break;
	}
	const fdl_hentry *h = at >= seq ? fdl__hix_index_at(&ix, repo, seq) : NULL;
	if (h) {
		/* what the index names is checked against its own version.json */
		fdl_hentry real;
		fdl_error e;
		if (!fdl__hix_entry_read(&real, repo, h->id, &e)) {
			const fdl_hentry *below = seq > 1 ? fdl__hix_index_at(&ix, repo, seq - 1) : NULL;
			const char *p = fdl__hix_entry_parent(&real);
			bool parent_ok = seq == 1 ? p == NULL : below && p && !strcmp(p, below->id);
			if (real.seq == seq && !strcmp(real.sha256, h->sha256) && parent_ok) {
				memcpy(id, h->id, FDL_ID_LEN + 1);
				*found = true;
			}
			fdl__hix_entry_clear(&real);
		}
	}
	fdl__hix_free(&ix);
	return 0;
}


int fdl_history_withdrawn_end(char end[FDL_ID_LEN + 1], fdl_repo *repo, const fdl_hist *h, const char *tip,
			      fdl_error *err)
{
	const char *missing = tip;
	if (h->len)
		missing = fdl__hix_entry_parent(&h->items[h->len - 1]);
	if (!missing || !fdl_id_is_valid(missing))
		return err->code;
	char *key = fdl_version_key(missing, FDL_EXPIRED_JSON);
	int64_t sz;
	fdl_error e;
	bool withdrawn = key && fdl_store_head(repo->store, key, &sz, &e) == 0;
	free(key);
	if (!withdrawn)
		return err->code;
	memcpy(end, missing, FDL_ID_LEN + 1);
	fdl_error_clear(err);
	return 0;
}
