/*
 * libfdl: versions of a DuckLake dataset kept on a folder, an HTTP host or
 * S3, the way Git keeps commits (FDL 0.1).
 *
 * Conventions (modelled on libgit2):
 *  - Every function that can fail returns 0 on success or a negative
 *    FDL_E* code, and fills the caller's `fdl_error` with a message that
 *    names the file, the field and what was expected. There is no global
 *    error state: pass an `fdl_error` to each call.
 *  - Out-parameters come first. An object returned through `**out` belongs
 *    to the caller and is released with its one `_free` function; strings
 *    returned through `char **out` are released with `fdl_free`.
 *  - `const char *` results of accessors are owned by the object they were
 *    read from and live as long as it does.
 *  - Names: fdl_<noun>_<verb>() (fdl_repo_open, fdl_branch_list,
 *    fdl_version_read), the noun being the object acted on; each returned
 *    object type T has fdl_T_free() and, for reports, fdl_T_json(). The
 *    written exception: an operation that is a command of its own, as in
 *    Git, is named by its verb alone (fdl_checkout, fdl_commit,
 *    fdl_describe, fdl_verify, fdl_expire, fdl_withdraw, fdl_gc,
 *    fdl_clone), as are fdl_free and fdl_libversion.
 *
 * Threads: libfdl keeps no global state. A handle (fdl_repo, fdl_reader,
 * fdl_version, a report) may be used by one thread at a time; different
 * handles may be used by different threads at the same time, on the same
 * repository too (tests/unit/test_threads.c: eight readers at once). Objects
 * that are only read after they are returned (fdl_version, reports) may be
 * read by several threads at once. fdl_server_start runs its own threads.
 * libfdl relies on libcurl's thread-safe global initialisation (libcurl
 * 7.84 or later, CURL_VERSION_THREADSAFE); with an older libcurl, call
 * curl_global_init() before starting threads.
 *
 * Stability: the functions and types in the sections marked [stable] keep
 * their signatures and meaning for the whole major version
 * (FDL_VERSION_MAJOR); fields are only ever added at the end of a report
 * struct, which the library allocates. Sections marked [experimental] may
 * still change in a minor release, said in its notes. The exported symbols
 * are listed in abi/libfdl.symbols; CI fails on any difference. An
 * operation with options takes them as a struct whose first field is
 * `unsigned int version`, started from its FDL_<NAME>_OPTIONS_INIT macro
 * (fdl_commit_options and FDL_COMMIT_OPTIONS_INIT): a later minor release
 * adds an option as a field at the end and raises the struct's version,
 * without changing a signature or the soname; a struct whose version this
 * libfdl does not know is refused (FDL_EINVALID). Any other change to an
 * options struct (a field removed, moved or retyped) is a new major
 * version and soname (docs/decisions.md, "The library as others embed
 * it").
 *
 * Environment: libfdl reads a few FDL_* variables (where the DuckDB
 * library and its extensions are, the read cache, timeouts, S3 tuning,
 * tracing; some only in test builds). docs/environment.md lists every one
 * with what it does; `make docs-check` fails when the source reads one it
 * does not list.
 */
#ifndef FDL_H
#define FDL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What libfdl exports: every function declared here, and nothing else (the
 * library is built with -fvisibility=hidden; abi/libfdl.symbols lists the
 * exports and CI compares it with the built libfdl.so). */
#if defined(__GNUC__)
#define FDL_EXTERN __attribute__((visibility("default")))
#else
#define FDL_EXTERN
#endif

/* This library's version (semantic versioning: the ABI changes only with
 * the major number) and the FDL spec version it writes. */
#define FDL_VERSION_MAJOR 2
#define FDL_VERSION_MINOR 0
#define FDL_VERSION_PATCH 0
#define FDL_SPEC_VERSION "0.1"
#define FDL_ID_LEN 36 /* a lower-case hyphenated UUID, without NUL */

/* Error codes. The CLI exits with the negated code, so scripts can rely on
 * them: 3 not found, 4 conflict, 5 invalid, 6 I/O, 7 expired, 8 nothing to
 * commit, 9 already exists, 10 DuckDB, 11 ambiguous, 12 out of memory. A
 * code says what happened and nothing else: no function of fdl.h returns
 * a positive value, and none of these means "stop" or "skip"
 * (docs/architecture.md, "One return protocol"). */
enum {
	FDL_OK = 0,
	FDL_ERROR = -1,      /* anything not listed below */
	FDL_ENOTFOUND = -3,  /* a file, ref or version does not exist */
	FDL_ECONFLICT = -4,  /* another writer won a compare-and-swap */
	FDL_EINVALID = -5,   /* bad input or a file that breaks the spec */
	FDL_EIO = -6,        /* the store or the file system failed */
	FDL_EEXPIRED = -7,   /* the version left retention or was withdrawn */
	FDL_ENOCHANGE = -8,  /* nothing to commit */
	FDL_EEXISTS = -9,    /* refusing to overwrite */
	FDL_EDUCKDB = -10,   /* DuckDB or one of its extensions failed */
	FDL_EAMBIGUOUS = -11, /* an abbreviated version id matches several versions */
	FDL_ENOMEM = -12,     /* an allocation failed */
};

typedef struct fdl_error {
	int code;
	char message[2048];
} fdl_error;

/* Progress of a long transfer (an upload to S3): `what` names the file,
 * `done` of `total` bytes have gone. Called often; throttle any output. */
typedef void (*fdl_progress_cb)(const char *what, int64_t done, int64_t total, void *payload);
/* A warning: the operation went on, but something deserves a look. */
typedef void (*fdl_warning_cb)(const char *message, void *payload);

/* Release a string or buffer returned by libfdl. */
FDL_EXTERN void fdl_free(void *ptr);

/* "MAJOR.MINOR.PATCH" of the library actually loaded (fdl_version is the
 * type of one version of a dataset, hence the name) (it may be newer than
 * the header a program was built with). Static storage. */
FDL_EXTERN const char *fdl_libversion(void);

/* The folder libfdl loads DuckDB's extensions from ($FDL_EXTENSION_DIR,
 * else the installed tree's <libdir>/fdl/extensions), laid out as DuckDB's
 * own `extension_directory` (<dir>/<duckdb version>/<platform>/), so a
 * tool's DuckDB given it loads the same extensions offline. NULL when out
 * of memory; free with fdl_free. */
FDL_EXTERN char *fdl_extension_dir(void);

/* Remove the temporary folders libfdl made for this process (in TMPDIR,
 * named fdl-<what>-<pid>-...): for a program about to exit on a signal
 * while a libfdl call runs on another thread, which must not go on. A
 * later fdl removes those of a process that died without this. */
FDL_EXTERN void fdl_tempdirs_remove(void);

/* A list of strings owned by the report that holds it. */
typedef struct fdl_strarray {
	char **strings;
	size_t count;
} fdl_strarray;

/* Reports (fdl_*_report, fdl_diff, fdl_snapshot_list) are plain structs the
 * library allocates and fills: read their fields, release them with their
 * one _free function, and get their --json form from their _json function.
 * Fields may be added at the end in later releases, never removed. */

/* ---- repositories [stable] ---------------------------------------- */

typedef struct fdl_repo fdl_repo;

typedef struct fdl_init_options {
	unsigned int version; /* FDL_INIT_OPTIONS_VERSION */
	const char *branch;   /* default branch, NULL = "main" */
	const char *data_dir; /* data folder relative to the root, NULL = "data" */
} fdl_init_options;
#define FDL_INIT_OPTIONS_VERSION 1
#define FDL_INIT_OPTIONS_INIT {.version = FDL_INIT_OPTIONS_VERSION}

/* Create a repository at `root` (a folder path, file:// URL or
 * s3://bucket[/prefix]): fdl.json,
 * HEAD, refs/heads/ and the data folder. `opts` may be NULL (the
 * defaults). Refuses (FDL_EEXISTS) a non-empty
 * root that is not a repository, and a root that already is one. */
FDL_EXTERN int fdl_repo_init(const char *root, const fdl_init_options *opts, fdl_error *err);

/* Open the repository at `root` (a folder, file:// URL, http(s):// URL of
 * any static host, or s3://bucket[/prefix]); reads and checks fdl.json. */
FDL_EXTERN int fdl_repo_open(fdl_repo **out, const char *root, fdl_error *err);
/* The same for a private http(s):// host, with the token to send it (instead
 * of FDL_TOKEN, the credentials file or ~/.netrc); NULL = fdl_repo_open. */
FDL_EXTERN int fdl_repo_open_token(fdl_repo **out, const char *root, const char *token, fdl_error *err);
FDL_EXTERN void fdl_repo_free(fdl_repo *repo);

/* The root as given, normalised (absolute path for folders). */
FDL_EXTERN const char *fdl_repo_root(const fdl_repo *repo);
/* fdl.json's data_dir, e.g. "data". */
FDL_EXTERN const char *fdl_repo_data_dir(const fdl_repo *repo);
/* Where readers find the data: root + data_dir + "/". */
FDL_EXTERN const char *fdl_repo_data_url(const fdl_repo *repo);

/* ---- refs [stable] ------------------------------------------------ */

/* The branch HEAD names, e.g. "main". Caller frees with fdl_free. */
FDL_EXTERN int fdl_repo_head_branch(char **out, fdl_repo *repo, fdl_error *err);

/* Resolve `spec` to a version id: the one ref syntax every command takes.
 * `spec` is NULL or "HEAD" (HEAD's branch tip), a branch or tag name (a
 * branch first, as in Git), "refs/heads/<b>" or "refs/tags/<t>", a full
 * version id, "<seq>" (that seq on HEAD's branch, following first
 * parents), "<branch-or-tag>:<seq>", or a unique prefix of a version id
 * (at least 4 characters; needs a store that can be listed, not a static
 * HTTP host), each optionally followed by Git's suffixes: "~N" (N first
 * parents back, "~" = "~1") and "^N" (the Nth parent, "^" = "^1"), in any
 * number ("main~2", "HEAD^", "v2025~1^"). A name that is a branch or tag
 * wins over a seq or a prefix.
 * FDL_ENOTFOUND when it names nothing (or an unborn branch),
 * FDL_EAMBIGUOUS when a prefix matches several versions, FDL_EINVALID when
 * it cannot be a ref at all. */
FDL_EXTERN int fdl_ref_resolve(char out_id[FDL_ID_LEN + 1], fdl_repo *repo, const char *spec, fdl_error *err);

/* Split "ROOT@REF" (every command's way of naming a version with its
 * repository): the last '@' with no '/' after it starts the ref, or an
 * "@refs/..." in full, so "http://host:4011@main" and "s3://bucket@v1"
 * split and "/srv/data@2024/repo" does not. *ref is NULL when there is
 * none. The caller frees both with fdl_free. */
FDL_EXTERN int fdl_target_split(char **root, char **ref, const char *target, fdl_error *err);

/* Check a branch or tag name against Git's ref-name rules. */
FDL_EXTERN int fdl_ref_name_check(const char *name, fdl_error *err);

/* ---- branches [stable] -------------------------------------------- */

typedef struct fdl_branch {
	char name[256];
	char tip[FDL_ID_LEN + 1];
	int head; /* 1 for the branch HEAD names */
} fdl_branch;

/* Every branch with a version, sorted by name. Free *out with
 * fdl_branch_list_free. */
FDL_EXTERN int fdl_branch_list(fdl_branch **out, size_t *count, fdl_repo *repo, fdl_error *err);
FDL_EXTERN void fdl_branch_list_free(fdl_branch *list);
/* Create branch `name` at `start` (NULL = HEAD; a ref or version id).
 * FDL_EEXISTS if it exists. */
FDL_EXTERN int fdl_branch_create(fdl_repo *repo, const char *name, const char *start, fdl_error *err);
/* Delete a branch (compare-and-swap); refuses HEAD's branch. */
FDL_EXTERN int fdl_branch_delete(fdl_repo *repo, const char *name, fdl_error *err);
/* Move branch `name` to `start` (NULL = HEAD; a ref or version id) from
 * wherever it is, as `git branch --force` does: back to an older version
 * too. A compare-and-swap from the tip it read (FDL_ECONFLICT when another
 * writer moved it meanwhile); created when it does not exist. `old_tip`
 * gets the version it was at ("" when it did not exist), which moves it
 * back. A working catalog based on the old tip then conflicts at commit. */
FDL_EXTERN int fdl_branch_set(char old_tip[FDL_ID_LEN + 1], fdl_repo *repo, const char *name, const char *start,
			      fdl_error *err);
/* Make HEAD name branch `branch`, which must have a version (a
 * compare-and-swap on HEAD): the default branch readers and checkouts
 * get. */
FDL_EXTERN int fdl_repo_head_set(fdl_repo *repo, const char *branch, fdl_error *err);
/* Set fdl.json's retention (what fdl expire applies): `key` is
 * "retention.days" or "retention.keep", `value` a whole number (0 or
 * more) or NULL for forever. A compare-and-swap on fdl.json that keeps
 * every other field (FDL_ECONFLICT when another writer changed it). */
FDL_EXTERN int fdl_repo_retention_set(fdl_repo *repo, const char *key, const char *value, fdl_error *err);
/* fdl.json's retention: days and versions kept per branch, -1 for
 * forever (null or absent). */
FDL_EXTERN int fdl_repo_retention(int64_t *days, int64_t *keep, const fdl_repo *repo, fdl_error *err);

/* ---- tags ---------------------------------------------------------- */

/* A tag names one version for good: commits never move it. */
typedef struct fdl_tag {
	char name[256];
	char target[FDL_ID_LEN + 1];
} fdl_tag;

/* Every tag, sorted by name. Free *out with fdl_tag_list_free. */
FDL_EXTERN int fdl_tag_list(fdl_tag **out, size_t *count, fdl_repo *repo, fdl_error *err);
FDL_EXTERN void fdl_tag_list_free(fdl_tag *list);
/* Create tag `name` at `target` (NULL = HEAD; a ref or version id), which
 * must be a readable version. FDL_EEXISTS if the tag exists. */
FDL_EXTERN int fdl_tag_create(fdl_repo *repo, const char *name, const char *target, fdl_error *err);
/* Delete a tag (compare-and-swap); FDL_ENOTFOUND if there is none. */
FDL_EXTERN int fdl_tag_delete(fdl_repo *repo, const char *name, fdl_error *err);

/* ---- versions [stable] -------------------------------------------- */

typedef struct fdl_version fdl_version;

/* Read and validate versions/<id>/version.json per the spec: every must
 * field with its type, and `id` equal to the directory. */
FDL_EXTERN int fdl_version_read(fdl_version **out, fdl_repo *repo, const char *id, fdl_error *err);

/* Validate a version.json held in memory. `dir_id` is the name of the
 * directory it was found in; `source` names it in error messages. */
FDL_EXTERN int fdl_version_parse(fdl_version **out, const char *json, size_t len, const char *dir_id,
		      const char *source, fdl_error *err);
FDL_EXTERN void fdl_version_free(fdl_version *v);

FDL_EXTERN const char *fdl_version_id(const fdl_version *v);
FDL_EXTERN int64_t fdl_version_seq(const fdl_version *v);
FDL_EXTERN size_t fdl_version_parent_count(const fdl_version *v);
FDL_EXTERN const char *fdl_version_parent(const fdl_version *v, size_t i); /* NULL past the end */
FDL_EXTERN const char *fdl_version_created_at(const fdl_version *v);
FDL_EXTERN const char *fdl_version_author_name(const fdl_version *v);
FDL_EXTERN const char *fdl_version_author_email(const fdl_version *v); /* NULL when absent */
FDL_EXTERN const char *fdl_version_message(const fdl_version *v);
FDL_EXTERN const char *fdl_version_catalog_path(const fdl_version *v);
FDL_EXTERN const char *fdl_version_catalog_sha256(const fdl_version *v);
FDL_EXTERN const char *fdl_version_catalog_storage(const fdl_version *v);
FDL_EXTERN int64_t fdl_version_catalog_bytes(const fdl_version *v);
FDL_EXTERN const char *fdl_version_ducklake_format(const fdl_version *v);
FDL_EXTERN int64_t fdl_version_snapshot_id(const fdl_version *v);
/* The dataset.json version v was published with, checked against the size
 * and sha256 version.json records, as text. FDL_ENOTFOUND for a version
 * written before dataset.json was required. Caller frees. */
FDL_EXTERN int fdl_version_dataset(char **out, fdl_repo *repo, const fdl_version *v, fdl_error *err);
/* The tables and views a version holds, from its dataset.json (names,
 * rows, columns) and files.json (data files and bytes, data and delete
 * files together; -1 when the version has no files.json). Empty for a
 * version written before dataset.json was required. Free with
 * fdl_table_list_free. */
typedef struct fdl_table_info {
	char *name;      /* "schema.table" */
	int view;        /* 1 for a view (no rows, no files) */
	int64_t rows;    /* -1 when not recorded */
	size_t columns;  /* described or catalog columns */
	size_t files;    /* data files */
	int64_t bytes;   /* -1 when unknown */
} fdl_table_info;
typedef struct fdl_table_list {
	fdl_table_info *items;
	size_t count;
} fdl_table_list;
FDL_EXTERN int fdl_version_tables(fdl_table_list **out, fdl_repo *repo, const fdl_version *v, fdl_error *err);
FDL_EXTERN void fdl_table_list_free(fdl_table_list *l);
/* A branch's history, as fdl log lists it: the first-parent chain from
 * `ref` (NULL = HEAD; any ref fdl_ref_resolve takes), newest first, at
 * most `limit` versions (-1: all). Read through the repository's history
 * index where it has one (a few requests for any length), else one
 * version.json at a time; either way each version's id, seq and first
 * parent are checked to follow on. *out is set even when reading fails
 * part way (with the versions read before the failure): free it with
 * fdl_log_free either way. */
typedef struct fdl_log {
	fdl_version **items; /* owned by the list */
	size_t count;
	size_t from_index;   /* versions the history index gave */
	size_t files_read;   /* versions read from their version.json */
	/* "" or the id of the first parent where the history ends because it
	 * was withdrawn with its version.json (fdl withdraw
	 * --remove-version-json); the versions before it are out of reach */
	char withdrawn_end[FDL_ID_LEN + 1];
	/* NULL until fdl_log_decorate; then one a version, as items */
	struct fdl_log_mark *marks;
} fdl_log;
/* What `git log --decorate` shows of a version, and whether it is still
 * there: the refs that name it ("HEAD -> main", "fixes", "tag: v2025", in
 * that order) and its state ("" live, "expired" or "withdrawn", since
 * `when`). */
typedef struct fdl_log_mark {
	fdl_strarray refs;
	char state[16];
	char when[40];
} fdl_log_mark;
/* Fill l->marks. Refs come from listing refs/ (or, from a static host,
 * from the ref list fdl writes, history/refs.json); states from each
 * version's expired.json on a folder, else from the ref list (a host
 * without one shows none). A few requests, whatever the history's length. */
FDL_EXTERN int fdl_log_decorate(fdl_log *l, fdl_repo *repo, fdl_error *err);
FDL_EXTERN int fdl_log_read(fdl_log **out, fdl_repo *repo, const char *ref, long long limit, fdl_error *err);
/* The same list, each item brief: only what fdl log shows is read and
 * checked (id, seq, parents, created_at, author, message, changes), which
 * through the history index is about a third of the bytes to parse. A
 * brief item's catalog getters return NULL or -1, and fdl_version_to_json,
 * fdl_version_dataset and fdl_version_tables refuse it (FDL_EINVALID):
 * read such a version whole with fdl_version_read. */
FDL_EXTERN int fdl_log_read_brief(fdl_log **out, fdl_repo *repo, const char *ref, long long limit,
				  fdl_error *err);
FDL_EXTERN void fdl_log_free(fdl_log *l);

/* Pretty-printed JSON of the whole version.json. Caller frees. */
FDL_EXTERN int fdl_version_to_json(char **out, const fdl_version *v, fdl_error *err);

/* One schema change (version.json's `changes`, fdl diff): `kind` is
 * add_table, drop_table, rename_table, add_column, drop_column,
 * rename_column, recreate_column or type_change. */
typedef struct fdl_change {
	char *table;     /* "schema.table" (the new name for renames) */
	char *kind;
	char *column;    /* NULL for a change of the whole table */
	char *from;      /* the old name of a renamed table or column, else NULL */
	char *type;      /* the column's type, where there is one, else NULL */
	char *from_type; /* the old type (type_change, recreate_column), else NULL */
	int breaking;    /* SQL written against the old version may fail */
} fdl_change;

/* The `changes` version v records against its parent (none for a first
 * version or one written without them). Owned by v. */
FDL_EXTERN size_t fdl_version_change_count(const fdl_version *v);
FDL_EXTERN const fdl_change *fdl_version_change(const fdl_version *v, size_t i); /* NULL past the end */

/* The schema differences from version `a` to version `b` (refs, see
 * fdl_ref_resolve), computed from the two frozen catalogs. */
/* One change of a description (dataset.json): `field` of the dataset
 * ("licenses", "title", ...), of a table, or of a column, "added",
 * "removed" or "changed". */
typedef struct fdl_desc_change {
	char *table;  /* "schema.table"; NULL for the dataset's own fields */
	char *column; /* NULL but for a column's */
	char *field;
	char *kind;
} fdl_desc_change;
typedef struct fdl_diff {
	char from[FDL_ID_LEN + 1];
	char to[FDL_ID_LEN + 1];
	fdl_change *changes;
	size_t change_count;
	/* what the description changed (people's part: not rows or types) */
	fdl_desc_change *desc_changes;
	size_t desc_change_count;
} fdl_diff;
FDL_EXTERN int fdl_diff_versions(fdl_diff **out, fdl_repo *repo, const char *a, const char *b, fdl_error *err);
/* The description changes alone (from the two dataset.json files, no
 * catalog opened), the rest of *out empty: what fdl show tells of a
 * version against its parent. */
FDL_EXTERN int fdl_diff_descriptions(fdl_diff **out, fdl_repo *repo, const char *a, const char *b, fdl_error *err);
FDL_EXTERN void fdl_diff_free(fdl_diff *d);

/* Row differences, streamed: for each table both versions have (or only
 * `table`, "schema.table" or "table" in main), `on_table` is told the
 * number of rows added and removed (DuckDB's EXCEPT ALL over the columns
 * both versions have), then `on_row` gets up to `limit` added rows and up
 * to `limit` removed rows, each as one JSON object, in ORDER BY ALL order.
 * A callback returns 0 to go on, or a negative FDL_E* code to stop the
 * diff, which then returns that code (with a message saying the receiver
 * stopped it); any other value stops it as FDL_ERROR. Nothing is held in
 * memory but one chunk of rows. */
typedef struct fdl_diff_rows_options {
	unsigned int version; /* FDL_DIFF_ROWS_OPTIONS_VERSION */
	const char *table; /* NULL = every table in both */
	int64_t limit;     /* rows shown per table and side; < 0 = all */
	int (*on_table)(const char *table, int64_t added, int64_t removed, void *payload);
	int (*on_row)(const char *table, int added, const char *row_json, void *payload);
	void *payload;
} fdl_diff_rows_options;
#define FDL_DIFF_ROWS_OPTIONS_VERSION 1
#define FDL_DIFF_ROWS_OPTIONS_INIT {.version = FDL_DIFF_ROWS_OPTIONS_VERSION}
FDL_EXTERN int fdl_diff_rows(fdl_repo *repo, const char *a, const char *b, const fdl_diff_rows_options *opts, fdl_error *err);

/* An fdl_diff as JSON, one object: {"from", "to", "changes": [{table,
 * kind, column?, from?, from_type?, type?, breaking}],
 * "description_changes": [{field, kind, table?, column?}]} (what `fdl diff
 * --json` prints before the rows it streams). Free *out with fdl_free. */
FDL_EXTERN int fdl_diff_json(char **out, const fdl_diff *d, fdl_error *err);
/* `fdl diff --json --rows`, streamed to `out`: d's object (fdl_diff_json)
 * with "rows": {"schema.table": {"added_total", "removed_total", "added":
 * [...], "removed": [...]}} streamed into it from fdl_diff_rows of d->from
 * and d->to (`rows->on_table`, `on_row` and `payload` unused). */
FDL_EXTERN int fdl_diff_rows_json(FILE *out, fdl_repo *repo, const fdl_diff *d, const fdl_diff_rows_options *rows,
				  fdl_error *err);

/* The DuckLake snapshots a version added since its first parent, with
 * their DuckLake commit information. */
typedef struct fdl_snapshot {
	int64_t snapshot_id;
	char *time;       /* UTC ISO 8601 */
	char *author;     /* NULL when DuckLake recorded none */
	char *message;    /* commit_message, or NULL */
	char *extra_info; /* commit_extra_info, or NULL */
	char *changes;    /* DuckLake's changes_made, e.g. "inserted_into_table:1" */
} fdl_snapshot;
typedef struct fdl_snapshot_list {
	fdl_snapshot *items;
	size_t count;
} fdl_snapshot_list;
FDL_EXTERN int fdl_version_snapshots(fdl_snapshot_list **out, fdl_repo *repo, const char *id, fdl_error *err);
FDL_EXTERN void fdl_snapshot_list_free(fdl_snapshot_list *l);
/* [{"snapshot_id", "time", "author", "message", "extra_info", "changes"}] */
FDL_EXTERN int fdl_snapshot_list_json(char **out, const fdl_snapshot_list *l, fdl_error *err);

/* ---- working catalogs [stable] ------------------------------------ */

typedef struct fdl_checkout_options {
	unsigned int version; /* FDL_CHECKOUT_OPTIONS_VERSION */
	/* branch to work on, NULL = HEAD's branch; it must exist (but HEAD's
	 * own before its first version), unless `create` says to make it */
	const char *ref;
	/* a new branch named `ref` (FDL_EEXISTS when it exists):
	 * FDL_CHECKOUT_NEW creates it at `start` (NULL = HEAD) before the
	 * checkout, as `git checkout -b` does; FDL_CHECKOUT_ORPHAN starts it
	 * empty, with no version until its first commit (`git checkout
	 * --orphan`). 0: an existing branch. */
	int create;
	const char *start;
} fdl_checkout_options;
#define FDL_CHECKOUT_OPTIONS_VERSION 1
#define FDL_CHECKOUT_OPTIONS_INIT {.version = FDL_CHECKOUT_OPTIONS_VERSION}
#define FDL_CHECKOUT_NEW 1
#define FDL_CHECKOUT_ORPHAN 2

/* Make the working catalog folder `work` (which must not exist or be
 * empty): a SQLite DuckLake catalog holding the branch tip (empty when the
 * branch has no version yet), and `fdl-work.json` recording the
 * repository, branch and base version. A branch that does not exist is
 * refused (FDL_ENOTFOUND, naming the branch it most likely meant) unless
 * opts->create asks for it. */
FDL_EXTERN int fdl_checkout(fdl_repo *repo, const char *work, const fdl_checkout_options *opts, fdl_error *err);

/* Abandon a working catalog made by fdl_checkout (refuses a folder without
 * fdl-work.json): the repository's record of it and the data files it had
 * not committed go first, then the folder (for PostgreSQL, the record that
 * makes the database a working catalog; its tables stay). */
FDL_EXTERN int fdl_work_remove(const char *work, fdl_error *err);

/* What a working catalog records about where it came from. */
typedef struct fdl_work_info {
	char *repository; /* the repository root it was checked out from */
	char *branch;     /* the branch it commits to */
	char *data_path;  /* where DuckDB writes its data files */
	char *catalog;    /* the catalog: a SQLite file, or a PostgreSQL connection */
	char base[FDL_ID_LEN + 1]; /* the version it is based on; "" on a new branch */
} fdl_work_info;
FDL_EXTERN int fdl_work_info_read(fdl_work_info **out, const char *work, fdl_error *err);
FDL_EXTERN void fdl_work_info_free(fdl_work_info *info);

/* The ATTACH statement (with the LOAD lines) a user runs in stock DuckDB to
 * write to the working catalog `work`. Caller frees. */
FDL_EXTERN int fdl_work_attach_sql(char **out, const char *work, const char *alias, fdl_error *err);

typedef struct fdl_commit_options {
	unsigned int version;     /* FDL_COMMIT_OPTIONS_VERSION */
	const char *message;      /* required */
	const char *author_name;  /* required */
	const char *author_email; /* may be NULL */
	/* "SOURCE_ID=FILE_OR_URL" items recorded as version.json `inputs` */
	const char *const *inputs;
	size_t input_count;
	/* told how large uploads go (the catalog to a bucket); may be NULL */
	fdl_progress_cb progress;
	void *progress_payload;
	/* non-zero: merge the working catalog's small data files first
	 * (ducklake_merge_adjacent_files, a new snapshot of it) */
	int compact;
	/* told, one message at a time, what should be fixed though the commit
	 * goes on: many small data files in a table, a description that
	 * follows a table or column renamed since it was written ("FILE, line
	 * N: ..."); may be NULL */
	fdl_warning_cb warning;
	void *warning_payload;
} fdl_commit_options;
#define FDL_COMMIT_OPTIONS_VERSION 1
#define FDL_COMMIT_OPTIONS_INIT {.version = FDL_COMMIT_OPTIONS_VERSION}

/* Freeze the working catalog's latest snapshot into a new version and move
 * its branch by compare-and-swap. FDL_ENOCHANGE when there is no new
 * snapshot (nothing written), FDL_ECONFLICT when the branch moved. */
FDL_EXTERN int fdl_commit(char out_id[FDL_ID_LEN + 1], const char *work, const fdl_commit_options *opts,
	       fdl_error *err);

/* fdl rebase: move the working catalog `work` onto a later version of its
 * branch, as Git's rebase does a branch: its base becomes `onto` (NULL:
 * the branch's tip), and every snapshot it made since its base is
 * replayed on top, keeping its commit_message and commit_extra_info. Data
 * files are never copied; a delete file whose rows carry snapshot ids is
 * written again beside the old one with those ids moved. DuckLake's
 * conflict rules apply, per table: appends on both sides, changes to
 * different tables and deletes in data files the other side did not touch
 * go through; two schema changes to one table, a delete in a data file the
 * other side also deleted from or rewrote, a write to a table the other
 * side dropped, and the description (dataset.yml) edited here and changed
 * there are conflicts: FDL_ECONFLICT, each named in the report's
 * `conflicts` (and the message), and `work` unchanged. The new catalog is
 * built beside `work` and swapped in at once: killed at any point, `work`
 * is as it was or fully rebased. A PostgreSQL working catalog is shared by
 * its writers and needs no rebase: FDL_EINVALID says why. *out is set when
 * the call returns 0 or FDL_ECONFLICT; free it with fdl_rebase_report_free. */
typedef struct fdl_rebase_options {
	unsigned int version; /* FDL_REBASE_OPTIONS_VERSION */
	const char *onto;     /* a ref or version id that descends from the base; NULL = the branch's tip */
} fdl_rebase_options;
#define FDL_REBASE_OPTIONS_VERSION 1
#define FDL_REBASE_OPTIONS_INIT {.version = FDL_REBASE_OPTIONS_VERSION}
typedef struct fdl_rebase_conflict {
	char *table;  /* "schema.table" (a view, a schema), or NULL (an option, the description) */
	char *kind;   /* dropped, schema, comment, columns, view, delete, name, schema_dropped,
		       * row_ids, option, description, changed */
	char *detail; /* what each side did, one line */
} fdl_rebase_conflict;
typedef struct fdl_rebase_report {
	char from[FDL_ID_LEN + 1]; /* the old base ("" for an empty branch) */
	char onto[FDL_ID_LEN + 1]; /* the new base */
	int64_t snapshots;         /* snapshots replayed (0: already based there) */
	int64_t delete_files;      /* delete files written again */
	fdl_rebase_conflict *conflicts;
	size_t conflict_count;
} fdl_rebase_report;
FDL_EXTERN int fdl_rebase(fdl_rebase_report **out, const char *work, const fdl_rebase_options *opts, fdl_error *err);
FDL_EXTERN void fdl_rebase_report_free(fdl_rebase_report *r);
/* {"from", "onto", "snapshots", "delete_files", "conflicts": [{"table", "kind", "detail"}]} */
FDL_EXTERN int fdl_rebase_report_json(char **out, const fdl_rebase_report *r, fdl_error *err);

/* fdl commit --rebase: fdl_commit, and when another commit moved the branch
 * first, fdl_rebase onto its new tip and commit again, at most `tries`
 * commits in all (a PostgreSQL working catalog is committed again, with no
 * rebase). *rebases (may be NULL) counts the rebases made. A rebase's
 * conflict ends it with FDL_ECONFLICT and `work` as the last rebase left
 * it. */
FDL_EXTERN int fdl_commit_rebase(char out_id[FDL_ID_LEN + 1], int *rebases, const char *work,
				 const fdl_commit_options *opts, int tries, fdl_error *err);

/* The dataset.json the next commit of `work` would write (its description
 * files merged with the catalog), failing with the errors commit would
 * give. Writes no version (only renews the repository's record of `work`).
 * Caller frees. */
FDL_EXTERN int fdl_describe(char **out, const char *work, fdl_error *err);

/* fdl add: Parquet files another engine wrote (Spark, Polars, pyarrow)
 * become new data of a table of the working catalog `work`, registered
 * where they lie, without copying them (DuckLake's ducklake_add_data_files).
 * An options struct (the rule at the top of this header): start from
 * FDL_ADD_OPTIONS_INIT. */
typedef struct fdl_add_options {
	unsigned int version; /* FDL_ADD_OPTIONS_VERSION */
	int create;           /* make the table from the first file's columns and its `col=value/` folders */
} fdl_add_options;
#define FDL_ADD_OPTIONS_VERSION 1
#define FDL_ADD_OPTIONS_INIT {.version = FDL_ADD_OPTIONS_VERSION}

typedef struct fdl_add_report {
	char *table;              /* "schema.table" */
	int created;              /* the table was made (create) */
	fdl_strarray partition;   /* the identity partition columns read from `col=value/` folders */
	fdl_strarray files;       /* the files added, relative to the table's folder */
	int64_t rows, bytes;      /* what they hold (--iceberg: the rows the table holds, the new files' bytes) */
	/* fdl_add_iceberg only (iceberg 0 otherwise): */
	int iceberg;
	int64_t iceberg_snapshot; /* the snapshot now the table's contents */
	int64_t deleted_rows;     /* rows of its data files its position deletes remove */
	fdl_strarray removed;     /* files no longer in the snapshot, whose rows left the table */
} fdl_add_report;

/* The folder (absolute) where table [SCHEMA.]TABLE of `work` takes files
 * for fdl_add: <root>/work/<id>/<schema folder>/<table folder>/ (a table
 * yet to be made: its folder as create will make it). Caller frees. */
FDL_EXTERN int fdl_add_folder(char **out, const char *work, const char *table, fdl_error *err);

/* Register `paths` (files, folders read recursively leaving out names that
 * start with '.' or '_', or glob patterns) as new data of `table`
 * ("[schema.]table", schema main by default) in one DuckLake transaction:
 * all or none. Every file must be Parquet, lie under fdl_add_folder's
 * folder (nothing outside the repository is ever referenced: FDL_EINVALID
 * naming the file and the folder), and have the table's columns and types
 * (FDL_EINVALID naming the file, the column and both types); folders named
 * `col=value` are identity partitions of the table. Each file's sha256 is
 * recorded in the working folder, and the commit that publishes it refuses
 * a file that changed since. A folder working catalog of a repository on
 * a folder (paths) or a bucket (s3:// URLs, a prefix read as a folder). */
FDL_EXTERN int fdl_add(fdl_add_report **out, const char *work, const char *table, const char *const *paths,
		       size_t npaths, const fdl_add_options *opts, fdl_error *err);
/* The current snapshot of the Iceberg v2 table whose metadata.json is
 * `metadata` (a path or file: URI; a folder: the table's, whose
 * metadata/version-hint.text names it) becomes the contents of `table`
 * (made from the Iceberg schema when it does not exist), in one DuckLake
 * transaction: its data files registered where they lie, under
 * fdl_add_folder's folder (as fdl_add's files), its position deletes
 * carried as DuckLake deletes. A table added from the same Iceberg table
 * before changes by what changed: files gone from the snapshot leave, new
 * ones are registered (report `files`), new deletes are carried. Refused
 * (FDL_EINVALID naming the file, nothing changed): a v1 or unreadable
 * metadata file, equality deletes, a data file elsewhere, another file
 * format, a column whose type differs. The snapshot is recorded in the
 * working folder (fdl-iceberg.json). */
FDL_EXTERN int fdl_add_iceberg(fdl_add_report **out, const char *work, const char *table, const char *metadata,
			       fdl_error *err);
FDL_EXTERN void fdl_add_report_free(fdl_add_report *r);
/* {"table", "created", "partition": [...], "files": [...], "rows", "bytes"}
 * (fdl_add_iceberg's also "iceberg_snapshot", "deleted_rows", "removed") */
FDL_EXTERN int fdl_add_report_json(char **out, const fdl_add_report *r, fdl_error *err);

/* ---- reading [stable] --------------------------------------------- */

typedef enum { FDL_FORMAT_TABLE, FDL_FORMAT_CSV, FDL_FORMAT_JSON } fdl_format;

/* An opened version, ready to read. */
typedef struct fdl_reader fdl_reader;

/* Open a version from "ROOT[@REF]": ROOT is a folder, file://, http(s)://
 * or s3:// URL; REF is a branch, tag, version id, HEAD (default), "<seq>" on HEAD's
 * branch or "<branch>:<seq>". version.json is checked as docs/format.md says, the
 * catalog is chosen (the newest catalogs/<format>.duckdb this DuckDB opens,
 * else ducklake.duckdb) and, unless it lives in a local folder, downloaded
 * once, checked against its bytes and sha256 and cached by sha256
 * ($FDL_CACHE_DIR, default ~/.cache/fdl/read). FDL_EEXPIRED for a version
 * that left retention or was withdrawn. */
FDL_EXTERN int fdl_reader_open(fdl_reader **out, const char *target, fdl_error *err);
/* The same with ROOT and REF apart (REF NULL = HEAD), for a ref with '/'
 * in it, which "ROOT@REF" takes only in full ("ROOT@refs/heads/a/b"). */
FDL_EXTERN int fdl_reader_open_ref(fdl_reader **out, const char *root, const char *ref, fdl_error *err);
/* The same for a private http(s):// host, with the token to send it
 * (fdl_repo_open_token); NULL = fdl_reader_open_ref. */
FDL_EXTERN int fdl_reader_open_token(fdl_reader **out, const char *root, const char *ref, const char *token,
				     fdl_error *err);
/* fdl_reader_open with flags: FDL_READER_WARM opens DuckDB on a second
 * thread while the version and its catalog are fetched, for the first
 * fdl_reader_query (over a network both waits overlap); without a query,
 * fdl_reader_free waits for that thread and closes it. */
#define FDL_READER_WARM 1u
FDL_EXTERN int fdl_reader_open_flags(fdl_reader **out, const char *target, unsigned flags, fdl_error *err);
FDL_EXTERN void fdl_reader_free(fdl_reader *r);
FDL_EXTERN const fdl_version *fdl_reader_version(const fdl_reader *r);
/* The local file of the chosen catalog (checked). */
FDL_EXTERN const char *fdl_reader_catalog(const fdl_reader *r);
/* Where the data files are: ROOT/<data_dir>/. */
FDL_EXTERN const char *fdl_reader_data_url(const fdl_reader *r);
/* Requests made to an HTTP or S3 repository so far (0 for folders). */
FDL_EXTERN long fdl_reader_requests(const fdl_reader *r);

/* Run SQL against the version (attached read-only as `lake`, the default
 * catalog, so `SELECT * FROM population` works) and stream the rows. */
FDL_EXTERN int fdl_reader_query(fdl_reader *r, const char *sql, fdl_format fmt, FILE *out, fdl_error *err);

/* The data files of `table` ("schema.table" or "table" in main) as JSON
 * text {"table", "source": "files.json"|"catalog", "files": [...]} where
 * each file is as in files.json. Uses files.json alone when the version has
 * one, else the catalog. Caller frees. */
FDL_EXTERN int fdl_reader_table_files(char **out, fdl_reader *r, const char *table, fdl_error *err);

/* Export a table as plain Parquet: into folder `to` (one file per data
 * file, copied as they are) or into one file `to` ending in ".parquet".
 * Refuses, with the reason, a table with delete files or renamed columns
 * (plain Parquet readers would see deleted rows or miss renamed columns)
 * unless `apply` is set, in which case DuckDB applies them through DuckLake
 * into one Parquet file. */
FDL_EXTERN int fdl_reader_export(fdl_reader *r, const char *table, const char *to, int apply, fdl_error *err);

/* The SQL a reader runs in stock DuckDB to open the version read-only, with
 * DATA_PATH overridden to where the data is (and the httpfs lines an HTTP
 * repository needs). `alias` NULL = "lake". Caller frees. */
FDL_EXTERN int fdl_reader_attach_sql(char **out, const fdl_reader *r, const char *alias, fdl_error *err);
/* The same; for a private host (one fdl has a token for) the SQL first
 * creates DuckDB's http secret, its BEARER_TOKEN getenv('FDL_TOKEN') (the
 * reader's own) unless show_token, which writes the token itself. */
FDL_EXTERN int fdl_reader_attach_sql_token(char **out, const fdl_reader *r, const char *alias, int show_token,
					   fdl_error *err);

/* ---- checking [stable] -------------------------------------------- */

/* What fdl verify found: every problem (and warning) with the file it is
 * in, as git fsck reports them. */
typedef struct fdl_finding {
	char *where; /* the file or key, e.g. "versions/<id>/version.json" */
	char *what;  /* what is wrong with it */
} fdl_finding;
typedef struct fdl_good_signature {
	char id[FDL_ID_LEN + 1];
	char *signer; /* the principal in allowed_signers */
} fdl_good_signature;
typedef struct fdl_verify_report {
	char *repository;
	size_t versions_checked;
	fdl_finding *problems;
	size_t problem_count; /* 0: the repository is clean */
	fdl_finding *warnings;
	size_t warning_count;
	int signatures_checked; /* allowed_signers was given */
	fdl_good_signature *signatures;
	size_t signature_count;
	/* versions with a version.json left unchecked: not reachable from a
	 * ref, with reachable_only (0 without it) */
	size_t versions_unchecked;
} fdl_verify_report;

/* How fdl_verify checks. Options structs (this one and every other
 * fdl_*_options) are libgit2's shape: the caller starts from
 * FDL_<NAME>_OPTIONS_INIT, which sets `version` to the layout the program
 * was built with and every other field to its default (zero, but gc's
 * grace: FDL_GC_GRACE_DEFAULT), then sets
 * the fields it wants. A later libfdl adds fields only at the end and
 * reads a struct by its `version`; an unknown version is refused
 * (FDL_EINVALID). */
typedef struct fdl_verify_options {
	unsigned int version;        /* FDL_VERIFY_OPTIONS_VERSION */
	int reachable_only;          /* only versions reachable from refs (versions_unchecked counts the others);
					0: every version directory, as fdl verify does */
	const char *allowed_signers; /* an OpenSSH allowed_signers file: every version.json.sig of a checked
					version must be valid by a listed key, and every version a branch or
					tag names must carry one (an older version without one is a warning);
					NULL: signatures not checked */
	/* version 2 */
	int deep;                    /* also open every live catalog and derive its files.json, last snapshot
					and statistics again (fdl verify --deep); 0: bytes and hashes only */
} fdl_verify_options;
#define FDL_VERIFY_OPTIONS_VERSION 2
#define FDL_VERIFY_OPTIONS_INIT {.version = FDL_VERIFY_OPTIONS_VERSION}

/* Check a repository the way git fsck does and report every problem, as
 * `opts` says (NULL: the defaults, FDL_VERIFY_OPTIONS_INIT). The rc is an
 * error only when the check itself could not run; problems go in the
 * report. */
FDL_EXTERN int fdl_verify(fdl_verify_report **out, fdl_repo *repo, const fdl_verify_options *opts, fdl_error *err);
FDL_EXTERN void fdl_verify_report_free(fdl_verify_report *r);
/* {"repository", "versions_checked", "versions_unchecked", "ok", "problems": [{"where",
 * "problem"}], "warnings": [{"where", "warning"}], "signatures"?: [{"id",
 * "signer"}]} */
FDL_EXTERN int fdl_verify_report_json(char **out, const fdl_verify_report *r, fdl_error *err);

/* Sign version `id`: versions/<id>/version.json.sig, an SSH signature
 * (SSHSIG, namespace "fdl") over the exact bytes of version.json with the
 * unencrypted OpenSSH Ed25519 private key at key_path. Never replaces a
 * signature (FDL_EEXISTS). */
FDL_EXTERN int fdl_version_sign(fdl_repo *repo, const char *id, const char *key_path, fdl_error *err);

/* ---- retention, withdrawal, gc [stable] --------------------------- */

/* A version expire or withdraw touched, and the files it lost (or, in a
 * dry run, would lose). */
typedef struct fdl_version_removal {
	char id[FDL_ID_LEN + 1];
	fdl_strarray removed; /* names inside versions/<id>/ */
} fdl_version_removal;

typedef struct fdl_expire_report {
	int dry_run;
	fdl_version_removal *expired;
	size_t expired_count;
} fdl_expire_report;

/* How fdl_expire runs (an options struct as fdl_verify_options says:
 * start from FDL_EXPIRE_OPTIONS_INIT). */
typedef struct fdl_expire_options {
	unsigned int version; /* FDL_EXPIRE_OPTIONS_VERSION */
	int dry_run;          /* only report what would expire */
} fdl_expire_options;
#define FDL_EXPIRE_OPTIONS_VERSION 1
#define FDL_EXPIRE_OPTIONS_INIT {.version = FDL_EXPIRE_OPTIONS_VERSION}

/* Expire every version past fdl.json's retention (never a branch or tag
 * tip, never one of a branch's newest `keep`): add expired.json, delete the
 * catalog, catalogs/ and files.json. `opts` may be NULL (the defaults). */
FDL_EXTERN int fdl_expire(fdl_expire_report **out, fdl_repo *repo, const fdl_expire_options *opts, fdl_error *err);
FDL_EXTERN void fdl_expire_report_free(fdl_expire_report *r);
/* {"dry_run", "expired": [{"id", "removed": [...]}]} */
FDL_EXTERN int fdl_expire_report_json(char **out, const fdl_expire_report *r, fdl_error *err);

/* A live version that would still return rows a withdrawal takes away
 * (a CHECKPOINT or ducklake_merge_adjacent_files copied them into another
 * data file). */
typedef struct fdl_withdraw_left {
	char id[FDL_ID_LEN + 1];   /* the live version */
	char from[FDL_ID_LEN + 1]; /* the withdrawn version that added the rows */
	char *table;               /* "schema.table", as `from` names it */
	int64_t rows;              /* how many of them it returns */
} fdl_withdraw_left;

/* Rows a withdrawn version added to one of its tables: those the
 * statements in `cleanup` (and fdl_withdraw_clean_rows) delete. */
typedef struct fdl_withdraw_rows {
	char from[FDL_ID_LEN + 1]; /* the withdrawn version that added them */
	char *table;               /* "schema.table", as `from` names it */
	int64_t rows;              /* how many */
} fdl_withdraw_rows;

typedef struct fdl_withdraw_report {
	int dry_run;
	char withdrawn[FDL_ID_LEN + 1]; /* the first version named */
	fdl_version_removal *versions;  /* the versions named and those withdrawn with them */
	size_t version_count;
	fdl_strarray data_files; /* the data files they added, relative to data_dir */
	fdl_strarray refs;       /* refs that name one of the versions: "refs/heads/main", "refs/tags/2025" */
	fdl_withdraw_left *left; /* live versions that would still return the withdrawn rows */
	size_t left_count;
	/* when the withdrawal is (or, in a dry run, would be) refused: why, in
	 * a sentence; NULL otherwise */
	char *refused;
	/* the DuckDB statements that, in a working catalog of the branch (its
	 * catalog attached as `lake`, the versions as `fdl_withdrawn` and
	 * `fdl_parent`), delete the rows the versions added: the first step of
	 * publishing a version without them; NULL when there are none */
	char *cleanup;
	/* the rows the named versions added, per table: from fdl_withdraw, as
	 * each version returns them; from fdl_withdraw_clean_rows, those the
	 * working catalog held and the clean-up deleted (would delete, in a
	 * dry run) */
	fdl_withdraw_rows *added;
	size_t added_count;
} fdl_withdraw_report;

typedef struct fdl_withdraw_options {
	unsigned int version;    /* FDL_WITHDRAW_OPTIONS_VERSION */
	const char *reason;      /* required: kept in expired.json */
	int remove_version_json; /* also delete the named versions' version.json (it carries the withdrawn data) */
	int dry_run;             /* only report */
	int force;               /* withdraw a branch tip or a tagged version too */
} fdl_withdraw_options;
#define FDL_WITHDRAW_OPTIONS_VERSION 1
#define FDL_WITHDRAW_OPTIONS_INIT {.version = FDL_WITHDRAW_OPTIONS_VERSION}

/* Withdraw the `n` versions `ids`: each gets expired.json with reason
 * "withdrawn" (recording the data files), catalogs deleted, the data files
 * they added deleted, and every other version whose catalog references one
 * of them withdrawn with them. Refused (FDL_EINVALID, nothing written) when
 * a live version outside the withdrawal still returns rows they added, or
 * when a branch tip or a tagged version would be withdrawn and `force` is
 * not set; then *out is set all the same, saying what would have been
 * withdrawn, why not (`refused`) and how to publish a version without the
 * rows first (`cleanup`). Idempotent; safe to rerun after a crash. */
FDL_EXTERN int fdl_withdraw(fdl_withdraw_report **out, fdl_repo *repo, const char *const *ids, size_t n,
			    const fdl_withdraw_options *o, fdl_error *err);
FDL_EXTERN void fdl_withdraw_report_free(fdl_withdraw_report *r);
/* {"dry_run", "withdrawn", "versions": [{"id", "removed"}], "data_files", "refs", "still_returned":
 * [{"id", "from", "table", "rows"}], "refused", "cleanup", "added": [{"from", "table", "rows"}]} */
FDL_EXTERN int fdl_withdraw_report_json(char **out, const fdl_withdraw_report *r, fdl_error *err);

/* In the working catalog `work`, delete the rows versions `ids` added (as
 * fdl_withdraw's `cleanup` says), rewrite the tables' data files without
 * them and expire the snapshots before, so the next commit publishes a
 * version that holds none of them; then a withdrawal of `ids` leaves the
 * branch readable. Writes nothing to the repository. */
FDL_EXTERN int fdl_withdraw_clean(fdl_repo *repo, const char *const *ids, size_t n, const char *work, fdl_error *err);
/* fdl_withdraw_clean, saying in *out (`added`, `cleanup`) how many rows of
 * each table it deleted and the statements it ran; with o->dry_run (the
 * only option it reads; o may be NULL) it counts them and changes nothing.
 * The rows are known by where they are (DuckLake's row ids), never by
 * value: a row equal to one of them that another version added stays. WORK
 * must descend from every version named (FDL_EINVALID otherwise). */
FDL_EXTERN int fdl_withdraw_clean_rows(fdl_withdraw_report **out, fdl_repo *repo, const char *const *ids, size_t n,
				       const char *work, const fdl_withdraw_options *o, fdl_error *err);

/* A working catalog the repository knows (its record work/<id>.json), or a
 * folder of one it no longer knows, as gc found it. */
typedef enum {
	FDL_GC_WORK_KEPT,      /* its lease runs: its uncommitted files are kept */
	FDL_GC_WORK_EXPIRING,  /* kept, but its lease ends within FDL_GC_WORK_WARN_DAYS */
	FDL_GC_WORK_ENDED,     /* its lease ended: record and files removed (or would be) */
	FDL_GC_WORK_ABANDONED, /* no record (abandoned, or a checkout that failed): files past the grace removed */
	FDL_GC_WORK_UNREADABLE /* a record fdl cannot read: kept, and said */
} fdl_gc_work_state;
#define FDL_GC_WORK_WARN_DAYS 14
typedef struct fdl_gc_work {
	char id[FDL_ID_LEN + 1];
	fdl_gc_work_state state;
	char *where;     /* where the working catalog is (host:folder, or postgres:...); NULL: unknown */
	char *branch;    /* NULL: unknown */
	char *lease_end; /* UTC ISO 8601; NULL: unknown */
	fdl_strarray files; /* its uncommitted data files (keys under work/<id>/) */
} fdl_gc_work;

typedef struct fdl_gc_report {
	int dry_run;
	int64_t grace_seconds;
	fdl_strarray deleted;             /* keys: data files ("data/main/t/x.parquet") and history packs no index names */
	fdl_strarray incomplete_versions; /* ids of version directories without version.json */
	fdl_gc_work *work;                /* every working catalog known, or left behind */
	size_t work_count;
	fdl_strarray left_alone; /* files under the data folder DuckLake did not name (a README): never deleted */
} fdl_gc_report;

/* Bring every branch's history index up to date (not with dry_run), then
 * delete data files no live version's catalog references (only those named
 * as DuckLake names its files), incomplete version directories and history
 * packs no index names, older than `grace_seconds`; and the records and
 * uncommitted files of working catalogs whose lease ended, and files of
 * working catalogs the repository no longer knows, past the grace. The
 * uncommitted files of every other working catalog are kept, whatever
 * their age. */
typedef struct fdl_gc_options {
	unsigned int version;  /* FDL_GC_OPTIONS_VERSION */
	int64_t grace_seconds; /* files younger than this stay (INIT: FDL_GC_GRACE_DEFAULT, 14 days) */
	int dry_run;           /* only report what would be deleted */
} fdl_gc_options;
#define FDL_GC_GRACE_DEFAULT (14 * 86400)
#define FDL_GC_OPTIONS_VERSION 1
#define FDL_GC_OPTIONS_INIT {.version = FDL_GC_OPTIONS_VERSION, .grace_seconds = FDL_GC_GRACE_DEFAULT}
/* `opts` may be NULL (the defaults). */
FDL_EXTERN int fdl_gc(fdl_gc_report **out, fdl_repo *repo, const fdl_gc_options *opts, fdl_error *err);
FDL_EXTERN void fdl_gc_report_free(fdl_gc_report *r);
/* {"dry_run", "grace_seconds", "deleted", "incomplete_versions", "working_catalogs": [{"id", "state":
 * "kept"|"expiring"|"ended"|"abandoned"|"unreadable", "where", "branch", "lease_end", "uncommitted_files"}],
 * "left_alone"} */
FDL_EXTERN int fdl_gc_report_json(char **out, const fdl_gc_report *r, fdl_error *err);

/* The dataset's pages (fdl site; docs/web.md "Without JavaScript", the
 * files: docs/format.md "Pages, Croissant and Data Package"): give the
 * repository pages from now on (site/site.json; every commit then writes
 * its version's) and write, for each version `refs` names (any spec
 * fdl_ref_resolve takes; n 0: every version folder), its static HTML with
 * schema.org JSON-LD, its croissant.json and datapackage.json, then the
 * repository's index.html. *written (may be NULL): how many versions. */
FDL_EXTERN int fdl_site_fill(fdl_repo *repo, const char *const *refs, size_t n, size_t *written, fdl_error *err);
/* The address the repository is published at (fdl.json's public_url, set
 * by fdl config): the pages' absolute addresses start with it. NULL: none.
 * _set checks it (http:// or https://) and sets it, NULL unsets it; the
 * pages already written keep their addresses until fdl site runs. */
FDL_EXTERN const char *fdl_repo_public_url(const fdl_repo *repo);
FDL_EXTERN int fdl_repo_public_url_set(fdl_repo *repo, const char *url, fdl_error *err);

/* Add versions/<id>/catalogs/<format>.duckdb (never replacing one). DuckDB
 * 1.5.5 writes DuckLake 1.0 only: another format is refused, saying so. */
FDL_EXTERN int fdl_catalogs_add(fdl_repo *repo, const char *id, const char *format, fdl_error *err);

/* Copy a repository (a folder, http(s) or s3 source; a folder or s3
 * destination), resumable: data files first, each version's version.json
 * after its other files, refs last, every byte checked against what the
 * versions record. A static HTTP source cannot be listed, so what HEAD's
 * branch reaches is copied. `opts` may be NULL (the defaults). */
typedef struct fdl_clone_options {
	unsigned int version; /* FDL_CLONE_OPTIONS_VERSION */
	/* told how the whole clone goes, after the plan: "clone files" (files
	 * done, of total), then "clone" (bytes done, of total), once for each
	 * file finished, from one thread at a time; may be NULL */
	fdl_progress_cb progress;
	void *progress_payload;
	int jobs; /* transfers at once; 0: 8 from a host or bucket or to a bucket, 1 between folders */
	/* NULL: every branch and tag (listed, or from a static host's ref
	 * list, history/refs.json; HEAD's branch when it has none); else that
	 * branch alone, which the copy's HEAD then names */
	const char *branch;
	/* a copy whose ref names a version the source does not have (another
	 * repository) is refused (FDL_ECONFLICT) unless this is set */
	int force;
} fdl_clone_options;
#define FDL_CLONE_OPTIONS_VERSION 1
#define FDL_CLONE_OPTIONS_INIT {.version = FDL_CLONE_OPTIONS_VERSION}
typedef struct fdl_clone_report {
	char *from, *to;
	int64_t versions;      /* versions copied or found complete */
	int64_t copied;        /* files copied */
	int64_t already_there; /* files the destination already had, checked */
	int64_t removed;       /* files deleted from the copy: their version expired or was withdrawn since */
	/* the copy's refs moved to a version that does not descend from where
	 * they were ("refs/heads/main moved from X to Y, ..."): the source moved
	 * them back */
	fdl_strarray moved;
} fdl_clone_report;
FDL_EXTERN int fdl_clone(fdl_clone_report **out, const char *src, const char *dst, const fdl_clone_options *opts,
	      fdl_error *err);
FDL_EXTERN void fdl_clone_report_free(fdl_clone_report *r);
/* {"from", "to", "versions", "copied", "already_there", "removed", "moved": [...]} */
FDL_EXTERN int fdl_clone_report_json(char **out, const fdl_clone_report *r, fdl_error *err);

/* ---- Iceberg views [experimental] -------------------------------- */

/* Every version as Apache Iceberg v2 tables over the repository's own data
 * files (docs/iceberg.md): fdl_iceberg_write makes sure the view of the
 * version `ref` names (NULL = HEAD) exists for `location` (an absolute
 * file://, s3:// or http(s):// URI where the repository is published; NULL
 * = the repository's own place), writing what is missing into the
 * repository's iceberg/ tree; from then on every commit writes its
 * version's view too. The report names each table's metadata.json and
 * every column a view leaves out or an engine cannot read. */
typedef struct fdl_iceberg_table {
	char *name;     /* "schema.table" */
	char *metadata; /* the URI of its metadata.json */
} fdl_iceberg_table;
typedef struct fdl_iceberg_notice {
	char *table, *column, *type; /* "schema.table", the column, DuckLake's type ("": the table) */
	char *reason;                /* why it is left out, or which engine cannot read it */
} fdl_iceberg_notice;
typedef struct fdl_iceberg_report {
	char *version;  /* the version's id */
	char *location; /* where the view is for */
	fdl_iceberg_table *tables;
	size_t table_count;
	fdl_iceberg_notice *notices;
	size_t notice_count;
	int64_t files_written; /* files this call wrote (0: the view was there) */
} fdl_iceberg_report;
FDL_EXTERN int fdl_iceberg_write(fdl_iceberg_report **out, fdl_repo *repo, const char *ref, const char *location,
				 fdl_error *err);
FDL_EXTERN void fdl_iceberg_report_free(fdl_iceberg_report *r);
/* Give the repository views for `location` (NULL: its own place) from now
 * on: recorded in iceberg/views.json, the views of its branch tips and tags
 * written (fdl init --iceberg). */
FDL_EXTERN int fdl_iceberg_enable(fdl_repo *repo, const char *location, fdl_error *err);
/* {"schema.table": "<metadata.json URI>", ...} */
FDL_EXTERN int fdl_iceberg_report_json(char **out, const fdl_iceberg_report *r, fdl_error *err);

/* The repository as a static Iceberg REST catalog (docs/iceberg.md "A
 * catalog with no server"): fdl_iceberg_catalog_write writes, or brings up
 * to date, the answers to the GETs of Iceberg's REST protocol as files
 * under iceberg/<lid>/catalog/ for `location` (NULL: the repository's own
 * place), which any static host or the bucket's own endpoint serves: one
 * namespace per live branch and tag holding its version's tables ([ref]
 * for DuckLake's schema main, [ref, schema] for another), each table's
 * Iceberg view embedded, the views of the refs' versions written where
 * missing. From then on every commit, branch, tag, expiry, withdrawal, gc
 * and clone keeps it current. */
typedef struct fdl_iceberg_namespace {
	char *name;     /* the first level: the branch's or tag's name */
	char *schema;   /* the second level, a DuckLake schema; NULL: main */
	char *ref;      /* "refs/heads/<name>" or "refs/tags/<name>" */
	char *version;  /* the version it shows */
	size_t tables;
} fdl_iceberg_namespace;
typedef struct fdl_iceberg_catalog_report {
	char *uri;      /* what a client attaches: the bucket's endpoint URL for an s3:// location, else
			   <location>/<path> (a file:// one: serve the folder, the catalog is at <host>/<path>) */
	char *location; /* where its tables' files are named */
	char *path;     /* its root in the repository: "iceberg/<lid>/catalog" */
	int index_files; /* 1: folders answer with index.html (any store but a bucket) */
	fdl_iceberg_namespace *namespaces;
	size_t namespace_count;
	fdl_iceberg_notice *notices; /* refs left out, names changed (table: the ref or "schema.table") */
	size_t notice_count;
	int64_t files_written;
} fdl_iceberg_catalog_report;
FDL_EXTERN int fdl_iceberg_catalog_write(fdl_iceberg_catalog_report **out, fdl_repo *repo, const char *location,
					 fdl_error *err);
FDL_EXTERN void fdl_iceberg_catalog_report_free(fdl_iceberg_catalog_report *r);
/* {"catalog": "<uri>", "location", "path", "namespaces": [["main"], ["main", "geo"], ...]} */
FDL_EXTERN int fdl_iceberg_catalog_report_json(char **out, const fdl_iceberg_catalog_report *r, fdl_error *err);

/* ---- previews (docs/format.md "Previews (fdl)") ------------------------ */

/* What a page shows of a version before any query: each table's first
 * rows and column statistics over every row, computed by DuckDB. A commit
 * writes its version's; fdl_preview_fill writes what older versions miss. */
typedef struct fdl_preview_options {
	unsigned int version; /* FDL_PREVIEW_OPTIONS_VERSION */
	/* a table whose live files hold more bytes gets its first rows and row
	 * count only; 0: a commit's bound (32 MiB), -1: no bound */
	int64_t stats_max_bytes;
	/* after each version: table files computed, found; `already`: it had a
	 * preview, nothing done */
	void (*done)(const char *id, size_t computed, size_t reused, int already, void *payload);
	void *payload;
} fdl_preview_options;
#define FDL_PREVIEW_OPTIONS_VERSION 1
#define FDL_PREVIEW_OPTIONS_INIT {.version = FDL_PREVIEW_OPTIONS_VERSION, .stats_max_bytes = -1}
/* The previews of `versions` (refs or ids; n 0: every live version) that
 * are missing (o NULL: FDL_PREVIEW_OPTIONS_INIT, no bound on statistics). FDL_ENOTFOUND or FDL_EEXPIRED for a version named that is
 * not there or not live. */
FDL_EXTERN int fdl_preview_fill(fdl_repo *repo, const char *const *versions, size_t n, const fdl_preview_options *o,
				fdl_error *err);

/* ---- hosting [experimental] --------------------------------------- */

typedef struct fdl_server fdl_server;

typedef struct fdl_serve_options {
	unsigned int version; /* FDL_SERVE_OPTIONS_VERSION */
	const char *bind; /* address, NULL = "127.0.0.1" */
	int port;         /* 0 = any free port */
	FILE *log;        /* one line per request; NULL = none */
	/* the repository page (the folder `make web` builds), served at / and
	 * /_fdl/; NULL = no page */
	const char *web_dir;
	/* a token file (`NAME TOKEN` a line, mode 600): every path but the
	 * page's static files then needs `Authorization: Bearer TOKEN` (or TOKEN
	 * as a Basic password), else 401; NULL = a public repository */
	const char *token_file;
	/* PEM files of the certificate (chain) and its key: HTTPS; NULL = HTTP */
	const char *tls_cert, *tls_key;
	/* allow tokens over plain HTTP on an address other than loopback */
	int insecure;
} fdl_serve_options;
#define FDL_SERVE_OPTIONS_VERSION 1
#define FDL_SERVE_OPTIONS_INIT {.version = FDL_SERVE_OPTIONS_VERSION}

/* Serve the folder repository `root` over HTTP in background threads: GET
 * and HEAD of the repository's own files only (fdl.json, HEAD, refs/,
 * versions/, the data folder), byte ranges, ETags (a version file's sha256)
 * and conditional GET, CORS, immutable caching for versions and data, short
 * caching for HEAD and refs. Never serves a path outside root (`..`,
 * symlinks, encoded traversal) and never lists folders. */
FDL_EXTERN int fdl_server_start(fdl_server **out, const char *root, const fdl_serve_options *opts, fdl_error *err);
FDL_EXTERN int fdl_server_port(const fdl_server *s);
/* Read the token file again (SIGHUP): the new tokens take effect at once,
 * requests being answered go on; on an error the old ones stay. */
FDL_EXTERN int fdl_server_reload_tokens(fdl_server *s, fdl_error *err);
FDL_EXTERN void fdl_server_stop(fdl_server *s);

#ifdef __cplusplus
}
#endif
#endif
