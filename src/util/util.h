/* Small helpers shared by every part of libfdl: errors, growable buffers,
 * string lists, hashing, ids, time and path checks. One of each. */
#ifndef FDL_UTIL_H
#define FDL_UTIL_H

#include "fdl.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#if defined(__GNUC__)
#define FDL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FDL_PRINTF(a, b)
#endif

/* Set err (if not NULL) and return code, so callers can `return fdl_fail(...)`. */
int fdl_fail(fdl_error *err, int code, const char *fmt, ...) FDL_PRINTF(3, 4);
/* An allocation failed: FDL_ENOMEM, "out of memory". Every allocation
 * failure goes through here, unless it has something to add (what was
 * being built, how large): then fdl_fail with that. */
int fdl_oom(fdl_error *err);
/* An options struct of the public API (include/fdl.h) as the caller's
 * header laid it out: `version` must be 1 to `known` (this libfdl's
 * FDL_<NAME>_OPTIONS_VERSION), else FDL_EINVALID naming `fn`, `type`
 * ("fdl_commit_options") and the macro to start from. Every operation
 * that takes one calls this first, before it reads any other field. */
int fdl_options_check(unsigned int version, unsigned int known, const char *fn, const char *type, fdl_error *err);
/* Prefix an already-set error message with context ("reading X: ..."). */
int fdl_error_prefix(fdl_error *err, const char *fmt, ...) FDL_PRINTF(2, 3);
void fdl_error_clear(fdl_error *err);

/* A growable byte buffer, always NUL-terminated. */
typedef struct fdl_buf {
	char *data;
	size_t len;
	size_t cap;
} fdl_buf;

int fdl_buf_grow(fdl_buf *b, size_t extra, fdl_error *err);
int fdl_buf_add(fdl_buf *b, const void *data, size_t len, fdl_error *err);
int fdl_buf_puts(fdl_buf *b, const char *s, fdl_error *err);
int fdl_buf_printf(fdl_buf *b, fdl_error *err, const char *fmt, ...) FDL_PRINTF(3, 4);
/* Append s as a SQL string literal: 'it''s'. */
int fdl_buf_sql_str(fdl_buf *b, const char *s, fdl_error *err);
/* Append s as a SQL identifier: "a""b". */
int fdl_buf_sql_ident(fdl_buf *b, const char *s, fdl_error *err);
/* Give the buffer's memory to the caller (NULL-safe result "" when empty). */
char *fdl_buf_detach(fdl_buf *b);
void fdl_buf_free(fdl_buf *b);

char *fdl_strdup(const char *s);
char *fdl_asprintf(const char *fmt, ...) FDL_PRINTF(1, 2);

/* The candidate a mistyped `word` most likely meant ("did you mean"): the
 * closest by edits (insert, delete, replace, swap two neighbours), at most
 * one edit for a short word and a third of it for a long one; NULL when
 * none is that close. Points into candidates. */
const char *fdl_closest(const char *word, const char *const *candidates, size_t n);

/* A list of owned strings. */
typedef struct fdl_strlist {
	char **items;
	size_t len;
	size_t cap;
} fdl_strlist;
int fdl_strlist_add(fdl_strlist *l, const char *s, fdl_error *err);
void fdl_strlist_sort(fdl_strlist *l);
/* Binary search in a list sorted by fdl_strlist_sort. */
bool fdl_strlist_has_sorted(const fdl_strlist *l, const char *s);
void fdl_strlist_free(fdl_strlist *l);
/* A finding of fdl verify's derived parts, "key\tmessage", added to l. */
int fdl_finding_add(fdl_strlist *l, const char *key, const char *fmt, ...) FDL_PRINTF(3, 4);
/* fdl verify's findings as layout gathers them (include/fdl.h's
 * fdl_finding, each owning its strings), carried so to the report. */
typedef struct fdl_finding_list {
	fdl_finding *items;
	size_t len;
} fdl_finding_list;
/* Add (where, the formatted message) to l; FDL_ENOMEM when out of memory. */
int fdl_finding_list_add(fdl_finding_list *l, const char *where, const char *fmt, ...) FDL_PRINTF(3, 4);
void fdl_finding_list_free(fdl_finding_list *l);

/* SHA-256 (OpenSSL). `hex` receives 64 lower-case hex digits and a NUL. */
typedef struct fdl_sha256 fdl_sha256;
int fdl_sha256_new(fdl_sha256 **out, fdl_error *err);
int fdl_sha256_update(fdl_sha256 *h, const void *data, size_t len, fdl_error *err);
int fdl_sha256_final(fdl_sha256 *h, char hex[65], fdl_error *err);
void fdl_sha256_free(fdl_sha256 *h);
int fdl_sha256_mem(char hex[65], const void *data, size_t len, fdl_error *err);
/* Start a digest again (a download retried from its start). */
int fdl_sha256_reset(fdl_sha256 *h, fdl_error *err);
/* Hash a local file by streaming it; also returns its size. */
int fdl_sha256_file(char hex[65], int64_t *bytes, const char *path, fdl_error *err);
/* The same on an open fd, which it closes; `path` names it in messages. */
int fdl_sha256_fd(char hex[65], int64_t *bytes, int fd, const char *path, fdl_error *err);

/* UUIDv7 (RFC 9562, method 1: 12-bit counter in rand_a), monotonic for
 * every id drawn from the same generator. No hidden state: the caller owns
 * the generator. */
typedef struct fdl_uuid7_gen {
	uint64_t last_ms;
	uint16_t counter;
} fdl_uuid7_gen;
int fdl_uuid7_next(fdl_uuid7_gen *g, char out[FDL_ID_LEN + 1], fdl_error *err);
/* Same, with the clock given (for tests). */
int fdl_uuid7_next_at(fdl_uuid7_gen *g, uint64_t now_ms, char out[FDL_ID_LEN + 1], fdl_error *err);
bool fdl_id_is_valid(const char *s); /* lower-case hyphenated UUID */
bool fdl_id_is_uuid7(const char *s);

/* Time: "2026-10-30T09:00:00Z" (UTC, second precision). */
int fdl_time_now_iso(char out[32], fdl_error *err);
bool fdl_time_is_iso_utc(const char *s);
/* Unix seconds of "YYYY-MM-DDTHH:MM:SS..." read as UTC; -1 when it is not one. */
int64_t fdl_time_parse_iso(const char *iso);
/* The same time written back, UTC ISO 8601 to the second. */
void fdl_time_format_iso(char out[32], int64_t t);
/* The monotonic clock in milliseconds, and a pause of `ms` (EINTR resumed). */
long fdl_now_ms(void);
void fdl_sleep_ms(long ms);

/* A relative path inside the repository: no leading '/', no '..' or '.'
 * segments, no backslash, no empty segments, no NUL, at most 1024 bytes.
 * `what` names the path in the message. */
int fdl_path_check_relative(const char *path, const char *what, fdl_error *err);
/* The same for a store's key, which may also hold the unit separator
 * (0x1F): the Iceberg REST catalog's namespace levels are joined with it,
 * and a static host looks for a file of that name (docs/format.md). Paths
 * read from a repository's records are checked with the stricter one. */
int fdl_path_check_key(const char *path, const char *what, fdl_error *err);

/* Local file helpers. Stream a file in 64 KiB chunks to cb (a non-zero
 * return stops and is returned); read a whole file of at most max_bytes. */
int fdl_file_each_chunk(const char *path, int (*cb)(const void *data, size_t len, void *payload), void *payload,
			fdl_error *err);
int fdl_file_read(fdl_buf *out, const char *path, size_t max_bytes, fdl_error *err);
/* The same on an open fd (closed by these); `path` names it in messages. */
int fdl_fd_each_chunk(int fd, const char *path, int (*cb)(const void *data, size_t len, void *payload),
		      void *payload, fdl_error *err);
int fdl_fd_read(fdl_buf *out, int fd, const char *path, size_t max_bytes, fdl_error *err);
/* Read a file of secrets (tokens, credentials) of at most max_bytes, as ssh
 * reads a private key: refused (FDL_EINVALID, saying `chmod 600`) when its
 * group or others may read or write it. FDL_ENOTFOUND when it is absent. */
int fdl_private_file_read(fdl_buf *out, const char *path, size_t max_bytes, fdl_error *err);
/* Open `rel` under the folder `root` with no symlink followed on the way
 * and nothing outside `root` reached (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS): a repository never leads fdl out of itself. Returns
 * the fd, or an error code (FDL_EINVALID for a symlink, FDL_ENOTFOUND). */
int fdl_open_beneath(const char *root, const char *rel, int flags, fdl_error *err);

/* The one way fdl writes a local file, as Git's lockfile does: a fresh
 * temporary file beside it (unique name with its writer in it, created
 * exclusively, mode 0644), filled by the caller (fdl_atomic_write,
 * fdl_atomic_copy, or through `tmp`), then fsynced and either renamed over
 * `path` (commit: replace) or linked to it (create: create-only,
 * FDL_EEXISTS when `path` exists), and the folder fsynced; abort removes
 * it. Readers see the old file or the new one, never a part. The folder
 * store's writes and every local file fdl writes go through here. */
typedef struct fdl_atomic_file {
	char *path;
	char *tmp;
} fdl_atomic_file;
int fdl_atomic_begin(fdl_atomic_file *a, const char *path, fdl_error *err);
/* Append len bytes / all of fd `in` (named in_path in messages). */
int fdl_atomic_write(fdl_atomic_file *a, const void *data, size_t len, fdl_error *err);
int fdl_atomic_copy(fdl_atomic_file *a, int in, const char *in_path, fdl_error *err);
int fdl_atomic_commit(fdl_atomic_file *a, fdl_error *err);
int fdl_atomic_create(fdl_atomic_file *a, fdl_error *err);
void fdl_atomic_abort(fdl_atomic_file *a);
/* Copy what is left of fd `in` into fd `out` (the paths name them in
 * messages), 64 KiB at a time. */
int fdl_fd_copy(int in, int out, const char *in_path, const char *out_path, fdl_error *err);
/* fsync the folder that holds `path` (after a rename, link or unlink in
 * it); best effort, -1 when it could not. */
int fdl_fsync_parent(const char *path);
/* Write a whole file that way: replacing `path`, or create-only. */
int fdl_file_write_atomic(const char *path, const void *data, size_t len, fdl_error *err);
int fdl_file_create(const char *path, const void *data, size_t len, fdl_error *err);

/* Lock files (lockfile.c): Git's <path> created exclusively, plus a record
 * of its holder (pid, host, since, command) and a flock() held while it is.
 * A lock whose holder is provably gone (its flock free, recorded on this
 * host) is broken; a live one is waited for up to fdl_lock_wait_ms()
 * (FDL_LOCK_WAIT_MS, default 2000), then FDL_ECONFLICT names the file, its
 * holder and what clears it. `what` names the locked thing in messages,
 * `command` is recorded as the holder's. The caller releases what it took. */
typedef struct fdl_lockfile {
	int fd;
	char *path;
} fdl_lockfile;
int fdl_lockfile_take(fdl_lockfile *lk, const char *path, const char *what, const char *command, fdl_error *err);
/* 0 when nobody holds `path` (a stale lock is broken on the way). */
int fdl_lockfile_check(const char *path, const char *what, fdl_error *err);
/* Remove the lock file and drop the flock; safe on a lock never taken. */
void fdl_lockfile_release(fdl_lockfile *lk);
int fdl_lock_wait_ms(void);
/* The holder record a lock file holds, for locks kept elsewhere (a lock
 * object in a bucket, store/lock.c): written for this process; whether one
 * records this host and a process that no longer runs; the FDL_ECONFLICT
 * for a lock that stays, naming `where`, its holder and what clears it. */
#define FDL_LOCK_RECORD_MAX 512
size_t fdl_lock_record(char out[FDL_LOCK_RECORD_MAX], const char *command);
bool fdl_lock_record_dead(const char *text);
int fdl_lock_record_report(const char *text, const char *where, const char *what, fdl_error *err);
/* Test builds (-DFDL_CRASH_POINTS), the one pause mechanism: when
 * FDL_PAUSE_AT names `point` (a comma-separated list may name several), create <FDL_PAUSE_DIR>/<point>.reached and
 * <point>.<pid>.reached and wait until <point>.go (kept) or <point>.<pid>.go
 * (removed when seen) appears there, so a test puts another process's step
 * exactly here; nothing otherwise (testpoint.c). */
void fdl_test_pause(const char *point);

int fdl_mkdir_p(const char *path, fdl_error *err);
/* Remove a folder tree (best effort, for temp folders). */
void fdl_rm_rf(const char *path);
/* Fill the folder `to` with what `from` holds, without copying a byte:
 * files hard-linked, folders made and filled the same way, symlinks made
 * again; the names in `skip` (NULL-terminated, may be NULL) left out at
 * the top. Both on one file system. */
int fdl_dir_link_tree(const char *from, const char *to, const char *const *skip, fdl_error *err);
/* Swap two folders in one step (renameat2 RENAME_EXCHANGE): a reader sees
 * one or the other under each name, never neither. */
int fdl_dir_exchange(const char *a, const char *b, fdl_error *err);
/* Make a fresh temp folder; caller frees the path and removes the folder. */
int fdl_tempdir(char **out, const char *tag, fdl_error *err);
/* Remove the temp folders (fdl-<tag>-<pid>-<start>-XXXXXX in TMPDIR) of
 * this user's fdl processes that died without removing them (kill -9):
 * their pid is gone or names a process started at another time. */
void fdl_tempdir_sweep(void);
/* The name template (for mkstemp) of a temporary file beside `path` that
 * names its writer: "<path>.tmp-<pid>-<start>-XXXXXX". Caller frees. */
char *fdl_tmp_template(const char *path);
/* Remove, under the folder `root` (no symlink followed), the temporary
 * files of fdl_tmp_template whose writer is gone (a killed process). */
void fdl_tmpfile_sweep(const char *root);
/* Is the file system that holds `path` (next to) full: under 1 MiB free? */
bool fdl_no_space(const char *path);
/* Absolute, '.'/'..'-free form of a local path (it need not exist). */
int fdl_path_absolute(char **out, const char *path, fdl_error *err);

/* The read cache (cache.c): where it lives, and a file in one of its
 * areas ("objects", "unverified", "meta", "s3-conditional"), by a file name
 * or by the sha256 of any string. Callers free the paths. */
char *fdl_cache_dir(void);
char *fdl_cache_path(const char *area, const char *name);
char *fdl_cache_path_hashed(const char *area, const char *name);
/* A cached file no older than ttl seconds (0: any age) and at most
 * max_bytes, read into out; false on a miss. */
bool fdl_cache_read(const char *path, long ttl, size_t max_bytes, fdl_buf *out);
/* Make the folder a cache file goes in. */
int fdl_cache_prepare(const char *path, fdl_error *err);
/* Write a cache file atomically; a failure is ignored (only slower). */
void fdl_cache_write(const char *path, const void *data, size_t len);
/* Drop a cache file (a withdrawn catalog). */
void fdl_cache_forget(const char *path);

/* The media type for a file of a repository or of its page, by name
 * (mime.c): application/json for .json, text/plain for HEAD and refs, ... */
const char *fdl_content_type(const char *key);

#endif
