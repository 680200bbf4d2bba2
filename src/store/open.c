/* Which backend a root names: the one place that knows them all. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

static int open_backend(fdl_store **out, const char *root, fdl_error *err)
{
	if (!root || !*root)
		return fdl_fail(err, FDL_EINVALID, "no repository given");
	if (strncmp(root, "file://", 7) == 0)
		return fdl_store_folder_open(out, root + 7, err);
	if (strncmp(root, "http://", 7) == 0 || strncmp(root, "https://", 8) == 0)
		return fdl_store_http_open(out, root, err);
	if (strncmp(root, "s3://", 5) == 0)
		return fdl_store_s3_open(out, root, err);
	const char *scheme = strstr(root, "://");
	if (scheme)
		return fdl_fail(err, FDL_EINVALID,
				"repository '%s': there is no %.*s:// store (folders, file://, http(s):// and s3:// only)",
				root, (int)(scheme - root), root);
	return fdl_store_folder_open(out, root, err);
}

int fdl_store_open(fdl_store **out, const char *root, fdl_error *err)
{
	int rc = open_backend(out, root, err);
#ifdef FDL_CRASH_POINTS
	if (!rc) {
		const char *n = getenv("FDL_CRASH_AT");
		(*out)->crash_at = n ? strtol(n, NULL, 10) : 0;
	}
#endif
	return rc;
}
