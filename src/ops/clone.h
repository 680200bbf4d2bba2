/* What the clone's files share (src/ops/clone*.c; not part of libfdl's
 * API): the cloner a thread copies with, the plan's pool, and the steps
 * each file gives the others. */
#ifndef FDL_OPS_CLONE_H
#define FDL_OPS_CLONE_H

#include "../catalog/catalog.h"
#include "../layout/keys.h"
#include "../layout/walk.h"
#include "verify.h"

#include <pthread.h>
#include <stdatomic.h>

/* The whole clone's progress, shared by the pool's threads: files and
 * bytes done of what the plan counted, told to the caller as "clone files"
 * then "clone" (bytes), one call at a time. */
typedef struct clone_prog {
	fdl_progress_cb cb;
	void *payload;
	pthread_mutex_t mu;
	int64_t files_done, files_total, bytes_done, bytes_total;
} clone_prog;

typedef struct cloner {
	fdl_repo *src;
	fdl_store *src_store; /* src's, or a worker's own (each has its connections) */
	fdl_store *dst;
	char *tmpdir;
	int worker;
	bool probe; /* a source that cannot be listed: ask for expired.json and signatures */
	clone_prog *prog;
	const fdl_strmap *live; /* every data file a live catalog references (the plan) */
	const fdl_strlist *dst_keys; /* the copy's keys when the clone started, sorted (NULL: unknown) */
	long copied, skipped, unmirrored;
	/* the plan, this thread's part: what fdl verify says of its catalogs
	 * (merged into the clone's when the pool ends) */
	fdl_verify_report *found;
	fdl_duck *duck; /* NULL until its first catalog */
	struct pool *pool; /* the plan's pool, which takes each new data file */
} cloner;

/* Copy one key unless dst has it with the same size; check bytes and, when
 * given, sha256 (recorded in `by`, NULL: version.json) on the copy before
 * it is published. `local`: the source's bytes are already here (a catalog
 * fetched for the plan, and checked then: `checked`, so not hashed again).
 * `optional`: a key the source does not have is skipped (withdrawn data,
 * the catalog of an expired version). `got` (may be NULL) receives the
 * sha256 of the bytes copied ("" when none were), *put whether this call
 * wrote the key. */
typedef struct copied {
	char got[65];
	bool put;
} copied;

/* The refs to copy and their values, read before the versions are found:
 * a version a ref names was published before the ref moved to it, so the
 * plan holds every version these values name, and the copy's refs get
 * these values, never newer ones a commit made during the clone (which the
 * plan would lack). `only`: that branch alone (SRC@BRANCH, --branch); else
 * every branch and tag, listed, or named by the source's ref list
 * (history/refs.json, a static host), or HEAD's branch when it has none. */
typedef struct planned_refs {
	fdl_strlist keys;
	char (*ids)[FDL_ID_LEN + 1];
	bool listed; /* the source can be listed: every version directory is copied */
} planned_refs;


/* The clone's two runs of the one worker pool (src/util/pool.h), sharing
 * this: first the plan (each job one worker's loop, prepare_loop: versions
 * to plan and the data files the plan finds, queued as found and copied by
 * the same workers), then the versions (job k: the k-th version by seq).
 * Each worker has its own source and destination store (its own
 * connections, kept alive). Memory is bounded by the pool: one file in
 * flight a worker, streamed to a temporary file. */
typedef struct pool {
	cloner *c;
	const char *dst_url;
	vdirs *dirs;
	char **catalogs;
	/* the versions pool: the versions by seq, parents first; whether each
	 * one's version.json is in the copy; a version's index by id. A
	 * version.json is written only once its first parent's is, so the copy
	 * verifies at every moment with versions copied at once. */
	const size_t *order;
	atomic_bool *published;
	const fdl_strmap *index_of;
	size_t n;
	atomic_size_t next; /* the plan: the next version to prepare */
	/* the plan: the data files it has found (planned: path -> index in
	 * dfiles, every one once), queued as found and copied by the same
	 * workers, first come; workers inside prepare_version; all under mu */
	fdl_strmap *planned;
	struct planned_file *dfiles;
	size_t dlen, dcap, dnext, preparing;
	atomic_bool failed;
	bool threaded;
	pthread_mutex_t mu; /* the first error, the counters, progress */
	pthread_cond_t cv;  /* a version.json published, a data file found, or a failure */
	int rc;
	fdl_error err;
} pool;

/* A data file the plan found: its size and sha256 as the catalogs and
 * files.json record them (claim: "" until a files.json records one, and
 * the version whose it is), and what its copy hashed (got) and wrote. */
typedef struct planned_file {
	char *key;
	int64_t size;
	char claim[65], claim_by[FDL_ID_LEN + 1];
	char got[65];
	bool put;
} planned_file;


/* clone.c */
void fdl__pool_lock(pool *p);
void fdl__pool_unlock(pool *p);

/* clone_plan.c */
void fdl__planned_refs_free(planned_refs *r);
int fdl__refs_to_copy(planned_refs *out, cloner *c, const char *only, fdl_error *err);
int fdl__versions_of(vdirs *out, const planned_refs *refs, cloner *c, fdl_error *err);
int fdl__plan_verdict(fdl_verify_report *found, vdirs *dirs, const char *src, fdl_error *err);
void fdl__plan_totals(clone_prog *p, const vdirs *dirs);
int fdl__plan_merge(cloner *into, cloner *from, fdl_error *err);
int fdl__prepare_loop(cloner *c, pool *p, fdl_error *err);

/* clone_copy.c */
void fdl__prog_add(clone_prog *p, int64_t files, int64_t bytes);
bool fdl__copy_may_have(const cloner *c, const char *key);
int fdl__copy_key(cloner *c, const char *key, int64_t bytes, const char *sha, const char *by, const char *local, bool checked, bool optional, copied *out, fdl_error *err);
int fdl__put_small(cloner *c, const char *key, const fdl_buf *b, fdl_error *err);
int fdl__copy_small(cloner *c, const char *key, bool optional, fdl_error *err);
char *fdl__staged_path(const cloner *c, const vdir *d, const char *name);
void fdl__recorded(const vdir *d, const char *name, int64_t *bytes, const char **sha);
bool fdl__copy_has_version_json(cloner *c, const vdir *d);
int fdl__parents_first(size_t **order, atomic_bool **published, fdl_strmap *index_of, const vdirs *dirs, fdl_error *err);
int fdl__copy_version(cloner *c, pool *p, size_t at, fdl_error *err);
int fdl__check_copy_refs(cloner *c, vdirs *dirs, const planned_refs *refs, bool force, fdl_error *err);
int fdl__copy_ref(cloner *c, vdirs *dirs, const char *key, const char *id, fdl_strlist *moved, fdl_error *err);
void fdl__index_copy(cloner *c, const fdl_strlist *refs, const vdirs *dirs);

/* clone_mirror.c */
bool fdl__gone_with_expiry(const vdir *d, const char *name);
int fdl__mirror_expiry(cloner *c, const vdir *d, fdl_error *err);
/* Before any version's files are copied: the copy's previews and pages
 * of the versions the source has expired or withdrawn go (through the
 * seam), before the copy gets their expired.json. Only for a copy that
 * held previews or pages when the clone started. */
int fdl__mirror_going(cloner *c, const vdirs *dirs, fdl_error *err);
/* After the refs: the copy's derived files (views, previews) through the
 * seam, from the versions the copy holds live and the refs' versions. */
void fdl__clone_derived(cloner *c, const vdirs *dirs, const planned_refs *refs);

#endif
