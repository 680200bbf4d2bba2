/* The history index: see hindex.h and docs/format.md. */
#include "hindex.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIST_FORMAT 2     /* what fdl writes: pack lines are "<head>\t<sha256>\t<version>" */
#define HIST_FORMAT_OLD 1 /* still read: pack lines are whole entries */
#define HIST_TAIL_MAX 32  /* versions inline in the pointer, at most (or sqrt of the history) */
#define HIST_TAIL_KEEP 16 /* ... and after a flush: log -n 16 never needs a pack */
#define HIST_MAX_PACKS 8 /* what a reader accepts; fdl writes one */
#define HIST_RETRIES 5
/* update_once: the old index names a pack that cannot be read; start over
 * without it (a pointer naming a missing pack must not block its repair) */
#define HIST_REBUILD 1

/* ---- entries ---------------------------------------------------------- */

static const char *entry_parent(const fdl_hentry *e)
{
	const json_t *parents = json_is_array(e->doc) ? json_array_get(e->doc, FDL_HEAD_PARENTS)
						      : json_object_get(e->doc, "parents");
	return json_string_value(json_array_get(parents, 0));
}

static void entry_clear(fdl_hentry *e)
{
	json_decref(e->doc);
	e->doc = NULL;
}

void fdl_hist_free(fdl_hist *h)
{
	for (size_t i = 0; h && i < h->len; i++)
		entry_clear(&h->items[i]);
	if (h) {
		free(h->items);
		memset(h, 0, sizeof *h);
	}
}

static int hist_push(fdl_hist *h, const fdl_hentry *e, fdl_error *err)
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

static json_t *entry_to_json(const fdl_hentry *e)
{
	return json_pack("{s:s, s:I, s:s, s:O}", "id", e->id, "seq", (json_int_t)e->seq, "sha256", e->sha256, "version",
			 e->doc);
}

/* A version read from the store, with the sha256 of its bytes. */
static int entry_read(fdl_hentry *e, fdl_repo *repo, const char *id, fdl_error *err)
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

typedef struct hpack {
	char name[80]; /* "<sha256>.jsonl" */
	int64_t first, last, bytes;
	fdl_hentry *e; /* loaded entries, ascending; NULL until needed */
	size_t n;
} hpack;

typedef struct hindex {
	char *key;
	bool exists, usable;
	bool whole; /* load packs' whole version.json, not only the heads */
	int format; /* the pointer's fdl_history */
	char etag[FDL_ETAG_MAX];
	char tip[FDL_ID_LEN + 1];
	int64_t seq;
	hpack packs[HIST_MAX_PACKS];
	size_t npacks;
	fdl_hentry *tail; /* ascending */
	size_t ntail;
	char why[512]; /* why it is not usable */
} hindex;

static void hindex_free(hindex *ix)
{
	for (size_t i = 0; i < ix->npacks; i++) {
		for (size_t k = 0; k < ix->packs[i].n; k++)
			entry_clear(&ix->packs[i].e[k]);
		free(ix->packs[i].e);
	}
	for (size_t k = 0; k < ix->ntail; k++)
		entry_clear(&ix->tail[k]);
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

static char *pack_key(const char *name)
{
	return fdl_asprintf("history/packs/%s", name);
}

/* Consecutive entries link: seq rises by one and each names the one
 * before as its first parent. */
static bool entries_link(const fdl_hentry *older, const fdl_hentry *newer)
{
	const char *p = entry_parent(newer);
	return newer->seq == older->seq + 1 && p && !strcmp(p, older->id);
}

static int unusable(hindex *ix, const char *why, const char *detail)
{
	ix->usable = false;
	snprintf(ix->why, sizeof ix->why, "%.120s%s%.380s", why, detail ? ": " : "", detail ? detail : "");
	return 0;
}

static int pointer_parse(hindex *ix, const fdl_buf *b)
{
	json_t *doc = NULL;
	fdl_error e;
	if (fdl_json_parse(&doc, b->data, b->len, ix->key, &e))
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
		if (ix->tail[i].seq != next || (i > 0 && !entries_link(&ix->tail[i - 1], &ix->tail[i]))) {
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
static int hindex_load(hindex *ix, fdl_repo *repo, const char *branch, bool want_etag, fdl_error *err)
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
	pointer_parse(ix, &b);
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

static void *pack_part_parse(void *arg)
{
	pack_part *p = arg;
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
	return NULL;
}

/* A pack past this size is parsed in two halves at once: parsing is
 * almost all of what a long `fdl log` costs. */
#define PACK_SPLIT_BYTES (1u << 20)

/* Load a pack's entries (once); false when it cannot be used. */
static bool pack_load(hindex *ix, hpack *p, fdl_repo *repo)
{
	if (p->e)
		return true;
	char *key = pack_key(p->name);
	fdl_buf b = {0};
	fdl_error e;
	size_t want = (size_t)(p->last - p->first + 1);
	bool ok = key && !fdl_store_get(repo->store, key, (size_t)p->bytes, &b, NULL, &e) && (int64_t)b.len == p->bytes;
	pack_part part[2] = {{.key = key, .cap = want, .format = ix->format, .whole = ix->whole},
			     {.key = key, .cap = want, .format = ix->format, .whole = ix->whole}};
	part[0].items = ok ? calloc(want, sizeof(fdl_hentry)) : NULL;
	ok = ok && part[0].items;
	/* split after the line that crosses the middle */
	const char *mid = ok && b.len > PACK_SPLIT_BYTES ? memchr(b.data + b.len / 2, '\n', b.len - b.len / 2) : NULL;
	part[0].data = b.data;
	part[0].len = mid ? (size_t)(mid + 1 - b.data) : b.len;
	part[1].data = b.data + part[0].len;
	part[1].len = b.len - part[0].len;
	pthread_t th;
	bool two = ok && part[1].len && (part[1].items = calloc(want, sizeof(fdl_hentry))) &&
		   pthread_create(&th, NULL, pack_part_parse, &part[1]) == 0;
	if (ok)
		pack_part_parse(&part[0]);
	if (two)
		pthread_join(th, NULL);
	else if (ok && part[1].len) { /* no second thread: both halves on this one */
		if (part[1].items || (part[1].items = calloc(want, sizeof(fdl_hentry))))
			pack_part_parse(&part[1]);
		else
			ok = false;
	}
	ok = ok && part[0].ok && (!part[1].len || part[1].ok) && part[0].n + part[1].n == want;
	if (ok && part[1].n) {
		memcpy(part[0].items + part[0].n, part[1].items, part[1].n * sizeof(fdl_hentry));
		part[0].n += part[1].n;
		part[1].n = 0;
	}
	for (size_t n = 0; ok && n < want; n++)
		ok = part[0].items[n].seq == p->first + (int64_t)n &&
		     (n == 0 || entries_link(&part[0].items[n - 1], &part[0].items[n]));
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; !ok && i < part[k].n; i++)
			entry_clear(&part[k].items[i]);
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
	fdl_buf_free(&b);
	free(key);
	return ok;
}

/* The indexed version with `seq`, or NULL (not indexed, or unusable). */
static const fdl_hentry *index_at(hindex *ix, fdl_repo *repo, int64_t seq)
{
	if (!ix || !ix->usable || seq < 1 || seq > ix->seq)
		return NULL;
	int64_t tail_first = ix->seq - (int64_t)ix->ntail + 1;
	if (seq >= tail_first)
		return &ix->tail[seq - tail_first];
	for (size_t i = 0; i < ix->npacks; i++) {
		hpack *p = &ix->packs[i];
		if (seq >= p->first && seq <= p->last)
			return pack_load(ix, p, repo) ? &p->e[seq - p->first] : NULL;
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
		rc = hindex_load(ix, repo, branch, false, err);
		ix->whole = whole;
		if (rc || ix->usable)
			return rc;
		hindex_free(ix);
	}
	fdl_error e;
	if (fdl_repo_head_branch(&head, repo, &e)) {
		memset(ix, 0, sizeof *ix);
		return 0;
	}
	if (!branch || strcmp(head, branch))
		rc = hindex_load(ix, repo, head, false, err);
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
	const fdl_hentry *h = s > 0 ? index_at(ix, repo, s) : NULL;
	*indexed = h && !strcmp(h->id, id);
	if (*indexed) {
		*out = *h;
		out->doc = json_incref(h->doc);
		return 0;
	}
	return entry_read(out, repo, id, err);
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
			entry_clear(&e);
			break;
		}
		rc = hist_push(out, &e, err);
		out->from_index += indexed;
		out->read += !indexed;
		const char *parent = entry_parent(&e);
		bool more = parent && fdl_id_is_valid(parent);
		if (more)
			memcpy(cur, parent, FDL_ID_LEN + 1);
		expect = e.seq - 1;
		entry_clear(&e);
		if (!more)
			break;
	}
	hindex_free(&ix);
	return rc; /* what was read before a failure stays in *out */
}

int fdl_history_find_seq(char id[FDL_ID_LEN + 1], bool *found, fdl_repo *repo, const char *branch, const char *tip,
			 int64_t seq, fdl_error *err)
{
	*found = false;
	hindex ix;
	int rc = hindex_for_reading(&ix, repo, branch, false, err);
	if (rc || !ix.usable || seq < 1) {
		hindex_free(&ix);
		return rc;
	}
	/* tip must be indexed: the index's own tip, or a version it holds;
	 * an index a few versions behind is caught up by reading those */
	int64_t at = !strcmp(tip, ix.tip) ? ix.seq : -1;
	char cur[FDL_ID_LEN + 1];
	snprintf(cur, sizeof cur, "%s", tip);
	for (int steps = 0; at < 0 && steps < 256; steps++) {
		fdl_hentry t = {0};
		if ((rc = entry_read(&t, repo, cur, err))) {
			hindex_free(&ix);
			return rc;
		}
		const char *parent = entry_parent(&t);
		if (t.seq == seq) { /* read from its own file: the answer itself */
			memcpy(id, cur, FDL_ID_LEN + 1);
			*found = true;
			entry_clear(&t);
			hindex_free(&ix);
			return 0;
		}
		const fdl_hentry *h = t.seq <= ix.seq ? index_at(&ix, repo, t.seq) : NULL;
		if (h && !strcmp(h->id, cur))
			at = t.seq;
		bool more = at < 0 && t.seq > seq && parent && fdl_id_is_valid(parent);
		if (more)
			memcpy(cur, parent, FDL_ID_LEN + 1);
		entry_clear(&t);
		if (!more)
			break;
	}
	const fdl_hentry *h = at >= seq ? index_at(&ix, repo, seq) : NULL;
	if (h) {
		/* what the index names is checked against its own version.json */
		fdl_hentry real;
		fdl_error e;
		if (!entry_read(&real, repo, h->id, &e)) {
			const fdl_hentry *below = seq > 1 ? index_at(&ix, repo, seq - 1) : NULL;
			const char *p = entry_parent(&real);
			bool parent_ok = seq == 1 ? p == NULL : below && p && !strcmp(p, below->id);
			if (real.seq == seq && !strcmp(real.sha256, h->sha256) && parent_ok) {
				memcpy(id, h->id, FDL_ID_LEN + 1);
				*found = true;
			}
			entry_clear(&real);
		}
	}
	hindex_free(&ix);
	return 0;
}

/* ---- writing ----------------------------------------------------------------- */

typedef struct entries {
	const fdl_hentry **p;
	size_t n, cap;
} entries;

static int entries_add(entries *l, const fdl_hentry *e, fdl_error *err)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		const fdl_hentry **p = realloc(l->p, cap * sizeof *p);
		if (!p)
			return fdl_oom(err);
		l->p = p;
		l->cap = cap;
	}
	l->p[l->n++] = e;
	return 0;
}

static int entries_add_pack(entries *l, const hpack *p, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < p->n && !rc; i++)
		rc = entries_add(l, &p->e[i], err);
	return rc;
}

/* An entry as a pack line: "<head>\t<sha256>\t<version.json>\n". */
static int line_add(fdl_buf *b, const fdl_hentry *e, fdl_error *err)
{
	if (!e->whole)
		return fdl_fail(err, FDL_ERROR, "the history index: version %s was read without its version.json", e->id);
	json_t *head = fdl_hentry_head(e->doc);
	char *h = head ? json_dumps(head, JSON_COMPACT) : NULL;
	char *v = h ? json_dumps(e->doc, JSON_COMPACT) : NULL;
	int rc = v ? 0 : fdl_oom(err);
	if (!rc)
		rc = fdl_buf_add(b, h, strlen(h), err);
	if (!rc)
		rc = fdl_buf_add(b, "\t", 1, err);
	if (!rc)
		rc = fdl_buf_add(b, e->sha256, 64, err);
	if (!rc)
		rc = fdl_buf_add(b, "\t", 1, err);
	if (!rc)
		rc = fdl_buf_add(b, v, strlen(v), err);
	if (!rc)
		rc = fdl_buf_add(b, "\n", 1, err);
	free(h);
	free(v);
	json_decref(head);
	return rc;
}

/* Write entries as a pack (create-only; the same bytes are the same name). */
static int pack_write(hpack *out, fdl_repo *repo, const entries *l, size_t from, size_t to, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	fdl_buf b = {0};
	int rc = 0;
	for (size_t i = from; i < to && !rc; i++)
		rc = line_add(&b, l->p[i], err);
	char hex[65];
	if (!rc)
		rc = fdl_sha256_mem(hex, b.data, b.len, err);
	char *key = NULL;
	if (!rc) {
		snprintf(out->name, sizeof out->name, "%s.jsonl", hex);
		out->first = l->p[from]->seq;
		out->last = l->p[to - 1]->seq;
		out->bytes = (int64_t)b.len;
		key = pack_key(out->name);
		rc = key ? fdl_store_put_if_absent(repo->store, key, b.data, b.len, err)
			 : fdl_oom(err);
		if (rc == FDL_EEXISTS)
			rc = 0;
	}
	free(key);
	fdl_buf_free(&b);
	return rc;
}

static int64_t isqrt64(int64_t v)
{
	int64_t r = 0;
	while ((r + 1) * (r + 1) <= v)
		r++;
	return r;
}

/* The pointer's JSON: tip, seq, packs and the inline versions. */
static json_t *pointer_json(const char *branch, const char *tip, int64_t seq, const hpack *packs, size_t npacks,
			    const entries *tail, size_t from)
{
	json_t *jp = json_array(), *jt = json_array();
	for (size_t i = 0; jp && i < npacks; i++)
		json_array_append_new(jp, json_pack("{s:s, s:I, s:I, s:I}", "name", packs[i].name, "first_seq",
						    (json_int_t)packs[i].first, "last_seq", (json_int_t)packs[i].last,
						    "bytes", (json_int_t)packs[i].bytes));
	for (size_t i = from; jt && i < tail->n; i++)
		json_array_append_new(jt, entry_to_json(tail->p[i]));
	return json_pack("{s:i, s:s, s:s, s:I, s:o, s:o}", "fdl_history", HIST_FORMAT, "branch", branch, "tip", tip,
			 "seq", (json_int_t)seq, "packs", jp, "tail", jt);
}

/* Is pack `name` named by any pointer other than `own`? True when that
 * cannot be known (a store that cannot be listed). */
static bool pack_in_use(fdl_repo *repo, const fdl_strlist *pointers, const char *own, const char *name)
{
	for (size_t i = 0; i < pointers->len; i++) {
		if (!strcmp(pointers->items[i], own))
			continue;
		fdl_buf b = {0};
		fdl_error e;
		int rc = fdl_store_get(repo->store, pointers->items[i], FDL_META_MAX_BYTES, &b, NULL, &e);
		bool named = rc == 0 && b.len && memmem(b.data, b.len, name, strlen(name));
		fdl_buf_free(&b);
		if (named || (rc && rc != FDL_ENOTFOUND))
			return true;
	}
	return false;
}

/* Remove the packs the old pointer named and the new one does not. */
static void drop_old_packs(fdl_repo *repo, const hindex *old, const hpack *now, size_t nnow, const char *own)
{
	fdl_strlist pointers = {0};
	fdl_error e;
	if (fdl_store_list(repo->store, "history/heads", &pointers, &e) && e.code != FDL_ENOTFOUND) {
		fdl_strlist_free(&pointers);
		return;
	}
	for (size_t i = 0; i < old->npacks; i++) {
		bool kept = false;
		for (size_t k = 0; k < nnow && !kept; k++)
			kept = !strcmp(old->packs[i].name, now[k].name);
		if (kept || pack_in_use(repo, &pointers, own, old->packs[i].name))
			continue;
		char *key = pack_key(old->packs[i].name);
		if (key)
			fdl_store_del(repo->store, key, &e);
		free(key);
	}
	fdl_strlist_free(&pointers);
}

/* One attempt: 0 (done), FDL_ECONFLICT (another writer moved the pointer:
 * try again) or an error. */
static int update_once(fdl_repo *repo, const char *branch, const char *given, long max_walk, bool rebuild,
		       fdl_error *err)
{
	char *ref_key = NULL;
	char tip[FDL_ID_LEN + 1];
	bool exists = given != NULL;
	hindex own, seed = {0};
	int rc = 0;
	if (given)
		snprintf(tip, sizeof tip, "%s", given);
	else if (!(rc = fdl_ref_branch_key(&ref_key, branch, err)))
		rc = fdl_ref_read(repo, ref_key, tip, &exists, NULL, err);
	free(ref_key);
	if (rc)
		return rc;
	if ((rc = hindex_load(&own, repo, branch, true, err)))
		return rc;
	own.whole = true; /* its entries are written again */
	if (!exists) { /* the branch is gone: so is its index */
		if (own.exists)
			rc = fdl_store_del_if_match(repo->store, own.key, own.etag, err);
		if (!rc)
			drop_old_packs(repo, &own, NULL, 0, own.key);
		hindex_free(&own);
		return rc == FDL_ENOTFOUND ? 0 : rc;
	}
	if (own.usable && own.format == HIST_FORMAT && !strcmp(own.tip, tip)) {
		hindex_free(&own);
		return 0;
	}
	hindex *base = &own;
	if (rebuild) /* from version.json files alone */
		own.usable = false;
	if (!own.usable && !rebuild) {
		char *head = NULL;
		fdl_error e;
		if (!fdl_repo_head_branch(&head, repo, &e) && strcmp(head, branch) &&
		    !hindex_load(&seed, repo, head, false, &e) && seed.usable)
			base = &seed;
		seed.whole = true;
		free(head);
	}
	/* walk from the tip down to where the base index holds the chain */
	fdl_hist walked = {0};
	int64_t join = 0;
	char cur[FDL_ID_LEN + 1];
	memcpy(cur, tip, sizeof cur);
	for (;;) {
		fdl_hentry e;
		if ((rc = entry_read(&e, repo, cur, err)))
			break;
		if (walked.len && e.seq != walked.items[walked.len - 1].seq - 1)
			rc = fdl_fail(err, FDL_EINVALID, "version %s has seq %lld, but its child has seq %lld", cur,
				      (long long)e.seq, (long long)walked.items[walked.len - 1].seq);
		if (!rc)
			rc = hist_push(&walked, &e, err);
		entry_clear(&e);
		if (rc)
			break;
		const fdl_hentry *w = &walked.items[walked.len - 1];
		const char *parent = entry_parent(w);
		if (!parent || w->seq <= 1)
			break;
		if (max_walk >= 0 && (long)walked.len >= max_walk) {
			rc = fdl_fail(err, FDL_ENOCHANGE, "no index joins within %ld versions of the tip: fdl gc writes "
							  "it whole",
				      max_walk);
			break;
		}
		int64_t s = w->seq - 1;
		if (base->usable && s <= base->seq) {
			const fdl_hentry *h = s == base->seq ? NULL : index_at(base, repo, s);
			if ((s == base->seq && !strcmp(parent, base->tip)) || (h && !strcmp(h->id, parent))) {
				join = s;
				break;
			}
		}
		memcpy(cur, parent, sizeof cur);
	}
	/* the new index: base packs wholly at or below the join, then the
	 * base's versions up to the join, then the walked ones */
	entries all = {0};
	hpack packs[3];
	size_t npacks = 0, keep_from = 0;
	int64_t done = 0;
	/* (an index in the old format keeps none: its packs are written anew) */
	for (size_t i = 0; !rc && base->format == HIST_FORMAT && i < base->npacks && base->packs[i].last <= join &&
			   npacks < 2;
	     i++) {
		/* gc and clone (no bound on the walk) also read what they keep:
		 * a pack that is gone or damaged makes them write the index anew */
		if (max_walk < 0 && !pack_load(base, &base->packs[i], repo)) {
			rc = HIST_REBUILD;
			break;
		}
		packs[npacks++] = base->packs[i];
		packs[npacks - 1].e = NULL;
		done = base->packs[i].last;
	}
	for (int64_t s = done + 1; !rc && s <= join; s++) {
		const fdl_hentry *h = index_at(base, repo, s);
		rc = h ? entries_add(&all, h, err) : HIST_REBUILD;
	}
	for (size_t i = walked.len; !rc && i > 0; i--)
		rc = entries_add(&all, &walked.items[i - 1], err);
	for (size_t i = 1; !rc && i < all.n; i++)
		if (!entries_link(all.p[i - 1], all.p[i]))
			rc = fdl_fail(err, FDL_EINVALID, "version %s does not follow version %s", all.p[i]->id,
				      all.p[i - 1]->id);
	/* One pack at rest, so a whole history is the pointer and one pack at
	 * any length (five requests with fdl.json, HEAD and the ref). The
	 * pointer holds up to max(32, sqrt(versions)) versions; past that all
	 * but the newest 16 join the pack, which is written anew: per commit
	 * that is a pointer of at most sqrt(n) versions plus, amortised, about
	 * sqrt(n) versions of pack. An index written with two packs (fdl 0.2)
	 * is made one pack at its next update. */
	int64_t tail_max = walked.len ? isqrt64(walked.items[0].seq) : 0;
	if (tail_max < HIST_TAIL_MAX)
		tail_max = HIST_TAIL_MAX;
	if (!rc && ((int64_t)all.n > tail_max || npacks > 1)) {
		entries merged = {0};
		for (size_t i = 0; !rc && i < npacks; i++)
			rc = pack_load(base, &base->packs[i], repo) ? entries_add_pack(&merged, &base->packs[i], err)
								    : HIST_REBUILD;
		size_t move = (int64_t)all.n > tail_max ? all.n - HIST_TAIL_KEEP : 0;
		for (size_t i = 0; !rc && i < move; i++)
			rc = entries_add(&merged, all.p[i], err);
		npacks = 0;
		if (!rc && merged.n)
			rc = pack_write(&packs[npacks++], repo, &merged, 0, merged.n, err);
		free(merged.p);
		keep_from = move;
	}
	if (!rc) {
		json_t *doc = pointer_json(branch, tip, walked.items[0].seq, packs, npacks, &all, keep_from);
		char *text = NULL;
		size_t len = 0;
		rc = doc ? fdl_json_dump_as(&text, &len, doc, true, err) : fdl_oom(err);
		if (!rc)
			rc = fdl_store_put_if_match(repo->store, own.key, text, len, own.exists ? own.etag : NULL, err);
		free(text);
		json_decref(doc);
	}
	if (!rc)
		drop_old_packs(repo, &own, packs, npacks, own.key);
	free(all.p);
	fdl_hist_free(&walked);
	hindex_free(&seed);
	hindex_free(&own);
	return rc;
}

static int update(fdl_repo *repo, const char *branch, const char *tip, long max_walk, fdl_error *err)
{
	if (!strncmp(branch, "refs/heads/", 11))
		branch += 11;
	int rc = FDL_ECONFLICT;
	bool rebuild = false;
	for (int i = 0; i < HIST_RETRIES && (rc == FDL_ECONFLICT || rc == HIST_REBUILD); i++) {
		rebuild = rebuild || rc == HIST_REBUILD;
		rc = update_once(repo, branch, tip, max_walk, rebuild, err);
	}
	if (rc == HIST_REBUILD)
		rc = fdl_fail(err, FDL_EINVALID, "a pack of the index cannot be read");
	return rc ? fdl_error_prefix(err, "the history index of branch %s was not updated", branch) : 0;
}

int fdl_history_update(fdl_repo *repo, const char *branch, long max_walk, fdl_error *err)
{
	return update(repo, branch, NULL, max_walk, err);
}

int fdl_history_prepare(fdl_repo *repo, const char *branch, const char *tip, fdl_error *err)
{
	return update(repo, branch, tip, FDL_HISTORY_WALK_MAX, err);
}

int fdl_history_remove(fdl_repo *repo, const char *branch, fdl_error *err)
{
	if (!strncmp(branch, "refs/heads/", 11))
		branch += 11;
	hindex own;
	int rc = hindex_load(&own, repo, branch, true, err);
	if (!rc && own.exists) {
		rc = fdl_store_del_if_match(repo->store, own.key, own.etag, err);
		if (!rc)
			drop_old_packs(repo, &own, NULL, 0, own.key);
	}
	hindex_free(&own);
	return rc == FDL_ENOTFOUND ? 0 : rc;
}

int fdl_history_drop(fdl_repo *repo, fdl_error *err)
{
	fdl_strlist keys = {0};
	int rc = fdl_store_list(repo->store, "history", &keys, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_strlist_free(&keys);
		return 0;
	}
	/* pointers first: a reader then never finds a pointer to a gone pack;
	 * the ref list (reflist.c) holds no version.json and stays */
	for (int pass = 0; pass < 2 && !rc; pass++)
		for (size_t i = 0; i < keys.len && !rc; i++)
			if ((pass == 0) == !strncmp(keys.items[i], "history/heads/", 14) &&
			    strcmp(keys.items[i], "history/refs.json")) {
				rc = fdl_store_del(repo->store, keys.items[i], err);
				if (rc == FDL_ENOTFOUND)
					rc = 0;
			}
	fdl_strlist_free(&keys);
	return rc;
}

/* ---- verify ------------------------------------------------------------------- */

#define finding fdl_finding_add

/* One entry against the version.json it copies. */
static int check_entry(fdl_strlist *problems, fdl_repo *repo, const char *where, const fdl_hentry *h)
{
	fdl_hentry real;
	fdl_error e;
	int rc = 0;
	if (entry_read(&real, repo, h->id, &e))
		return finding(problems, where, "names version %s (seq %lld), which cannot be read: %s", h->id,
			       (long long)h->seq, e.message);
	if (strcmp(real.sha256, h->sha256) || !json_equal(real.doc, h->doc) || real.seq != h->seq)
		rc = finding(problems, where,
			     "its entry for version %s (seq %lld) differs from versions/%s/version.json (the index was "
			     "edited or is damaged; readers check what they open, but its listing may be wrong: "
			     "delete history/ and commit, or run fdl gc)",
			     h->id, (long long)h->seq, h->id);
	entry_clear(&real);
	return rc;
}

/* A pack's bytes must hash to its name. */
static int check_pack_bytes(fdl_strlist *problems, fdl_repo *repo, const char *key, const char *name)
{
	fdl_buf b = {0};
	fdl_error e;
	char hex[65];
	int rc = 0;
	if (fdl_store_get(repo->store, key, FDL_META_MAX_BYTES, &b, NULL, &e) || fdl_sha256_mem(hex, b.data, b.len, &e))
		rc = finding(problems, key, "cannot be read: %s", e.message);
	else if (strncmp(hex, name, 64))
		rc = finding(problems, key, "has sha256 %s; a pack is named by the sha256 of its bytes (it was changed "
					    "after it was written)", hex);
	fdl_buf_free(&b);
	return rc;
}

int fdl_history_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist keys = {0}, named = {0};
	int rc = fdl_store_list(repo->store, "history", &keys, err);
	if (rc) { /* no index, or a store that cannot be listed: nothing to say */
		fdl_strlist_free(&keys);
		return rc == FDL_ENOTFOUND || rc == FDL_EINVALID ? 0 : rc;
	}
	fdl_strlist_sort(&keys);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const char *k = keys.items[i];
		size_t n = strlen(k);
		if (!strncmp(k, "history/packs/", 14)) {
			if (n != 14 + 70 || strcmp(k + n - 6, ".jsonl"))
				rc = finding(problems, k, "is not part of the history index (packs are <sha256>.jsonl)");
			continue;
		}
		if (!strcmp(k, "history/refs.json")) { /* the ref list (reflist.c) */
			rc = fdl_reflist_verify(problems, warnings, repo, err);
			continue;
		}
		if (strncmp(k, "history/heads/", 14) || n < 20 || strcmp(k + n - 5, ".json")) {
			if (!strstr(k, ".lock"))
				rc = finding(problems, k, "is not part of the history index (history/heads/<branch>.json, "
							  "history/packs/<sha256>.jsonl, history/refs.json)");
			continue;
		}
		char *branch = strndup(k + 14, n - 14 - 5);
		hindex ix;
		if (!branch || (rc = hindex_load(&ix, repo, branch, false, err))) {
			free(branch);
			break;
		}
		ix.whole = true; /* each entry is compared with its version.json */
		if (!ix.usable) {
			rc = finding(problems, k, "is not a usable history index (%s); readers ignore it and read "
						  "version.json files; the next commit on the branch rewrites it",
				     ix.why);
			hindex_free(&ix);
			free(branch);
			continue;
		}
		char *ref_key = fdl_asprintf("refs/heads/%s", branch);
		char tip[FDL_ID_LEN + 1];
		bool exists = false;
		fdl_error e;
		if (ref_key && !fdl_ref_read(repo, ref_key, tip, &exists, NULL, &e)) {
			if (!exists)
				rc = finding(warnings, k, "indexes branch %s, which does not exist", branch);
			else if (strcmp(tip, ix.tip))
				rc = finding(warnings, k, "indexes %s (seq %lld) but branch %s is at %s: readers complete it "
							  "from version.json files; the next commit on the branch brings it "
							  "up to date",
					     ix.tip, (long long)ix.seq, branch, tip);
		}
		free(ref_key);
		for (size_t t = 0; t < ix.ntail && !rc; t++)
			rc = check_entry(problems, repo, k, &ix.tail[t]);
		for (size_t p = 0; p < ix.npacks && !rc; p++) {
			char *pk = pack_key(ix.packs[p].name);
			rc = pk ? fdl_strlist_add(&named, pk, err) : FDL_ERROR;
			if (!rc && !pack_load(&ix, &ix.packs[p], repo))
				rc = finding(problems, k, "names pack %s (seqs %lld to %lld), which cannot be used: %s",
					     ix.packs[p].name, (long long)ix.packs[p].first, (long long)ix.packs[p].last,
					     ix.why);
			else if (!rc)
				rc = check_pack_bytes(problems, repo, pk, ix.packs[p].name);
			for (size_t q = 0; !rc && q < ix.packs[p].n; q++)
				rc = check_entry(problems, repo, pk ? pk : k, &ix.packs[p].e[q]);
			if (!rc && p + 1 < ix.npacks && ix.packs[p].n && pack_load(&ix, &ix.packs[p + 1], repo) &&
			    !entries_link(&ix.packs[p].e[ix.packs[p].n - 1], &ix.packs[p + 1].e[0]))
				rc = finding(problems, k, "packs %s and %s do not follow each other", ix.packs[p].name,
					     ix.packs[p + 1].name);
			free(pk);
		}
		hindex_free(&ix);
		free(branch);
	}
	fdl_strlist_sort(&named);
	for (size_t i = 0; i < keys.len && !rc; i++)
		if (!strncmp(keys.items[i], "history/packs/", 14) && strlen(keys.items[i]) == 84 &&
		    !fdl_strlist_has_sorted(&named, keys.items[i]))
			rc = finding(warnings, keys.items[i], "is named by no history index (left by an interrupted "
							      "writer; fdl gc removes it)");
	fdl_strlist_free(&named);
	fdl_strlist_free(&keys);
	return rc;
}

int fdl_history_unnamed_packs(fdl_strlist *out, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist keys = {0}, named = {0};
	int rc = fdl_store_list(repo->store, "history", &keys, err);
	if (rc) {
		fdl_strlist_free(&keys);
		return rc == FDL_ENOTFOUND || rc == FDL_EINVALID ? 0 : rc;
	}
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const char *k = keys.items[i];
		size_t n = strlen(k);
		if (strncmp(k, "history/heads/", 14) || n < 20 || strcmp(k + n - 5, ".json"))
			continue;
		/* a pointer that cannot be read or parsed keeps everything */
		fdl_buf b = {0};
		json_t *doc = NULL;
		fdl_error e;
		if (fdl_store_get(repo->store, k, FDL_META_MAX_BYTES, &b, NULL, &e) ||
		    fdl_json_parse(&doc, b.data, b.len, k, &e)) {
			fdl_buf_free(&b);
			fdl_strlist_free(&keys);
			fdl_strlist_free(&named);
			return 0;
		}
		const json_t *packs = json_object_get(doc, "packs");
		for (size_t p = 0; p < json_array_size(packs) && !rc; p++) {
			const char *name = json_string_value(json_object_get(json_array_get(packs, p), "name"));
			char *pk = name ? pack_key(name) : NULL;
			if (pk)
				rc = fdl_strlist_add(&named, pk, err);
			free(pk);
		}
		json_decref(doc);
		fdl_buf_free(&b);
	}
	fdl_strlist_sort(&named);
	for (size_t i = 0; i < keys.len && !rc; i++)
		if (!strncmp(keys.items[i], "history/packs/", 14) && !fdl_strlist_has_sorted(&named, keys.items[i]))
			rc = fdl_strlist_add(out, keys.items[i], err);
	fdl_strlist_free(&named);
	fdl_strlist_free(&keys);
	return rc;
}

int fdl_history_withdrawn_end(char end[FDL_ID_LEN + 1], fdl_repo *repo, const fdl_hist *h, const char *tip,
			      fdl_error *err)
{
	const char *missing = tip;
	if (h->len)
		missing = entry_parent(&h->items[h->len - 1]);
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
