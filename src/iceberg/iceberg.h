/* The Iceberg wing (src/iceberg/): the one header the rest of libfdl
 * includes. A ref move reaches the hooks through src/ops/derived.c alone;
 * verify asks for the check. What the wing's files share among themselves
 * is in iceberg_int.h. The format: docs/format.md "Iceberg views"; the
 * reasons: docs/decisions.md "Iceberg views". */
#ifndef FDL_ICEBERG_ICEBERG_H
#define FDL_ICEBERG_ICEBERG_H

#include "../catalog/catalog.h"
#include "../layout/layout.h"

/* ---- hooks (each a no-op on a repository without iceberg/views.json) ---- */

/* After a commit moved `branch` to `id`: the version's view for every
 * location views.json names, and the branch's namespaces in each catalog.
 * Best effort for the caller: the view is derived, and a failure leaves
 * the repository as correct as before. */
int fdl_iceberg_after_commit(fdl_repo *repo, const char *branch, const char *id, fdl_error *err);
/* The same beside the caller, on a thread of its own with its own handle
 * on the repository (*out NULL and nothing started when it has no views),
 * reading through a connection of its own to `share`'s database (NULL: a
 * DuckDB of its own); the caller goes on with `repo` and `share` and joins
 * before it frees either. The join returns the hook's result. */
typedef struct fdl_iceberg_job fdl_iceberg_job;
int fdl_iceberg_after_commit_start(fdl_iceberg_job **out, fdl_repo *repo, const char *branch, const char *id,
				   fdl_duck *share, fdl_error *err);
int fdl_iceberg_after_commit_join(fdl_iceberg_job *job, fdl_error *err);
/* After versions left (expired, withdrawn) or data files went (gc): the
 * views of every live branch tip and tag target are written again from
 * their histories as they now are, and every other file of the views is
 * deleted (a view of another version is written again on demand), so no
 * view leads a reader to data that is gone. */
int fdl_iceberg_after_removal(fdl_repo *repo, fdl_error *err);
/* After a clone of a repository that has views: the copy's own views (its
 * location), for its branch tips and tags. */
int fdl_iceberg_after_clone(fdl_repo *src, const char *dst_root, fdl_error *err);
/* After a tag or branch was made or deleted: the views of the branch tips
 * that have one written again, with the tags as they now are. */
int fdl_iceberg_after_refs(fdl_repo *repo, fdl_error *err);
/* What fdl verify says about the views ("key\tmessage" findings). */
int fdl_iceberg_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, fdl_error *err);

/* ---- an Iceberg table another engine wrote (source.c; fdl add --iceberg) ---- */

typedef struct fdl_ice_source {
	int format;               /* format-version */
	char *location;           /* the table's location */
	int64_t snapshot;         /* the current snapshot's id, -1 when it has none */
	int64_t sequence;         /* its sequence number */
	fdl_strlist names, types; /* the current schema's top-level columns, types as DuckDB names them */
	int64_t *ids;             /* their field ids */
} fdl_ice_source;
/* Read the metadata.json at `path` (a local file): a v2 table's, else
 * FDL_EINVALID naming the file and what is wrong with it. */
int fdl_ice_source_read(fdl_ice_source *s, const char *path, fdl_error *err);
void fdl_ice_source_free(fdl_ice_source *s);

#endif
