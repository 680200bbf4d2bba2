/* fdl verify's checks of one version, shared with fdl clone, which runs
 * them on the bytes it fetched and checked for its plan instead of reading
 * the copy back. Each problem is appended to out (where, what); the return
 * is an error only when memory ran out. */
#ifndef FDL_OPS_VERIFY_H
#define FDL_OPS_VERIFY_H

#include "../catalog/catalog.h"
#include "../layout/walk.h"

/* Only the files a version may hold, and its first parent a readable
 * version of `dirs` one seq below (or withdrawn with its version.json). */
int fdl_verify_shape(fdl_verify_report *out, vdirs *dirs, const vdir *d, fdl_error *err);

/* A live catalog, attached in `duck` as `alias`: it stops at version.json's
 * snapshot_id, and files.json (its local copy; NULL: not checked) agrees
 * with it. Whether its data files are there is the caller's to check. */
int fdl_verify_catalog_attached(fdl_verify_report *out, fdl_duck *duck, const char *alias, const vdir *d,
				const char *files_local, fdl_error *err);

#endif
