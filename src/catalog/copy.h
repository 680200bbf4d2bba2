/* The parts of the metadata copy shared by the full copy (copy.c) and the
 * incremental one (since.c): a catalog's tables and columns, which tables
 * a version never holds, the cut at a snapshot, copying a table's rows.
 * Included by src/catalog/ only. */
#ifndef FDL_CATALOG_COPY_H
#define FDL_CATALOG_COPY_H

#include "duck.h"

/* The DuckLake tables of an attached database and their columns, in order,
 * read with one query: a statement costs DuckDB a few milliseconds whatever
 * it reads, and a catalog has some thirty tables. */
typedef struct meta_schema {
	fdl_strlist tables; /* sorted by name */
	fdl_strlist *cols;  /* cols[i]: the columns of tables.items[i] */
	fdl_strlist *types; /* types[i]: their declared types (DuckDB's names for a DuckDB file) */
} meta_schema;

/* The schema of `db`. DuckDB lists no table of a DuckLake catalog's own
 * metadata database (FDL_DUCKLAKE_META_PREFIX) in duckdb_columns(); for
 * one, `probe` names the tables to look up (those of the catalog copied
 * from), each through pragma_table_info, still in one statement. A SQLite
 * file (`sqlite`) answers from its own sqlite_master in 3 ms where
 * duckdb_columns() takes 15. */
int fdl__meta_schema_read(fdl_duck *d, const char *db, const fdl_strlist *probe, bool sqlite, meta_schema *m,
		     fdl_error *err);
void fdl__meta_schema_free(meta_schema *m);
/* The columns of table t, or an empty list when the database has no such table. */
const fdl_strlist *fdl__meta_cols(const meta_schema *m, const char *t);
bool fdl__meta_has(const fdl_strlist *l, const char *s);

/* A table only a working catalog has, never copied: inlined rows and
 * deletes (named per table), the queue of files to delete. */
bool fdl__meta_working_only(const char *t);
/* A table named per table of the lake, in a working catalog only. */
bool fdl__meta_per_table(const char *t);

/* The WHERE clause that keeps a table's rows up to snapshot N (appended;
 * nothing for a table kept whole). */
int fdl__meta_where_upto(fdl_buf *sql, const char *src, const char *t, const fdl_strlist *cols, int64_t n,
		    fdl_error *err);
/* "INSERT INTO dst.t (<dst columns>) SELECT <each from the source row, an
 * end_snapshot past o->upto as NULL, the data path rewritten>", appended;
 * the caller adds the FROM. With dtypes (the columns' DuckDB types), each
 * value is cast to its column's type: sqlite_query() types a column by
 * its values, not by its declaration. */
int fdl__meta_insert_head(fdl_buf *sql, const char *dst, const char *t, const fdl_strlist *dcols,
		     const fdl_strlist *dtypes, const fdl_strlist *scols, const fdl_copy_options *o, fdl_error *err);
/* Replace dst.t's rows with src.t's up to o->upto. */
int fdl__meta_copy_table(fdl_duck *d, const char *src, const char *dst, const char *t, const fdl_strlist *dcols,
		    const fdl_strlist *scols, const fdl_copy_options *o, fdl_error *err);
/* No inlined row or delete of `alias` (schema m) up to snapshot upto:
 * FDL_EINVALID saying how to flush them otherwise. */
int fdl__meta_check_inlined(fdl_duck *d, const char *alias, const meta_schema *m, int64_t upto, fdl_error *err);

#endif
