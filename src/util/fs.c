/* Paths and files: checks of relative paths, the one atomic write, the
 * chunked reader, temporary folders and their sweep. */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>

static int check_relative(const char *path, const char *what, bool unit_separator, fdl_error *err)
{
	size_t n = path ? strlen(path) : 0;
	if (n == 0)
		return fdl_fail(err, FDL_EINVALID, "%s is empty; expected a relative path", what);
	if (n > 1024)
		return fdl_fail(err, FDL_EINVALID, "%s is %zu bytes long; at most 1024 allowed", what, n);
	if (path[0] == '/')
		return fdl_fail(err, FDL_EINVALID, "%s '%s' is absolute; expected a relative path", what, path);
	if (strchr(path, '\\'))
		return fdl_fail(err, FDL_EINVALID, "%s '%s' contains a backslash", what, path);
	if (strstr(path, "://"))
		return fdl_fail(err, FDL_EINVALID, "%s '%s' is a URL; expected a relative path", what, path);
	const char *seg = path;
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);
		if (len == 0 && end)
			return fdl_fail(err, FDL_EINVALID, "%s '%s' has an empty path segment", what, path);
		if ((len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return fdl_fail(err, FDL_EINVALID, "%s '%s' has a '.' or '..' segment", what, path);
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)seg[i] < 0x20 && !(unit_separator && seg[i] == 0x1f))
				return fdl_fail(err, FDL_EINVALID, "%s '%s' contains a control character", what,
						path);
		if (!end)
			break;
		seg = end + 1;
	}
	return 0;
}

int fdl_path_check_relative(const char *path, const char *what, fdl_error *err)
{
	return check_relative(path, what, false, err);
}

int fdl_path_check_key(const char *path, const char *what, fdl_error *err)
{
	return check_relative(path, what, true, err);
}

int fdl_file_each_chunk(const char *path, int (*cb)(const void *data, size_t len, void *payload), void *payload,
			fdl_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fdl_fail(err, errno == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "cannot open %s: %s", path,
				strerror(errno));
	return fdl_fd_each_chunk(fd, path, cb, payload, err);
}

int fdl_fd_each_chunk(int fd, const char *path, int (*cb)(const void *data, size_t len, void *payload),
		      void *payload, fdl_error *err)
{
	enum { CHUNK = 1 << 16 };
	char *chunk = malloc(CHUNK);
	int rc = chunk ? 0 : fdl_oom(err);
	while (!rc) {
		ssize_t n = read(fd, chunk, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = fdl_fail(err, FDL_EIO, "cannot read %s: %s", path, strerror(errno));
		else if (n == 0)
			break;
		else
			rc = cb(chunk, (size_t)n, payload);
	}
	free(chunk);
	close(fd);
	return rc;
}

typedef struct read_all {
	fdl_buf *out;
	size_t max;
	const char *path;
	fdl_error *err;
} read_all;

static int append_chunk(const void *data, size_t len, void *payload)
{
	read_all *r = payload;
	if (r->out->len + len > r->max)
		return fdl_fail(r->err, FDL_EINVALID, "%s is larger than the %zu bytes allowed", r->path, r->max);
	return fdl_buf_add(r->out, data, len, r->err);
}

int fdl_file_read(fdl_buf *out, const char *path, size_t max_bytes, fdl_error *err)
{
	read_all r = {out, max_bytes, path, err};
	int rc = fdl_file_each_chunk(path, append_chunk, &r, err);
	if (!rc && !out->data)
		rc = fdl_buf_add(out, "", 0, err);
	return rc;
}

int fdl_fd_read(fdl_buf *out, int fd, const char *path, size_t max_bytes, fdl_error *err)
{
	read_all r = {out, max_bytes, path, err};
	int rc = fdl_fd_each_chunk(fd, path, append_chunk, &r, err);
	if (!rc && !out->data)
		rc = fdl_buf_add(out, "", 0, err);
	return rc;
}

int fdl_private_file_read(fdl_buf *out, const char *path, size_t max_bytes, fdl_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fdl_fail(err, errno == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "cannot open %s: %s", path,
				strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fdl_fail(err, FDL_EINVALID, "%s is not a regular file", path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return fdl_fail(err, FDL_EINVALID,
				"%s holds secrets but its group or others may read or write it (mode %04o); "
				"run `chmod 600 %s`", path, (unsigned)(st.st_mode & 07777), path);
	}
	return fdl_fd_read(out, fd, path, max_bytes, err);
}

int fdl_open_beneath(const char *root, const char *rel, int flags, fdl_error *err)
{
	int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return fdl_fail(err, errno == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "cannot open %s: %s", root,
				strerror(errno));
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd = syscall(SYS_openat2, dir, rel, &how, sizeof how);
	if (fd < 0 && errno == ENOSYS) { /* before Linux 5.6: the last component at least */
		fd = openat(dir, rel, flags | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno == ELOOP)
			errno = EXDEV;
	}
	int e = errno;
	close(dir);
	if (fd >= 0)
		return (int)fd;
	if (e == ELOOP || e == EXDEV)
		return fdl_fail(err, FDL_EINVALID,
				"%s/%s is a symlink or passes through one; fdl follows no symlink inside a repository",
				root, rel);
	/* a file on the way where a folder would be: no such key, as a bucket says */
	return fdl_fail(err, e == ENOENT || e == ENOTDIR ? FDL_ENOTFOUND : FDL_EIO, "cannot open %s/%s: %s", root, rel,
			strerror(e));
}

int fdl_fsync_parent(const char *path)
{
	char *copy = fdl_strdup(path);
	if (!copy)
		return -1;
	char *slash = strrchr(copy, '/');
	const char *dir = ".";
	if (slash) {
		*slash = '\0';
		dir = slash == copy ? "/" : copy;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd < 0 ? -1 : fsync(fd);
	if (fd >= 0)
		close(fd);
	free(copy);
	return rc;
}

static unsigned long long process_start(long pid);

char *fdl_tmp_template(const char *path)
{
	long pid = (long)getpid();
	return fdl_asprintf("%s.tmp-%ld-%llu-XXXXXX", path, pid, process_start(pid));
}

int fdl_atomic_begin(fdl_atomic_file *a, const char *path, fdl_error *err)
{
	memset(a, 0, sizeof *a);
	a->path = fdl_strdup(path);
	a->tmp = fdl_tmp_template(path); /* its writer in the name, for fdl_tmpfile_sweep */
	if (!a->path || !a->tmp) {
		fdl_atomic_abort(a);
		return fdl_oom(err);
	}
	int fd = mkostemp(a->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(a->tmp);
		a->tmp = NULL; /* nothing to remove */
		fdl_atomic_abort(a);
		return fdl_fail(err, e == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "cannot create a temporary file for %s: %s",
				path, strerror(e));
	}
	fchmod(fd, 0644);
	close(fd);
	return 0;
}

static int write_all(int fd, const void *data, size_t len, const char *path, fdl_error *err)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fdl_fail(err, FDL_EIO, "cannot write %s: %s", path, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The temporary file opened for appending (-1, err set, when it cannot be). */
static int open_append(fdl_atomic_file *a, fdl_error *err)
{
	int fd = open(a->tmp, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		fdl_fail(err, FDL_EIO, "cannot open %s: %s", a->tmp, strerror(errno));
	return fd;
}

static int close_checked(int fd, int rc, const char *path, fdl_error *err)
{
	if (close(fd) != 0 && !rc)
		rc = fdl_fail(err, FDL_EIO, "cannot close %s: %s", path, strerror(errno));
	return rc;
}

int fdl_atomic_write(fdl_atomic_file *a, const void *data, size_t len, fdl_error *err)
{
	int fd = open_append(a, err);
	if (fd < 0)
		return FDL_EIO;
	return close_checked(fd, write_all(fd, data, len, a->tmp, err), a->tmp, err);
}

int fdl_fd_copy(int in, int out, const char *in_path, const char *out_path, fdl_error *err)
{
	enum { CHUNK = 1 << 16 };
	char *chunk = malloc(CHUNK);
	int rc = chunk ? 0 : fdl_oom(err);
	while (!rc) {
		ssize_t n = read(in, chunk, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = fdl_fail(err, errno == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "cannot read %s: %s", in_path,
				      strerror(errno));
		if (n <= 0)
			break;
		rc = write_all(out, chunk, (size_t)n, out_path, err);
	}
	free(chunk);
	return rc;
}

int fdl_atomic_copy(fdl_atomic_file *a, int in, const char *in_path, fdl_error *err)
{
	int fd = open_append(a, err);
	if (fd < 0)
		return FDL_EIO;
	return close_checked(fd, fdl_fd_copy(in, fd, in_path, a->tmp, err), a->tmp, err);
}

/* fsync the temporary file, then put it at a->path: rename (replace) or
 * link (create-only). */
static int finish(fdl_atomic_file *a, bool replace, fdl_error *err)
{
	int rc = 0;
	int fd = open(a->tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0)
		rc = fdl_fail(err, FDL_EIO, "cannot fsync %s: %s", a->tmp, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (!rc && replace && rename(a->tmp, a->path) != 0)
		rc = fdl_fail(err, FDL_EIO, "cannot rename %s to %s: %s", a->tmp, a->path, strerror(errno));
	if (!rc && !replace && link(a->tmp, a->path) != 0)
		rc = errno == EEXIST ? fdl_fail(err, FDL_EEXISTS, "%s already exists; refusing to overwrite it", a->path)
				     : fdl_fail(err, errno == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "cannot create %s: %s",
						a->path, strerror(errno));
	if (!rc) {
		fdl_fsync_parent(a->path);
		if (replace) { /* renamed: nothing left to remove */
			free(a->tmp);
			a->tmp = NULL;
		}
	}
	fdl_atomic_abort(a);
	return rc;
}

int fdl_atomic_commit(fdl_atomic_file *a, fdl_error *err) { return finish(a, true, err); }
int fdl_atomic_create(fdl_atomic_file *a, fdl_error *err) { return finish(a, false, err); }

void fdl_atomic_abort(fdl_atomic_file *a)
{
	if (a->tmp)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	memset(a, 0, sizeof *a);
}

static int write_whole(const char *path, const void *data, size_t len, bool replace, fdl_error *err)
{
	fdl_atomic_file a;
	int rc = fdl_atomic_begin(&a, path, err);
	if (!rc)
		rc = fdl_atomic_write(&a, data, len, err);
	if (rc) {
		fdl_atomic_abort(&a);
		return rc;
	}
	return finish(&a, replace, err);
}

int fdl_file_write_atomic(const char *path, const void *data, size_t len, fdl_error *err)
{
	return write_whole(path, data, len, true, err);
}

int fdl_file_create(const char *path, const void *data, size_t len, fdl_error *err)
{
	return write_whole(path, data, len, false, err);
}

int fdl_mkdir_p(const char *path, fdl_error *err)
{
	/* mostly there already, or its parent is: one call, not one per level */
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	char *copy = fdl_strdup(path);
	if (!copy)
		return fdl_oom(err);
	int rc = 0;
	for (char *p = copy + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(copy, 0755) != 0 && errno != EEXIST) {
				rc = fdl_fail(err, FDL_EIO, "cannot create folder %s: %s", copy, strerror(errno));
				break;
			}
			*p = c;
			if (!c)
				break;
		}
	}
	free(copy);
	return rc;
}

void fdl_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
					continue;
				char *child = fdl_asprintf("%s/%s", path, e->d_name);
				if (child) {
					fdl_rm_rf(child);
					free(child);
				}
			}
			closedir(d);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* One entry of fdl_dir_link_tree: a file linked, a folder made and filled,
 * a symlink made again. */
static int link_entry(const char *from, const char *to, fdl_error *err)
{
	struct stat st;
	if (lstat(from, &st) != 0)
		return fdl_fail(err, FDL_EIO, "cannot read %s: %s", from, strerror(errno));
	if (S_ISREG(st.st_mode))
		return link(from, to) == 0 ? 0 : fdl_fail(err, FDL_EIO, "cannot link %s to %s: %s", from, to, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(to, st.st_mode & 07777) != 0)
			return fdl_fail(err, FDL_EIO, "cannot create folder %s: %s", to, strerror(errno));
		return fdl_dir_link_tree(from, to, NULL, err);
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(from, target, sizeof target - 1);
		if (n < 0)
			return fdl_fail(err, FDL_EIO, "cannot read the symlink %s: %s", from, strerror(errno));
		target[n] = '\0';
		return symlink(target, to) == 0 ? 0 : fdl_fail(err, FDL_EIO, "cannot make the symlink %s: %s", to,
							       strerror(errno));
	}
	return fdl_fail(err, FDL_EINVALID, "%s is neither a file, a folder nor a symlink; move it out and try again",
			from);
}

int fdl_dir_link_tree(const char *from, const char *to, const char *const *skip, fdl_error *err)
{
	DIR *d = opendir(from);
	if (!d)
		return fdl_fail(err, FDL_EIO, "cannot list %s: %s", from, strerror(errno));
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(d))) {
		bool skipped = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
		for (const char *const *s = skip; s && *s && !skipped; s++)
			skipped = !strcmp(e->d_name, *s);
		if (skipped)
			continue;
		char *a = fdl_asprintf("%s/%s", from, e->d_name), *b = fdl_asprintf("%s/%s", to, e->d_name);
		rc = a && b ? link_entry(a, b, err) : fdl_oom(err);
		free(a);
		free(b);
	}
	closedir(d);
	return rc;
}

int fdl_dir_exchange(const char *a, const char *b, fdl_error *err)
{
	if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0) {
		int e = errno;
		return fdl_fail(err, FDL_EIO,
				"cannot swap %s and %s in one step (renameat2 RENAME_EXCHANGE: %s)%s", a, b, strerror(e),
				e == EINVAL || e == ENOSYS || e == ENOTSUP ? "; this file system cannot do it" : "");
	}
	fdl_fsync_parent(b);
	return 0;
}

/* A process's start time (clock ticks since boot, /proc/<pid>/stat's
 * 22nd field): with the pid, it names a process for good. 0 if unknown. */
static unsigned long long process_start(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	unsigned long long start = 0;
	for (int field = 2; p && *p; p++)
		if (*p == ' ' && ++field == 22) {
			start = strtoull(p + 1, NULL, 10);
			break;
		}
	return start;
}

int fdl_tempdir(char **out, const char *tag, fdl_error *err)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	/* the owner in the name, so a later fdl can tell a dead one's folder */
	long pid = (long)getpid();
	char *tmpl = fdl_asprintf("%s/fdl-%s-%ld-%llu-XXXXXX", base, tag, pid, process_start(pid));
	if (!tmpl)
		return fdl_oom(err);
	if (!mkdtemp(tmpl)) {
		int e = errno;
		free(tmpl);
		return fdl_fail(err, FDL_EIO, "cannot make a temporary folder in %s: %s", base, strerror(e));
	}
	*out = tmpl;
	return 0;
}

/* The process that named a temporary file or folder is gone: the pid is
 * free, or now names a process started at another time. */
static bool owner_gone(long pid, unsigned long long start)
{
	return kill((pid_t)pid, 0) != 0 ? errno == ESRCH : start && process_start(pid) != start;
}

/* One folder of fdl_tmpfile_sweep, through its descriptor (never a
 * symlink followed); `depth` bounds the walk. */
static void sweep_tmpfiles(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < 32) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				sweep_tmpfiles(sub, depth + 1);
			continue;
		}
		const char *t = strstr(e->d_name, ".tmp-");
		long pid = 0;
		unsigned long long start = 0;
		char rest[16];
		if (S_ISREG(st.st_mode) && t && st.st_uid == getuid() &&
		    sscanf(t, ".tmp-%ld-%llu-%15s", &pid, &start, rest) == 3 && pid > 0 && strlen(rest) == 6 &&
		    owner_gone(pid, start))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

void fdl_tmpfile_sweep(const char *root)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		sweep_tmpfiles(fd, 0);
}

/* fdl_tempdir_sweep's loop: remove this user's fdl-<tag>-<pid>-<start>-*
 * folders in TMPDIR whose owner is gone, or (own) that are this
 * process's. */
static void tempdir_remove(bool own)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	DIR *d = opendir(base);
	if (!d)
		return;
	long me = (long)getpid();
	unsigned long long my_start = own ? process_start(me) : 0;
	for (struct dirent *e; (e = readdir(d));) {
		char tag[32], rest[16];
		long pid = 0;
		unsigned long long start = 0;
		if (strncmp(e->d_name, "fdl-", 4) != 0 ||
		    sscanf(e->d_name, "fdl-%31[a-z]-%ld-%llu-%15s", tag, &pid, &start, rest) != 4 || pid <= 0 ||
		    strlen(rest) != 6)
			continue;
		bool mine = pid == me && start == my_start;
		char *path = (own ? mine : !mine) ? fdl_asprintf("%s/%s", base, e->d_name) : NULL;
		struct stat st;
		/* ours (this user's), a real folder, and its owner is gone (or us) */
		if (path && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
		    (own || owner_gone(pid, start)))
			fdl_rm_rf(path);
		free(path);
	}
	closedir(d);
}

void fdl_tempdirs_remove(void)
{
	tempdir_remove(true);
}

void fdl_tempdir_sweep(void)
{
	tempdir_remove(false);
}


int fdl_path_absolute(char **out, const char *path, fdl_error *err)
{
	fdl_buf b = {0};
	if (!path || !*path)
		return fdl_fail(err, FDL_EINVALID, "an empty path names no folder");
	if (path[0] != '/') {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd))
			return fdl_fail(err, FDL_EIO, "cannot read the current folder: %s", strerror(errno));
		if (fdl_buf_puts(&b, cwd, err))
			return FDL_ENOMEM;
	}
	/* Append segment by segment, resolving "." and "..". */
	const char *seg = path;
	int rc = 0;
	while (*seg && !rc) {
		while (*seg == '/')
			seg++;
		if (!*seg)
			break;
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);
		if (len == 1 && seg[0] == '.') {
			/* skip */
		} else if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			char *slash = b.data ? strrchr(b.data, '/') : NULL;
			if (slash) {
				b.len = (size_t)(slash - b.data);
				b.data[b.len] = '\0';
			}
		} else {
			rc = fdl_buf_puts(&b, "/", err);
			if (!rc)
				rc = fdl_buf_add(&b, seg, len, err);
		}
		seg += len;
	}
	if (!rc && b.len == 0)
		rc = fdl_buf_puts(&b, "/", err);
	if (rc) {
		fdl_buf_free(&b);
		return rc;
	}
	*out = fdl_buf_detach(&b);
	return 0;
}

bool fdl_no_space(const char *path)
{
	struct statvfs st;
	return path && statvfs(path, &st) == 0 && (uint64_t)st.f_bavail * st.f_frsize < (1u << 20);
}
