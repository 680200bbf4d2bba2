/*
 * The folder store. Create-only writes go to a temporary file in the target
 * folder, are fsynced, then link()ed to the key: link fails if the key
 * exists, so a key appears whole or not at all and is never replaced.
 * Compare-and-swap is Git's lockfile: create <key>.lock with O_EXCL (with
 * its holder recorded, util/lockfile.c), re-read the key, check it still has
 * the etag the caller read, write the new value to a temporary file, fsync,
 * rename it over the key, remove the lock. An etag is the sha256 of the
 * content.
 */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct folder_store {
	fdl_store base;
	char *root; /* absolute, no trailing slash */
} folder_store;

static char *key_path(folder_store *f, const char *key)
{
	return fdl_asprintf("%s/%s", f->root, key);
}

static int err_errno(fdl_error *err, const char *what, const char *path)
{
	int e = errno;
	int code = e == ENOENT ? FDL_ENOTFOUND : FDL_EIO;
	return fdl_fail(err, code, "%s %s: %s", what, path, strerror(e));
}

static int ensure_parent(const char *path, fdl_error *err)
{
	char *copy = fdl_strdup(path);
	if (!copy)
		return fdl_oom(err);
	char *slash = strrchr(copy, '/');
	int rc = 0;
	if (slash && slash != copy) {
		*slash = '\0';
		rc = fdl_mkdir_p(copy, err);
	}
	free(copy);
	return rc;
}

static int folder_get(fdl_store *s, const char *key, size_t max_bytes, fdl_buf *out, char etag[FDL_ETAG_MAX],
		      fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *path = key_path(f, key);
	if (!path)
		return fdl_oom(err);
	int fd = fdl_open_beneath(f->root, key, O_RDONLY, err);
	struct stat st;
	int rc = fd < 0 ? fd : 0;
	if (!rc && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) { /* a folder of keys: no such key, as a bucket says */
		close(fd);
		rc = fdl_fail(err, FDL_ENOTFOUND, "%s is a folder, not a file", path);
	} else if (!rc)
		rc = fdl_fd_read(out, fd, path, max_bytes, err);
	free(path);
	if (!rc && etag) {
		char hex[65];
		rc = fdl_sha256_mem(hex, out->data, out->len, err);
		if (!rc)
			memcpy(etag, hex, 65);
	}
	return rc;
}

static int folder_get_file(fdl_store *s, const char *key, const char *local_path, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *path = key_path(f, key);
	if (!path)
		return fdl_oom(err);
	int rc = 0;
	int in = fdl_open_beneath(f->root, key, O_RDONLY, err);
	if (in < 0) {
		free(path);
		return in;
	}
	int out = open(local_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		rc = err_errno(err, "cannot create", local_path);
	else {
		rc = fdl_fd_copy(in, out, path, local_path, err);
		if (close(out) != 0 && !rc)
			rc = err_errno(err, "cannot close", local_path);
	}
	close(in);
	free(path);
	return rc;
}

static int folder_sha256(fdl_store *s, const char *key, char hex[65], int64_t *bytes, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *path = key_path(f, key);
	if (!path)
		return fdl_oom(err);
	int fd = fdl_open_beneath(f->root, key, O_RDONLY, err);
	int rc = fd < 0 ? fd : fdl_sha256_fd(hex, bytes, fd, path, err);
	free(path);
	return rc;
}

static int folder_head(fdl_store *s, const char *key, int64_t *bytes, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *path = key_path(f, key);
	if (!path)
		return fdl_oom(err);
	struct stat st;
	int rc = 0;
	int fd = fdl_open_beneath(f->root, key, O_PATH, err);
	if (fd < 0)
		rc = fd;
	else if (fstat(fd, &st) != 0)
		rc = err_errno(err, "cannot stat", path);
	else if (!S_ISREG(st.st_mode))
		rc = fdl_fail(err, FDL_EINVALID, "%s is not a regular file", path);
	else if (bytes)
		*bytes = (int64_t)st.st_size;
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

/* One safe open of each folder (no symlink on the way), then one fstatat
 * per key in it, not following a symlink at the end either. */
static int folder_head_many(fdl_store *s, const char *const *keys, size_t n, int64_t *sizes, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	int dir = -1;
	char *dir_key = NULL;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *slash = strrchr(keys[i], '/');
		size_t dlen = slash ? (size_t)(slash - keys[i]) : 0;
		const char *name = slash ? slash + 1 : keys[i];
		if (!dir_key || strlen(dir_key) != dlen || strncmp(dir_key, keys[i], dlen)) {
			if (dir >= 0)
				close(dir);
			free(dir_key);
			dir = -1;
			if (!(dir_key = strndup(keys[i], dlen))) {
				rc = fdl_oom(err);
				break;
			}
			fdl_error e;
			dir = dlen ? fdl_open_beneath(f->root, dir_key, O_PATH | O_DIRECTORY, &e)
				   : open(f->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (dir < 0 && dlen && dir != FDL_ENOTFOUND && dir != FDL_EINVALID) {
				*err = e;
				rc = dir;
				break;
			}
			if (dir < 0 && !dlen) {
				rc = err_errno(err, "cannot open", f->root);
				break;
			}
		}
		struct stat st;
		if (dir < 0) { /* no such folder, or one reached through a symlink */
			sizes[i] = dir == FDL_EINVALID ? FDL_HEAD_NOT_FILE : FDL_HEAD_ABSENT;
		} else if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				sizes[i] = FDL_HEAD_ABSENT;
			else {
				char *path = key_path(f, keys[i]);
				rc = err_errno(err, "cannot stat", path ? path : keys[i]);
				free(path);
			}
		} else {
			sizes[i] = S_ISREG(st.st_mode) ? (int64_t)st.st_size : FDL_HEAD_NOT_FILE;
		}
	}
	if (dir >= 0)
		close(dir);
	free(dir_key);
	return rc;
}

static int folder_modified(fdl_store *s, const char *key, int64_t *when, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *path = key_path(f, key);
	if (!path)
		return fdl_oom(err);
	struct stat st;
	int rc = lstat(path, &st) != 0 ? err_errno(err, "cannot stat", path) : 0;
	if (!rc)
		*when = (int64_t)st.st_mtime;
	free(path);
	return rc;
}

/* A create-only write said as the store says it: by key. */
static int create_error(int rc, const char *key, fdl_error *err)
{
	if (rc == FDL_EEXISTS)
		fdl_fail(err, FDL_EEXISTS, "%s already exists; refusing to overwrite it", key);
	return rc;
}

static int folder_put_if_absent(fdl_store *s, const char *key, const void *data, size_t len, fdl_error *err)
{
	char *path = key_path((folder_store *)s, key);
	int rc = path ? ensure_parent(path, err) : fdl_oom(err);
	fdl_atomic_file a;
	if (!rc && !(rc = fdl_atomic_begin(&a, path, err))) {
		rc = fdl_atomic_write(&a, data, len, err);
		rc = rc ? (fdl_atomic_abort(&a), rc) : create_error(fdl_atomic_create(&a, err), key, err);
	}
	free(path);
	return rc;
}

static int folder_put_file_if_absent(fdl_store *s, const char *key, const char *local_path, fdl_error *err)
{
	char *path = key_path((folder_store *)s, key);
	if (!path)
		return fdl_oom(err);
	int in = open(local_path, O_RDONLY | O_CLOEXEC);
	int rc = in < 0 ? err_errno(err, "cannot open", local_path) : ensure_parent(path, err);
	fdl_atomic_file a;
	if (!rc && !(rc = fdl_atomic_begin(&a, path, err))) {
		rc = fdl_atomic_copy(&a, in, local_path, err);
		rc = rc ? (fdl_atomic_abort(&a), rc) : create_error(fdl_atomic_create(&a, err), key, err);
	}
	if (in >= 0)
		close(in);
	free(path);
	return rc;
}

/* A second name for the file `from` (no symlink followed on the way): no
 * byte is copied, and the name is durable after folder_sync. Across file
 * systems, a copy. */
static int folder_copy_if_absent(fdl_store *s, const char *from, const char *to, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *src = key_path(f, from), *dst = key_path(f, to);
	int fd = src && dst ? fdl_open_beneath(f->root, from, O_RDONLY, err) : fdl_oom(err);
	struct stat a, b;
	int rc = fd < 0 ? fd : 0;
	if (!rc && (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode)))
		rc = fdl_fail(err, FDL_EINVALID, "%s is not a regular file", src);
	if (!rc)
		rc = ensure_parent(dst, err);
	if (!rc && link(src, dst) != 0) {
		if (errno == EEXIST && lstat(dst, &b) == 0 && b.st_ino == a.st_ino && b.st_dev == a.st_dev)
			rc = 0; /* done before */
		else if (errno == EEXIST)
			rc = create_error(FDL_EEXISTS, to, err);
		else if (errno == EXDEV || errno == EPERM || errno == EMLINK)
			rc = folder_put_file_if_absent(s, to, src, err);
		else
			rc = err_errno(err, "cannot link", dst);
	}
	if (fd >= 0)
		close(fd);
	free(src);
	free(dst);
	return rc;
}

/* Git's lockfile, with its holder recorded (util/lockfile.c): hold
 * <key>.lock, check the key still has `etag` (NULL: does not exist), then
 * either write `data` to a temporary file and rename it over the key, or
 * (data NULL) delete the key; then drop the lock. A lock left by a writer
 * that died is broken by the next one, on this host. */
static int locked_update(folder_store *f, const char *key, const void *data, size_t len, const char *etag,
			 fdl_error *err)
{
	char *path = key_path(f, key);
	char *lock = fdl_asprintf("%s/%s.lock", f->root, key);
	fdl_lockfile lk = {.fd = -1};
	int rc = 0;
	if (!path || !lock) {
		rc = fdl_oom(err);
		goto out;
	}
	if ((rc = ensure_parent(path, err)))
		goto out;
	if ((rc = fdl_lockfile_take(&lk, lock, key, "fdl", err)))
		goto out;
	/* Holding the lock: the current value cannot change under us. */
	fdl_buf cur = {0};
	fdl_error rerr = {0};
	int got = fdl_file_read(&cur, path, FDL_META_MAX_BYTES, &rerr);
	if (got == FDL_ENOTFOUND) {
		if (etag)
			rc = fdl_fail(err, FDL_ECONFLICT, "%s was deleted by another writer", key);
	} else if (got) {
		rc = fdl_fail(err, rerr.code, "%s", rerr.message);
	} else if (!etag) {
		rc = fdl_fail(err, FDL_ECONFLICT, "%s was created by another writer", key);
	} else {
		char hex[65];
		rc = fdl_sha256_mem(hex, cur.data, cur.len, err);
		if (!rc && strcmp(hex, etag) != 0)
			rc = fdl_fail(err, FDL_ECONFLICT, "%s was changed by another writer", key);
	}
	fdl_buf_free(&cur);
	if (!rc && data) /* replaced whole, the folder fsynced */
		rc = fdl_file_write_atomic(path, data, len, err);
	if (!rc && !data && unlink(path) != 0)
		rc = err_errno(err, "cannot delete", path);
	if (!rc && !data)
		fdl_fsync_parent(path);
	fdl_lockfile_release(&lk);
out:
	free(path);
	free(lock);
	return rc;
}

static int folder_put_if_match(fdl_store *s, const char *key, const void *data, size_t len, const char *etag,
			       fdl_error *err)
{
	return locked_update((folder_store *)s, key, data ? data : "", len, etag, err);
}

static int folder_lock_check(fdl_store *s, const char *key, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *lock = fdl_asprintf("%s/%s.lock", f->root, key);
	int rc = lock ? fdl_lockfile_check(lock, key, err) : fdl_oom(err);
	free(lock);
	return rc;
}

static int folder_del_if_match(fdl_store *s, const char *key, const char *etag, fdl_error *err)
{
	if (!etag)
		return fdl_fail(err, FDL_EINVALID, "deleting %s needs the etag it was read with", key);
	return locked_update((folder_store *)s, key, NULL, 0, etag, err);
}

static int list_rec(const char *dir, const char *rel, fdl_strlist *out, fdl_strlist *others, fdl_error *err)
{
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return err_errno(err, "cannot list", dir);
	}
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *child = fdl_asprintf("%s/%s", dir, e->d_name);
		char *crel = *rel ? fdl_asprintf("%s/%s", rel, e->d_name) : fdl_strdup(e->d_name);
		struct stat st;
		if (!child || !crel)
			rc = fdl_oom(err);
		else if (lstat(child, &st) != 0)
			rc = err_errno(err, "cannot stat", child);
		else if (S_ISDIR(st.st_mode))
			rc = list_rec(child, crel, out, others, err);
		else if (S_ISREG(st.st_mode))
			rc = fdl_strlist_add(out, crel, err);
		else if (others) /* a symlink, a FIFO, a device: never followed */
			rc = fdl_strlist_add(others, crel, err);
		free(child);
		free(crel);
	}
	closedir(d);
	return rc;
}

static int folder_list(fdl_store *s, const char *prefix, fdl_strlist *out, fdl_strlist *others, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *dir = *prefix ? key_path(f, prefix) : fdl_strdup(f->root);
	char *rel = fdl_strdup(prefix);
	int rc = 0;
	if (!dir || !rel)
		rc = fdl_oom(err);
	else {
		size_t n = strlen(rel);
		while (n && rel[n - 1] == '/')
			rel[--n] = '\0';
		struct stat st;
		if (*rel && lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
			/* the folder itself is a symlink or a file: not followed */
			if (others && !S_ISREG(st.st_mode))
				rc = fdl_strlist_add(others, rel, err);
		} else {
			rc = list_rec(dir, rel, out, others, err);
		}
	}
	free(dir);
	free(rel);
	return rc;
}

/* Remove the empty folders below dir, never following a symlink; *empty
 * says whether dir holds nothing any more. */
static int prune_rec(const char *dir, bool *empty, fdl_error *err)
{
	DIR *d = opendir(dir);
	*empty = false;
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : err_errno(err, "cannot list", dir);
	int rc = 0;
	bool all = true;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *child = fdl_asprintf("%s/%s", dir, e->d_name);
		struct stat st;
		bool gone = false;
		if (!child)
			rc = fdl_oom(err);
		else if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode) && !(rc = prune_rec(child, &gone, err)) && gone)
			gone = rmdir(child) == 0 || errno == ENOENT; /* not empty: a writer got there first */
		all = all && gone;
		free(child);
	}
	closedir(d);
	*empty = !rc && all;
	return rc;
}

static int folder_prune(fdl_store *s, const char *prefix, fdl_error *err)
{
	char *dir = key_path((folder_store *)s, prefix);
	bool empty = false;
	int rc = dir ? prune_rec(dir, &empty, err) : fdl_oom(err);
	if (!rc && empty && rmdir(dir) != 0 && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
		rc = err_errno(err, "cannot remove the empty folder", dir);
	free(dir);
	return rc;
}

static int folder_del(fdl_store *s, const char *key, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	char *path = key_path(f, key);
	if (!path)
		return fdl_oom(err);
	int rc = 0;
	if (unlink(path) != 0)
		rc = err_errno(err, "cannot delete", path);
	else
		fdl_fsync_parent(path);
	free(path);
	return rc;
}

/* fsync each folder the keys are in, once (keys sorted by folder). */
static int folder_sync(fdl_store *s, const char *const *keys, size_t n, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		/* keys sorted by folder are the fast case: a folder is synced
		 * again only when it differs from the one before */
		const char *slash = strrchr(keys[i], '/'), *ps = i ? strrchr(keys[i - 1], '/') : NULL;
		size_t dlen = slash ? (size_t)(slash - keys[i]) : 0;
		bool seen = i && (ps ? (size_t)(ps - keys[i - 1]) : 0) == dlen && !strncmp(keys[i - 1], keys[i], dlen);
		char *path = seen ? NULL : key_path(f, keys[i]);
		if (!seen && !path)
			rc = fdl_oom(err);
		else if (path)
			fdl_fsync_parent(path);
		free(path);
	}
	return rc;
}

static int folder_del_many(fdl_store *s, const char *const *keys, size_t n, fdl_error *err)
{
	folder_store *f = (folder_store *)s;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		char *path = key_path(f, keys[i]);
		if (!path)
			rc = fdl_oom(err);
		else if (unlink(path) != 0 && errno != ENOENT)
			rc = err_errno(err, "cannot delete", path);
		free(path);
	}
	return rc ? rc : folder_sync(s, keys, n, err);
}

static char *folder_local_path(fdl_store *s, const char *key)
{
	return key_path((folder_store *)s, key);
}

static void folder_free(fdl_store *s)
{
	folder_store *f = (folder_store *)s;
	free(f->root);
	free(f);
}

static const fdl_store_ops folder_ops = {
	.name = "folder",
	.caps = FDL_STORE_LOCAL | FDL_STORE_LIST | FDL_STORE_WRITE,
	.get = folder_get,
	.get_file = folder_get_file,
	.sha256 = folder_sha256,
	.head = folder_head,
	.head_many = folder_head_many,
	.modified = folder_modified,
	.put_if_absent = folder_put_if_absent,
	.put_file_if_absent = folder_put_file_if_absent,
	.put_if_match = folder_put_if_match,
	.copy_if_absent = folder_copy_if_absent,
	.sync = folder_sync,
	.del_many = folder_del_many,
	.list = folder_list,
	.del = folder_del,
	.prune = folder_prune,
	.del_if_match = folder_del_if_match,
	.lock_check = folder_lock_check,
	.local_path = folder_local_path,
	.free = folder_free,
};

int fdl_store_folder_open(fdl_store **out, const char *path, fdl_error *err)
{
	folder_store *f = calloc(1, sizeof *f);
	if (!f)
		return fdl_oom(err);
	int rc = fdl_path_absolute(&f->root, path, err);
	if (rc) {
		free(f);
		return rc;
	}
	size_t n = strlen(f->root);
	while (n > 1 && f->root[n - 1] == '/')
		f->root[--n] = '\0';
	f->base.ops = &folder_ops;
	f->base.url = f->root;
	*out = &f->base;
	return 0;
}
