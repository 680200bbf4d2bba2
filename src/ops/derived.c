/* The one seam (derived.h): what a ref move keeps current, decided here
 * for every operation that moves a ref, so that one added later cannot
 * forget a derived file. */
#include "derived.h"
#include "card.h"
#include "preview.h"
#include "../iceberg/iceberg.h"
#include "../layout/hindex.h"
#include "../layout/keys.h"
#include "../site/site.h"

#include <stdlib.h>
#include <string.h>

/* Every branch of `refs` (NULL: listed) indexed whole, the ref list
 * rebuilt from `dirs` (NULL: left). */
static void reindex(fdl_repo *repo, const fdl_strlist *refs, const struct vdirs *dirs)
{
	fdl_refs all = {0};
	fdl_error ierr;
	if (!refs && !fdl_refs_all(&all, repo, true, &ierr))
		refs = &all.names;
	for (size_t i = 0; refs && i < refs->len; i++)
		if (fdl_ref_kind_of(refs->items[i]) == FDL_REF_BRANCH && fdl_key_classify(NULL, refs->items[i]) != FDL_KEY_LOCK)
			fdl_history_update(repo, fdl_ref_short(refs->items[i], NULL), -1, &ierr);
	fdl_refs_free(&all);
	if (dirs)
		fdl_reflist_rebuild(repo, dirs, &ierr);
}

struct fdl_derived_job {
	struct fdl_iceberg_job *views;
	fdl_preview_job *preview;
	fdl_repo *repo; /* the pages, written once the preview is in (their first rows) */
	char id[FDL_ID_LEN + 1];
};

/* A commit's derived work started beside it, in the commit's DuckDB: its
 * preview before the version is written (FROZEN: from what the freeze
 * holds, its files held until WRITTEN), its Iceberg views once branch
 * `name` moved (TIP, in `share`; each best effort; the caller joins
 * both). */
static void beside_start(struct fdl_derived_job **out, fdl_repo *repo, const char *name, const fdl_ref_move *m)
{
	fdl_error ierr;
	struct fdl_derived_job *j = *out ? *out : calloc(1, sizeof *j);
	*out = j;
	if (!j)
		return;
	if (m->what == FDL_MOVE_FROZEN && m->preview && !j->preview)
		fdl__preview_start_held(&j->preview, repo, m->frozen, &ierr);
	if (name) {
		fdl_iceberg_after_commit_start(&j->views, repo, name, m->id, m->share, &ierr);
		j->repo = repo; /* the branch moved: its pages follow at the join */
		memcpy(j->id, m->id, FDL_ID_LEN + 1);
	}
}

int fdl_ref_moved(fdl_repo *repo, const fdl_ref_move *m, fdl_error *err)
{
	fdl_error ierr; /* derived: a failure costs readers speed only */
	bool branch = m->key && fdl_ref_kind_of(m->key) == FDL_REF_BRANCH;
	const char *name = m->key ? fdl_ref_short(m->key, NULL) : NULL;
	switch (m->what) {
	case FDL_MOVE_INTENT:
		if (branch && m->id)
			fdl_history_prepare(repo, name, m->id, &ierr);
		else if (branch)
			fdl_history_remove(repo, name, &ierr);
		fdl_reflist_set(repo, m->key, m->id, &ierr);
		return 0;
	case FDL_MOVE_UNDONE:
		fdl_reflist_note(repo, &m->key, 1, &ierr);
		fdl__card_refresh(repo, &ierr);
		return 0;
	case FDL_MOVE_REFS:
		fdl_iceberg_after_refs(repo, &ierr);
		return 0;
	case FDL_MOVE_FROZEN:
		if (m->job && m->frozen)
			beside_start(m->job, repo, NULL, m);
		return 0;
	case FDL_MOVE_WRITTEN:
		if (m->job && *m->job)
			fdl__preview_release((*m->job)->preview, m->id);
		return 0;
	case FDL_MOVE_DETACHING:
		if (m->job && *m->job)
			fdl__preview_detaching((*m->job)->preview);
		return 0;
	case FDL_MOVE_SETTLING:
		if (m->job && *m->job)
			fdl__preview_settling((*m->job)->preview);
		return 0;
	case FDL_MOVE_TIP:
		fdl_history_update(repo, name, FDL_HISTORY_WALK_MAX, &ierr);
		if (m->job)
			beside_start(m->job, repo, name, m);
		else {
			fdl_preview_job *pj = NULL;
			fdl_iceberg_after_commit(repo, name, m->id, &ierr);
			if (fdl__preview_wanted_for(repo, m->id))
				fdl__preview_start(&pj, repo, m->id, &ierr);
			fdl__preview_join(pj, &ierr);
			fdl_site_after_commit(repo, m->id, &ierr);
			fdl__card_refresh(repo, &ierr);
		}
		fdl_reflist_note(repo, &m->key, 1, &ierr);
		return 0;
	case FDL_MOVE_GONE:
		fdl_reflist_note_gone(repo, m->id, m->reason, m->when, &ierr);
		fdl_site_after_gone(repo, m->id, &ierr);
		return 0;
	case FDL_MOVE_GOING: {
		/* before expired.json: a crash after it never leaves their rows
		 * readable in a preview or on a page */
		int rc = fdl__preview_drop(repo, m->ids, err);
		if (!rc)
			rc = fdl__card_drop(repo, m->ids, err);
		return rc ? rc : fdl_site_before_gone(repo, m->ids, err);
	}
	case FDL_MOVE_REMOVAL: {
		/* the previews of what went go too: a withdrawn version's rows
		 * must not stay readable in one (nor on its page) */
		bool held = false;
		int rc = fdl__preview_sweep(repo, &held, err);
		if (!rc && held) /* its tip gone: no card (none to drop when previews/ holds nothing) */
			rc = fdl__card_refresh(repo, err);
		fdl_site_after_refs(repo, &ierr);
		return rc ? rc : fdl_iceberg_after_removal(repo, err);
	}
	case FDL_MOVE_SWEEP: {
		bool held = false;
		int rc = fdl__preview_sweep(repo, &held, err);
		return rc || !held ? rc : fdl__card_refresh(repo, err);
	}
	case FDL_MOVE_DROP_HISTORY:
		return fdl_history_drop(repo, err);
	case FDL_MOVE_REINDEX:
		reindex(repo, m->refs, m->dirs);
		fdl_site_after_refs(repo, &ierr);
		/* the card: gc's SWEEP before it, a clone's CLONED after it */
		return 0;
	case FDL_MOVE_CLONED:
		fdl_iceberg_after_clone(repo, m->dst_root, &ierr);
		if (m->ids)
			fdl__preview_clone(repo, m->dst_root, m->ids, m->tips, &ierr);
		return 0;
	}
	return fdl_fail(err, FDL_EINVALID, "fdl_ref_moved: unknown move %d", (int)m->what);
}

void fdl_ref_moved_join(struct fdl_derived_job *job)
{
	fdl_error ierr;
	if (!job)
		return;
	fdl_iceberg_after_commit_join(job->views, &ierr);
	fdl__preview_join(job->preview, &ierr);
	if (job->repo) {
		fdl_site_after_commit(job->repo, job->id, &ierr);
		fdl__card_refresh(job->repo, &ierr);
	}
	free(job);
}
