/* The store's rule for the files a version references, where the
 * repository's files are this machine's: each reached inside the root with
 * no symlink on the way, as the store reads them (store.h,
 * fdl_store_files_confined). */
#include "store.h"

#include <stdlib.h>
#include <string.h>

/* Why the file at `key` may not be read, for the message: where a symlink
 * on the way leads (out of the repository, or elsewhere in it), or that it
 * is not a regular file. */
static int refuse(fdl_store *s, const char *key, fdl_error *err)
{
	char *path = fdl_asprintf("%s/%s", s->url, key);
	char *real = path ? realpath(path, NULL) : NULL, *root = realpath(s->url, NULL);
	char *plain = root ? fdl_asprintf("%s/%s", root, key) : NULL; /* where it is, with nothing followed */
	size_t n = root ? strlen(root) : 0;
	bool moved = real && plain && strcmp(real, plain);
	bool out = moved && (strncmp(real, root, n) || real[n] != '/');
	int rc;
	if (!path)
		rc = fdl_oom(err);
	else if (out)
		rc = fdl_fail(err, FDL_EINVALID,
			      "%s leads out of the repository (to %s, through a symlink); fdl follows no symlink inside "
			      "a repository",
			      path, real);
	else if (moved)
		rc = fdl_fail(err, FDL_EINVALID,
			      "%s is reached through a symlink (to %s); fdl follows no symlink inside a repository", path,
			      real);
	else
		rc = fdl_fail(err, FDL_EINVALID, "%s is a symlink or not a regular file; fdl follows no symlink inside a "
				       "repository", path);
	free(path);
	free(real);
	free(root);
	free(plain);
	return rc;
}

int fdl_store_files_confined(fdl_store *s, const char *dir, const fdl_strlist *files, fdl_error *err)
{
	if (!fdl_store_can(s, FDL_STORE_LOCAL) || !files->len)
		return 0;
	size_t n = files->len;
	char **keys = calloc(n, sizeof *keys);
	int64_t *sizes = calloc(n, sizeof *sizes);
	int rc = keys && sizes ? 0 : fdl_oom(err);
	fdl_strlist sorted = {0};
	for (size_t i = 0; i < n && !rc; i++)
		rc = fdl_strlist_add(&sorted, files->items[i], err);
	fdl_strlist_sort(&sorted); /* by folder: one open of each */
	for (size_t i = 0; i < n && !rc; i++)
		if (!(keys[i] = fdl_asprintf("%s/%s", dir, sorted.items[i])))
			rc = fdl_oom(err);
	if (!rc)
		rc = fdl_store_head_many(s, (const char *const *)keys, n, sizes, err);
	for (size_t i = 0; i < n && !rc; i++) /* an absent file is the reader's to report */
		if (sizes[i] == FDL_HEAD_NOT_FILE)
			rc = refuse(s, keys[i], err);
	for (size_t i = 0; keys && i < n; i++)
		free(keys[i]);
	free(keys);
	free(sizes);
	fdl_strlist_free(&sorted);
	return rc;
}
