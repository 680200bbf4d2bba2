/* fdl log's history: a branch's first-parent chain, through the history
 * index where the repository has one (src/layout/hindex.c). */
#include "../layout/hindex.h"
#include "../layout/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The branch whose index helps read `ref`: the name before ":seq", or
 * NULL (HEAD's branch) for HEAD, ids and seqs. A tag names no index; the
 * reader then tries HEAD's branch's. */
static char *index_hint(const char *ref)
{
	if (!ref || !*ref || !strcmp(ref, "HEAD") || !strcmp(ref, "@") || fdl_id_is_valid(ref))
		return NULL;
	const char *colon = strrchr(ref, ':');
	size_t n = colon ? (size_t)(colon - ref) : strlen(ref);
	if (n == 0 || (n == 4 && !strncmp(ref, "HEAD", 4)))
		return NULL;
	if (!strncmp(ref, "refs/heads/", 11) && n > 11) {
		ref += 11;
		n -= 11;
	}
	return strndup(ref, n);
}

void fdl_log_free(fdl_log *l)
{
	if (!l)
		return;
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
		char src[1024];
		snprintf(src, sizeof src, "%s/versions/%s/" FDL_VERSION_JSON, repo->root, h.items[i].id);
		fdl_error e;
		int vrc = brief ? fdl_version_from_head(&l->items[l->count], h.items[i].doc, h.items[i].id, src, &e)
				: fdl_version_from_json(&l->items[l->count], h.items[i].doc, h.items[i].id, src, &e);
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
