/* Everything fdl does with DuckDB, for the operations above: open a
 * session, attach lakes (working, frozen, remote, PostgreSQL), create, copy
 * (freeze and checkout), inspect (files, tables, snapshots), query and
 * export. This is the wall: only src/catalog/ includes duckdb.h or writes
 * SQL; an operation holds an opaque fdl_duck and calls these functions. */
#ifndef FDL_CATALOG_H
#define FDL_CATALOG_H

#include "../util/json.h"
#include "../util/strmap.h"

#include <stdio.h>

struct fdl_store;
struct fdl_s3_access;

/* ---- a DuckDB session ---------------------------------------------------------- */

/* One in-memory DuckDB with ducklake loaded from fdl's extension folder
 * (and sqlite_scanner when `sqlite`), never from the internet (duck.h says
 * how). Free with fdl_duck_free. */
typedef struct fdl_duck fdl_duck;
int fdl_duck_new(fdl_duck **out, bool sqlite, fdl_error *err);
/* One with only the extensions a step needs (NULL-terminated list, e.g.
 * {"sqlite_scanner", NULL}; NULL: none, enough to read catalogs raw): each
 * costs start-up time (ducklake alone some 6 ms and 30 MiB mapped). They
 * load before the first other statement; one loaded later is hashed by
 * DuckDB's signature check (~100 ms). */
int fdl_duck_new_loading(fdl_duck **out, const char *const *extensions, fdl_error *err);
/* The same for a session of metadata statements that scans no data (a
 * commit's freeze, a checkout, a rebase, gc's and clone's catalog reads):
 * DuckDB opened with one thread, so it starts no worker (a sanitizer
 * checkout 0.47 -> 0.29 s CPU), and memory it frees in bulk given back at
 * once rather than kept cached (at 10,000 snapshots, 20 MiB of a commit's
 * peak). */
int fdl_duck_new_lean(fdl_duck **out, const char *const *extensions, fdl_error *err);
/* the extensions fdl_duck_new(.., true, ..) loads, for the lists above */
#define FDL_DUCK_SQLITE_LAKE ((const char *const[]){"sqlite_scanner", "ducklake", NULL})
/* A second connection to `with`'s database (its extensions, settings and
 * attached catalogs), for another thread: statements on the two may run at
 * the same time. Freeing it leaves `with` open; `with` outlives it. */
int fdl_duck_new_sharing(fdl_duck **out, fdl_duck *with, fdl_error *err);
void fdl_duck_free(fdl_duck *d);
/* One line on stderr under FDL_TRACE ("fdl trace: <what>"), beside the
 * statements' times: which way a step went, and why. */
void fdl_duck_trace(fdl_duck *d, const char *fmt, ...) FDL_PRINTF(2, 3);
/* LOAD one more extension (e.g. "httpfs") from fdl's extension folder. */
int fdl_duck_load(fdl_duck *d, const char *name, fdl_error *err);
/* Give DuckDB access to a store's files where it needs more than a path:
 * httpfs and a secret for a bucket; nothing for folders and HTTP hosts. */
int fdl_duck_use_store(fdl_duck *d, struct fdl_store *store, fdl_error *err);
/* Give DuckDB what it needs to read a repository's data at data_url:
 * httpfs for a URL (and the store's secret for a bucket); nothing for a
 * folder. */
int fdl_duck_use_data(fdl_duck *d, const char *data_url, struct fdl_store *store, fdl_error *err);
/* The statements a stock DuckDB runs for the same (LOAD httpfs, from fdl's own
 * extensions as the attach script sets them up, and
 * CREATE SECRET), appended to b; nothing for folders and HTTP hosts. */
int fdl_duck_store_sql(fdl_buf *b, struct fdl_store *store, fdl_error *err);
/* DuckDB's `CREATE OR REPLACE SECRET <name> (TYPE s3, ...)` for a bucket,
 * scoped to it, followed by ";\n". */
int fdl_duck_secret_sql(fdl_buf *b, const struct fdl_s3_access *a, const char *name, fdl_error *err);
/* DuckDB's `CREATE OR REPLACE SECRET fdl_http (TYPE http, BEARER_TOKEN ...,
 * SCOPE 'scope/')` followed by ";\n": the token, or where NULL,
 * getenv('FDL_TOKEN') for a script that must not hold it. */
int fdl_duck_http_secret_sql(fdl_buf *b, const char *scope, const char *token, fdl_error *err);
/* The DuckDB library's version ("v1.5.5"); loads the library. */
const char *fdl_duck_version(void);
/* The folder fdl loads extensions from. Caller frees. */
char *fdl_duck_extension_dir(void);
/* Make `alias` the default database of later statements. */
int fdl_duck_use(fdl_duck *d, const char *alias, fdl_error *err);
/* Run one SQL statement of the user's and stream its rows to `out`
 * (fdl_format from fdl.h: table, CSV with a header, or one JSON object per
 * line). */
int fdl_duck_stream(fdl_duck *d, const char *sql, fdl_format fmt, FILE *out, fdl_error *err);
/* Write table "schema.table" of the lake attached as `alias`, as DuckLake
 * reads it, into one Parquet file: `to` itself, with no temporary file of
 * DuckDB's beside it (USE_TMP_FILE false; the caller makes `to` a
 * temporary file of its own and renames it). */
int fdl_catalog_export_table(fdl_duck *d, const char *alias, const char *table, const char *to, fdl_error *err);

typedef enum { FDL_CAT_SQLITE, FDL_CAT_DUCKDB, FDL_CAT_POSTGRES } fdl_cat_kind;

/* A raw PostgreSQL catalog's tables are in schema public: name them in SQL
 * as "<alias>.public" where a DuckDB or SQLite one is just "<alias>". */
#define FDL_PG_SCHEMA "public"

/* Create an empty SQLite or PostgreSQL DuckLake catalog through the
 * extension, so every metadata table of the current format exists, then
 * detach it (a DuckDB one: fdl_catalog_create_attached). */
int fdl_catalog_create(fdl_duck *d, const char *path, fdl_cat_kind kind, const char *data_path, fdl_error *err);

/* The name DuckLake gives the metadata database of a catalog attached as
 * `alias`: its ducklake_* tables, read and written as plain tables. */
#define FDL_DUCKLAKE_META_PREFIX "__ducklake_metadata_"

/* Create a DuckLake catalog in a new DuckDB file (16 KiB blocks) and keep it
 * attached through DuckLake as `alias`, its metadata tables writable as
 * FDL_DUCKLAKE_META_PREFIX<alias>. Writing the rows there before the first
 * checkpoint writes the file once: no blocks of the empty catalog's rows
 * left free in it (a third of a frozen catalog otherwise). The caller
 * detaches `alias`, which checkpoints the file. */
int fdl_catalog_create_attached(fdl_duck *d, const char *path, const char *alias, const char *data_path,
				fdl_error *err);

/* A new, empty DuckDB file attached raw as `alias`, for rows copied in
 * before its one write at the detach (the incremental freeze): the block
 * size and storage version of fdl_catalog_create_attached, no WAL. */
int fdl_catalog_create_plain(fdl_duck *d, const char *path, const char *alias, fdl_error *err);

/* fdl_catalog_create_plain, holding the tables and rows of `tmpl`: an empty
 * catalog DuckLake made in a DuckDB file (fdl_catalog_template_write), so a
 * full freeze gets every metadata table of the format without loading
 * DuckLake. Its ducklake_metadata 'version' must be `format` (else
 * FDL_ECONFLICT); on any failure nothing is left attached or made. */
int fdl_catalog_create_from(fdl_duck *d, const char *path, const char *alias, const char *tmpl, const char *format,
			    fdl_error *err);
/* Write that template at `path`: DuckLake's empty catalog (DuckLake loaded). */
int fdl_catalog_template_write(fdl_duck *d, const char *path, const char *data_path, fdl_error *err);

/* The DuckDB storage tag of a finished catalog file ("duckdb-v1.5.0"), as
 * DuckDB reads it: DuckLake raises the tag the empty file was created with,
 * so it is read once the file is written. */
int fdl_catalog_storage(fdl_duck *d, const char *path, char storage[64], fdl_error *err);

/* ATTACH a catalog raw (its ducklake_* tables as plain tables); for
 * PostgreSQL `path` is the libpq connection string. */
int fdl_catalog_attach_raw(fdl_duck *d, const char *alias, const char *path, fdl_cat_kind kind, bool read_only,
			   fdl_error *err);
/* ATTACH a frozen catalog through DuckLake, read only, its data read from
 * data_url (OVERRIDE_DATA_PATH): how every reader opens a version. */
int fdl_catalog_attach_lake(fdl_duck *d, const char *alias, const char *catalog, const char *data_url,
			    fdl_error *err);
int fdl_catalog_detach(fdl_duck *d, const char *alias, fdl_error *err);
/* ATTACH a working catalog (SQLite file, or PostgreSQL connection string)
 * through DuckLake, read-write, its new files written to data_path. */
int fdl_catalog_attach_work(fdl_duck *d, const char *alias, const char *catalog, fdl_cat_kind kind,
			    const char *data_path, fdl_error *err);
/* Whether a database attached raw as `alias` holds a DuckLake catalog (its
 * ducklake_metadata table; for PostgreSQL in schema public). */
int fdl_catalog_is_lake(fdl_duck *d, const char *alias, fdl_cat_kind kind, bool *out, fdl_error *err);
/* Add a global row to ducklake_metadata of a catalog attached raw, named
 * as its tables are (`alias`, or "<alias>.public" for PostgreSQL). */
int fdl_catalog_meta_add(fdl_duck *d, const char *tables, const char *key, const char *value, fdl_error *err);

/* Merge the small data files of a working catalog (SQLite file or
 * PostgreSQL connection string, its data at data_path) with DuckLake's
 * ducklake_merge_adjacent_files, as a new snapshot of it; *merged: how
 * many files were merged. `d` has DuckLake, the catalog's scanner and the
 * data's access loaded (compact.c). */
int fdl_catalog_compact(fdl_duck *d, fdl_cat_kind kind, const char *catalog, const char *data_path,
			int64_t *merged, fdl_error *err);

/* The statements a stock DuckDB runs to attach a lake as fdl would: what
 * `fdl attach` prints for a version and for a working catalog. */
typedef struct fdl_lake_script {
	const char *comment;      /* a first line, after "-- " (NULL: none) */
	fdl_cat_kind kind;        /* DUCKDB: a frozen version, read only and
				   * confined; SQLITE or POSTGRES: a working catalog */
	const char *catalog;      /* path or URL of the catalog (PostgreSQL: the connection string) */
	const char *data_path;    /* where the data is: a folder, an http(s) or s3 URL */
	const char *alias;        /* NULL: "lake" */
	struct fdl_store *store;  /* the repository's store, for a bucket's secret (may be NULL) */
	bool show_token;          /* a private host's token in the secret, not getenv('FDL_TOKEN') */
} fdl_lake_script;
int fdl_catalog_attach_script(char **out, const fdl_lake_script *s, fdl_error *err);

/* The record fdl keeps in a PostgreSQL working catalog (the JSON a folder
 * keeps in its record file), in table public.FDL_PG_RECORD_TABLE: read it
 * (FDL_ENOTFOUND, with no message, when there is none), create it (`old`
 * NULL) or replace it only if it still is `old` (FDL_ECONFLICT, with no
 * message, when it is not). */
#define FDL_PG_RECORD_TABLE "fdl_work"
int fdl_catalog_pg_record_read(fdl_buf *out, const char *conninfo, fdl_error *err);
int fdl_catalog_pg_record_write(const char *conninfo, const char *text, const char *old, fdl_error *err);
/* Remove the record: the database is no working catalog of fdl's any more. */
int fdl_catalog_pg_record_drop(const char *conninfo, fdl_error *err);

typedef struct fdl_copy_options {
	int64_t upto;          /* keep rows up to this snapshot; -1 keeps all */
	const char *data_path; /* new ducklake_metadata data_path */
	bool no_inlining;      /* store data_inlining_row_limit = 0 */
	bool src_sqlite;       /* `src` is a SQLite file attached raw: its
				* schema is read from SQLite itself, 5x faster */
	bool refuse_inlined;   /* FDL_EINVALID, before writing anything, when
				* `src` holds rows or deletes inline at `upto`:
				* a version keeps all its data in data files */
} fdl_copy_options;

/* Replace every metadata row of `dst` with those of `src` (both attached
 * raw, same DuckLake format): rows begun after `upto` are dropped and an
 * end_snapshot after it becomes NULL. Inlined data and the working
 * catalog's deletion queue are not copied. Runs in one transaction. */
int fdl_catalog_copy(fdl_duck *d, const char *src, const char *dst, const fdl_copy_options *o, fdl_error *err);

/* The incremental freeze (since.c), in two steps: the base (the base
 * version's frozen catalog, attached raw as `base`, cut at base_snapshot)
 * is read before the working catalog is attached (DuckDB then lists one
 * catalog, not two); then `dst`, an empty DuckDB file attached raw,
 * becomes the base plus the rows of `src` (the working catalog, attached
 * raw, SQLite or PostgreSQL) that its snapshots after base_snapshot up to
 * o->upto added or ended: the rows fdl_catalog_copy would give, statistics
 * recomputed the same way. A table whose rows up to base_snapshot no
 * longer sum up to the base's (files merged, snapshots expired) is copied
 * whole (fdl_since_whole). When the base cannot be used (another format,
 * other tables or columns, more than DuckLake's tables, a step that
 * failed) fdl_since_why says why, dst is left unfinished and 0 is
 * returned: the caller freezes in full instead. An error is returned only
 * for what the full copy refuses too (inlined rows) or memory. */
typedef struct fdl_since fdl_since;
int fdl_since_base(fdl_since **out, fdl_duck *d, const char *base, int64_t base_snapshot, fdl_error *err);
int fdl_since_copy(fdl_since *s, fdl_duck *d, const char *src, const char *dst, const fdl_copy_options *o,
		   fdl_error *err);
const char *fdl_since_why(const fdl_since *s);      /* "" once done */
const fdl_strlist *fdl_since_whole(const fdl_since *s);
/* No schema change in the working catalog since the base (its
 * schema_version is the same): the version's `changes` are empty. */
bool fdl_since_schema_same(const fdl_since *s);
/* The base's data and delete file rows are in dst as the base holds them
 * (neither table was copied whole): its paths are relative already. */
bool fdl_since_files_carried(const fdl_since *s);
/* The working catalog's snapshots since the base began rows of `table`
 * (in the new catalog: carried, those are its only rows begun after the
 * base's snapshot). */
bool fdl_since_grown(const fdl_since *s, const char *table);
void fdl_since_free(fdl_since *s);

typedef struct fdl_catalog_info {
	int64_t first_snapshot, last_snapshot;
	char format[32];  /* ducklake_metadata 'version' */
	char storage[64]; /* DuckDB storage of the file, e.g. "duckdb-v1.5.0" */
} fdl_catalog_info;

int fdl_catalog_info_read(fdl_duck *d, const char *alias, fdl_catalog_info *info, fdl_error *err);

/* The snapshots first..last of a catalog attached raw, with what DuckLake
 * recorded of each commit (fdl.h's fdl_snapshot_list; the caller frees it
 * with fdl_snapshot_list_free). */
int fdl_catalog_snapshots(fdl_snapshot_list **out, fdl_duck *d, const char *alias, int64_t first, int64_t last,
			  fdl_error *err);


/* One live data file of a catalog whose end_snapshot values are already
 * cut at the frozen snapshot. Paths are relative to the data path. */
typedef struct fdl_data_file {
	char *table_key; /* "schema.table" */
	int64_t table_id;
	char *path;
	int64_t rows, bytes, footer_bytes; /* footer_bytes -1 when not recorded */
	char *delete_path;                 /* NULL without deletes */
	int64_t delete_rows, delete_bytes;
	int64_t id, begin_snapshot; /* data_file_id */
	char *unreadable; /* the least reason the file keeps a reader without the catalog out; NULL: none */
} fdl_data_file;

typedef struct fdl_data_files {
	fdl_data_file *items;
	size_t len, cap;
} fdl_data_files;

/* Every live data file (catalog order), with each path resolved through
 * schema and table paths and checked to be relative and clean. */
int fdl_catalog_data_files(fdl_duck *d, const char *alias, fdl_data_files *out, fdl_error *err);
void fdl_data_files_free(fdl_data_files *f);

/* A catalog's schemas, tables, data and delete files, live or ended, read
 * by one statement (listing.c): its live data files (as
 * fdl_catalog_data_files) and every file any snapshot references (as
 * fdl_catalog_all_files_sized) come from the same rows. */
typedef struct fdl_listing fdl_listing;
/* reasons: each live file's reason for files.json's "unreadable", which
 * needs DuckLake 0.4's columns (fdl_data_file.unreadable; NULL without). */
int fdl_listing_read(fdl_listing **out, fdl_duck *d, const char *alias, bool reasons, fdl_error *err);
int fdl_listing_live(fdl_listing *l, fdl_data_files *out, fdl_error *err);
int fdl_listing_all(fdl_listing *l, fdl_strlist *all, fdl_strmap *sizes, fdl_strlist *added, int64_t added_from,
		    fdl_error *err);
/* Its live tables in catalog order (table_id), each of a live schema:
 * keys "schema.table", ids[i] keys[i]'s table_id (caller frees both). */
int fdl_listing_tables(fdl_listing *l, fdl_strlist *keys, int64_t **ids, fdl_error *err);
void fdl_listing_free(fdl_listing *l);

/* Every data and delete file any row of the catalog references (relative
 * to the data path), ended or not; with added_from >= 0 only those whose
 * begin_snapshot >= added_from. May hold duplicates. */
int fdl_catalog_all_files(fdl_strlist *out, fdl_duck *d, const char *alias, int64_t added_from, fdl_error *err);
/* All of them into `out`, with the size the catalog records for each (-1:
 * none) put in `sizes` by path, and from the same rows those whose
 * begin_snapshot >= added_from (-1: all) into `added` (NULL: none). */
int fdl_catalog_all_files_sized(fdl_strlist *out, fdl_strmap *sizes, fdl_strlist *added, fdl_duck *d,
				const char *alias, int64_t added_from, fdl_error *err);

/* The files of a working catalog (attached raw) that its own folder holds
 * (recorded relative to its data path), begun at or before `upto`, with
 * the sizes the catalog records: a commit's to publish. kinds (NULL: not
 * asked): [0] whether a data file row is among them, [1] a delete file's. */
int fdl_catalog_staged_files(fdl_strlist *out, fdl_strmap *sizes, bool *kinds, fdl_duck *d, const char *alias,
			     int64_t upto, fdl_error *err);

/* ---- published data files in a working catalog (stage.c) ---- */

/* Record every data (if `files`) and delete (if `deletes`) file of `tables`
 * (attached raw: "alias", or "alias.public" for PostgreSQL) that is
 * recorded relative to the data path, and begun at or before `upto` (-1:
 * all), by its place under `data` instead (the repository's data folder: a
 * path or an s3 URL). */
int fdl_catalog_paths_absolute(fdl_duck *d, const char *tables, const char *data, int64_t upto, bool files,
			       bool deletes, fdl_error *err);
/* Of the file tables which[0] (data) and which[1] (delete) names, those
 * holding a row begun after `after` recorded by an absolute path: one
 * count, where paths_relative's join of every table and schema row cost 4
 * of a one-row commit's ms to find none. */
int fdl_catalog_paths_absolute_after(fdl_duck *d, const char *tables, int64_t after, bool which[2], fdl_error *err);
/* The same in the SQLite file `path` itself, which no DuckDB of this
 * process has open (sqlite.c). */
int fdl_catalog_paths_absolute_sqlite(const char *path, const char *data, int64_t upto, bool files, bool deletes,
				      fdl_error *err);
/* In a frozen catalog: a file begun after `after` (-1: any) recorded under
 * `data` where its table resolves is recorded relative to the data path
 * again; in the data file rows if `files`, the delete file rows if
 * `deletes`. */
int fdl_catalog_paths_relative(fdl_duck *d, const char *tables, const char *data, int64_t after, bool files,
			       bool deletes, fdl_error *err);
/* The trigger that drops DuckLake's scheduled deletions of files recorded
 * by an absolute path: in a PostgreSQL working catalog attached raw as
 * `alias`; in a SQLite file no DuckDB of this process has open. */
int fdl_catalog_keep_published_pg(fdl_duck *d, const char *alias, fdl_error *err);
int fdl_catalog_keep_published_sqlite(const char *path, fdl_error *err);
/* libsqlite3 (sqlite.c): run `sql` on the SQLite file `path` unless
 * `probe` (may be NULL) returns a row. */
int fdl_catalog_sqlite_exec_once(const char *path, const char *probe, const char *sql, fdl_error *err);

/* ---- fdl add: Parquet files registered where they lie (add.c) ---- */

/* A table of a working catalog attached through DuckLake as `alias`: its
 * schema's folder and its own (relative to the data path, each ending in
 * '/'; NULL when there is no such schema or table) and its columns, names
 * and DuckDB types in order. */
typedef struct fdl_add_shape {
	bool schema_exists, table_exists;
	char *schema_folder, *folder;
	fdl_strlist names, types;
	/* the table's files the catalog records relative to the data path
	 * ("<schema folder><table folder><file>", sorted): DuckDB's own in
	 * the working catalog's folder, and those added before */
	fdl_strlist known;
} fdl_add_shape;
int fdl_catalog_add_shape(fdl_duck *d, const char *alias, const char *schema, const char *table, fdl_add_shape *s,
			  fdl_error *err);
void fdl_add_shape_free(fdl_add_shape *s);
/* A Parquet file's own top-level columns (hive partitioning off: no column
 * from its folders), names and DuckDB types, and its rows; FDL_EDUCKDB
 * naming the file when DuckDB does not read it as Parquet. */
int fdl_catalog_parquet_columns(fdl_duck *d, const char *file, fdl_strlist *names, fdl_strlist *types,
				int64_t *rows, fdl_error *err);
/* What one fdl add registers: `files` (absolute, under data_path) into
 * schema.table; with `create`, the schema (unless it exists) and the table
 * are made first with columns names/types, partitioned by identity on
 * `keys` (the `col=value/` folders, read as hive partitions). */
typedef struct fdl_add_batch {
	const char *schema, *table, *data_path;
	bool create, schema_exists;
	const fdl_strlist *names, *types, *keys, *files;
} fdl_add_batch;
/* One DuckLake transaction (all files or none), then the new files
 * recorded relative to the data path, as every file the working catalog
 * wrote itself is. */
int fdl_catalog_add_files(fdl_duck *d, const char *alias, const fdl_add_batch *b, fdl_error *err);

/* ---- fdl add --iceberg: an Iceberg snapshot as a table's contents (add_iceberg.c) ---- */

/* The live entries of an Iceberg table's current snapshot (its manifests
 * read by DuckDB's iceberg extension), paths as the manifests write them:
 * Parquet data files (and their record counts), position and equality
 * delete files, and anything else (another file format). */
typedef struct fdl_ice_entries {
	fdl_strlist data, pos_deletes, eq_deletes, other;
	int64_t *records; /* of each data file */
} fdl_ice_entries;
int fdl_catalog_ice_entries(fdl_duck *d, const char *metadata, fdl_ice_entries *e, fdl_error *err);
void fdl_ice_entries_free(fdl_ice_entries *e);
/* The live data files of schema.table in the catalog attached as `alias`,
 * as DuckLake resolves them (a relative path under data_path). */
int fdl_catalog_table_files(fdl_duck *d, const char *alias, const char *schema, const char *table,
			    const char *data_path, fdl_strlist *out, fdl_error *err);
/* A Parquet file's top-level columns and their field ids ("" for none). */
int fdl_catalog_parquet_field_ids(fdl_duck *d, const char *file, fdl_strlist *names, fdl_strlist *ids,
				  fdl_error *err);
/* Type names as DuckDB writes them (DESCRIBE), in order. */
int fdl_catalog_canonical_types(fdl_duck *d, const fdl_strlist *types, fdl_strlist *out, fdl_error *err);
/* What one fdl add --iceberg changes in schema.table: the files `added`
 * registered (absolute, under data_path), the rows of the files `gone`
 * (DuckLake's names of them) deleted, and every row the position delete
 * files name deleted, through `ice` -> `duck` (each data file of the
 * snapshot by the manifests' path and by DuckLake's); the table then
 * holds expect_rows rows, or nothing happened. With `create` the schema
 * (unless schema_exists) and the table are made first. */
typedef struct fdl_ice_batch {
	const char *schema, *table, *data_path;
	bool create, schema_exists;
	const fdl_strlist *names, *types;
	const fdl_strlist *added, *gone, *pos_deletes, *ice, *duck;
	int64_t expect_rows;
} fdl_ice_batch;
/* How many rows of the snapshot's data files its position deletes name
 * (each once). */
int fdl_catalog_ice_deleted(fdl_duck *d, const fdl_ice_batch *b, int64_t *out, fdl_error *err);
/* One DuckLake transaction, then the new files recorded relative to the
 * data path. */
int fdl_catalog_ice_apply(fdl_duck *d, const char *alias, const fdl_ice_batch *b, fdl_error *err);

/* ---- what a withdrawal takes away (withdrawn.c) ---- */

/* A withdrawn version v and its first parent p (NULL: none), attached
 * through DuckLake, and the snapshots v added (version.json's
 * ducklake.snapshots). The rows v added are known by where they are, never
 * by value (withdrawn.c): their DuckLake row ids, and the snapshot that
 * wrote them. Only a descendant of v (a version after it on its branch, a
 * working catalog checked out from one) may be asked about them: row ids
 * and snapshot ids mean the same rows along one history only. */
typedef struct fdl_wd_version {
	const char *v, *p;
	int64_t from, to;
} fdl_wd_version;
/* The tables ("schema.table", v's names) where v added rows, among those
 * with a live data file begun at or after w->from; `counts` (may be NULL)
 * gets how many rows v added to each. */
int fdl_catalog_new_row_tables(fdl_strlist *out, fdl_strmap *counts, fdl_duck *d, const fdl_wd_version *w,
			       fdl_error *err);
/* How many of the rows v added to table `key` version l (a descendant,
 * attached the same way) returns: the table found in l by v's table id. */
int fdl_catalog_rows_left(int64_t *n, fdl_duck *d, const fdl_wd_version *w, const char *l, const char *key,
			  fdl_error *err);
/* How many of them the working catalog attached through DuckLake as `work`
 * holds (its table of v's table id, whatever its name there). */
int fdl_catalog_clean_count(int64_t *n, fdl_duck *d, const fdl_wd_version *w, const char *work, const char *key,
			    fdl_error *err);
/* Append the statements that, in a working catalog attached through
 * DuckLake as `work` (with v and p attached beside it), delete the rows v
 * added to table `key` and rewrite the table's files without them. With
 * `attached`, `work` is attached to d: its table is found by v's table id
 * (none when it has none); else they name v's table as v does, behind a
 * statement that fails when that name holds another table in `work`. */
int fdl_catalog_clean_sql(fdl_buf *out, fdl_duck *d, const fdl_wd_version *w, const char *work, const char *key,
			  bool attached, fdl_error *err);
/* Run them. */
int fdl_catalog_clean(fdl_duck *d, const fdl_wd_version *w, const char *work, const char *key, fdl_error *err);
/* Expire every snapshot of the lake attached as `work` but its latest. */
int fdl_catalog_expire_before_latest(fdl_duck *d, const char *work, fdl_error *err);

/* A reader's guard against a hostile catalog: every schema and table path
 * (of any snapshot) and every data and delete file path must be relative
 * and clean, so nothing it resolves leaves data_dir; FDL_EINVALID naming
 * the row otherwise. `files` (may be NULL) gets every resolved file path. */
int fdl_catalog_check_confined(fdl_duck *d, const char *alias, fdl_strlist *files, fdl_error *err);

/* fdl_catalog_check_confined of the catalog file `catalog` attached raw
 * as `alias` in `d`; alias NULL: attached here (in d, or in a DuckDB of
 * its own when d is NULL too) and detached again. */
int fdl_catalog_confined(fdl_strlist *files, fdl_duck *d, const char *alias, const char *catalog, fdl_error *err);

/* The one check of what a version may name (issue 53), before DuckLake, a
 * reader, a view or a working catalog sees its catalog. Version `id`'s
 * catalog (`catalog`, its local path as fetched) names only what a version
 * may: every path it records, at any snapshot (each schema's, table's,
 * data and delete file's), relative and clean (no absolute path, no '..',
 * no URL: fdl_catalog_check_confined), and, on a store of local files,
 * every file it references reached inside the repository with no symlink
 * on the way (the store's own rule, fdl_store_files_confined: `store` is
 * the repository's, `data_dir` its data folder). Else FDL_EINVALID naming
 * the version and the file (and where a symlink leads). The catalog is attached
 * raw as `alias` in `d`; alias NULL: this attaches it itself, in d, or in a
 * DuckDB of its own when d is NULL too. `files` (may be NULL) gets every
 * data and delete file the catalog references, relative to the data
 * folder. Every command that reads a version's rows or hands them on calls
 * it: query, attach, export, diff, checkout (and rebase, which seeds a
 * working catalog the same way), withdraw, iceberg (a view, the catalog):
 * src/ops/ and the Iceberg wing both call this one. */
int fdl_catalog_version_confined(fdl_strlist *files, fdl_duck *d, const char *alias, const char *catalog,
				 struct fdl_store *store, const char *data_dir, const char *id, fdl_error *err);

/* Confine `d` to what it must read: these directories (prefixes, local or
 * URLs) and these exact paths, external access off and the configuration
 * locked, so SQL in a catalog (a view's read_csv) cannot reach anything
 * else. Run after every ATTACH and LOAD the work needs. */
int fdl_duck_confine(fdl_duck *d, const char *const *dirs, const char *const *paths, fdl_error *err);

/* The column statistics DuckLake answers min() and max() from without
 * reading a file (a table with no row deleted) that no live data file's
 * statistics hold, one message each appended to `problems` (table, column,
 * which bound, value, what it means): a catalog attached raw, cut at its
 * snapshot, whose live data files are `live` (fdl_catalog_data_files). */
int fdl_catalog_stats_check(fdl_strlist *problems, fdl_duck *d, const char *alias, const fdl_data_files *live,
			    fdl_error *err);

/* files.json's content (docs/format.md, "files.json"): its tables from
 * `l` (the catalog's listing, read with reasons), their live files
 * `files` (fdl_listing_live of it). */
int fdl_catalog_files_json(json_t **out, fdl_duck *d, const char *alias, fdl_listing *l,
			   const fdl_data_files *files, fdl_error *err);

/* One data file of a table, local paths: the file and its delete file
 * (NULL when none). */
typedef struct fdl_plain_file {
	const char *data, *deletes;
} fdl_plain_file;

/* Write the rows of a table as DuckLake returns them into the Parquet file
 * `to`, read from its data files alone through what files.json records of
 * it (`table`: "columns", "unreadable"; docs/format.md): columns by field
 * id, each file's missing columns as their initial default, deletes
 * applied, hive partitioning off; `to` itself, as fdl_catalog_export_table
 * writes it. FDL_EINVALID with files.json's reason for
 * a table a plain reader cannot read right. */
int fdl_catalog_read_plain(fdl_duck *d, const json_t *table, const fdl_plain_file *files, size_t n, const char *to,
			   fdl_error *err);
/* The same reading as a SELECT of the table's columns, appended to sql
 * (FDL_EINVALID as above; also for a table without data files). ordered:
 * in DuckLake's order (files in order, rows in file order) even where
 * deletes are applied (a join, which need not keep it). */
int fdl_reading_plain_sql(fdl_buf *sql, const json_t *table, const fdl_plain_file *files, size_t n, bool ordered,
			  fdl_error *err);

/* dataset.json's "tables": every live table (rows, fields with type and
 * nullable, COMMENT ON text as description), then views (kind, sql). */
int fdl_catalog_tables_json(json_t **out, fdl_duck *d, const char *alias, const fdl_data_files *files,
			    fdl_error *err);

/* Schema changes from catalog `old_alias` to `new_alias` (both attached
 * raw, live rows = end_snapshot IS NULL), as version.json's `changes`:
 * objects {table, kind, column?, from?, type?, from_type?, breaking}. Kinds:
 * add_table, drop_table, rename_table, add_column, drop_column,
 * rename_column, recreate_column, type_change. */
int fdl_catalog_changes(json_t **out, fdl_duck *d, const char *old_alias, const char *new_alias, fdl_error *err);

/* ---- rebase (rebase.c, replay.c) ------------------------------------------------ */

/* Replaying what a working catalog changed since its base version on a
 * copy of a later version's catalog (fdl rebase), with DuckLake's conflict
 * rules. The caller fills the first fields; `work` is the working catalog
 * and `onto` the copy of the later version (both SQLite, attached raw;
 * onto writable). Every id the working catalog handed out after `base`
 * moves past the later version's (snapshots, catalog and file ids, schema
 * versions, row ids); data files stay as they are. */
typedef struct fdl_rebase_plan {
	const char *work, *onto;
	const char *data_path; /* the working catalog's DATA_PATH (a folder with '/', or a URL) */
	int64_t base;          /* the base version's last snapshot (0 for an empty branch) */
	/* called before each file written into the data path (a delete file
	 * written again): test builds' crash points; may be NULL */
	void (*before_write)(void *payload);
	void *payload;
	/* filled by fdl_catalog_rebase_plan */
	int64_t tip, last;                /* the last snapshot of onto, of work */
	int64_t catalog_from, file_from;  /* next_catalog_id and next_file_id at base */
	int64_t d_snapshot, d_catalog, d_file, d_version; /* how far work's later ids move */
	json_t *conflicts;                /* [{table, kind, detail}] */
	/* filled by fdl_catalog_rebase_apply */
	int64_t delete_files; /* delete files written again, their snapshot ids moved */
	fdl_strlist replaced; /* the files they replace (relative to data_path): the new catalog references none */
} fdl_rebase_plan;

/* Read the ids, refuse what cannot be replayed (inlined rows, files that
 * carry snapshot ids of a compaction: FDL_EINVALID) and find the conflicts
 * between work's changes and onto's since base (added to p->conflicts;
 * 0 either way). `base_alias` is the base version's catalog attached raw,
 * NULL for a working catalog checked out from an empty branch. */
int fdl_catalog_rebase_plan(fdl_rebase_plan *p, fdl_duck *d, const char *base_alias, fdl_error *err);
/* Replay work's snapshots after base into onto, in one transaction:
 * FDL_ECONFLICT, with onto unchanged and the conflicts added to
 * p->conflicts, when the result would break DuckLake's rules (a name
 * taken twice, a row both changed). A delete file whose rows carry
 * snapshot ids is written again beside the old one, ids moved. */
int fdl_catalog_rebase_apply(fdl_rebase_plan *p, fdl_duck *d, fdl_error *err);
void fdl_rebase_plan_free(fdl_rebase_plan *p);

/* Rows added and removed per table between two versions attached through
 * DuckLake as `a` and `b`, over the columns both versions have, streamed to
 * o's callbacks as fdl_diff_rows documents (fdl.h). */
int fdl_catalog_row_diff(fdl_duck *d, const char *a, const char *b, const fdl_diff_rows_options *o, fdl_error *err);
/* The same, with the two catalogs also attached raw as `ra` and `rb`: a
 * table whose files and columns are the same in both is not compared. */
int fdl_catalog_row_diff_raw(fdl_duck *d, const char *a, const char *b, const char *ra, const char *rb,
			     const fdl_diff_rows_options *o, fdl_error *err);

/* A version's preview (preview.c, docs/format.md "Previews (fdl)"), over
 * a catalog attached as `alias`, raw or through DuckLake. Each live table:
 * [{"schema", "name", "table_id", "state", "bytes"}] sorted by schema and
 * name, "state" a text that changes whenever what a reader gets from the
 * table may change, "bytes" its live data files' size. */
int fdl_catalog_preview_states(json_t **out, fdl_duck *d, const char *alias, bool raw, fdl_error *err);
/* One table's preview: {"columns", "row_count", "rows" (its first `first`
 * rows), "rows_from" (plain only: the sha256 of the reading of its leading
 * files the rows came from), "stats" (over every row; left out unless
 * with_stats)}, every
 * value as DuckDB prints it. `plain` NULL: through DuckLake, the catalog
 * attached as `alias`; else from the table's data files alone, as
 * fdl_catalog_read_plain reads them (`table`: its entry of files.json,
 * `files`: each of its files, local or remote paths, none for a table
 * without rows): DuckLake's catalog is never loaded, whose first bind
 * costs more than the rest of a small table's preview. Where that fails
 * (a type read_parquet does not take), the caller reads it through
 * DuckLake. */
typedef struct fdl_preview_plain {
	const json_t *table;
	const fdl_plain_file *files;
	size_t n;
	/* the same table's file in another version's preview (NULL: none):
	 * its first rows are taken when its "rows_from" is this reading's */
	const json_t *prior;
	/* `files` as the version names them, where `files` are read from
	 * elsewhere (a commit's new files before they are published): the
	 * reading rows_from is of (NULL: `files`) */
	const fdl_plain_file *named;
} fdl_preview_plain;
int fdl_catalog_preview_table(json_t **out, fdl_duck *d, const char *alias, const char *schema, const char *name,
			      const fdl_preview_plain *plain, size_t first, bool with_stats, fdl_error *err);

#endif
