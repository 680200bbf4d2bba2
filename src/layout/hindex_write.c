/* The history index, writing: fdl_history_update, prepare, remove and drop (hindex.h). */
#include "hindex_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one attempt at an update came to (its error, if any, in err). */
typedef enum upd_status {
	UPD_DONE,     /* the index is up to date (or gone with its branch) */
	UPD_CONFLICT, /* another writer moved the pointer: try again */
	UPD_REBUILD,  /* the old index names a pack that cannot be read: start over without it (a
		       * pointer naming a missing pack must not block its repair) */
	UPD_FAILED    /* an error, in err */
} upd_status;

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
		key = fdl__hix_pack_key(out->name);
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
		json_array_append_new(jt, fdl__hix_entry_to_json(tail->p[i]));
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
		char *key = fdl__hix_pack_key(old->packs[i].name);
		if (key)
			fdl_store_del(repo->store, key, &e);
		free(key);
	}
	fdl_strlist_free(&pointers);
}

/* Walk tip's first-parent chain down (into *walked, newest first) to
 * where `base` holds it (*join: the seq below the walked versions, 0 when
 * the walk reached the first version). */
static int walk_to_join(fdl_hist *walked, int64_t *join, fdl_repo *repo, hindex *base, const char *tip,
			long max_walk, fdl_error *err)
{
	int rc = 0;
	char cur[FDL_ID_LEN + 1];
	memcpy(cur, tip, sizeof cur);
	for (;;) {
		fdl_hentry e;
		if ((rc = fdl__hix_entry_read(&e, repo, cur, err)))
			break;
		if (walked->len && e.seq != walked->items[walked->len - 1].seq - 1)
			rc = fdl_fail(err, FDL_EINVALID, "version %s has seq %lld, but its child has seq %lld", cur,
				      (long long)e.seq, (long long)walked->items[walked->len - 1].seq);
		if (!rc)
			rc = fdl__hix_hist_push(walked, &e, err);
		fdl__hix_entry_clear(&e);
		if (rc)
			break;
		const fdl_hentry *w = &walked->items[walked->len - 1];
		const char *parent = fdl__hix_entry_parent(w);
		if (!parent || w->seq <= 1)
			break;
		if (max_walk >= 0 && (long)walked->len >= max_walk) {
			rc = fdl_fail(err, FDL_ENOCHANGE, "no index joins within %ld versions of the tip: fdl gc writes "
							  "it whole",
				      max_walk);
			break;
		}
		int64_t s = w->seq - 1;
		if (base->usable && s <= base->seq) {
			const fdl_hentry *h = s == base->seq ? NULL : fdl__hix_index_at(base, repo, s);
			if ((s == base->seq && !strcmp(parent, base->tip)) || (h && !strcmp(h->id, parent))) {
				*join = s;
				break;
			}
		}
		memcpy(cur, parent, sizeof cur);
	}
	return rc;
}

/* An FDL_E* code (or 0) as an attempt's status. */
static upd_status status_of(int rc)
{
	return rc == 0 ? UPD_DONE : rc == FDL_ECONFLICT ? UPD_CONFLICT : UPD_FAILED;
}

/* The new index: base packs wholly at or below the join, then the base's
 * versions up to the join, then the walked ones; into all (the pointer's
 * versions from *keep_from on) and packs[*npacks]. */
static upd_status assemble(entries *all, hpack packs[3], size_t *npacks, size_t *keep_from, fdl_repo *repo,
			   hindex *base, const fdl_hist *walked, int64_t join, long max_walk, fdl_error *err)
{
	int rc = 0;
	int64_t done = 0;
	/* (an index in the old format keeps none: its packs are written anew) */
	for (size_t i = 0; !rc && base->format == HIST_FORMAT && i < base->npacks && base->packs[i].last <= join &&
			   *npacks < 2;
	     i++) {
		/* gc and clone (no bound on the walk) also read what they keep:
		 * a pack that is gone or damaged makes them write the index anew */
		if (max_walk < 0 && !fdl__hix_pack_load(base, &base->packs[i], repo))
			return UPD_REBUILD;
		packs[(*npacks)++] = base->packs[i];
		packs[*npacks - 1].e = NULL;
		done = base->packs[i].last;
	}
	for (int64_t s = done + 1; !rc && s <= join; s++) {
		const fdl_hentry *h = fdl__hix_index_at(base, repo, s);
		if (!h)
			return UPD_REBUILD;
		rc = entries_add(all, h, err);
	}
	for (size_t i = walked->len; !rc && i > 0; i--)
		rc = entries_add(all, &walked->items[i - 1], err);
	for (size_t i = 1; !rc && i < all->n; i++)
		if (!fdl__hix_entries_link(all->p[i - 1], all->p[i]))
			rc = fdl_fail(err, FDL_EINVALID, "version %s does not follow version %s", all->p[i]->id,
				      all->p[i - 1]->id);
	/* One pack at rest, so a whole history is the pointer and one pack at
	 * any length (five requests with fdl.json, HEAD and the ref). The
	 * pointer holds up to max(32, sqrt(versions)) versions; past that all
	 * but the newest 16 join the pack, which is written anew: per commit
	 * that is a pointer of at most sqrt(n) versions plus, amortised, about
	 * sqrt(n) versions of pack. An index written with two packs (fdl 0.2)
	 * is made one pack at its next update. */
	int64_t tail_max = walked->len ? isqrt64(walked->items[0].seq) : 0;
	if (tail_max < HIST_TAIL_MAX)
		tail_max = HIST_TAIL_MAX;
	if (!rc && ((int64_t)all->n > tail_max || *npacks > 1)) {
		entries merged = {0};
		bool lost = false; /* a pack that cannot be read */
		for (size_t i = 0; !rc && !lost && i < *npacks; i++) {
			lost = !fdl__hix_pack_load(base, &base->packs[i], repo);
			rc = lost ? 0 : entries_add_pack(&merged, &base->packs[i], err);
		}
		size_t move = (int64_t)all->n > tail_max ? all->n - HIST_TAIL_KEEP : 0;
		for (size_t i = 0; !rc && !lost && i < move; i++)
			rc = entries_add(&merged, all->p[i], err);
		*npacks = 0;
		if (!rc && !lost && merged.n)
			rc = pack_write(&packs[(*npacks)++], repo, &merged, 0, merged.n, err);
		free(merged.p);
		if (lost)
			return UPD_REBUILD;
		*keep_from = move;
	}
	return status_of(rc);
}

/* One attempt (see upd_status). */
static upd_status update_once(fdl_repo *repo, const char *branch, const char *given, long max_walk, bool rebuild,
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
	if (rc || (rc = fdl__hix_load(&own, repo, branch, true, err)))
		return status_of(rc);
	own.whole = true; /* its entries are written again */
	if (!exists) { /* the branch is gone: so is its index */
		if (own.exists)
			rc = fdl_store_del_if_match(repo->store, own.key, own.etag, err);
		if (!rc)
			drop_old_packs(repo, &own, NULL, 0, own.key);
		fdl__hix_free(&own);
		return status_of(rc == FDL_ENOTFOUND ? 0 : rc);
	}
	if (own.usable && own.format == HIST_FORMAT && !strcmp(own.tip, tip)) {
		fdl__hix_free(&own);
		return UPD_DONE;
	}
	hindex *base = &own;
	if (rebuild) /* from version.json files alone */
		own.usable = false;
	if (!own.usable && !rebuild) {
		char *head = NULL;
		fdl_error e;
		if (!fdl_repo_head_branch(&head, repo, &e) && strcmp(head, branch) &&
		    !fdl__hix_load(&seed, repo, head, false, &e) && seed.usable)
			base = &seed;
		seed.whole = true;
		free(head);
	}
	/* walk from the tip down to where the base index holds the chain */
	fdl_hist walked = {0};
	int64_t join = 0;
	rc = walk_to_join(&walked, &join, repo, base, tip, max_walk, err);
	entries all = {0};
	hpack packs[3];
	size_t npacks = 0, keep_from = 0;
	upd_status st = rc ? status_of(rc)
			   : assemble(&all, packs, &npacks, &keep_from, repo, base, &walked, join, max_walk, err);
	if (st == UPD_DONE) {
		json_t *doc = pointer_json(branch, tip, walked.items[0].seq, packs, npacks, &all, keep_from);
		char *text = NULL;
		size_t len = 0;
		rc = doc ? fdl_json_dump_as(&text, &len, doc, true, err) : fdl_oom(err);
		if (!rc)
			rc = fdl_store_put_if_match(repo->store, own.key, text, len, own.exists ? own.etag : NULL, err);
		free(text);
		json_decref(doc);
		st = status_of(rc);
	}
	if (st == UPD_DONE)
		drop_old_packs(repo, &own, packs, npacks, own.key);
	free(all.p);
	fdl_hist_free(&walked);
	fdl__hix_free(&seed);
	fdl__hix_free(&own);
	return st;
}

static int update(fdl_repo *repo, const char *branch, const char *tip, long max_walk, fdl_error *err)
{
	if (!strncmp(branch, "refs/heads/", 11))
		branch += 11;
	upd_status st = UPD_CONFLICT;
	bool rebuild = false;
	for (int i = 0; i < HIST_RETRIES && (st == UPD_CONFLICT || st == UPD_REBUILD); i++) {
		rebuild = rebuild || st == UPD_REBUILD;
		st = update_once(repo, branch, tip, max_walk, rebuild, err);
	}
	if (st == UPD_DONE)
		return 0;
	if (st == UPD_REBUILD)
		fdl_fail(err, FDL_EINVALID, "a pack of the index cannot be read");
	return fdl_error_prefix(err, "the history index of branch %s was not updated", branch);
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
	int rc = fdl__hix_load(&own, repo, branch, true, err);
	if (!rc && own.exists) {
		rc = fdl_store_del_if_match(repo->store, own.key, own.etag, err);
		if (!rc)
			drop_old_packs(repo, &own, NULL, 0, own.key);
	}
	fdl__hix_free(&own);
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

