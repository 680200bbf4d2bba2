/* What the lifecycle files share (expire.c, withdraw.c, gc.c; lifecycle.c
 * holds the steps): a version marked expired and its catalog files
 * removed, the data files a catalog references. Not libfdl's API. */
#ifndef FDL_OPS_LIFECYCLE_H
#define FDL_OPS_LIFECYCLE_H

#include "../catalog/catalog.h"
#include "../layout/keys.h"
#include "../layout/walk.h"

/* Delete a key; one already gone is fine (a rerun after a crash). Frees key. */
static inline int del_owned(fdl_repo *repo, char *key, fdl_error *err)
{
	return fdl_store_del_owned(repo->store, key, NULL, err);
}

static inline bool expired(const vdir *d)
{
	return fdl_vdir_has(d, FDL_EXPIRED_JSON);
}


int fdl__catalog_files(fdl_strlist *list, const vdir *d, fdl_error *err);
json_t *fdl__strlist_json(const fdl_strlist *l);
int fdl__expire_one(fdl_repo *repo, const vdir *d, const char *reason, const char *message, const json_t *extra, const fdl_strlist *removed, bool list_gone, fdl_error *err);
int fdl__version_files(fdl_strlist *out, fdl_repo *repo, fdl_duck *duck, vdirs *dirs, const vdir *d, bool added_only, fdl_error *err);

#endif
