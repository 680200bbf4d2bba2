/* The sha256 of data files (hashes.c): computed for files.json when a file
 * first enters a version, and checked by fdl verify once per file. */
#ifndef FDL_OPS_HASHES_H
#define FDL_OPS_HASHES_H

#include "freeze.h"

/* files.json's "sha256" (fdl's field, docs/format.md): the sha256 of every
 * file in fz->all_files, carried over from the base version's files.json
 * where it records one (through the working folder's copy of that map, `w`'s
 * FDL_WORK_HASHES, when it copies that files.json; w may be NULL), else
 * computed by streaming the file from the store
 * (its size checked against the catalog's record): a file of fz->staged from
 * `staging` (the working catalog's own folder, work/<id>; NULL: none), where
 * it is until commit publishes it, any other from the data folder;
 * fz->files_text gets files.json with it, fz->hashes_text the working
 * folder's next copy of the map, and fz->files_json (its tree) is freed. */
int fdl_data_hashes_add(frozen *fz, fdl_repo *repo, const fdl_work *w, const char *staging, fdl_error *err);

/* Each key hashed once however many threads and versions ask for it: the
 * first asker streams it from its own store (a store handle is one
 * thread's), the others wait for that answer. The answer is the sha256 or
 * the store's error for the key (FDL_ENOTFOUND, ...), the same for all;
 * *bytes (may be NULL) the size of what was hashed. */
typedef struct fdl_hash_cache fdl_hash_cache;
int fdl_hash_cache_new(fdl_hash_cache **out, fdl_error *err);
int fdl_hash_cache_get(fdl_hash_cache *c, fdl_store *s, const char *key, char hex[65], int64_t *bytes,
		       fdl_error *err);
void fdl_hash_cache_free(fdl_hash_cache *c);

#endif
