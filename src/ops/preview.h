/* Previews (preview.c): computed for a version, beside a commit (the seam,
 * derived.c, starts and joins it), and removed with their versions;
 * copied by a clone (preview_clone.c). */
#ifndef FDL_OPS_PREVIEW_H
#define FDL_OPS_PREVIEW_H

#include "derived.h"
#include "../catalog/catalog.h"
#include "../layout/layout.h"

/* A table whose live files hold more bytes than this gets its first rows
 * and row count at commit, not its statistics (docs/decisions.md,
 * "Previews computed at commit"): fdl preview computes them, with no bound
 * unless --stats-max says one. */
#define FDL_PREVIEW_STATS_MAX ((int64_t)32 << 20)

typedef struct fdl_preview_counts {
	size_t computed, reused; /* table files written, found */
	bool already;            /* the version had its preview */
} fdl_preview_counts;

/* Version `id`'s preview, unless it has one: each table's file found by
 * its state or computed (o NULL: the defaults). */
int fdl__preview_make(fdl_repo *repo, const char *id, const fdl_preview_options *o, fdl_preview_counts *n,
		      fdl_error *err);

/* Whether a version whose first parent is `parent` gets its preview when
 * it is written: when the parent has one (`fdl preview` turns previews
 * on by writing the first; a repository that never ran it pays one HEAD
 * at commit and nothing more). FDL_PREVIEW_AT_COMMIT=1 (always) or 0
 * (never) decides instead. A commit decides once, in its freeze, and
 * tells the seam; _for: the same of version `id`, by its first parent
 * (a branch moved to it without a commit: rebase, branch --force). */
bool fdl__preview_wanted(fdl_repo *repo, const char *parent);
bool fdl__preview_wanted_for(fdl_repo *repo, const char *id);

/* Version `id`'s preview, computed beside the caller (the decision is the
 * caller's, above) on its own repository handle and a DuckDB of its own,
 * with the commit's bound on statistics; joined by fdl__preview_join. */
typedef struct fdl_preview_job fdl_preview_job;
int fdl__preview_start(fdl_preview_job **out, fdl_repo *repo, const char *id, fdl_error *err);
/* The same for that version, before its id is drawn, on a thread of its
 * own (where none can be started, the tables' states are read here and
 * the rest runs where the gate opens): the tables' states read from
 * `f->alias` (fdl__preview_detaching waits for it), the rest beside the
 * freeze's last write and the version's own (a table read from its data
 * files at once, one that needs DuckLake once the catalog is written);
 * its table files and preview are held until fdl__preview_release names
 * the version, written. */
int fdl__preview_start_held(fdl_preview_job **out, fdl_repo *repo, const fdl_move_frozen *f, fdl_error *err);
/* The held job's version `id` is written: its files may go (j NULL:
 * nothing). Where no thread could be started, the job runs here. */
void fdl__preview_release(fdl_preview_job *j, const char *id);
/* Until the held job no longer reads the freeze's catalog (f->alias),
 * which is about to be detached (j NULL: nothing). */
void fdl__preview_detaching(fdl_preview_job *j);
/* Until the held job no longer reads the new files where the freeze found
 * them (f->staged): it computed its tables, or waits for its version to
 * be written (j NULL: nothing). A read of one gone after this fails, and
 * the table is read through DuckLake instead. */
void fdl__preview_settling(fdl_preview_job *j);
/* Wait for the job and free it; a held job never released writes nothing
 * (its version was never written). */
int fdl__preview_join(fdl_preview_job *j, fdl_error *err);

/* The previews of versions no longer live deleted, and the table files no
 * remaining preview names; *held false when previews/ holds nothing at all
 * (no preview, no card: nothing for the card's refresh to read). */
int fdl__preview_sweep(fdl_repo *repo, bool *held, fdl_error *err);

/* Before versions `going` expire or are withdrawn: their previews
 * deleted, then the table files no other live version's preview names
 * (and whatever fdl__preview_sweep deletes). */
int fdl__preview_drop(fdl_repo *repo, const fdl_strlist *going, fdl_error *err);

/* A clone's copy of the source's previews of the versions `live` (sorted:
 * those the copy holds live), each checked as a reader checks it, into
 * the copy at `dst_root`, then the copy's previews of versions gone
 * swept. `tips` (sorted; may be NULL): the refs' versions, probed first
 * on a source that cannot be listed. */
int fdl__preview_clone(fdl_repo *src, const char *dst_root, const fdl_strlist *live, const fdl_strlist *tips,
		       fdl_error *err);

/* What fdl verify says of the previews ("key\tmessage" findings): one
 * that cannot be read is a problem; one of a version gone (a withdrawal or
 * expiry cut short before its sweep: a state a crash may leave) and a
 * table file no preview names are warnings. */
int fdl__preview_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, fdl_error *err);

#endif
