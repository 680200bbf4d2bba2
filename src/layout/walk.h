/* Every version directory of a repository, with its files: what verify,
 * expire, withdraw, gc and clone walk. */
#ifndef FDL_WALK_H
#define FDL_WALK_H

#include "layout.h"

typedef struct vdir {
	char id[FDL_ID_LEN + 1];
	fdl_strlist files;  /* names relative to versions/<id>/ */
	fdl_version *v;     /* set by the caller once version.json is read */
	bool reachable;
	bool named; /* a branch or tag names it (verify) */
	char sha256[65]; /* of version.json's bytes when known (the history index), else "" */
} vdir;

typedef struct vdirs {
	vdir *items;
	size_t len;
} vdirs;

/* List versions/ of the store; keys that are not inside a directory named
 * by a version id go to `strays`, and entries that are neither files nor
 * folders (symlinks, FIFOs; never followed) to `specials` (both may be
 * NULL). */
int fdl_vdirs_list(vdirs *out, fdl_strlist *strays, fdl_strlist *specials, fdl_repo *repo, fdl_error *err);
/* Also read and check each version.json; unreadable ones stay NULL, their
 * message appended to `problems` as "key: message" (may be NULL). */
int fdl_vdirs_read(vdirs *d, fdl_finding_list *problems, fdl_repo *repo, fdl_error *err);
/* A store that cannot be listed (a static HTTP host): the versions `tips`
 * reach through every parent, each version.json read and checked (one
 * that cannot be is appended to `problems` and kept with v NULL; one the
 * store does not have is left out, so what names it says so), and the
 * files each holds that can be named without a listing: version.json, the
 * files it lists (of an expired version, those the store still has),
 * expired.json and version.json.sig when the store has them (one HEAD
 * each). What only a listing shows is not seen: a version no ref reaches,
 * a file a version may not hold, catalogs/<format>.duckdb. */
int fdl_vdirs_walk(vdirs *out, fdl_finding_list *problems, fdl_repo *repo, const char (*tips)[FDL_ID_LEN + 1],
		   size_t ntips, fdl_error *err);
vdir *fdl_vdirs_find(vdirs *d, const char *id);
bool fdl_vdir_has(const vdir *d, const char *name);
void fdl_vdirs_free(vdirs *d);

/* fdl_version_added_from for a listed version whose parent may be among
 * `dirs`. */
int64_t fdl_vdirs_added_from(vdirs *dirs, const vdir *d);

#endif
