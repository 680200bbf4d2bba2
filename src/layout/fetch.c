/* The one checked fetch of a version file, for every path that reads one
 * (checkout, commit, clone, history, the reader): in place in a local
 * store, else downloaded once into the read cache and kept there by its
 * sha256 (version files never change), checked against the bytes and sha256
 * version.json records before anyone opens it. */
#include "layout.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int mismatch(fdl_error *err, fdl_repo *repo, const char *key, int64_t n, const char *hex, int64_t bytes,
		    const char *sha)
{
	return fdl_fail(err, FDL_EINVALID, "%s/%s is %lld bytes with sha256 %s; version.json says %lld bytes, %s",
			repo->root, key, (long long)n, hex, (long long)bytes, sha);
}

/* Download key into the cache file `path` through one atomic write,
 * checking it against (bytes, sha) when they are recorded. */
static int download(fdl_repo *repo, const char *key, const char *path, int64_t bytes, const char *sha,
		    fdl_error *err)
{
	fdl_atomic_file a;
	int rc = fdl_cache_prepare(path, err);
	if (!rc)
		rc = fdl_atomic_begin(&a, path, err);
	if (rc)
		return rc;
	rc = fdl_store_get_file(repo->store, key, a.tmp, err);
	char hex[65];
	int64_t n = 0;
	if (!rc && sha) {
		rc = fdl_sha256_file(hex, &n, a.tmp, err);
		if (!rc && (n != bytes || strcmp(hex, sha)))
			rc = mismatch(err, repo, key, n, hex, bytes, sha);
	}
	if (rc) {
		fdl_atomic_abort(&a);
		return rc;
	}
	return fdl_atomic_commit(&a, err);
}

bool fdl_object_cached(const fdl_repo *repo, int64_t bytes, const char *sha)
{
	if (!sha || fdl_store_can(repo->store, FDL_STORE_LOCAL))
		return false;
	char *path = fdl_cache_path("objects", sha);
	struct stat st;
	bool yes = path && stat(path, &st) == 0 && st.st_size == bytes;
	free(path);
	return yes;
}

int fdl_object_fetch_checked(char **out, fdl_repo *repo, const char *key, int64_t bytes, const char *sha, fdl_error *err)
{
	char *local = fdl_store_local_path(repo->store, key);
	char hex[65];
	int64_t n = 0;
	int rc = 0;
	if (local) {
		/* in place, but never through a symlink (the store refuses one) */
		int64_t size;
		rc = fdl_store_head(repo->store, key, &size, err);
		if (!rc && sha)
			rc = fdl_sha256_file(hex, &n, local, err);
		if (rc == FDL_ENOTFOUND)
			rc = fdl_fail(err, FDL_ENOTFOUND, "%s/%s is missing (listed in version.json)", repo->root, key);
		if (!rc && sha && (n != bytes || strcmp(hex, sha)))
			rc = mismatch(err, repo, key, n, hex, bytes, sha);
		if (rc)
			free(local);
		else
			*out = local;
		return rc;
	}
	char *id = sha ? NULL : fdl_asprintf("%s/%s", repo->root, key);
	char *path = sha ? fdl_cache_path("objects", sha) : id ? fdl_cache_path_hashed("unverified", id) : NULL;
	free(id);
	struct stat st;
	if (!path)
		rc = fdl_oom(err);
	else if (stat(path, &st) == 0 && (sha ? st.st_size == bytes : true)) {
		/* cached: verified when it was stored, immutable since */
	} else {
		rc = download(repo, key, path, bytes, sha, err);
	}
	if (rc)
		free(path);
	else
		*out = path;
	return rc;
}
