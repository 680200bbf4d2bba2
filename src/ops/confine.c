/* The one check of what a version may name (confine.h): the catalog's
 * paths by the lake's rules (fdl_catalog_confined), then, where the
 * repository's files are this machine's, every one of them reached inside
 * it with no symlink on the way (fdl_data_files_confined). */
#include "confine.h"

int fdl_version_confined(fdl_repo *repo, const fdl_version *v, const char *catalog, fdl_duck *d, const char *alias,
			 fdl_strlist *files, fdl_error *err)
{
	fdl_strlist all = {0};
	int rc = fdl_catalog_confined(&all, d, alias, catalog, err);
	if (!rc)
		rc = fdl_data_files_confined(repo, &all, err);
	if (rc)
		fdl_error_prefix(err, "version %s", fdl_version_id(v));
	if (!rc && files)
		for (size_t i = 0; i < all.len && !rc; i++)
			rc = fdl_strlist_add(files, all.items[i], err);
	fdl_strlist_free(&all);
	return rc;
}
