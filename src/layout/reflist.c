/*
 * The ref list (fdl's addition, docs/format.md "The ref list"):
 * history/refs.json names every branch and tag with the version it was at
 * when a writer last changed it, and the versions that expired or were
 * withdrawn, for the readers that cannot list a store (a static host):
 * clone copies every branch and tag through it, log marks them. Like the
 * history index it is derived, never the truth: refs/ and expired.json
 * are. Writers keep it by compare-and-swap after they change a ref; a
 * failure never fails them (it costs a static host's readers a branch).
 *
 *   {"fdl_refs": 1,
 *    "refs": {"refs/heads/main": "<id>", "refs/tags/v1": "<id>"},
 *    "gone": {"<id>": {"reason": "retention" | "withdrawn", "expired_at": "..."}}}
 */
#include "hindex.h"
#include "keys.h"
#include "walk.h"

#include <stdlib.h>
#include <string.h>

#define REFLIST_KEY FDL_HISTORY_DIR "/refs.json"
#define REFLIST_TRIES 16

/* Is `key` "refs/heads/<name>" or "refs/tags/<name>" with a valid name? */
static bool ref_key_ok(const char *key)
{
	fdl_ref_kind kind;
	const char *name = fdl_ref_short(key, &kind);
	return kind != FDL_REF_NONE && !strstr(name, ".tmp-") && fdl_ref_name_check(name, NULL) == 0;
}

int fdl_reflist_check(const json_t *doc, const char *src, fdl_error *err)
{
	if (!json_is_object(doc) || json_integer_value(json_object_get(doc, "fdl_refs")) != 1)
		return fdl_fail(err, FDL_EINVALID, "%s: expected an object with \"fdl_refs\": 1", src);
	const json_t *refs = json_object_get(doc, "refs"), *gone = json_object_get(doc, "gone");
	if (!json_is_object(refs) || (gone && !json_is_object(gone)))
		return fdl_fail(err, FDL_EINVALID, "%s: \"refs\" (and \"gone\") must be objects", src);
	const json_t *head = json_object_get(doc, "head");
	if (head && (!json_is_string(head) || fdl_ref_name_check(json_string_value(head), NULL)))
		return fdl_fail(err, FDL_EINVALID, "%s: \"head\" must be a branch name", src);
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)refs, k, v)
	{
		if (!ref_key_ok(k) || !json_is_string(v) || !fdl_id_is_valid(json_string_value(v)))
			return fdl_fail(err, FDL_EINVALID,
					"%s: refs: '%s' must be " FDL_REFS_HEADS "<name> or " FDL_REFS_TAGS
					"<name> with a version id",
					src, k);
	}
	json_object_foreach((json_t *)gone, k, v)
	{
		const char *reason = json_string_value(json_object_get(v, "reason"));
		if (!fdl_id_is_valid(k) || !reason || (strcmp(reason, "retention") && strcmp(reason, "withdrawn")))
			return fdl_fail(err, FDL_EINVALID,
					"%s: gone: '%s' must be a version id with a reason (retention or withdrawn)", src,
					k);
	}
	return 0;
}

/* The list as stored (NULL when there is none), its etag for a
 * compare-and-swap; one that does not hold together reads as none. */
static int reflist_get(json_t **out, char etag[FDL_ETAG_MAX], fdl_repo *repo, fdl_error *err)
{
	fdl_buf b = {0};
	*out = NULL;
	int rc = fdl_store_get(repo->store, REFLIST_KEY, FDL_META_MAX_BYTES, &b, etag, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		return 0;
	}
	json_t *doc = rc ? NULL : json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES, NULL);
	fdl_buf_free(&b);
	if (doc && fdl_reflist_check(doc, REFLIST_KEY, NULL) != 0) {
		json_decref(doc);
		doc = NULL;
	}
	*out = doc;
	return rc;
}

int fdl_reflist_read(json_t **out, fdl_repo *repo, fdl_error *err)
{
	return reflist_get(out, NULL, repo, err);
}

/* Set `key` in `refs` to what the store holds now (removed when absent). */
static int refresh(json_t *refs, fdl_repo *repo, const char *key, fdl_error *err)
{
	char id[FDL_ID_LEN + 1];
	bool exists = false;
	int rc = fdl_ref_read(repo, key, id, &exists, NULL, err);
	if (!rc && exists)
		rc = json_object_set_new(refs, key, json_string(id)) ? fdl_oom(err) : 0;
	else if (!rc)
		json_object_del(refs, key);
	return rc;
}

/* Every branch and tag as the store holds them (it can be listed: it
 * is written to). */
static int refresh_all(json_t *refs, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist keys = {0};
	int rc = fdl_store_list(repo->store, FDL_REFS_DIR, &keys, err);
	json_object_clear(refs);
	for (size_t i = 0; !rc && i < keys.len; i++)
		if (ref_key_ok(keys.items[i]))
			rc = refresh(refs, repo, keys.items[i], err);
	fdl_strlist_free(&keys);
	return rc;
}

typedef struct gone_item {
	const char *id, *reason, *when;
} gone_item;

/* Read, change, compare-and-swap, again while another writer wins: the
 * refs named by `keys` (all of them with `rebuild`, or when there was no
 * list) are read from the store inside each try, so the list never goes
 * back to a value older than the one it had; `gone` entries are added. */
typedef struct ref_item {
	const char *key;
	const char *id; /* set to this (NULL: removed), or read from the store when `read` */
	bool read;
} ref_item;

static int reflist_change(fdl_repo *repo, const ref_item *items, size_t nkeys, const gone_item *gone, size_t ngone,
			  bool rebuild, fdl_error *err)
{
	if (!fdl_store_can(repo->store, FDL_STORE_WRITE | FDL_STORE_LIST))
		return 0;
	int rc = FDL_ECONFLICT;
	for (int attempt = 0; attempt < REFLIST_TRIES && rc == FDL_ECONFLICT; attempt++) {
		char etag[FDL_ETAG_MAX] = "";
		json_t *doc = NULL;
		if ((rc = reflist_get(&doc, etag, repo, err)))
			break;
		bool had = doc != NULL;
		if (!doc)
			doc = json_pack("{s:i, s:{}, s:{}}", "fdl_refs", 1, "refs", "gone");
		if (!doc) {
			rc = fdl_oom(err);
			break;
		}
		if (!json_object_get(doc, "gone"))
			json_object_set_new(doc, "gone", json_object());
		json_t *refs = json_object_get(doc, "refs"), *g = json_object_get(doc, "gone");
		char *head = NULL;
		fdl_error herr;
		if (!fdl_repo_head_branch(&head, repo, &herr)) /* HEAD's branch, for log's "HEAD -> main" */
			json_object_set_new(doc, "head", json_string(head));
		free(head);
		if (!had || rebuild)
			rc = refresh_all(refs, repo, err);
		if (rebuild)
			json_object_clear(g); /* the gone versions are all given */
		for (size_t i = 0; !rc && !rebuild && i < nkeys; i++) {
			if (!ref_key_ok(items[i].key) || (!had && items[i].read))
				continue; /* read with the rest, just above */
			if (items[i].read)
				rc = refresh(refs, repo, items[i].key, err);
			else if (items[i].id)
				rc = json_object_set_new(refs, items[i].key, json_string(items[i].id)) ? fdl_oom(err) : 0;
			else
				json_object_del(refs, items[i].key);
		}
		for (size_t i = 0; !rc && i < ngone; i++) {
			json_t *o = json_pack("{s:s, s:s}", "reason", gone[i].reason, "expired_at", gone[i].when ? gone[i].when : "");
			rc = !o || json_object_set_new(g, gone[i].id, o) ? fdl_oom(err) : 0;
		}
		char *text = NULL;
		size_t len = 0;
		if (!rc)
			rc = fdl_json_dump(&text, &len, doc, err);
		if (!rc)
			rc = had ? fdl_store_put_if_match(repo->store, REFLIST_KEY, text, len, etag, err)
				 : fdl_store_put_if_absent(repo->store, REFLIST_KEY, text, len, err);
		if (rc == FDL_EEXISTS)
			rc = FDL_ECONFLICT; /* another writer made it first: read it and try again */
		free(text);
		json_decref(doc);
	}
	return rc;
}

int fdl_reflist_note(fdl_repo *repo, const char *const *keys, size_t n, fdl_error *err)
{
	ref_item *items = n ? calloc(n, sizeof *items) : NULL;
	if (n && !items)
		return fdl_oom(err);
	for (size_t i = 0; i < n; i++)
		items[i] = (ref_item){keys[i], NULL, true};
	int rc = reflist_change(repo, items, n, NULL, 0, false, err);
	free(items);
	return rc;
}

int fdl_reflist_set(fdl_repo *repo, const char *key, const char *id, fdl_error *err)
{
	ref_item item = {key, id, false};
	return reflist_change(repo, &item, 1, NULL, 0, false, err);
}

int fdl_reflist_note_gone(fdl_repo *repo, const char *id, const char *reason, const char *when, fdl_error *err)
{
	gone_item g = {id, reason, when};
	return reflist_change(repo, NULL, 0, &g, 1, false, err);
}

int fdl_reflist_rebuild(fdl_repo *repo, const vdirs *dirs, fdl_error *err)
{
	gone_item *g = dirs->len ? calloc(dirs->len, sizeof *g) : NULL;
	fdl_expiry *x = dirs->len ? calloc(dirs->len, sizeof *x) : NULL;
	if (dirs->len && (!g || !x)) {
		free(g);
		free(x);
		return fdl_oom(err);
	}
	size_t n = 0;
	fdl_error e;
	for (size_t i = 0; i < dirs->len; i++) {
		const vdir *d = &dirs->items[i];
		/* a version withdrawn with its version.json is listed by no reader */
		if (!fdl_vdir_has(d, FDL_EXPIRED_JSON) || !fdl_vdir_has(d, FDL_VERSION_JSON) ||
		    fdl_version_expiry(&x[n], repo, d->id, &e) || !x[n].expired)
			continue;
		g[n] = (gone_item){d->id, x[n].reason[0] ? x[n].reason : "retention", x[n].when};
		n++;
	}
	int rc = reflist_change(repo, NULL, 0, g, n, true, err);
	free(g);
	free(x);
	return rc;
}

int fdl_refs_all(fdl_refs *out, fdl_repo *repo, bool exact, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	fdl_strlist keys = {0};
	json_t *list = NULL;
	int rc = 0;
	bool local = fdl_store_can(repo->store, FDL_STORE_LOCAL), listable = fdl_store_can(repo->store, FDL_STORE_LIST);
	/* a remote store: the list is one request, where listing and reading
	 * every ref are many (unless the truth is asked for) */
	if (!local && !(exact && listable))
		rc = fdl_reflist_read(&list, repo, err);
	if (!rc && list) {
		out->from_list = true;
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(list, "refs"), k, v) if (!rc) rc = fdl_strlist_add(&keys, k, err);
		const char *h = json_string_value(json_object_get(list, "head"));
		if (!rc && h && !(out->head = fdl_strdup(h)))
			rc = fdl_oom(err);
	} else if (!rc && listable) {
		out->listed = true;
		rc = fdl_store_list(repo->store, FDL_REFS_DIR, &keys, err);
	}
	if (!rc && !out->head)
		rc = fdl_repo_head_branch(&out->head, repo, err);
	if (!rc && !out->listed && !out->from_list) { /* neither: HEAD's branch is all a reader can name */
		char *key = fdl_ref_key(FDL_REF_BRANCH, out->head);
		rc = key ? fdl_strlist_add(&keys, key, err) : fdl_oom(err);
		free(key);
	}
	fdl_strlist_sort(&keys);
	if (!rc && keys.len && !(out->ids = calloc(keys.len, sizeof *out->ids)))
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && i < keys.len; i++) {
		if (!ref_key_ok(keys.items[i]))
			continue; /* lock files, temporary files, foreign names */
		bool exists = true;
		const char *listed = out->from_list && !exact
					     ? json_string_value(json_object_get(json_object_get(list, "refs"), keys.items[i]))
					     : NULL;
		if (listed)
			memcpy(out->ids[out->names.len], listed, FDL_ID_LEN + 1);
		else
			rc = fdl_ref_read(repo, keys.items[i], out->ids[out->names.len], &exists, NULL, err);
		if (!rc && exists)
			rc = fdl_strlist_add(&out->names, keys.items[i], err);
	}
	if (!rc && list && json_object_size(json_object_get(list, "gone")))
		out->gone = json_incref(json_object_get(list, "gone"));
	fdl_strlist_free(&keys);
	json_decref(list);
	if (rc)
		fdl_refs_free(out);
	return rc;
}

void fdl_refs_free(fdl_refs *r)
{
	free(r->head);
	fdl_strlist_free(&r->names);
	free(r->ids);
	json_decref(r->gone);
	memset(r, 0, sizeof *r);
}

const char *fdl_refs_get(const fdl_refs *r, const char *key)
{
	for (size_t i = 0; i < r->names.len; i++)
		if (!strcmp(r->names.items[i], key))
			return r->ids[i];
	return NULL;
}

void fdl_ref_suggest(char *out, size_t size, fdl_repo *repo, const char *word)
{
	fdl_refs refs;
	fdl_error e;
	out[0] = '\0';
	if (!word || fdl_refs_all(&refs, repo, false, &e))
		return;
	const char **names = calloc(refs.names.len + 1, sizeof *names);
	for (size_t i = 0; names && i < refs.names.len; i++) {
		names[i] = fdl_ref_short(refs.names.items[i], NULL);
	}
	const char *meant = names ? fdl_closest(word, names, refs.names.len) : NULL;
	if (meant)
		snprintf(out, size, " (did you mean '%s'?)", meant);
	free(names);
	fdl_refs_free(&refs);
}

static int say(fdl_finding_list *l, const char *what, fdl_error *err)
{
	return what && !fdl_finding_list_add(l, REFLIST_KEY, "%s", what) ? 0 : fdl_oom(err);
}

int fdl_reflist_verify(fdl_finding_list *problems, fdl_finding_list *warnings, fdl_repo *repo, fdl_error *err)
{
	fdl_buf b = {0};
	fdl_error e;
	json_t *doc = NULL;
	int rc = 0;
	char *msg = NULL;
	if (fdl_store_get(repo->store, REFLIST_KEY, FDL_META_MAX_BYTES, &b, NULL, &e) ||
	    fdl_json_parse(&doc, b.data, b.len, REFLIST_KEY, &e) || fdl_reflist_check(doc, REFLIST_KEY, &e)) {
		msg = fdl_asprintf("is not a usable ref list (%s); readers of a static host then see HEAD's branch "
				   "only; fdl gc writes it again",
				   e.message);
		rc = say(problems, msg, err);
	}
	fdl_refs truth = {0};
	if (!rc && !msg && !(rc = fdl_refs_all(&truth, repo, true, err))) {
		const json_t *refs = json_object_get(doc, "refs");
		for (size_t i = 0; !rc && i < truth.names.len; i++) {
			const char *listed = json_string_value(json_object_get(refs, truth.names.items[i]));
			if (listed && !strcmp(listed, truth.ids[i]))
				continue;
			free(msg);
			msg = fdl_asprintf("names %s at %s, but the ref is at %s (a writer stopped before it "
					   "updated the list, or another tool moved the ref); fdl gc writes it again",
					   truth.names.items[i], listed ? listed : "no version", truth.ids[i]);
			rc = say(warnings, msg, err);
		}
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)refs, k, v)
		{
			if (rc || fdl_refs_get(&truth, k))
				continue;
			free(msg);
			msg = fdl_asprintf("names %s, which does not exist; fdl gc writes the list again", k);
			rc = say(warnings, msg, err);
		}
		json_object_foreach(json_object_get(doc, "gone"), k, v)
		{
			fdl_expiry x;
			if (rc || fdl_version_expiry(&x, repo, k, &e) || x.expired)
				continue;
			free(msg);
			msg = fdl_asprintf("says version %s expired or was withdrawn, but it has no " FDL_EXPIRED_JSON, k);
			rc = say(warnings, msg, err);
		}
	}
	fdl_refs_free(&truth);
	free(msg);
	json_decref(doc);
	fdl_buf_free(&b);
	return rc;
}
