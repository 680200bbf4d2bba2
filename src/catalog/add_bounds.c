/* The bounds of files fdl add registered that carry no statistics for a
 * column (Spark writes INT96 timestamps without min/max): read from the
 * file itself and written into the catalog, so that the table's bounds
 * cover every row.
 *
 * Why: DuckLake reads a NULL min/max of ducklake_table_column_stats as
 * "no value yet", not "unknown" (its global stats count as all-NULL), so
 * the next INSERT replaces them with the new file's bounds alone, and
 * stock DuckDB answers min() and max() from them while the added files
 * hold values outside them (docs/decisions.md). */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

#define META_PREFIX "__ducklake_metadata_"

/* The files of the catalog's latest snapshot (the one the add just made)
 * and each top-level column whose statistics have no min or max while the
 * file holds a value there (null_count unknown or below its rows).
 * Columns: data file id, table id, path (as DuckLake resolves it), column
 * id, name, DuckLake type. */
static int unbounded(fdl_duck *d, const char *alias, const fdl_add_batch *b, fdl_rows *r, fdl_error *err)
{
	size_t n = strlen(b->data_path);
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT f.data_file_id, f.table_id, CASE WHEN CAST(f.path_is_relative AS BOOLEAN) THEN ",
			      err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, b->data_path, err);
	if (!rc)
		rc = fdl_buf_printf(
			&sql, err,
			" || '%2$s' || s.path || t.path || f.path ELSE f.path END, c.column_id, c.column_name, c.column_type"
			" FROM " META_PREFIX "%1$s.ducklake_file_column_stats fs JOIN " META_PREFIX
			"%1$s.ducklake_data_file f ON f.data_file_id = fs.data_file_id AND f.end_snapshot IS NULL"
			" AND f.begin_snapshot = (SELECT max(snapshot_id) FROM " META_PREFIX "%1$s.ducklake_snapshot) JOIN " META_PREFIX
			"%1$s.ducklake_column c ON c.table_id = fs.table_id AND c.column_id = fs.column_id"
			" AND c.end_snapshot IS NULL AND c.parent_column IS NULL JOIN " META_PREFIX
			"%1$s.ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL JOIN " META_PREFIX
			"%1$s.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL"
			" WHERE (fs.min_value IS NULL OR fs.max_value IS NULL)"
			" AND (fs.null_count IS NULL OR fs.null_count < f.record_count) AND t.table_name = ",
			alias, n && b->data_path[n - 1] == '/' ? "" : "/");
	const char *vals[] = {b->table, b->schema}, *glue[] = {" AND s.schema_name = ", " ORDER BY 1, 4"};
	if (!rc)
		rc = fdl_sql_glued(&sql, 2, vals, glue, err);
	return fdl_duck_query_built(d, r, &sql, rc, err);
}

static bool is_float(const char *cast)
{
	return !strcmp(cast, "FLOAT") || !strcmp(cast, "DOUBLE");
}

/* min, max (NaN aside, as DuckLake keeps them), NULLs and NaN of rows
 * [from, to) of `r` (one file's columns), from one scan of the file. */
static int scan_sql(fdl_buf *sql, fdl_rows *r, size_t from, size_t to, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, "SELECT ", err);
	for (size_t i = from; !rc && i < to; i++) {
		char *name = fdl_rows_str(r, 4, i), *type = fdl_rows_str(r, 5, i);
		const char *cast = type ? fdl__catalog_stats_cast(type) : NULL;
		fdl_buf col = {0};
		rc = name ? fdl_buf_sql_ident(&col, name, err) : fdl_oom(err);
		bool fl = cast && is_float(cast);
		const char *c = col.data, *keep = fl ? " FILTER (WHERE NOT isnan(" : "";
		if (!rc && cast)
			rc = fdl_buf_printf(sql, err,
					    "%sCAST(min(%s)%s%s%s AS VARCHAR), CAST(max(%s)%s%s%s AS VARCHAR), "
					    "count(*) - count(%s), %s%s%s",
					    i > from ? ", " : "", c, keep, fl ? c : "", fl ? "))" : "", c, keep,
					    fl ? c : "", fl ? "))" : "", c, fl ? "bool_or(isnan(" : "NULL::BOOLEAN",
					    fl ? c : "", fl ? "))" : "");
		else if (!rc) /* a type without order: nothing to bound (an aggregate: one row) */
			rc = fdl_buf_printf(sql, err, "%sNULL, NULL, max(NULL::BIGINT), NULL::BOOLEAN", i > from ? ", " : "");
		fdl_buf_free(&col);
		duckdb_free(name);
		duckdb_free(type);
	}
	char *path = rc ? NULL : fdl_rows_str(r, 2, from);
	if (!rc)
		rc = path ? fdl_buf_puts(sql, " FROM read_parquet(", err) : fdl_oom(err);
	if (!rc)
		rc = fdl_buf_sql_str(sql, path, err);
	duckdb_free(path);
	return rc ? rc : fdl_buf_puts(sql, ", hive_partitioning = false)", err);
}

/* A text cell as a SQL literal, or NULL. */
static int literal(fdl_buf *sql, fdl_rows *r, size_t col, size_t row, fdl_error *err)
{
	if (fdl_rows_null(r, col, row))
		return fdl_buf_puts(sql, "NULL", err);
	char *v = fdl_rows_str(r, col, row);
	int rc = v ? fdl_buf_sql_str(sql, v, err) : fdl_oom(err);
	duckdb_free(v);
	return rc;
}

/* The UPDATE of one file's statistics of one column from its scan (k-th
 * group of four cells of `s`). */
static int file_update(fdl_buf *upd, const char *alias, fdl_rows *r, size_t i, fdl_rows *s, size_t k,
		       fdl_error *err)
{
	if (fdl_rows_null(s, 4 * k + 2, 0))
		return 0; /* a type without order */
	int rc = fdl_buf_printf(upd, err, "UPDATE " META_PREFIX "%s.ducklake_file_column_stats SET min_value = ", alias);
	if (!rc)
		rc = literal(upd, s, 4 * k, 0, err);
	if (!rc)
		rc = fdl_buf_puts(upd, ", max_value = ", err);
	if (!rc)
		rc = literal(upd, s, 4 * k + 1, 0, err);
	if (!rc)
		rc = fdl_buf_printf(upd, err,
				    ", null_count = coalesce(null_count, %lld), contains_nan = coalesce(CAST(contains_nan AS BOOLEAN), %s)"
				    " WHERE data_file_id = %lld AND column_id = %lld; ",
				    (long long)fdl_rows_int(s, 4 * k + 2, 0),
				    fdl_rows_null(s, 4 * k + 3, 0) ? "NULL" : fdl_rows_int(s, 4 * k + 3, 0) ? "true" : "false",
				    (long long)fdl_rows_int(r, 0, i), (long long)fdl_rows_int(r, 3, i));
	return rc;
}

/* Scan the file of rows [from, to) of `r` and append the UPDATEs of its
 * statistics. */
static int one_file(fdl_duck *d, const char *alias, fdl_rows *r, size_t from, size_t to, fdl_buf *upd,
		    fdl_error *err)
{
	fdl_buf sql = {0};
	fdl_rows s;
	int rc = scan_sql(&sql, r, from, to, err);
	rc = fdl_duck_query_built(d, &s, &sql, rc, err);
	if (rc)
		return rc;
	for (size_t i = from; !rc && i < to; i++)
		rc = file_update(upd, alias, r, i, &s, i - from, err);
	fdl_rows_free(&s);
	return rc;
}

/* The table's bounds of column `c` widened to the new files' bounds, unless
 * another live file of the table still has unknown bounds there (then
 * they stay as DuckLake left them). */
static int table_update(fdl_buf *upd, const char *alias, int64_t t, int64_t c, const char *cast, fdl_error *err)
{
	return fdl_buf_printf(
		upd, err,
		"UPDATE " META_PREFIX "%1$s.ducklake_table_column_stats s SET"
		" min_value = CAST(least(TRY_CAST(s.min_value AS %2$s), n.lo) AS VARCHAR),"
		" max_value = CAST(greatest(TRY_CAST(s.max_value AS %2$s), n.hi) AS VARCHAR),"
		" contains_nan = CASE WHEN n.nan THEN true ELSE CAST(s.contains_nan AS BOOLEAN) END"
		" FROM (SELECT min(TRY_CAST(fs.min_value AS %2$s)) AS lo, max(TRY_CAST(fs.max_value AS %2$s)) AS hi,"
		" bool_or(CAST(fs.contains_nan AS BOOLEAN)) AS nan, count(*) FILTER (WHERE (fs.min_value IS NULL OR fs.max_value IS NULL)"
		" AND (fs.null_count IS NULL OR fs.null_count < f.record_count)) AS unknown FROM " META_PREFIX
		"%1$s.ducklake_file_column_stats fs JOIN " META_PREFIX
		"%1$s.ducklake_data_file f ON f.data_file_id = fs.data_file_id AND f.end_snapshot IS NULL"
		" WHERE fs.table_id = %3$lld AND fs.column_id = %4$lld) n"
		" WHERE n.unknown = 0 AND s.table_id = %3$lld AND s.column_id = %4$lld; ",
		alias, cast, (long long)t, (long long)c);
}

/* The UPDATEs of the table's statistics, one per distinct column of `r`. */
static int table_updates(fdl_buf *upd, const char *alias, fdl_rows *r, fdl_error *err)
{
	int rc = 0;
	size_t n = fdl_rows_count(r);
	for (size_t i = 0; !rc && i < n; i++) {
		int64_t c = fdl_rows_int(r, 3, i);
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = fdl_rows_int(r, 3, j) == c;
		char *type = seen ? NULL : fdl_rows_str(r, 5, i);
		const char *cast = type ? fdl__catalog_stats_cast(type) : NULL;
		if (cast)
			rc = table_update(upd, alias, fdl_rows_int(r, 1, i), c, cast, err);
		duckdb_free(type);
	}
	return rc;
}

int fdl__catalog_add_bounds(fdl_duck *d, const char *alias, const fdl_add_batch *b, fdl_error *err)
{
	fdl_rows r;
	int rc = unbounded(d, alias, b, &r, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	fdl_buf upd = {0};
	if (n)
		rc = fdl_buf_puts(&upd, "BEGIN TRANSACTION; ", err);
	for (size_t from = 0, to; !rc && from < n; from = to) {
		for (to = from + 1; to < n && fdl_rows_int(&r, 0, to) == fdl_rows_int(&r, 0, from); to++)
			;
		rc = one_file(d, alias, &r, from, to, &upd, err);
	}
	if (!rc && n)
		rc = table_updates(&upd, alias, &r, err);
	if (!rc && n)
		rc = fdl_buf_puts(&upd, "COMMIT", err);
	if (!rc && n && (rc = fdl_duck_exec(d, upd.data, err))) {
		fdl_error ignore;
		fdl_duck_exec(d, "ROLLBACK", &ignore);
	}
	fdl_buf_free(&upd);
	fdl_rows_free(&r);
	if (rc)
		fdl_error_prefix(err, "reading the bounds of the columns the added files have no statistics for");
	return rc;
}
