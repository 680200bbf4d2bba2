/* The one seam between a ref move and what derives from the refs: the
 * history index, the ref list (history/refs.json), the Iceberg views and
 * catalog, the previews. Every operation that moves a ref says what happened through
 * fdl_ref_moved and never names a derived file; src/ops/derived.c alone
 * calls their updaters (scripts/walls-check.sh says so). */
#ifndef FDL_OPS_DERIVED_H
#define FDL_OPS_DERIVED_H

#include "../catalog/catalog.h"
#include "../layout/layout.h"

struct vdirs;
struct fdl_derived_job;

typedef enum fdl_move {
	/* `key` is about to be set to `id` (NULL: deleted), under the refs
	 * lock: a branch's index prepared (or removed), the ref list's line
	 * set, so that an interrupted ref change run again ends the same */
	FDL_MOVE_INTENT,
	/* that ref change did not happen: the ref list's line read back */
	FDL_MOVE_UNDONE,
	/* a branch or tag was created or deleted: the views of the tips that
	 * have one (they carry the tags), the catalog's namespaces */
	FDL_MOVE_REFS,
	/* a version is about to be written (commit): its catalog frozen
	 * and still attached in the freeze's DuckDB (`frozen`, read before
	 * the freeze's last write, the detach that writes the catalog's
	 * file), its id not yet drawn, nothing of it written. What derives
	 * from the version alone, its preview (when `preview`), starts
	 * beside the caller into `job` from what `frozen` holds (the catalog
	 * file must stay until the join), its files held until WRITTEN;
	 * joined by fdl_ref_moved_join, which drops them when no WRITTEN
	 * came (the version was never written) */
	FDL_MOVE_FROZEN,
	/* version `id` is written whole, before a ref names it (commit): the
	 * files of what FROZEN started in `job` may go, under that id (the
	 * TIP that follows takes the job on; a version written that no ref
	 * took keeps them) */
	FDL_MOVE_WRITTEN,
	/* the freeze is about to detach the new catalog (FROZEN's `alias`),
	 * which writes its file: what FROZEN started in `job` reading it is
	 * waited for */
	FDL_MOVE_DETACHING,
	/* the working catalog's own copies of the version's new files are
	 * about to go (commit): what FROZEN started in `job` reading them
	 * (a table's data files, read where they were) is waited for */
	FDL_MOVE_SETTLING,
	/* branch `key` moved to `id` (commit, rebase, branch --force): its
	 * index, its Iceberg view and its preview (beside the caller when
	 * `job` is set), its line in the ref list */
	FDL_MOVE_TIP,
	/* version `id` expired or was withdrawn (`reason`, `when`): the ref
	 * list marks it gone */
	FDL_MOVE_GONE,
	/* versions `ids` are about to go (expire, withdraw), before their
	 * expired.json: their previews, the table files no other live
	 * version's preview names and their pages deleted, so that no crash
	 * leaves a gone version's rows readable there; the caller's to fail
	 * on */
	FDL_MOVE_GOING,
	/* versions left or data files went: the previews of the versions gone
	 * deleted, every view written again; the caller's to fail on (no view
	 * or preview may lead to data that is gone) */
	FDL_MOVE_REMOVAL,
	/* an expiry found nothing new to remove, or gc starts (a run cut
	 * short, or an older fdl, may have left derived files of versions
	 * gone): the previews of versions gone deleted; the caller's to fail
	 * on */
	FDL_MOVE_SWEEP,
	/* version.json files go: every history index dropped (it copies
	 * them); the caller's to fail on */
	FDL_MOVE_DROP_HISTORY,
	/* the whole repository again (gc, a clone's copy): every branch of
	 * `refs` (NULL: listed) indexed with no bound, the ref list rebuilt
	 * from `dirs` */
	FDL_MOVE_REINDEX,
	/* `repo` was cloned to `dst_root`: the copy's own views, and the
	 * previews of the versions `ids` copied (best effort, as views) */
	FDL_MOVE_CLONED,
} fdl_move;

/* FROZEN's payload: the new catalog's metadata attached raw in `share`
 * as `alias` (read until DETACHING: the freeze then detaches it, which
 * writes `catalog_file`), files.json's tables as the freeze
 * derived them, the version's first parent (NULL or "": none), where its
 * new files are until they are published. */
typedef struct fdl_move_frozen {
	fdl_duck *share;
	const char *alias;
	const char *catalog_file;
	const json_t *tables;
	const char *parent;
	/* the new files still in the working catalog's own folder (relative,
	 * sorted), read there, at `staging` (a URL or path ending in '/'),
	 * until SETTLING */
	const fdl_strlist *staged;
	const char *staging;
} fdl_move_frozen;

typedef struct fdl_ref_move {
	fdl_move what;
	const char *key;              /* the ref (INTENT, UNDONE, TIP) */
	const char *id;               /* its version (INTENT: NULL deletes; WRITTEN; TIP; GONE) */
	const fdl_strlist *ids;       /* GOING: the versions about to go; CLONED: those the copy holds live (sorted) */
	const fdl_strlist *tips;      /* CLONED: the refs' versions (sorted) */
	const char *reason, *when;    /* GONE */
	const fdl_strlist *refs;      /* REINDEX: the ref keys (NULL: listed from the store) */
	const struct vdirs *dirs;     /* REINDEX */
	const char *dst_root;         /* CLONED */
	const struct fdl_move_frozen *frozen; /* FROZEN: what the freeze holds of the version */
	fdl_duck *share;              /* TIP with job: a database the views may share */
	struct fdl_derived_job **job; /* FROZEN, WRITTEN, DETACHING, SETTLING, TIP: what started beside; joined by fdl_ref_moved_join */
	bool preview;                 /* FROZEN: the commit's decision (fdl__preview_wanted) */
} fdl_ref_move;

/* Bring what derives from the refs up to date after (or, INTENT, before)
 * `m`. Derived files are best effort: their failure costs readers speed
 * or a static host's readers a ref, never the operation, so this returns
 * 0, except for GOING, REMOVAL, SWEEP and DROP_HISTORY, whose failure the caller
 * must report (err says what failed). */
int fdl_ref_moved(fdl_repo *repo, const fdl_ref_move *m, fdl_error *err);
/* Join the preview and the views FROZEN and TIP moves started beside (job
 * may be NULL); their result, best effort as the rest. */
void fdl_ref_moved_join(struct fdl_derived_job *job);

#endif
