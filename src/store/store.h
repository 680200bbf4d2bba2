/*
 * The store: where a repository's files live (a folder, a static HTTP host
 * or an S3 bucket). The layout code sees only this table of operations and
 * its capabilities, and never knows which backend it has. Keys are relative paths with '/' separators, already
 * checked by fdl_path_check_relative.
 *
 * Atomicity contract, the same for every backend:
 *  - put_if_absent creates a key with its whole content or not at all;
 *    FDL_EEXISTS when the key exists.
 *  - put_if_match replaces a key only if it still has the etag the caller
 *    read (NULL: only if it does not exist); FDL_ECONFLICT otherwise.
 *  - an etag is an opaque string returned by get; equal content from the
 *    same backend gives equal etags.
 */
#ifndef FDL_STORE_H
#define FDL_STORE_H

#include "../util/util.h"

#define FDL_ETAG_MAX 128
/* Metadata files (version.json, refs, fdl.json, files.json) are read whole,
 * up to 64 MiB, or FDL_MAX_METADATA_BYTES. */
size_t fdl_meta_max_bytes(void);
#define FDL_META_MAX_BYTES fdl_meta_max_bytes()

typedef struct fdl_store fdl_store;

/* What a backend can do, for callers that choose a way of working (never
 * a backend's name): */
#define FDL_STORE_LOCAL 1u  /* keys are files of this machine (local_path), which DuckDB opens in place */
#define FDL_STORE_LIST 2u   /* list works */
#define FDL_STORE_WRITE 4u  /* create-only writes, compare-and-swap and deletes work */
#define FDL_STORE_BUCKET 8u /* DuckDB reaches the files itself through httpfs and a secret (s3_access) */

/* What DuckDB needs to reach a bucket's objects itself, borrowed from the
 * store (valid while it is open); the catalog layer makes the secret. */
typedef struct fdl_s3_access {
	const char *bucket;
	const char *region, *key_id, *secret, *token; /* NULL: none (anonymous) */
	const char *endpoint; /* "http(s)://host[:port]" of a custom endpoint; NULL: AWS's own */
	bool path_style;
} fdl_s3_access;

typedef struct fdl_store_ops {
	const char *name;
	unsigned caps; /* FDL_STORE_* */
	/* Read a whole key (at most max_bytes). etag may be NULL. */
	int (*get)(fdl_store *s, const char *key, size_t max_bytes, fdl_buf *out, char etag[FDL_ETAG_MAX],
		   fdl_error *err);
	/* Stream a key into a local file. */
	int (*get_file)(fdl_store *s, const char *key, const char *local_path, fdl_error *err);
	/* The sha256 and size of a key's content, streamed through the digest
	 * (never held whole, never written to a file). */
	int (*sha256)(fdl_store *s, const char *key, char hex[65], int64_t *bytes, fdl_error *err);
	/* Size of a key; FDL_ENOTFOUND if absent. */
	int (*head)(fdl_store *s, const char *key, int64_t *bytes, fdl_error *err);
	/* Sizes of many keys at once (NULL: head, one at a time): sizes[i] is
	 * the size, FDL_HEAD_ABSENT or FDL_HEAD_NOT_FILE (a symlink, a FIFO:
	 * never followed). An error only for a failure to ask. Keys sorted by
	 * folder are the fast case. */
	int (*head_many)(fdl_store *s, const char *const *keys, size_t n, int64_t *sizes, fdl_error *err);
	/* When a key was last written (Unix seconds); for gc's grace period. */
	int (*modified)(fdl_store *s, const char *key, int64_t *when, fdl_error *err);
	int (*put_if_absent)(fdl_store *s, const char *key, const void *data, size_t len, fdl_error *err);
	/* Stream a local file into a new key. */
	int (*put_file_if_absent)(fdl_store *s, const char *key, const char *local_path, fdl_error *err);
	int (*put_if_match)(fdl_store *s, const char *key, const void *data, size_t len, const char *etag,
			    fdl_error *err);
	/* Create key `to` with the content of key `from` of the same store,
	 * without the bytes passing through fdl where the backend can (a hard
	 * link on a folder, a server-side copy on S3); FDL_EEXISTS when `to`
	 * exists (a folder's `to` that is already `from` itself is not an
	 * error). NULL: fdl_store_copy_if_absent streams the bytes through a
	 * temporary file. On a folder the new name is durable only after
	 * `sync`, so many copies cost one sync of each folder. */
	int (*copy_if_absent)(fdl_store *s, const char *from, const char *to, fdl_error *err);
	/* Make what copy_if_absent and del_many did to these keys durable
	 * (NULL: it is as soon as they return). */
	int (*sync)(fdl_store *s, const char *const *keys, size_t n, fdl_error *err);
	/* Delete many keys, one already gone being fine, made durable once per
	 * folder (NULL: del, one at a time). */
	int (*del_many)(fdl_store *s, const char *const *keys, size_t n, fdl_error *err);
	/* Every key below prefix (recursively), appended to out, unsorted;
	 * entries that are neither a file nor a folder (a symlink, a FIFO:
	 * never followed) go to `others` when it is not NULL. */
	int (*list)(fdl_store *s, const char *prefix, fdl_strlist *out, fdl_strlist *others, fdl_error *err);
	int (*del)(fdl_store *s, const char *key, fdl_error *err);
	/* Delete a key only if it still has `etag`; FDL_ECONFLICT otherwise. */
	int (*del_if_match)(fdl_store *s, const char *key, const char *etag, fdl_error *err);
	/* Remove the empty folders below prefix (NULL: a backend without
	 * folders, where a key's last delete leaves nothing behind). */
	int (*prune)(fdl_store *s, const char *prefix, fdl_error *err);
	/* FDL_ECONFLICT, with who holds it, when a writer holds the lock that
	 * guards `key`'s compare-and-swap (a stale lock is broken on the way);
	 * NULL: the backend has no locks (S3's conditional requests). */
	int (*lock_check)(fdl_store *s, const char *key, fdl_error *err);
	/* The local file system path of a key, for backends that have one
	 * (DuckDB can then open it in place); NULL otherwise. Caller frees. */
	char *(*local_path)(fdl_store *s, const char *key);
	/* Prove that the server honours create-only and compare-and-swap
	 * writes (NULL: they are guaranteed, as on a folder). */
	int (*check_conditional)(fdl_store *s, fdl_error *err);
	/* FDL_STORE_BUCKET: what DuckDB needs to reach the files (NULL otherwise). */
	void (*s3_access)(fdl_store *s, fdl_s3_access *out);
	void (*free)(fdl_store *s);
} fdl_store_ops;

struct fdl_store {
	const fdl_store_ops *ops;
	char *url; /* the root, normalised: an absolute path for folders */
	/* Test builds (-DFDL_CRASH_POINTS): abort() just before the Nth write
	 * (put, delete) this store makes, N from FDL_CRASH_AT; 0 = never. */
	long crash_at, writes;
	/* Remote stores: requests made so far (every attempt counts), and what
	 * names the store in the local metadata cache (NULL: no caching). */
	long requests;
	const char *cache_id;
	/* How long the layout lets this store answer `key` from that cache:
	 * 0 for ever, -1 never (NULL: nothing is cached). The store knows no
	 * file names; the layout sets this (fdl_layout_store_open). */
	long (*cache_ttl)(const char *key);
	/* Called as large uploads progress (may be NULL). */
	fdl_progress_cb progress;
	void *progress_payload;
};

/* Open the store a root names: a folder path, file:// or http(s):// URL. */
int fdl_store_open(fdl_store **out, const char *root, fdl_error *err);
int fdl_store_folder_open(fdl_store **out, const char *path, fdl_error *err);
/* s3://bucket[/prefix], configured as the AWS tools are (aws.h). */
int fdl_store_s3_open(fdl_store **out, const char *url, fdl_error *err);
/* Read only: any static web host. A token for it (fdl_http_token) goes
 * with every request as `Authorization: Bearer`, to its own host only: a
 * redirect elsewhere (host, port or scheme) is followed without it. */
int fdl_store_http_open(fdl_store **out, const char *url, fdl_error *err);
/* The token fdl sends to the http(s):// repository at `url` (credentials.c):
 * $FDL_TOKEN, else the line for its host in the credentials file
 * ($XDG_CONFIG_HOME/fdl/credentials, else ~/.config/fdl/credentials;
 * `HOST[:PORT] TOKEN` a line), else the password of its host's `machine`
 * in ~/.netrc ($NETRC). *out is NULL when there is none. Either file
 * readable by others is an error (chmod 600). Caller frees. */
int fdl_http_token(char **out, const char *url, fdl_error *err);
/* Send `token` (copied) instead of the one fdl_http_token found;
 * FDL_EINVALID for a store that is not an HTTP one. */
int fdl_store_http_set_token(fdl_store *s, const char *token, fdl_error *err);
/* The token an HTTP store sends, NULL when none (or not an HTTP store). */
const char *fdl_store_http_token(const fdl_store *s);
/* Reads from `dir`, a local folder of copies laid out by key that the
 * caller has checked, before `below` (borrowed: it must outlive the
 * overlay); writes, lists and reads with an etag go to `below`. */
int fdl_store_overlay_open(fdl_store **out, fdl_store *below, const char *dir, fdl_error *err);
/* Requests a remote store has made (0 for folders), for measurements. */
long fdl_store_requests(const fdl_store *s);
void fdl_store_free(fdl_store *s);

/* Thin wrappers that check the key. fdl_store_get leaves `out` empty (and
 * freed) when it fails. On a remote store (one with a cache_id) it answers
 * from the local cache what the layout's cache_ttl allows, never a read
 * that asks for an etag (a compare-and-swap needs the store's own answer). */
int fdl_store_get(fdl_store *s, const char *key, size_t max_bytes, fdl_buf *out, char etag[FDL_ETAG_MAX],
		  fdl_error *err);
int fdl_store_get_file(fdl_store *s, const char *key, const char *local_path, fdl_error *err);
int fdl_store_head(fdl_store *s, const char *key, int64_t *bytes, fdl_error *err);
/* The sha256 (and size, when `bytes` is not NULL) of a key's content,
 * streamed: a folder's file read in place, a remote object fetched through
 * the digest. */
int fdl_store_sha256(fdl_store *s, const char *key, char hex[65], int64_t *bytes, fdl_error *err);
/* fdl_store_head of n keys: each size, or FDL_HEAD_ABSENT, or
 * FDL_HEAD_NOT_FILE (there, but a symlink or not a regular file); one
 * listing of a folder per folder where the backend can (pass keys sorted). */
#define FDL_HEAD_ABSENT (-1)
#define FDL_HEAD_NOT_FILE (-2)
int fdl_store_head_many(fdl_store *s, const char *const *keys, size_t n, int64_t *sizes, fdl_error *err);
/* On a store of local files: each of `files` (relative to the folder
 * `dir`, a version's data folder) reached as the store reads it, each
 * folder opened beneath the root and nothing followed; FDL_EINVALID naming
 * the file and where a symlink on the way leads otherwise (confine.c). A
 * file that is absent is the reader's to report. Elsewhere 0. */
int fdl_store_files_confined(fdl_store *s, const char *dir, const fdl_strlist *files, fdl_error *err);
int fdl_store_modified(fdl_store *s, const char *key, int64_t *when, fdl_error *err);
int fdl_store_put_if_absent(fdl_store *s, const char *key, const void *data, size_t len, fdl_error *err);
int fdl_store_put_file_if_absent(fdl_store *s, const char *key, const char *local_path, fdl_error *err);
/* Write `key` with `len` bytes of `text` unless it already holds exactly
 * them (read, compare, then a conditional write against what was read:
 * FDL_ECONFLICT when another writer got there first);
 * *written (may be NULL) is incremented when it wrote. */
int fdl_store_replace_if_changed(fdl_store *s, const char *key, const void *text, size_t len, int64_t *written,
				 fdl_error *err);
int fdl_store_put_if_match(fdl_store *s, const char *key, const void *data, size_t len, const char *etag,
			   fdl_error *err);
/* Create `to` as a copy of `from` (the backend's copy_if_absent); one write. */
int fdl_store_copy_if_absent(fdl_store *s, const char *from, const char *to, fdl_error *err);
/* What copies and deletions did to `keys`, made durable (the backend's sync). */
int fdl_store_sync(fdl_store *s, const char *const *keys, size_t n, fdl_error *err);
/* Delete n keys (one already gone is fine); each counts as a write. */
int fdl_store_del_many(fdl_store *s, const char *const *keys, size_t n, fdl_error *err);
/* The same through a temporary file (the bytes streamed down and up): a
 * backend's fallback. Counts no write of its own. */
int fdl_store_copy_through_file(fdl_store *s, const char *from, const char *to, fdl_error *err);
int fdl_store_list(fdl_store *s, const char *prefix, fdl_strlist *out, fdl_error *err);
/* The same, with what is neither a file nor a folder in `others`. */
int fdl_store_list_all(fdl_store *s, const char *prefix, fdl_strlist *out, fdl_strlist *others, fdl_error *err);
int fdl_store_del(fdl_store *s, const char *key, fdl_error *err);
/* Delete `key`; one already gone is fine (a rerun after a crash). Frees
 * key (NULL: out of memory); *deleted (may be NULL) says whether it was there. */
int fdl_store_del_owned(fdl_store *s, char *key, bool *deleted, fdl_error *err);
int fdl_store_del_if_match(fdl_store *s, const char *key, const char *etag, fdl_error *err);
/* Remove the folders below `prefix` (and it) that hold no file any more: a
 * static host would list an empty folder where a bucket has nothing. */
int fdl_store_prune(fdl_store *s, const char *prefix, fdl_error *err);
char *fdl_store_local_path(fdl_store *s, const char *key);
/* 0 when no writer holds the lock of `key` (always, on stores without locks). */
int fdl_store_lock_check(fdl_store *s, const char *key, fdl_error *err);
int fdl_store_check_conditional(fdl_store *s, fdl_error *err);
/* A lock held across several steps of a command (lock.c): on a store with
 * local files Git's lockfile at `key` (util/lockfile.c: its holder recorded,
 * flocked, broken once the holder is provably gone); on a bucket an object
 * at `key` created only if absent, holding the same record, deleted on
 * release, and broken only when it records this host and a process that no
 * longer runs. A lock held by another is waited for up to fdl_lock_wait_ms(),
 * then FDL_ECONFLICT names it, its holder and what clears it. `what` names
 * the locked thing in messages. Release what was taken (safe on a lock
 * never taken, or zeroed with file.fd = -1). */
typedef struct fdl_store_lock {
	fdl_lockfile file;
	fdl_store *store; /* a lock object: its store and key */
	char *key;
} fdl_store_lock;
int fdl_store_lock_take(fdl_store_lock *l, fdl_store *s, const char *key, const char *what, const char *command,
			fdl_error *err);
void fdl_store_lock_release(fdl_store_lock *l);
/* Whether the backend can do all of `caps` (FDL_STORE_*). */
bool fdl_store_can(const fdl_store *s, unsigned caps);
/* FDL_STORE_BUCKET: fill `out` and return true; false for other stores. */
bool fdl_store_s3_access(fdl_store *s, fdl_s3_access *out);
/* Every write counts here: in test builds (-DFDL_CRASH_POINTS) the process
 * aborts just before the FDL_CRASH_AT-th one. Backends call it for writes
 * they make in several requests (each part of a multipart upload). */
void fdl_store_before_write(fdl_store *s);

/* The sha256 (and size: bytes may be NULL) of what an http(s) URL answers,
 * redirects followed, streamed through the digest: the one download that
 * is not a store's (version.json `inputs`). libcurl's timeouts and user
 * agent as every request has them. */
int fdl_url_sha256(char hex[65], int64_t *bytes, const char *url, fdl_error *err);

#endif
