/* The store layer's one entry for every operation: keys are checked, every
 * write counts towards the crash points of test builds, and remote stores'
 * metadata is answered from the read cache where it may be. The backends
 * (folder.c, http.c, s3.c) sit below this; open.c, above them, picks one. */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Every write goes through here: the crash points of the tests. */
void fdl_store_before_write(fdl_store *s)
{
#ifdef FDL_CRASH_POINTS
	if (s->crash_at > 0 && ++s->writes >= s->crash_at) {
		fprintf(stderr, "fdl: crash point %ld reached (FDL_CRASH_AT)\n", s->writes);
		abort();
	}
#else
	(void)s;
#endif
}

void fdl_store_free(fdl_store *s)
{
	if (s)
		s->ops->free(s);
}

#define CHECK_KEY(key)                                                 \
	do {                                                           \
		int rc_ = fdl_path_check_key((key), "store key", err); \
		if (rc_)                                               \
			return rc_;                                    \
	} while (0)

/* ---- the metadata cache of remote stores ------------------------------------ */

/* Where the cache keeps what this store answered for `key`. */
static char *cache_path(const fdl_store *s, const char *key)
{
	char *id = fdl_asprintf("%s/%s", s->cache_id, key);
	char *p = id ? fdl_cache_path_hashed("meta", id) : NULL;
	free(id);
	return p;
}

int fdl_store_get(fdl_store *s, const char *key, size_t max_bytes, fdl_buf *out, char etag[FDL_ETAG_MAX],
		  fdl_error *err)
{
	CHECK_KEY(key);
	long ttl = s->cache_id && s->cache_ttl && !etag ? s->cache_ttl(key) : -1;
	char *cached = ttl >= 0 ? cache_path(s, key) : NULL;
	if (cached && fdl_cache_read(cached, ttl, max_bytes, out)) {
		free(cached);
		return 0;
	}
	int rc = s->ops->get(s, key, max_bytes, out, etag, err);
	if (rc) /* on failure nothing is left for the caller to free (an error body, a partial read) */
		fdl_buf_free(out);
	else if (cached)
		fdl_cache_write(cached, out->data, out->len);
	free(cached);
	return rc;
}

long fdl_store_requests(const fdl_store *s)
{
	return s->requests;
}

int fdl_store_get_file(fdl_store *s, const char *key, const char *local_path, fdl_error *err)
{
	CHECK_KEY(key);
	return s->ops->get_file(s, key, local_path, err);
}

int fdl_store_head(fdl_store *s, const char *key, int64_t *bytes, fdl_error *err)
{
	CHECK_KEY(key);
	return s->ops->head(s, key, bytes, err);
}

int fdl_store_head_many(fdl_store *s, const char *const *keys, size_t n, int64_t *sizes, fdl_error *err)
{
	for (size_t i = 0; i < n; i++)
		CHECK_KEY(keys[i]);
	if (s->ops->head_many)
		return s->ops->head_many(s, keys, n, sizes, err);
	for (size_t i = 0; i < n; i++) {
		fdl_error e;
		int rc = s->ops->head(s, keys[i], &sizes[i], &e);
		if (rc == FDL_ENOTFOUND)
			sizes[i] = FDL_HEAD_ABSENT;
		else if (rc == FDL_EINVALID)
			sizes[i] = FDL_HEAD_NOT_FILE;
		else if (rc) {
			*err = e;
			return rc;
		}
	}
	return 0;
}

int fdl_store_put_if_absent(fdl_store *s, const char *key, const void *data, size_t len, fdl_error *err)
{
	CHECK_KEY(key);
	fdl_store_before_write(s);
	return s->ops->put_if_absent(s, key, data, len, err);
}

int fdl_store_put_file_if_absent(fdl_store *s, const char *key, const char *local_path, fdl_error *err)
{
	CHECK_KEY(key);
	fdl_store_before_write(s);
	return s->ops->put_file_if_absent(s, key, local_path, err);
}

int fdl_store_put_if_match(fdl_store *s, const char *key, const void *data, size_t len, const char *etag,
			   fdl_error *err)
{
	CHECK_KEY(key);
	fdl_store_before_write(s);
	return s->ops->put_if_match(s, key, data, len, etag, err);
}

int fdl_store_copy_through_file(fdl_store *s, const char *from, const char *to, fdl_error *err)
{
	char *dir = NULL;
	int rc = fdl_tempdir(&dir, "copy", err);
	char *tmp = rc ? NULL : fdl_asprintf("%s/file", dir);
	if (!rc && !tmp)
		rc = fdl_oom(err);
	if (!rc)
		rc = s->ops->get_file(s, from, tmp, err);
	if (!rc)
		rc = s->ops->put_file_if_absent(s, to, tmp, err);
	if (dir)
		fdl_rm_rf(dir);
	free(tmp);
	free(dir);
	return rc;
}

int fdl_store_copy_if_absent(fdl_store *s, const char *from, const char *to, fdl_error *err)
{
	CHECK_KEY(from);
	CHECK_KEY(to);
	fdl_store_before_write(s);
	return s->ops->copy_if_absent ? s->ops->copy_if_absent(s, from, to, err)
				      : fdl_store_copy_through_file(s, from, to, err);
}

int fdl_store_sync(fdl_store *s, const char *const *keys, size_t n, fdl_error *err)
{
	for (size_t i = 0; i < n; i++)
		CHECK_KEY(keys[i]);
	return s->ops->sync ? s->ops->sync(s, keys, n, err) : 0;
}

int fdl_store_del_many(fdl_store *s, const char *const *keys, size_t n, fdl_error *err)
{
	for (size_t i = 0; i < n; i++) {
		CHECK_KEY(keys[i]);
		fdl_store_before_write(s);
	}
	if (s->ops->del_many)
		return s->ops->del_many(s, keys, n, err);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		fdl_error e;
		rc = s->ops->del(s, keys[i], &e);
		if (rc == FDL_ENOTFOUND)
			rc = 0;
		else if (rc)
			*err = e;
	}
	return rc;
}

int fdl_store_list_all(fdl_store *s, const char *prefix, fdl_strlist *out, fdl_strlist *others, fdl_error *err)
{
	if (*prefix) /* "" lists the whole store */
		CHECK_KEY(prefix);
	return s->ops->list(s, prefix, out, others, err);
}

int fdl_store_list(fdl_store *s, const char *prefix, fdl_strlist *out, fdl_error *err)
{
	return fdl_store_list_all(s, prefix, out, NULL, err);
}

int fdl_store_del(fdl_store *s, const char *key, fdl_error *err)
{
	CHECK_KEY(key);
	fdl_store_before_write(s);
	return s->ops->del(s, key, err);
}

int fdl_store_del_owned(fdl_store *s, char *key, bool *deleted, fdl_error *err)
{
	fdl_error e;
	int rc = key ? fdl_store_del(s, key, &e) : fdl_oom(err);
	if (deleted)
		*deleted = key && !rc;
	if (key && rc == FDL_ENOTFOUND)
		rc = 0;
	else if (key && rc)
		rc = fdl_fail(err, e.code, "%s", e.message);
	free(key);
	return rc;
}

int fdl_store_prune(fdl_store *s, const char *prefix, fdl_error *err)
{
	CHECK_KEY(prefix);
	return s->ops->prune ? s->ops->prune(s, prefix, err) : 0;
}

char *fdl_store_local_path(fdl_store *s, const char *key)
{
	if (fdl_path_check_key(key, "store key", NULL) != 0 || !s->ops->local_path)
		return NULL;
	return s->ops->local_path(s, key);
}

int fdl_store_sha256(fdl_store *s, const char *key, char hex[65], int64_t *bytes, fdl_error *err)
{
	CHECK_KEY(key);
	return s->ops->sha256(s, key, hex, bytes, err);
}

int fdl_store_lock_check(fdl_store *s, const char *key, fdl_error *err)
{
	CHECK_KEY(key);
	return s->ops->lock_check ? s->ops->lock_check(s, key, err) : 0;
}

int fdl_store_del_if_match(fdl_store *s, const char *key, const char *etag, fdl_error *err)
{
	CHECK_KEY(key);
	fdl_store_before_write(s);
	return s->ops->del_if_match(s, key, etag, err);
}

int fdl_store_modified(fdl_store *s, const char *key, int64_t *when, fdl_error *err)
{
	CHECK_KEY(key);
	if (!s->ops->modified)
		return fdl_fail(err, FDL_EINVALID, "%s: the %s store cannot tell when a file was written", s->url,
				s->ops->name);
	return s->ops->modified(s, key, when, err);
}

size_t fdl_meta_max_bytes(void)
{
	const char *v = getenv("FDL_MAX_METADATA_BYTES");
	long long n = v ? strtoll(v, NULL, 10) : 0;
	return n > 0 ? (size_t)n : (size_t)64 << 20;
}

int fdl_store_check_conditional(fdl_store *s, fdl_error *err)
{
	return s->ops->check_conditional ? s->ops->check_conditional(s, err) : 0;
}

bool fdl_store_can(const fdl_store *s, unsigned caps) { return (s->ops->caps & caps) == caps; }

bool fdl_store_s3_access(fdl_store *s, fdl_s3_access *out)
{
	memset(out, 0, sizeof *out);
	if (!fdl_store_can(s, FDL_STORE_BUCKET) || !s->ops->s3_access)
		return false;
	s->ops->s3_access(s, out);
	return true;
}

int fdl_store_replace_if_changed(fdl_store *s, const char *key, const void *text, size_t len, int64_t *written,
				 fdl_error *err)
{
	fdl_buf old = {0};
	char etag[FDL_ETAG_MAX] = "";
	int rc = fdl_store_get(s, key, FDL_META_MAX_BYTES, &old, etag, err);
	bool exists = rc != FDL_ENOTFOUND;
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		rc = 0;
	}
	bool same = !rc && exists && old.len == len && !memcmp(old.data, text, len);
	fdl_buf_free(&old);
	if (!rc && !same)
		rc = fdl_store_put_if_match(s, key, text, len, exists ? etag : NULL, err);
	if (!rc && !same && written)
		(*written)++;
	return rc;
}
