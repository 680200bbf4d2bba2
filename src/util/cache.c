/* The read cache: one folder ($FDL_CACHE_DIR, else $XDG_CACHE_HOME/fdl/read,
 * else ~/.cache/fdl/read) with one area per kind of thing kept:
 *   objects/<sha256>        version files, checked against their sha256
 *   unverified/<hash>       files FDL 0.1 records no hash for (catalogs/)
 *   meta/<hash>             metadata a remote store answered (store.c)
 *   s3-conditional/<hash>   buckets proven to honour conditional writes
 * Every write is atomic (fdl_atomic_*) and best effort: a cache that cannot
 * be written only makes fdl slower. The default folder is its user's alone
 * (0700): it holds what private hosts answered. */
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

char *fdl_cache_dir(void)
{
	const char *c = getenv("FDL_CACHE_DIR");
	if (c && *c)
		return fdl_strdup(c);
	const char *x = getenv("XDG_CACHE_HOME");
	if (x && *x)
		return fdl_asprintf("%s/fdl/read", x);
	const char *home = getenv("HOME");
	return fdl_asprintf("%s/.cache/fdl/read", home && *home ? home : "/tmp");
}

char *fdl_cache_path(const char *area, const char *name)
{
	char *dir = fdl_cache_dir();
	char *p = dir ? fdl_asprintf("%s/%s/%s", dir, area, name) : NULL;
	free(dir);
	return p;
}

char *fdl_cache_path_hashed(const char *area, const char *name)
{
	char hex[65];
	return fdl_sha256_mem(hex, name, strlen(name), NULL) ? NULL : fdl_cache_path(area, hex);
}

bool fdl_cache_read(const char *path, long ttl, size_t max_bytes, fdl_buf *out)
{
	struct stat st;
	return path && stat(path, &st) == 0 && (ttl == 0 || time(NULL) - st.st_mtime < ttl) &&
	       (size_t)st.st_size <= max_bytes && fdl_file_read(out, path, max_bytes, NULL) == 0;
}

int fdl_cache_prepare(const char *path, fdl_error *err)
{
	char *dir = fdl_strdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	int rc = slash ? (*slash = '\0', fdl_mkdir_p(dir, err)) : fdl_oom(err);
	free(dir);
	/* what a private host answered is kept for this user alone: the
	 * default folder is 0700 (a folder FDL_CACHE_DIR names is left as its
	 * owner made it, a cache shared on purpose) */
	const char *own = getenv("FDL_CACHE_DIR");
	char *top = !rc && !(own && *own) ? fdl_cache_dir() : NULL;
	if (top)
		chmod(top, 0700);
	free(top);
	return rc;
}

void fdl_cache_write(const char *path, const void *data, size_t len)
{
	if (path && fdl_cache_prepare(path, NULL) == 0)
		fdl_file_write_atomic(path, data, len, NULL);
}

void fdl_cache_forget(const char *path)
{
	if (path)
		remove(path);
}
