/* fdl log's history: a branch's first-parent chain, through the history
 * index where the repository has one (src/layout/hindex.c). */
#include "../layout/hindex.h"
#include "../layout/keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The branch whose index helps read `ref`: the name before ":seq", or
 * NULL (HEAD's branch) for HEAD, ids and seqs. A tag names no index; the
 * reader then tries HEAD's branch's. */
static char *index_hint(const char *ref)
{
	size_t n = 0;
	const char *name = fdl_ref_spec_name(ref, &n);
	return name ? strndup(name, n) : NULL;
}

void fdl_log_free(fdl_log *l)
{
	if (!l)
		return;
	for (size_t i = 0; l->marks && i < l->count; i++) {
		for (size_t k = 0; k < l->marks[i].refs.count; k++)
			free(l->marks[i].refs.strings[k]);
		free(l->marks[i].refs.strings);
	}
	free(l->marks);
	for (size_t i = 0; i < l->count; i++)
		fdl_version_free(l->items[i]);
	free(l->items);
	free(l);
}

static int log_read(fdl_log **out, fdl_repo *repo, const char *ref, long long limit, bool brief, fdl_error *err)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return fdl_oom(err);
	char id[FDL_ID_LEN + 1];
	int rc = fdl_ref_resolve(id, repo, ref, err);
	if (rc)
		return rc;
	char *hint = index_hint(ref);
	fdl_hist h;
	rc = fdl_history_read(&h, repo, hint, id, limit, !brief, err);
	free(hint);
	if (rc == FDL_ENOTFOUND && h.len) /* the end of a history whose older part was withdrawn */
		rc = fdl_history_withdrawn_end((*out)->withdrawn_end, repo, &h, id, err);
	fdl_log *l = *out;
	if (h.len && !(l->items = calloc(h.len, sizeof *l->items)))
		rc = fdl_oom(err);
	for (size_t i = 0; l->items && i < h.len; i++) {
		char *src = fdl_version_url(repo->root, h.items[i].id, FDL_VERSION_JSON);
		fdl_error e;
		int vrc = !src ? fdl_oom(&e)
		        : brief ? fdl_version_from_head(&l->items[l->count], h.items[i].doc, h.items[i].id, src, &e)
		                : fdl_version_from_json(&l->items[l->count], h.items[i].doc, h.items[i].id, src, &e);
		free(src);
		if (vrc) {
			if (!rc) {
				*err = e;
				rc = vrc;
			}
			break;
		}
		l->count++;
	}
	l->from_index = h.from_index;
	l->files_read = h.read;
	fdl_hist_free(&h);
	return rc;
}

int fdl_log_read(fdl_log **out, fdl_repo *repo, const char *ref, long long limit, fdl_error *err)
{
	return log_read(out, repo, ref, limit, false, err);
}

int fdl_log_read_brief(fdl_log **out, fdl_repo *repo, const char *ref, long long limit, fdl_error *err)
{
	return log_read(out, repo, ref, limit, true, err);
}

static int mark_add(fdl_log_mark *m, const char *text, fdl_error *err)
{
	char **grown = realloc(m->refs.strings, (m->refs.count + 1) * sizeof *grown);
	if (!grown)
		return fdl_oom(err);
	m->refs.strings = grown;
	if (!(grown[m->refs.count] = fdl_strdup(text)))
		return fdl_oom(err);
	m->refs.count++;
	return 0;
}

/* The refs that name version `id`, as git log --decorate orders them:
 * HEAD's branch ("HEAD -> main"), the other branches, then the tags. */
static int mark_refs(fdl_log_mark *m, const fdl_refs *refs, const char *head, const char *id, fdl_error *err)
{
	int rc = 0;
	for (int pass = 0; pass < 3 && !rc; pass++)
		for (size_t k = 0; k < refs->names.len && !rc; k++) {
			const char *key = refs->names.items[k];
			fdl_ref_kind kind;
			const char *name = fdl_ref_short(key, &kind);
			bool branch = kind == FDL_REF_BRANCH;
			bool is_head = branch && head && !strcmp(name, head);
			if (strcmp(refs->ids[k], id) || (pass == 0) != is_head || (pass == 2) == branch)
				continue;
			char text[300];
			snprintf(text, sizeof text, "%s%s", is_head ? "HEAD -> " : branch ? "" : "tag: ", name);
			rc = mark_add(m, text, err);
		}
	return rc;
}

int fdl_log_decorate(fdl_log *l, fdl_repo *repo, fdl_error *err)
{
	if (l->marks || !l->count)
		return 0;
	fdl_refs refs;
	fdl_error e;
	int rc = fdl_refs_all(&refs, repo, false, err);
	if (rc)
		return rc;
	/* what a remote store says of gone versions: the ref list's word (a
	 * folder's expired.json files are read, which is free) */
	bool local = fdl_store_can(repo->store, FDL_STORE_LOCAL);
	const json_t *gone = local ? NULL : refs.gone;
	if (!rc && !(l->marks = calloc(l->count, sizeof *l->marks)))
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && i < l->count; i++) {
		fdl_log_mark *m = &l->marks[i];
		const char *id = fdl_version_id(l->items[i]);
		rc = mark_refs(m, &refs, refs.head, id, err);
		fdl_expiry x = {0};
		const json_t *g = json_object_get(gone, id);
		if (!rc && local && !fdl_version_expiry(&x, repo, id, &e) && x.expired) {
			snprintf(m->state, sizeof m->state, "%s", !strcmp(x.reason, "withdrawn") ? "withdrawn" : "expired");
			snprintf(m->when, sizeof m->when, "%s", x.when);
		} else if (!rc && g) {
			const char *reason = json_string_value(json_object_get(g, "reason"));
			const char *when = json_string_value(json_object_get(g, "expired_at"));
			snprintf(m->state, sizeof m->state, "%s", reason && !strcmp(reason, "withdrawn") ? "withdrawn" : "expired");
			snprintf(m->when, sizeof m->when, "%s", when ? when : "");
		}
	}
	fdl_refs_free(&refs);
	return rc;
}
