#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fdl_time_now_iso(char out[32], fdl_error *err)
{
	time_t t = time(NULL);
	struct tm tm;
	if (t == (time_t)-1 || !gmtime_r(&t, &tm))
		return fdl_fail(err, FDL_ERROR, "cannot read the clock");
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return 0;
}

static bool digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00) */
bool fdl_time_is_iso_utc(const char *s)
{
	if (!s || strlen(s) < 20)
		return false;
	if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2) ||
	    (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2) || s[13] != ':' || !digits(s + 14, 2) ||
	    s[16] != ':' || !digits(s + 17, 2))
		return false;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return strcmp(p, "Z") == 0 || strcmp(p, "z") == 0 || strcmp(p, "+00:00") == 0;
}

int fdl_path_check_relative(const char *path, const char *what, fdl_error *err)
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
			if ((unsigned char)seg[i] < 0x20)
				return fdl_fail(err, FDL_EINVALID, "%s '%s' contains a control character", what,
						path);
		if (!end)
			break;
		seg = end + 1;
	}
	return 0;
}

int fdl_file_read(fdl_buf *out, const char *path, size_t max_bytes, fdl_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fdl_fail(err, errno == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "cannot open %s: %s", path,
				strerror(errno));
	int rc = 0;
	char chunk[1 << 14];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = fdl_fail(err, FDL_EIO, "cannot read %s: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > max_bytes) {
			rc = fdl_fail(err, FDL_EINVALID, "%s is larger than the %zu bytes allowed", path,
				      max_bytes);
			break;
		}
		if ((rc = fdl_buf_add(out, chunk, (size_t)n, err)))
			break;
	}
	close(fd);
	if (!rc && !out->data)
		rc = fdl_buf_add(out, "", 0, err);
	return rc;
}

static int fsync_dir_of(const char *path)
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

int fdl_file_write_atomic(const char *path, const void *data, size_t len, fdl_error *err)
{
	char *tmp = fdl_asprintf("%s.tmp-%ld", path, (long)getpid());
	if (!tmp)
		return fdl_fail(err, FDL_ERROR, "out of memory");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = 0;
	if (fd < 0) {
		rc = fdl_fail(err, FDL_EIO, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = fdl_fail(err, FDL_EIO, "cannot write %s: %s", tmp, strerror(errno));
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	if (!rc && fsync(fd) != 0)
		rc = fdl_fail(err, FDL_EIO, "cannot fsync %s: %s", tmp, strerror(errno));
	if (close(fd) != 0 && !rc)
		rc = fdl_fail(err, FDL_EIO, "cannot close %s: %s", tmp, strerror(errno));
	if (!rc && rename(tmp, path) != 0)
		rc = fdl_fail(err, FDL_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
	if (rc)
		unlink(tmp);
	else
		fsync_dir_of(path);
out:
	free(tmp);
	return rc;
}

int fdl_mkdir_p(const char *path, fdl_error *err)
{
	char *copy = fdl_strdup(path);
	if (!copy)
		return fdl_fail(err, FDL_ERROR, "out of memory");
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

int fdl_tempdir(char **out, const char *tag, fdl_error *err)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	char *tmpl = fdl_asprintf("%s/fdl-%s-XXXXXX", base, tag);
	if (!tmpl)
		return fdl_fail(err, FDL_ERROR, "out of memory");
	if (!mkdtemp(tmpl)) {
		int e = errno;
		free(tmpl);
		return fdl_fail(err, FDL_EIO, "cannot make a temporary folder in %s: %s", base, strerror(e));
	}
	*out = tmpl;
	return 0;
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
			return FDL_ERROR;
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

/* The media type a host should give a repository file (or a page file). */
const char *fdl_content_type(const char *rel)
{
	size_t n = strlen(rel);
#define ENDS(x) (n >= strlen(x) && !strcmp(rel + n - strlen(x), x))
	if (ENDS(".json"))
		return "application/json";
	if (ENDS(".html"))
		return "text/html; charset=utf-8";
	if (ENDS(".js"))
		return "text/javascript; charset=utf-8";
	if (ENDS(".css"))
		return "text/css; charset=utf-8";
	if (ENDS(".wasm"))
		return "application/wasm";
	if (ENDS(".map"))
		return "application/json";
	if (ENDS(".parquet"))
		return "application/vnd.apache.parquet";
	if (ENDS(".sig"))
		return "text/plain; charset=utf-8";
	if (!strcmp(rel, "HEAD") || !strncmp(rel, "refs/", 5))
		return "text/plain; charset=utf-8";
	return "application/octet-stream";
#undef ENDS
}


void fdl_cache_file_write(const char *path, const void *data, size_t len)
{
	char *dir = path ? fdl_strdup(path) : NULL;
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash) {
		*slash = '\0';
		if (fdl_mkdir_p(dir, NULL) == 0)
			fdl_file_write_atomic(path, data, len, NULL);
	}
	free(dir);
}
