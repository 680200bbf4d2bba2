/* fdl add: Parquet files another engine wrote (Spark, Polars, ...) become
 * new data of a table of a working catalog, registered where they lie by
 * DuckLake's ducklake_add_data_files, in one transaction. What a file holds
 * is read here (its columns, its rows); which files may be added, and
 * where, is the operation's (src/ops/add.c). */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

#define META_PREFIX "__ducklake_metadata_"

/* A cell as text in memory of ours (NULL: SQL NULL, or no memory). */
static char *str_dup(fdl_rows *r, size_t col, size_t row)
{
	char *v = fdl_rows_str(r, col, row);
	char *own = v ? fdl_strdup(v) : NULL;
	duckdb_free(v);
	return own;
}

/* The schema's and the table's folders (relative to the data path) and
 * the table's columns; a folder recorded by an absolute path is refused. */
static int folders(fdl_duck *d, const char *alias, const char *schema, const char *table, fdl_add_shape *s,
		   fdl_error *err)
{
	fdl_buf sql = {0};
	fdl_rows r;
	int rc = fdl_buf_printf(&sql, err,
				"SELECT s.path, CAST(s.path_is_relative AS BOOLEAN), t.path, CAST(t.path_is_relative AS "
				"BOOLEAN) FROM " META_PREFIX "%1$s.ducklake_schema s LEFT JOIN " META_PREFIX
				"%1$s.ducklake_table t ON t.schema_id = s.schema_id AND t.end_snapshot IS NULL AND "
				"t.table_name = ",
				alias);
	const char *vals[] = {table, schema}, *glue[] = {" WHERE s.end_snapshot IS NULL AND s.schema_name = ", ""};
	if (!rc)
		rc = fdl_sql_glued(&sql, 2, vals, glue, err);
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	if (rc)
		return rc;
	if (fdl_rows_count(&r)) {
		s->schema_exists = true;
		if (!fdl_rows_int(&r, 1, 0))
			rc = fdl_fail(err, FDL_EINVALID, "schema %s of the working catalog has an absolute path", schema);
		else if (!(s->schema_folder = str_dup(&r, 0, 0)))
			rc = fdl_oom(err);
		if (!rc && !fdl_rows_null(&r, 2, 0)) {
			s->table_exists = true;
			char *t = str_dup(&r, 2, 0);
			if (!fdl_rows_int(&r, 3, 0))
				rc = fdl_fail(err, FDL_EINVALID, "table %s.%s of the working catalog has an absolute path",
					      schema, table);
			else if (!t || !(s->folder = fdl_asprintf("%s%s", s->schema_folder, t)))
				rc = fdl_oom(err);
			free(t);
		}
	}
	fdl_rows_free(&r);
	return rc;
}

/* A query's two text columns appended to names and types. */
static int columns_of(fdl_duck *d, fdl_buf *sql, int rc, fdl_strlist *names, fdl_strlist *types, fdl_error *err)
{
	fdl_rows r;
	rc = fdl_duck_query_built(d, &r, sql, rc, err);
	if (rc)
		return rc;
	for (size_t i = 0; !rc && i < fdl_rows_count(&r); i++) {
		char *n = fdl_rows_str(&r, 0, i), *t = fdl_rows_str(&r, 1, i);
		rc = n && t ? fdl_strlist_add(names, n, err) : fdl_oom(err);
		if (!rc)
			rc = fdl_strlist_add(types, t, err);
		duckdb_free(n);
		duckdb_free(t);
	}
	fdl_rows_free(&r);
	return rc;
}

/* Every data and delete file of the table the catalog records relative to
 * the data path (those in the working catalog's own folder: DuckDB's, and
 * those added before), as "<schema folder><table folder><file>", sorted. */
static int known_files(fdl_duck *d, const char *alias, const char *schema, const char *table, fdl_strlist *out,
		       fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		rc = fdl_buf_printf(&sql, err,
				    "%sSELECT s.path || t.path || f.path FROM " META_PREFIX "%s.%s f JOIN " META_PREFIX
				    "%s.ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL JOIN " META_PREFIX
				    "%s.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL"
				    " WHERE CAST(f.path_is_relative AS BOOLEAN) AND t.table_name = ",
				    k ? " UNION ALL " : "", alias, k ? "ducklake_delete_file" : "ducklake_data_file", alias,
				    alias);
		const char *vals[] = {table, schema}, *glue[] = {" AND s.schema_name = ", ""};
		if (!rc)
			rc = fdl_sql_glued(&sql, 2, vals, glue, err);
	}
	if (!rc)
		rc = fdl_duck_strings(d, out, sql.data, err);
	fdl_buf_free(&sql);
	fdl_strlist_sort(out);
	return rc;
}

int fdl_catalog_add_shape(fdl_duck *d, const char *alias, const char *schema, const char *table, fdl_add_shape *s,
			  fdl_error *err)
{
	memset(s, 0, sizeof *s);
	int rc = folders(d, alias, schema, table, s, err);
	if (!rc && s->table_exists) {
		fdl_buf sql = {0};
		rc = fdl_buf_printf(&sql, err, "SELECT column_name, column_type FROM (DESCRIBE %s.", alias);
		if (!rc)
			rc = fdl_buf_sql_ident(&sql, schema, err);
		if (!rc)
			rc = fdl_buf_puts(&sql, ".", err);
		if (!rc)
			rc = fdl_buf_sql_ident(&sql, table, err);
		if (!rc)
			rc = fdl_buf_puts(&sql, ")", err);
		rc = columns_of(d, &sql, rc, &s->names, &s->types, err);
		if (!rc)
			rc = known_files(d, alias, schema, table, &s->known, err);
	}
	if (rc)
		fdl_error_prefix(err, "reading table %s.%s of the working catalog", schema, table);
	return rc;
}

void fdl_add_shape_free(fdl_add_shape *s)
{
	free(s->schema_folder);
	free(s->folder);
	fdl_strlist_free(&s->names);
	fdl_strlist_free(&s->types);
	fdl_strlist_free(&s->known);
	memset(s, 0, sizeof *s);
}

int fdl_catalog_parquet_columns(fdl_duck *d, const char *file, fdl_strlist *names, fdl_strlist *types,
				int64_t *rows, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, file, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ", hive_partitioning = false))", err);
	rc = columns_of(d, &sql, rc, names, types, err);
	if (!rc) {
		fdl_buf q = {0};
		rc = fdl_buf_puts(&q, "SELECT num_rows FROM parquet_file_metadata(", err);
		if (!rc)
			rc = fdl_buf_sql_str(&q, file, err);
		if (!rc)
			rc = fdl_buf_puts(&q, ")", err);
		if (!rc)
			rc = fdl_duck_int(d, rows, 0, q.data, err);
		fdl_buf_free(&q);
	}
	if (rc && err) { /* the file's fault, not DuckDB's */
		fdl_error was = *err;
		rc = fdl_fail(err, FDL_EINVALID, "%s is not a Parquet file DuckDB reads (%s). Nothing was added", file,
			      was.message);
	}
	return rc;
}

/* CREATE SCHEMA / TABLE / SET PARTITIONED BY for --create. */
static int create_sql(fdl_buf *sql, const char *alias, const fdl_add_batch *b, fdl_error *err)
{
	int rc = fdl_sql_create_table(sql, alias, b->schema, b->table, b->schema_exists, b->names, b->types, err);
	if (!rc)
		rc = fdl_buf_puts(sql, "; ", err);
	for (size_t i = 0; !rc && i < b->keys->len; i++) {
		rc = fdl_buf_puts(sql, i ? ", " : "ALTER TABLE ", err);
		if (!rc && !i)
			rc = fdl_sql_table_ref(sql, alias, b->schema, b->table, err);
		if (!rc && !i)
			rc = fdl_buf_puts(sql, " SET PARTITIONED BY (", err);
		if (!rc)
			rc = fdl_buf_sql_ident(sql, b->keys->items[i], err);
	}
	if (!rc && b->keys->len)
		rc = fdl_buf_puts(sql, "); ", err);
	return rc;
}

/* CALL ducklake_add_data_files with every file as one list. */
static int call_sql(fdl_buf *sql, const char *alias, const fdl_add_batch *b, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err, "CALL ducklake_add_data_files('%s', ", alias);
	if (!rc)
		rc = fdl_buf_sql_str(sql, b->table, err);
	for (size_t i = 0; !rc && i < b->files->len; i++) {
		rc = fdl_buf_puts(sql, i ? ", " : ", [", err);
		if (!rc)
			rc = fdl_buf_sql_str(sql, b->files->items[i], err);
	}
	if (!rc)
		rc = fdl_buf_puts(sql, "], schema => ", err);
	if (!rc)
		rc = fdl_buf_sql_str(sql, b->schema, err);
	if (!rc)
		rc = fdl_buf_printf(sql, err, ", hive_partitioning => %s)", b->keys->len ? "true" : "false");
	return rc;
}

int fdl_catalog_add_files(fdl_duck *d, const char *alias, const fdl_add_batch *b, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "BEGIN TRANSACTION; ", err);
	if (!rc && b->create)
		rc = create_sql(&sql, alias, b, err);
	if (!rc)
		rc = call_sql(&sql, alias, b, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, "; COMMIT", err);
	if (!rc && (rc = fdl_duck_exec(d, sql.data, err))) {
		fdl_error ignore;
		fdl_duck_exec(d, "ROLLBACK", &ignore);
		fdl_error_prefix(err, "registering the files in table %s.%s (nothing was added)", b->schema, b->table);
	}
	fdl_buf_free(&sql);
	if (!rc)
		rc = fdl__catalog_add_bounds(d, alias, b, err);
	if (!rc) {
		char tables[128];
		snprintf(tables, sizeof tables, META_PREFIX "%s", alias);
		rc = fdl_catalog_paths_relative(d, tables, b->data_path, -1, true, false, err);
	}
	return rc;
}
