/* The one wrapper around DuckDB's C API: open an in-memory database with
 * fdl's own extensions loaded (never from the internet), run statements,
 * read result cells. No handle leaks on error paths. */
#ifndef FDL_DUCK_H
#define FDL_DUCK_H

#include "catalog.h"
#include "lazy_duckdb.h"

struct fdl_duck {
	duckdb_database db;
	duckdb_connection con;
	bool trace;    /* FDL_TRACE set: each statement and its time on stderr */
	bool unsigned_ok; /* fdl's own extensions load without DuckDB's signature check */
	bool borrowed;    /* a second connection to another fdl_duck's database: closing leaves it open */
};

typedef struct fdl_rows {
	duckdb_result res;
	bool live;
} fdl_rows;

/* Open DuckDB in memory and LOAD ducklake and sqlite_scanner from the
 * extension folder (FDL_EXTENSION_DIR, else the one `make setup` filled),
 * laid out as <dir>/<duckdb version>/<platform>/<name>.duckdb_extension.
 *
 * DuckDB checks an extension's signature by hashing the whole file, ~100 ms
 * for each of ours, on every command. fdl loads only files of its own folder,
 * installed with pinned checksums, so it skips that check for a file owned by
 * root or by us and writable by no one else, and turns
 * allow_unsigned_extensions off again before the first statement that is not
 * one of its own LOADs: SQL a user runs through fdl can load nothing
 * unsigned. FDL_VERIFY_EXTENSIONS=1 keeps DuckDB's check
 * (docs/decisions.md). */
int fdl_duck_open(fdl_duck *d, fdl_error *err);
/* The same, without sqlite_scanner unless `sqlite`: a command that reads
 * only frozen catalogs (a reader, verify, diff) does not map it. */
int fdl_duck_open_with(fdl_duck *d, bool sqlite, fdl_error *err);
/* The same with exactly these extensions (NULL-terminated; NULL or empty:
 * none), loaded in order before any other statement (they load without
 * the signature hash only then). */
int fdl_duck_open_loading(fdl_duck *d, const char *const *extensions, fdl_error *err);
/* Load libduckdb (duckapi.c) if it is not yet: fdl_duck_open does; FDL_EDUCKDB
 * when it cannot be found. */
int fdl_duck_load_library(fdl_error *err);
/* Whether libduckdb is (or will be) loaded with RTLD_DEEPBIND: not when
 * the process's malloc is not libc's (duckapi.c says why). */
bool fdl_duck_deep_bound(void);
void fdl_duck_close(fdl_duck *d);
/* Turn allow_unsigned_extensions off (see fdl_duck_open); every way of
 * running SQL here does it first, so a caller preparing statements on
 * d->con itself must call it before. */
int fdl_duck_lock_extensions(fdl_duck *d, fdl_error *err);

/* The path of an extension file; FDL_ENOTFOUND (naming the file expected)
 * when it is missing. Caller frees. */
int fdl_duck_extension_path(char **out, const char *name, fdl_error *err);
const char *fdl_duck_platform(void);

int fdl_duck_exec(fdl_duck *d, const char *sql, fdl_error *err);
int fdl_duck_query(fdl_duck *d, fdl_rows *rows, const char *sql, fdl_error *err);
/* Run the query built in `sql`, unless `rc` (the result of building it) is
 * an error, and free the buffer either way. */
int fdl_duck_query_built(fdl_duck *d, fdl_rows *rows, fdl_buf *sql, int rc, fdl_error *err);
void fdl_rows_free(fdl_rows *rows);
size_t fdl_rows_count(fdl_rows *rows);
size_t fdl_rows_columns(fdl_rows *rows);
bool fdl_rows_null(fdl_rows *rows, size_t col, size_t row);
int64_t fdl_rows_int(fdl_rows *rows, size_t col, size_t row);
/* Cell as text; NULL for SQL NULL. Caller frees with duckdb_free. */
char *fdl_rows_str(fdl_rows *rows, size_t col, size_t row);

/* One statement run beside the caller's (beside.c; fdl_duck_new_sharing): on a connection of
 * its own to d's database, on a thread of its own, seeing what d attached
 * before the start. The caller goes on with d and joins it where it needs
 * the answer: its rows into *rows (NULL: dropped; the caller frees them),
 * its error into err. Join before d is freed, and before d touches a
 * catalog the statement writes. Joining NULL returns 0. */
typedef struct fdl_duck_beside fdl_duck_beside;
int fdl_duck_beside_start(fdl_duck_beside **out, fdl_duck *d, const char *sql, fdl_error *err);
int fdl_duck_beside_join(fdl_duck_beside *b, fdl_rows *rows, fdl_error *err);

/* The one ATTACH statement builder (attach.c): appends
 * `ATTACH '<prefix><target>' AS <alias> (<before>DATA_PATH '<data_path>'<after>)`,
 * without the DATA_PATH part when data_path is NULL: `(<before><after>)`. */
int fdl_attach_stmt(fdl_buf *b, const char *prefix, const char *target, const char *alias, const char *before,
		    const char *data_path, const char *after, fdl_error *err);
/* Run it (fdl_attach_stmt's arguments) in d. */
int fdl_attach_run(fdl_duck *d, const char *prefix, const char *target, const char *alias, const char *before,
		   const char *data_path, const char *after, fdl_error *err);

/* How each table of a catalog attached raw reads without DuckLake
 * (reading.c): loaded once, then files.json's "columns", "schema_changed"
 * and "unreadable" added to a table's object. */
typedef struct fdl_reading fdl_reading;
/* How the tables of the catalog attached as `alias` read without DuckLake,
 * from its column rows and its live data files (fdl_catalog_data_files,
 * kept by the caller while the reading lives). */
int fdl_reading_load(fdl_reading **out, fdl_duck *d, const char *alias, const fdl_data_files *files,
		     fdl_error *err);
/* Whether a column of the table had two names over the history. */
bool fdl_reading_renamed(const fdl_reading *rd, int64_t table_id);
/* {name: column_id} of the table's live top-level columns, in order. */
int fdl_reading_field_ids(json_t **out, fdl_reading *rd, int64_t table_id, fdl_error *err);
int fdl_reading_describe(fdl_reading *rd, json_t *table, int64_t table_id, fdl_error *err);
void fdl_reading_free(fdl_reading *rd);

/* Run a query and append its first column (as text) to out. */
int fdl_duck_strings(fdl_duck *d, fdl_strlist *out, const char *sql, fdl_error *err);

/* Run a prepared statement through DuckDB's streaming result: on_chunk is
 * called once with chunk NULL (the columns are known), then once per chunk;
 * a non-zero return stops and is returned. Only one chunk is held. */
typedef int (*fdl_duck_chunk_cb)(duckdb_data_chunk chunk, duckdb_result *res, void *payload);
int fdl_duck_stream_chunks(duckdb_prepared_statement st, fdl_duck_chunk_cb on_chunk, void *payload, fdl_error *err);
/* Stream a query whose first column is VARCHAR, one value at a time (NULL
 * for SQL NULL), through DuckDB's streaming result: only one chunk is held.
 * A non-zero return of cb stops the query and is returned. */
int fdl_duck_each_string(fdl_duck *d, const char *sql, int (*cb)(const char *value, void *payload), void *payload,
			 fdl_error *err);
/* One VARCHAR cell of a result vector (NULL for SQL NULL). Caller frees. */
char *fdl_duck_vector_string(duckdb_vector vec, idx_t row);

/* Expand a query template: every {db} becomes `alias` (inspect.c). */
int fdl_sql_with_db(fdl_buf *sql, const char *tmpl, const char *alias, fdl_error *err);
/* Appends `<fn>('<db>', '<native>')`: a statement run in the attached
 * database's own engine (fn: sqlite_query or postgres_query), quoted. */
int fdl_sql_native(fdl_buf *sql, const char *fn, const char *db, const char *native, fdl_error *err);
/* Appends vals[0], glue[0], vals[1], glue[1], ... for i < n: each value
 * as a quoted SQL string, each glue as it is (the text between them). */
int fdl_sql_glued(fdl_buf *sql, size_t n, const char *const vals[], const char *const glue[], fdl_error *err);
/* Appends `alias`.schema.table, schema and table quoted as identifiers. */
int fdl_sql_table_ref(fdl_buf *sql, const char *alias, const char *schema, const char *table, fdl_error *err);
/* Appends `CREATE SCHEMA ...; ` (unless schema_exists) and `CREATE TABLE
 * alias.schema.table (name type, ...)` with no statement end. */
int fdl_sql_create_table(fdl_buf *sql, const char *alias, const char *schema, const char *table, bool schema_exists,
			 const fdl_strlist *names, const fdl_strlist *types, fdl_error *err);
/* Join the schema path, table path and file path of row `row` (columns
 * col0.. : each path and its path_is_relative) the way DuckLake resolves
 * them; refuses an absolute or unclean result, naming `what`. */
int fdl_catalog_resolve_path(char **out, fdl_rows *r, size_t row, size_t col0, const char *what, fdl_error *err);
int fdl_catalog_join_path(char **out, const char *const parts[3], const bool rel[3], const char *what,
			  fdl_error *err);

/* ducklake_table_stats and ducklake_table_column_stats of the catalog
 * attached raw as `dst` (cut at its snapshot), recomputed from its live
 * data files (stats.c). */
int fdl_catalog_stats_recompute(fdl_duck *d, const char *dst, fdl_error *err);
/* The DuckDB type ordering the statistics text of DuckLake type `t`, NULL
 * for a type without order (nested, geometry, variant, interval) (stats.c). */
const char *fdl__catalog_stats_cast(const char *t);
/* The files fdl add just registered (the catalog's latest snapshot) in
 * b's table of the catalog attached as `alias`: for each top-level column they have
 * no min/max for, the bounds read from the file, written into the file's
 * and the table's statistics (add_bounds.c). */
int fdl__catalog_add_bounds(fdl_duck *d, const char *alias, const fdl_add_batch *b, fdl_error *err);

/* Run a query returning one BIGINT (NULL reads as `if_null`). */
int fdl_duck_int(fdl_duck *d, int64_t *out, int64_t if_null, const char *sql, fdl_error *err);

#endif
