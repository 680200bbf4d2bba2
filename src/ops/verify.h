/* fdl verify's checks of one version, shared with fdl clone, which runs
 * them on the bytes it fetched and checked for its plan instead of reading
 * the copy back. Each problem is appended to out (where, what); the return
 * is an error only when memory ran out. */
#ifndef FDL_OPS_VERIFY_H
#define FDL_OPS_VERIFY_H

#include "../catalog/catalog.h"
#include "../layout/walk.h"
#include "hashes.h"
#include "../layout/files_scan.h"

/* Only the files a version may hold, and its first parent a readable
 * version of `dirs` one seq below (or withdrawn with its version.json). */
int fdl_verify_shape(fdl_verify_report *out, vdirs *dirs, const vdir *d, fdl_error *err);

/* A live catalog, attached in `duck` as `alias`: it stops at version.json's
 * snapshot_id, and files.json (its local copy; NULL: not checked) agrees
 * with it. Whether its data files are there is the caller's to check. */
int fdl_verify_catalog_attached(fdl_verify_report *out, fdl_duck *duck, const char *alias, const vdir *d,
				const char *files_local, fdl_error *err);

/* files.json as fdl derives it from the catalog (`derived`; it takes the
 * written sha256 map, which is not derived) agrees with files.json as
 * written (its bytes' sha256 `sha`, parsed `written`, may be NULL): equal
 * hashes, or equal JSON but for fdl's optional additions. */
bool fdl_verify_files_agree(json_t *derived, const char *sha, const json_t *written);

/* The default depth (verify_data.c). files.json of `d` (version.json's
 * `ref` to it) read once, its bytes and sha256 checked, and its data files
 * read into *scan (*ok false, scan empty, when it is absent, a problem
 * unless `expired`, or not the recorded bytes, or not JSON); the problems
 * appended to out. The caller frees the scan (fdl_files_scan_free). */
int fdl_verify_files_json(fdl_files_scan *scan, bool *ok, fdl_verify_report *out, fdl_repo *repo, const vdir *d,
			  const json_t *ref, bool expired);

/* expired.json of `d` read and checked field by field (reason, expired_at). */
int fdl_verify_expired(fdl_verify_report *out, fdl_repo *repo, const vdir *d);

/* The data of live version `d` from its files.json (`written`, proven by
 * the call above) alone: every live file there of its recorded size, every
 * file of its sha256 map with that sha256, hashed once a run through
 * `hashes`. What only the catalog can say is --deep's (verify.c). */
int fdl_verify_data_listed(fdl_verify_report *out, fdl_repo *repo, fdl_hash_cache *hashes, const vdir *d,
			   const fdl_files_scan *scan);

/* One warning for every live version whose files.json records no sha256
 * of its data files (unhashed[k] of the version dirs->items[todo[k]], k <
 * n): not a problem (versions written before fdl recorded them, or by
 * another writer), but their data is checked by size only. */
int fdl_verify_unhashed(fdl_verify_report *out, const vdirs *dirs, const size_t *todo, const bool *unhashed, size_t n,
			fdl_error *err);

/* A store that cannot be listed (verify_walk.c): the versions into *dirs
 * (each reachable, those refs name `named`) from the refs the ref list
 * names, or HEAD's branch, through every parent (fdl_vdirs_walk); refs to
 * nowhere, a bad HEAD, the history index of each branch and the ref list's
 * findings appended to out, and one warning saying what only a listing
 * would show. */
int fdl_verify_walk(fdl_verify_report *out, vdirs *dirs, fdl_repo *repo, fdl_error *err);

#endif
