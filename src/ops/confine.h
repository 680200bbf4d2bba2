/* The one check of what a version may name (issue 53), before DuckLake,
 * a reader, a view or a working catalog sees its catalog. */
#ifndef FDL_CONFINE_H
#define FDL_CONFINE_H

#include "../catalog/catalog.h"
#include "../layout/layout.h"

/* Version v's catalog (`catalog`, its local path as fetched) names only
 * what a version may: every path it records, at any snapshot (each
 * schema's, table's, data and delete file's), relative and clean (no
 * absolute path, no '..', no URL: fdl_catalog_check_confined), and, on a
 * store of local files, the catalog and every file it references reached
 * inside the repository with no symlink on the way (the store's own rule,
 * fdl_store_head_many, as verify reads them). Else FDL_EINVALID naming the
 * version and the file (and where a symlink leads). The catalog is attached
 * raw as `alias` in `d`; alias NULL: this attaches it itself, in d, or in a
 * DuckDB of its own when d is NULL too. `files` (may be NULL) gets every
 * data and delete file the catalog references, relative to the data
 * folder. Every command that reads a version's rows or hands them on calls
 * it: query, attach, export, diff, checkout (and rebase, which seeds a
 * working catalog the same way), withdraw, iceberg (a view, the catalog). */
int fdl_version_confined(fdl_repo *repo, const fdl_version *v, const char *catalog, fdl_duck *d, const char *alias,
			 fdl_strlist *files, fdl_error *err);

#endif
