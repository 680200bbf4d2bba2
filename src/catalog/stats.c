/* The statistics DuckLake keeps of a catalog's latest state only
 * (ducklake_table_stats, ducklake_table_column_stats): recomputed for a
 * frozen catalog cut at an earlier snapshot, and checked by fdl verify
 * against the per-file statistics of the version's live files. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

/* ducklake_table_stats describes the catalog's latest state; cut at an
 * earlier snapshot (a writer added more while commit ran), recompute it from
 * the files live at the cut, as DuckLake keeps it: record_count and
 * file_size_bytes of the live data files, next_row_id past every row id
 * handed out. */
static int recompute_table_stats(fdl_duck *d, const char *dst, fdl_error *err)
{
	char sql[1536];
	snprintf(sql, sizeof sql,
		 "UPDATE %1$s.ducklake_table_stats s SET"
		 " record_count = coalesce((SELECT sum(f.record_count) FROM %1$s.ducklake_data_file f"
		 "   WHERE f.table_id = s.table_id AND f.end_snapshot IS NULL), 0),"
		 " file_size_bytes = coalesce((SELECT sum(f.file_size_bytes) FROM %1$s.ducklake_data_file f"
		 "   WHERE f.table_id = s.table_id AND f.end_snapshot IS NULL), 0),"
		 " next_row_id = greatest(coalesce((SELECT max(f.row_id_start + f.record_count) FROM"
		 "   %1$s.ducklake_data_file f WHERE f.table_id = s.table_id), 0), 0)",
		 dst);
	return fdl_duck_exec(d, sql, err);
}

/* The DuckDB type DuckLake's column_type names, to order the text of its
 * statistics as DuckLake does (by value, not as text); NULL: a type fdl
 * does not order (nested, geometry, variant, interval): no min/max. */
static const char *stats_cast(const char *t)
{
	static const char *const map[][2] = {
		{"boolean", "BOOLEAN"}, {"int8", "TINYINT"}, {"int16", "SMALLINT"}, {"int32", "INTEGER"},
		{"int64", "BIGINT"}, {"int128", "HUGEINT"}, {"uint8", "UTINYINT"}, {"uint16", "USMALLINT"},
		{"uint32", "UINTEGER"}, {"uint64", "UBIGINT"}, {"uint128", "UHUGEINT"}, {"float32", "FLOAT"},
		{"float64", "DOUBLE"}, {"date", "DATE"}, {"time", "TIME"}, {"timetz", "TIMETZ"},
		{"timestamp", "TIMESTAMP"}, {"timestamptz", "TIMESTAMPTZ"}, {"timestamp_s", "TIMESTAMP_S"},
		{"timestamp_ms", "TIMESTAMP_MS"}, {"timestamp_ns", "TIMESTAMP_NS"}, {"varchar", "VARCHAR"},
		{"json", "VARCHAR"}, {"blob", "BLOB"}, {"uuid", "UUID"}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(t, map[i][0]))
			return map[i][1];
	/* decimal(p,s) is spelled the same in DuckDB */
	if (!strncmp(t, "decimal(", 8) && strspn(t + 8, "0123456789,") == strlen(t + 8) - 1 && t[strlen(t) - 1] == ')')
		return t;
	return NULL;
}

/* One branch of the merged statistics: the live files' statistics of the
 * columns of DuckLake type `type`, ordered as `cast`. A file whose value
 * is not known (no min or max while it holds a value, or text that does
 * not cast) makes the column's bound unknown. */
static int merged_branch(fdl_buf *sql, const char *dst, const char *type, const char *cast, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err,
				"SELECT f.table_id, f.column_id, count(*) AS n, count(f.null_count) AS nn,"
				" bool_or(f.null_count > 0) AS has_null, bool_or(f.contains_nan) AS has_nan,"
				" arg_min(f.min_value, TRY_CAST(f.min_value AS %2$s)) AS lo,"
				" arg_max(f.max_value, TRY_CAST(f.max_value AS %2$s)) AS hi,"
				" count(*) FILTER (WHERE (TRY_CAST(f.min_value AS %2$s) IS NULL OR"
				"   TRY_CAST(f.max_value AS %2$s) IS NULL) AND f.null_count IS DISTINCT FROM"
				"   f.value_count) AS unknown"
				" FROM %1$s.ducklake_file_column_stats f"
				" JOIN %1$s.ducklake_data_file df ON df.data_file_id = f.data_file_id AND df.end_snapshot IS NULL"
				" JOIN %1$s.ducklake_column c ON c.table_id = f.table_id AND c.column_id = f.column_id"
				"   AND c.end_snapshot IS NULL AND c.column_type = ",
				dst, cast);
	if (!rc)
		rc = fdl_buf_sql_str(sql, type, err);
	if (!rc)
		rc = fdl_buf_puts(sql, " GROUP BY f.table_id, f.column_id", err);
	return rc;
}

/* ducklake_table_column_stats at the cut: DuckLake answers min() and max()
 * from it without reading a file while no row was deleted, so a version
 * must never keep the bounds of rows written after its snapshot. Each row
 * is recomputed from the statistics of the data files live at the cut:
 * min and max are those of the file holding the least and the greatest
 * value (ordered by the column's type), known only when every live file of
 * the table has them; contains_null and contains_nan merged the same way.
 * extra_stats (a geometry's box, a variant's paths) is not merged: NULL,
 * which DuckLake reads as no statistics. */
static int recompute_column_stats(fdl_duck *d, const char *dst, fdl_error *err)
{
	char q[768];
	snprintf(q, sizeof q,
		 "SELECT DISTINCT c.column_type FROM %1$s.ducklake_table_column_stats s JOIN %1$s.ducklake_column c"
		 " ON c.table_id = s.table_id AND c.column_id = s.column_id AND c.end_snapshot IS NULL ORDER BY 1",
		 dst);
	fdl_strlist types = {0};
	int rc = fdl_duck_strings(d, &types, q, err);
	fdl_buf sql = {0};
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    "UPDATE %1$s.ducklake_table_column_stats s SET contains_null = n.contains_null,"
				    " contains_nan = n.contains_nan, min_value = n.min_value, max_value = n.max_value,"
				    " extra_stats = NULL FROM (WITH files AS (SELECT table_id, count(*) AS n FROM"
				    " %1$s.ducklake_data_file WHERE end_snapshot IS NULL GROUP BY table_id), merged AS (",
				    dst);
	const char *sep = "";
	for (size_t i = 0; !rc && i < types.len; i++) {
		const char *cast = stats_cast(types.items[i]);
		if (!cast)
			continue;
		rc = fdl_buf_puts(&sql, sep, err);
		if (!rc)
			rc = merged_branch(&sql, dst, types.items[i], cast, err);
		sep = " UNION ALL ";
	}
	if (!rc && !*sep) /* no type fdl orders: an empty branch */
		rc = fdl_buf_puts(&sql, "SELECT NULL::BIGINT AS table_id, NULL::BIGINT AS column_id, 0 AS n, 0 AS nn,"
					" NULL::BOOLEAN AS has_null, NULL::BOOLEAN AS has_nan, NULL::VARCHAR AS lo,"
					" NULL::VARCHAR AS hi, 0 AS unknown WHERE false",
				  err);
	/* complete: every live file of the table has statistics of the column */
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    ") SELECT s.table_id, s.column_id,"
				    " CASE WHEN m.n = coalesce(f.n, 0) AND m.nn = m.n THEN m.has_null END AS contains_null,"
				    " CASE WHEN m.n = coalesce(f.n, 0) THEN m.has_nan END AS contains_nan,"
				    " CASE WHEN m.n = coalesce(f.n, 0) AND m.unknown = 0 THEN m.lo END AS min_value,"
				    " CASE WHEN m.n = coalesce(f.n, 0) AND m.unknown = 0 THEN m.hi END AS max_value"
				    " FROM %1$s.ducklake_table_column_stats s LEFT JOIN files f ON f.table_id = s.table_id"
				    " LEFT JOIN merged m ON m.table_id = s.table_id AND m.column_id = s.column_id) n"
				    " WHERE s.table_id = n.table_id AND s.column_id = n.column_id",
				    dst);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	fdl_strlist_free(&types);
	return rc;
}

int fdl_catalog_stats_recompute(fdl_duck *d, const char *dst, fdl_error *err)
{
	int rc = recompute_table_stats(d, dst, err);
	if (!rc)
		rc = recompute_column_stats(d, dst, err);
	if (rc)
		fdl_error_prefix(err, "recomputing the statistics at the frozen snapshot");
	return rc;
}


/* Column statistics DuckLake takes as exact (the table's record_count is
 * its live rows: no row deleted) whose min or max no live data file has:
 * schema.table, column, "min"/"max", the value. DuckLake writes the
 * table's bounds as the text of one file's bound, so an exact bound is
 * always some live file's. */
static const char STATS_CHECK_SQL[] =
	"WITH live AS (SELECT f.table_id, f.data_file_id, f.record_count - coalesce(d.delete_count, 0) AS n"
	"   FROM %1$s.ducklake_data_file f LEFT JOIN %1$s.ducklake_delete_file d"
	"   ON d.data_file_id = f.data_file_id AND d.end_snapshot IS NULL WHERE f.end_snapshot IS NULL),"
	" exact AS (SELECT s.table_id FROM %1$s.ducklake_table_stats s"
	"   WHERE s.record_count = coalesce((SELECT sum(n) FROM live l WHERE l.table_id = s.table_id), 0)),"
	" bound AS (SELECT table_id, column_id, 'min' AS which, min_value AS v FROM %1$s.ducklake_table_column_stats"
	"   WHERE min_value IS NOT NULL UNION ALL SELECT table_id, column_id, 'max', max_value"
	"   FROM %1$s.ducklake_table_column_stats WHERE max_value IS NOT NULL)"
	" SELECT sc.schema_name || '.' || t.table_name, c.column_name, b.which, b.v FROM bound b"
	" JOIN exact USING (table_id)"
	" JOIN %1$s.ducklake_table t ON t.table_id = b.table_id AND t.end_snapshot IS NULL"
	" JOIN %1$s.ducklake_schema sc ON sc.schema_id = t.schema_id AND sc.end_snapshot IS NULL"
	" JOIN %1$s.ducklake_column c ON c.table_id = b.table_id AND c.column_id = b.column_id"
	"   AND c.end_snapshot IS NULL AND c.parent_column IS NULL"
	" WHERE NOT EXISTS (SELECT 1 FROM %1$s.ducklake_file_column_stats f JOIN live l USING (data_file_id)"
	"   WHERE f.table_id = b.table_id AND f.column_id = b.column_id"
	"   AND (CASE b.which WHEN 'min' THEN f.min_value ELSE f.max_value END) = b.v)"
	" ORDER BY t.table_id, c.column_order, b.which DESC";

int fdl_catalog_stats_check(fdl_strlist *problems, fdl_duck *d, const char *alias, fdl_error *err)
{
	char sql[sizeof STATS_CHECK_SQL + 512];
	snprintf(sql, sizeof sql, STATS_CHECK_SQL, alias);
	fdl_rows r;
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return fdl_error_prefix(err, "reading the column statistics");
	for (size_t i = 0; !rc && i < fdl_rows_count(&r); i++) {
		char *t = fdl_rows_str(&r, 0, i), *c = fdl_rows_str(&r, 1, i), *w = fdl_rows_str(&r, 2, i),
		     *v = fdl_rows_str(&r, 3, i);
		char *msg = fdl_asprintf(
			"table %s, column %s: its statistics say the %s is %s, which none of its data files holds; "
			"DuckLake answers %s() from them without reading the data, so this version returns a value it "
			"does not hold (a commit made while a writer went on, by an fdl that did not recompute the "
			"statistics at the snapshot). Its catalog cannot be repaired (docs/format.md, \"Statistics\"): "
			"withdraw or expire the version, and commit again",
			t ? t : "?", c ? c : "?", w ? w : "?", v ? v : "?", w ? w : "?");
		rc = msg ? fdl_strlist_add(problems, msg, err) : fdl_oom(err);
		free(msg);
		duckdb_free(t);
		duckdb_free(c);
		duckdb_free(w);
		duckdb_free(v);
	}
	fdl_rows_free(&r);
	return rc;
}
