/* The repository layout: fdl.json, HEAD and refs, versions/<id>/ files.
 * Everything here goes through the store and never knows its backend. */
#ifndef FDL_LAYOUT_H
#define FDL_LAYOUT_H

#include "../store/store.h"
#include "../util/json.h"

struct fdl_repo {
	fdl_store *store;
	char *root;     /* store->url */
	char *data_dir; /* from fdl.json */
	char *data_url; /* root/data_dir/ */
	json_t *config; /* fdl.json as read; unknown fields kept */
	fdl_uuid7_gen ids;
};

#define FDL_CONFIG_FILE "fdl.json"

/* The files of a version folder (versions/<id>/), named only here: */
#define FDL_VERSION_JSON "version.json"
#define FDL_VERSION_SIG "version.json.sig"
#define FDL_CATALOG_FILE "ducklake.duckdb" /* the catalog fdl writes */
#define FDL_DATASET_JSON "dataset.json"
#define FDL_FILES_JSON "files.json"
/* files.json's field (fdl's own) mapping every data and delete file the
 * catalog references, at any snapshot, to its sha256 */
#define FDL_FILES_SHA256 "sha256"
#define FDL_DEFAULT_FORMAT "1.0"
#define FDL_DEFAULT_FORMAT_DUCKDB "1.5.2"

/* Open the store of a repository root, with the layout's rules for what a
 * remote store may answer from the local cache. */
int fdl_layout_store_open(fdl_store **out, const char *root, fdl_error *err);
/* Whether reads of `repo` may be answered from the local read cache (on by
 * default for a remote store); returns what it was. fdl verify turns it off:
 * it checks what the store holds, never a copy kept here. */
bool fdl_repo_set_cached(fdl_repo *repo, bool on);
/* A repository read through `store` (owned by the repository from then on,
 * freed with it; left to the caller on failure). */
int fdl_repo_from_store(fdl_repo **out, fdl_store *store, fdl_error *err);

/* Validate fdl.json's content. */
int fdl_config_check(const json_t *cfg, const char *source, fdl_error *err);

/* Whether two fdl.json documents lay a repository out the same way (the
 * format version and the data folder, which every file's place follows);
 * the rest (retention, formats) `fdl config` may change. */
bool fdl_config_same_layout(const json_t *a, const json_t *b);

/* Set fdl.json's `field` (inside the object `parent`, made when missing,
 * when not NULL) to `value` (taken; JSON null at the top level removes the
 * field), by compare-and-swap, every other field kept (fdl config). */
int fdl_config_set_field(fdl_repo *repo, const char *parent, const char *field, json_t *value, fdl_error *err);

/* ---- refs ---- */

/* "refs/heads/<name>" from a branch name (checked). Caller frees. */
int fdl_ref_branch_key(char **out, const char *branch, fdl_error *err);

/* Read a ref file (e.g. "refs/heads/main"). *exists false (rc 0) when it
 * does not exist; etag receives the store's etag for put_if_match. */
int fdl_ref_read(fdl_repo *repo, const char *key, char id[FDL_ID_LEN + 1], bool *exists,
		 char etag[FDL_ETAG_MAX], fdl_error *err);

/* Move a ref by compare-and-swap: old_etag NULL means "must not exist". */
int fdl_ref_update(fdl_repo *repo, const char *key, const char *new_id, const char *old_etag, fdl_error *err);

/* The lock under which refs are created and versions leave retention
 * (FDL_REFS_LOCK, fdl's own, never part of the format): a ref created under
 * it names a version that was live when it was written, and an expiry that
 * re-reads the refs under it sees every ref created before. */
#define FDL_REFS_LOCK "refs.lock"
int fdl_refs_lock(fdl_store_lock *l, fdl_repo *repo, const char *command, fdl_error *err);

/* 0 when `name` is free for a new ref of its kind: no ref of the other kind
 * is named `name` (a branch's name for a new tag, a tag's for a new branch;
 * "refs/heads/" or "refs/tags/" may lead), and no ref of its kind has it
 * as a folder or is its folder (main/geo beside main). FDL_EEXISTS naming
 * that ref and its version otherwise: a branch and a tag never share a
 * name, which would read as the branch, and refs/heads/main cannot be a
 * file and a folder at once. */
int fdl_ref_name_free(fdl_repo *repo, const char *name, bool branch, fdl_error *err);

/* The ref list, history/refs.json (reflist.c; docs/format.md): every
 * branch and tag for readers that cannot list the store, and the versions
 * that expired or were withdrawn. Derived: writers keep it after they
 * change a ref, best effort (a failure costs a static host's readers
 * only). Each note reads the refs it names from the store and writes the
 * list by compare-and-swap; a store that is not written to is left alone. */
int fdl_reflist_note(fdl_repo *repo, const char *const *keys, size_t n, fdl_error *err);
int fdl_reflist_note_gone(fdl_repo *repo, const char *id, const char *reason, const char *when, fdl_error *err);
/* Say `key` is at `id` (NULL: gone) before the ref itself changes, as the
 * history index is prepared: an interrupted ref change run again then ends
 * the same, and between the two the list is ahead of refs/ (fdl verify
 * warns; readers that need the truth read refs/). */
int fdl_reflist_set(fdl_repo *repo, const char *key, const char *id, fdl_error *err);
/* The whole list again from refs/, its `gone` from the expired.json of
 * each version directory in `dirs` that has one (gc, and clone for the
 * copy). */
struct vdirs;
int fdl_reflist_rebuild(fdl_repo *repo, const struct vdirs *dirs, fdl_error *err);
/* The list as stored, checked (fdl_reflist_check); *out NULL when there is
 * none or it does not hold together. */
int fdl_reflist_read(json_t **out, fdl_repo *repo, fdl_error *err);
int fdl_reflist_check(const json_t *doc, const char *src, fdl_error *err);

/* Every branch and tag of a repository, and HEAD's branch: on a folder
 * (and a bucket, with `exact`) listed, their values read from refs/; on a
 * remote store named by the ref list (values from the list, one request;
 * with `exact` read from refs/ each); with neither, HEAD's branch alone.
 * Keys ("refs/heads/main") sorted; `gone` is the list's. */
typedef struct fdl_refs {
	fdl_strlist names;
	char (*ids)[FDL_ID_LEN + 1];
	char *head;             /* HEAD's branch */
	bool listed, from_list; /* neither: HEAD's branch only */
	json_t *gone;           /* {"<id>": {"reason", "expired_at"}} from the list, or NULL */
} fdl_refs;
int fdl_refs_all(fdl_refs *out, fdl_repo *repo, bool exact, fdl_error *err);
void fdl_refs_free(fdl_refs *r);
/* The version `key` names, or NULL. */
const char *fdl_refs_get(const fdl_refs *r, const char *key);

/* " (did you mean 'NAME'?)" for the branch or tag `word` most likely
 * meant, or "" (fdl_closest over fdl_refs_all). */
void fdl_ref_suggest(char *out, size_t size, fdl_repo *repo, const char *word);

/* Parse "ref: refs/heads/x\n" (HEAD) into the branch name. Caller frees. */
int fdl_head_parse(char **branch, const char *data, size_t len, fdl_error *err);

/* ---- versions ---- */

/* The key of a file of a version: versions/<id>/<name>. Caller frees. */
char *fdl_version_key(const char *id, const char *name);

/* A version from an already parsed version.json (the history index holds
 * them): checked as fdl_version_parse checks text; takes its own reference
 * to doc. */
int fdl_version_from_json(fdl_version **out, json_t *doc, const char *dir_id, const char *source, fdl_error *err);
/* A brief version: only the fields fdl log shows are checked and kept (a
 * history index head, or a whole version.json); catalog getters give NULL
 * or -1, and what needs the rest (to_json, dataset, files) is refused. */
int fdl_version_from_head(fdl_version **out, json_t *doc, const char *dir_id, const char *source, fdl_error *err);

/* 64 lower-case hex digits, as every sha256 the format records. */
bool fdl_is_sha256_hex(const char *s);

/* The parsed JSON document of a version (owned by v). */
const json_t *fdl_version_json(const fdl_version *v);

/* A version file, checked against the bytes and sha256 version.json
 * records (fetch.c): the file itself in a local store, else a copy
 * downloaded once into the read cache (objects/<sha256>). With sha NULL (a
 * file FDL 0.1 records no hash for, catalogs/<format>.duckdb) it is fetched
 * unchecked and cached by repository and key. Returns the local path to open
 * read-only. Caller frees. */
int fdl_object_fetch_checked(char **local_path, fdl_repo *repo, const char *key, int64_t bytes, const char *sha256,
			     fdl_error *err);
/* The same for a file of version v, by its path inside the version. */
int fdl_version_fetch_checked(char **local_path, fdl_repo *repo, const fdl_version *v, const char *path,
			      int64_t bytes, const char *sha256, fdl_error *err);

/* Whether a remote store's file (bytes, sha256) is already in the read
 * cache, so that fetching it asks the store nothing (false on a local store). */
bool fdl_object_cached(const fdl_repo *repo, int64_t bytes, const char *sha256);
/* The catalog version.json records (ducklake.duckdb), checked. A catalog
 * the read cache holds is handed out only while its version is live: the
 * store is asked for expired.json then (a withdrawal never deletes the
 * cached copy, and a fetch from the store would have found the catalog
 * gone), so no reader opens a withdrawn or expired version from the cache
 * (FDL_EEXPIRED). */
int fdl_version_fetch_catalog(char **local_path, fdl_repo *repo, const fdl_version *v, fdl_error *err);
/* The file version.json records under `field` ("dataset", "files"),
 * checked, parsed (files.json's paths checked too); *out NULL (rc 0) when
 * version.json records none. */
int fdl_version_load_json(json_t **out, fdl_repo *repo, const fdl_version *v, const char *field, fdl_error *err);

/* What a new version is made of (fdl_version_write). */
typedef struct fdl_version_new {
	/* its id (uuidv7) and created_at, drawn by fdl_version_draw before
	 * anything is written, so that what derives from the version (its
	 * preview) is computed beside its writes, by its id */
	char id[FDL_ID_LEN + 1];
	char created_at[32];
	const fdl_version *parent; /* NULL: the first version of its branch */
	const char *message, *author_name, *author_email; /* email may be NULL */
	const char *catalog_file;                          /* the frozen catalog, a local file */
	const char *catalog_storage, *ducklake_format;     /* "duckdb-v1.5.0", "1.0" */
	int64_t first_snapshot, last_snapshot;             /* ducklake.snapshots */
	const json_t *dataset;                             /* dataset.json */
	const char *files_text;                            /* files.json, serialised as published */
	size_t files_len;
	const json_t *changes, *inputs; /* NULL: none */
} fdl_version_new;

/* A new version's id (uuidv7) and created_at (the time it is drawn at,
 * to the second) into n; once per version, before fdl_version_write. */
int fdl_version_draw(fdl_version_new *n, fdl_repo *repo, fdl_error *err);
/* Write a new version under the id n holds (fdl_version_draw): the
 * catalog, dataset.json and files.json create-only, then version.json (seq
 * one past the parent's), checked as a reader checks it. A failure leaves
 * at most an incomplete folder no ref names. */
int fdl_version_write(fdl_repo *repo, const fdl_version_new *n, fdl_error *err);

/* The first DuckLake snapshot version v added: one past its first parent's
 * (when the parent is known; a version with a new description alone adds
 * none), else the start of its ducklake.snapshots. */
int64_t fdl_version_added_from(const fdl_version *v, const fdl_version *parent);

/* `changes` items (version.json's JSON) as fdl_change and back. */
int fdl_changes_from_json(fdl_change **out, size_t *count, const json_t *list, fdl_error *err);
json_t *fdl_changes_json(const fdl_change *c, size_t count);
void fdl_changes_free(fdl_change *c, size_t count);

/* files.json: tables -> {files: [{path, rows, bytes, footer_bytes?,
 * deletes?}], renamed_columns?}, and sha256? -> {path: 64 hex digits},
 * every path a clean relative path. */
int fdl_files_json_check(const json_t *doc, const char *src, fdl_error *err);

/* expired.json: reason (retention | withdrawn) and expired_at; the strings
 * point into doc. */
int fdl_expired_parse(const char **reason, const char **when, const json_t *doc, const char *src, fdl_error *err);

/* The file whose presence says a version left retention or was withdrawn. */
#define FDL_EXPIRED_JSON "expired.json"

/* Whether a version expired or was withdrawn (one read of its
 * expired.json). reason is "retention" or "withdrawn" and when its
 * expired_at, both "" when the file is damaged (the version is gone all
 * the same); key is versions/<id>/expired.json. An error only when the
 * store cannot be asked. */
typedef struct fdl_expiry {
	bool expired;
	char reason[16];
	char when[40];
	char why[512]; /* its message: the publisher's reason for a withdrawal ("" if none) */
	char key[FDL_ID_LEN + 32];
} fdl_expiry;
int fdl_version_expiry(fdl_expiry *out, fdl_repo *repo, const char *id, fdl_error *err);
/* 0 when the version is live; FDL_EEXPIRED saying when and why it went
 * (left retention, withdrawn) and which file says so; the store's error
 * when it cannot be asked. */
int fdl_version_check_live(fdl_repo *repo, const char *id, fdl_error *err);

/* ---- working catalogs known to the repository (fdl's own; workrec.c) ---- */

/* work/<id>.json is a working catalog's record (kept while its lease
 * runs: FDL_WORK_LEASE_DAYS after the last command on it, unless the
 * record says otherwise), work/<id>/ the folder its DuckDB writes new data
 * files into until a commit publishes them under the data folder. */
#define FDL_WORK_AREA "work"
#define FDL_WORK_LEASE_DAYS 90
char *fdl_workrec_key(const char *id);     /* work/<id>.json; caller frees */
char *fdl_workrec_staging(const char *id); /* work/<id>; caller frees */
/* Write a new record (create-only). */
int fdl_workrec_create(fdl_repo *repo, const char *id, const json_t *rec, fdl_error *err);
/* A record as read, with its etag: what a later refresh writes over. */
typedef struct fdl_workrec_seen {
	json_t *doc;
	char etag[FDL_ETAG_MAX];
} fdl_workrec_seen;
/* Read a record; FDL_ENOTFOUND, saying the working catalog was abandoned
 * or its lease ended, when it is gone. */
int fdl_workrec_read(fdl_workrec_seen *out, fdl_repo *repo, const char *id, fdl_error *err);
void fdl_workrec_seen_free(fdl_workrec_seen *s);
/* Refresh a record: `fields` (may be NULL) set, used_at now, by
 * compare-and-swap over `seen` (used up; NULL: read first); FDL_ENOTFOUND
 * when the record is gone. */
int fdl_workrec_touch(fdl_repo *repo, const char *id, const json_t *fields, fdl_workrec_seen *seen, fdl_error *err);
/* Remove a record, then every file of its folder. */
int fdl_workrec_remove(fdl_repo *repo, const char *id, fdl_error *err);
/* When a record's lease ends (Unix seconds); -1 when it cannot say. */
int64_t fdl_workrec_lease_end(const json_t *rec);

typedef struct fdl_workrec {
	char id[FDL_ID_LEN + 1];
	bool has_record;     /* work/<id>.json exists */
	json_t *doc;         /* its content (NULL: none, or unreadable) */
	char *problem;       /* why it is unreadable (NULL: it is not) */
	int64_t lease_end;   /* -1: unknown */
	fdl_strlist staged;  /* keys under work/<id>/, sorted */
} fdl_workrec;
typedef struct fdl_workrecs {
	fdl_workrec *items;
	size_t len;
	fdl_strlist strays; /* keys under work/ that are neither */
} fdl_workrecs;
/* Every record and staging folder under work/ (one listing). */
int fdl_workrecs_list(fdl_workrecs *out, fdl_repo *repo, fdl_error *err);
void fdl_workrecs_free(fdl_workrecs *w);

#endif
