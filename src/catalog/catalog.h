/* Everything fdl does to DuckLake catalogs: create, copy (freeze and
 * checkout), and inspect (files, tables) through DuckDB. */
#ifndef FDL_CATALOG_H
#define FDL_CATALOG_H

#include "../util/json.h"
#include "../util/strmap.h"
#include "duck.h"

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

typedef struct fdl_catalog_info {
	int64_t first_snapshot, last_snapshot;
	char format[32];  /* ducklake_metadata 'version' */
	char storage[64]; /* DuckDB storage of the file, e.g. "duckdb-v1.5.0" */
} fdl_catalog_info;

int fdl_catalog_info_read(fdl_duck *d, const char *alias, fdl_catalog_info *info, fdl_error *err);


/* One live data file of a catalog whose end_snapshot values are already
 * cut at the frozen snapshot. Paths are relative to the data path. */
typedef struct fdl_data_file {
	char *table_key; /* "schema.table" */
	int64_t table_id;
	char *path;
	int64_t rows, bytes, footer_bytes; /* footer_bytes -1 when not recorded */
	char *delete_path;                 /* NULL without deletes */
	int64_t delete_rows, delete_bytes;
} fdl_data_file;

typedef struct fdl_data_files {
	fdl_data_file *items;
	size_t len, cap;
} fdl_data_files;

/* Every live data file (catalog order), with each path resolved through
 * schema and table paths and checked to be relative and clean. */
int fdl_catalog_data_files(fdl_duck *d, const char *alias, fdl_data_files *out, fdl_error *err);
void fdl_data_files_free(fdl_data_files *f);

/* Every data and delete file any row of the catalog references (relative
 * to the data path), ended or not; with added_from >= 0 only those whose
 * begin_snapshot >= added_from. May hold duplicates. */
int fdl_catalog_all_files(fdl_strlist *out, fdl_duck *d, const char *alias, int64_t added_from, fdl_error *err);
/* The same, with the size the catalog records for each (-1: none) put in
 * `sizes` by path. */
int fdl_catalog_all_files_sized(fdl_strlist *out, fdl_strmap *sizes, fdl_duck *d, const char *alias,
				int64_t added_from, fdl_error *err);

/* A reader's guard against a hostile catalog: every schema and table path
 * (of any snapshot) and every data and delete file path must be relative
 * and clean, so nothing it resolves leaves data_dir; FDL_EINVALID naming
 * the row otherwise. `files` (may be NULL) gets every resolved file path. */
int fdl_catalog_check_confined(fdl_duck *d, const char *alias, fdl_strlist *files, fdl_error *err);

/* Confine `d` to what it must read: these directories (prefixes, local or
 * URLs) and these exact paths, external access off and the configuration
 * locked, so SQL in a catalog (a view's read_csv) cannot reach anything
 * else. Run after every ATTACH and LOAD the work needs. */
int fdl_duck_confine(fdl_duck *d, const char *const *dirs, const char *const *paths, fdl_error *err);

/* files.json's content (docs/format.md, "files.json"). */
int fdl_catalog_files_json(json_t **out, fdl_duck *d, const char *alias, const fdl_data_files *files,
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

/* Rows added and removed per table between two versions attached through
 * DuckLake as `a` and `b`, over the columns both versions have, streamed to
 * o's callbacks as fdl_diff_rows documents (fdl.h). */
int fdl_catalog_row_diff(fdl_duck *d, const char *a, const char *b, const fdl_diff_rows_options *o, fdl_error *err);
/* The same, with the two catalogs also attached raw as `ra` and `rb`: a
 * table whose files and columns are the same in both is not compared. */
int fdl_catalog_row_diff_raw(fdl_duck *d, const char *a, const char *b, const char *ra, const char *rb,
			     const fdl_diff_rows_options *o, fdl_error *err);

#endif
