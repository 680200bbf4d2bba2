/* fdl catalogs add: versions/<id>/catalogs/<format>.duckdb, for readers of
 * another DuckLake format (docs/format.md, "Catalogs in other formats"). A
 * writer places only what it can write; DuckDB 1.5.5 writes 1.0 alone. */
#include "../catalog/catalog.h"
#include "../layout/keys.h"

#include <stdlib.h>
#include <string.h>

int fdl_catalogs_add(fdl_repo *repo, const char *id, const char *format, fdl_error *err)
{
	fdl_version *v = NULL;
	int rc = fdl_version_read(&v, repo, id, err);
	if (rc)
		return rc;
	const char *main_format = fdl_version_ducklake_format(v);
	if (strcmp(format, main_format) != 0) {
		rc = fdl_fail(err, FDL_EINVALID,
			      "DuckDB %s writes DuckLake format %s only; it cannot write format %s, so no "
			      FDL_FORMAT_CATALOGS_DIR "/%s.duckdb is placed (docs/decisions.md, \"Other formats\")",
			      fdl_duck_version(), main_format, format, format);
		fdl_version_free(v);
		return rc;
	}
	/* the same format: the frozen catalog itself, checked, as a copy */
	char *src = NULL, *name = fdl_format_catalog_path(format);
	char *key = name ? fdl_version_key(id, name) : NULL;
	if (!key)
		rc = fdl_oom(err);
	else
		rc = fdl_version_check_live(repo, id, err);
	if (!rc)
		rc = fdl_version_fetch_catalog(&src, repo, v, err);
	if (!rc) {
		rc = fdl_store_put_file_if_absent(repo->store, key, src, err);
		if (rc == FDL_EEXISTS)
			rc = fdl_fail(err, FDL_EEXISTS, "%s/%s already exists; files of a version never change",
				      repo->root, key);
	}
	free(src);
	free(name);
	free(key);
	fdl_version_free(v);
	return rc;
}
