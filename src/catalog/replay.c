/* fdl rebase, the replay: the working catalog's rows of its snapshots after
 * the base, copied into the new catalog (a copy of the later version) with
 * every id they hand out moved past the later version's, the rows they
 * ended ended there too, the table statistics merged, and the delete files
 * whose rows carry snapshot ids written again with those ids moved. One
 * transaction: on a conflict nothing is left in the new catalog. */
#include "rebase.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- one table's rows ----------------------------------------------------------- */

static bool one_of(const char *c, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(c, *names))
			return true;
	return false;
}

/* DuckLake's changes_made lists `kind:"name"` and `kind:<id>` items; the
 * ids are catalog ids. */
#define CHANGE_ITEM "'[a-z_]+:(?:\"(?:[^\"]|\"\")*\"(?:\\.\"(?:[^\"]|\"\")*\")*|[0-9]+)'"

/* The value column c of table t takes in the new catalog, from row `o` of
 * the working catalog. */
static int map_col(fdl_buf *b, const char *t, const char *c, fdl_error *err)
{
	static const char *const snap[] = {"begin_snapshot", "end_snapshot", "snapshot_id", "partial_max", NULL};
	static const char *const cat[] = {"schema_id", "table_id",  "view_id", "partition_id",
					  "mapping_id", "macro_id", "sort_id", "object_id", NULL};
	static const char *const file[] = {"data_file_id", "delete_file_id", NULL};
	if (one_of(c, snap))
		return fdl_buf_printf(b, err, "CASE WHEN o.%1$s > {b} THEN o.%1$s + {dS} ELSE o.%1$s END", c);
	if (one_of(c, cat))
		return fdl_buf_printf(b, err, "CASE WHEN o.%1$s >= {cb} THEN o.%1$s + {dC} ELSE o.%1$s END", c);
	if (one_of(c, file))
		return fdl_buf_printf(b, err, "CASE WHEN o.%1$s >= {fb} THEN o.%1$s + {dF} ELSE o.%1$s END", c);
	if (!strcmp(c, "next_catalog_id"))
		return fdl_buf_puts(b, "o.next_catalog_id + {dC}", err);
	if (!strcmp(c, "next_file_id"))
		return fdl_buf_puts(b, "o.next_file_id + {dF}", err);
	if (!strcmp(c, "schema_version"))
		return fdl_buf_puts(b, "o.schema_version + {dV}", err);
	if (!strcmp(c, "row_id_start") && !strcmp(t, "ducklake_data_file"))
		return fdl_buf_puts(b, "CASE WHEN s.shift IS NOT NULL AND o.row_id_start >= s.from_row"
				       " THEN o.row_id_start + s.shift ELSE o.row_id_start END", err);
	/* a replayed snapshot is never older than the tip's last one */
	if (!strcmp(c, "snapshot_time"))
		return fdl_buf_puts(b, "CASE WHEN TRY_CAST(o.snapshot_time AS TIMESTAMPTZ) < (SELECT TRY_CAST(t AS"
				       " TIMESTAMPTZ) FROM fdl_rb_tip) THEN (SELECT t FROM fdl_rb_tip) ELSE o.snapshot_time END",
				    err);
	if (!strcmp(c, "changes_made"))
		return fdl_buf_puts(b, "array_to_string(list_transform(regexp_extract_all(o.changes_made, " CHANGE_ITEM
				       "), lambda e: CASE WHEN regexp_full_match(e, '[a-z_]+:[0-9]+') AND"
				       " CAST(split_part(e, ':', 2) AS BIGINT) >= {cb} THEN split_part(e, ':', 1) || ':' ||"
				       " CAST(CAST(split_part(e, ':', 2) AS BIGINT) + {dC} AS VARCHAR) ELSE e END), ',')",
				    err);
	return fdl_buf_printf(b, err, "o.\"%s\"", c);
}

/* Which rows of t the working catalog added after the base: those of its
 * own files (by id: a file may take over an older one's begin_snapshot),
 * of its snapshots, of its own catalog objects. */
static int selected(fdl_buf *b, fdl_rebase_kind kind, const char *key, fdl_error *err)
{
	switch (kind) {
	case REBASE_VERSIONED:
		return key ? fdl_buf_printf(b, err, "o.%s >= {fb}", key) : fdl_buf_puts(b, "o.begin_snapshot > {b}", err);
	case REBASE_SNAPSHOT:
		return fdl_buf_puts(b, "o.snapshot_id > {b}", err);
	case REBASE_FILE:
		return fdl_buf_puts(b, "o.data_file_id >= {fb}", err);
	default:
		return fdl_buf_printf(b, err, "o.%s >= {cb}", key);
	}
}

static int insert_rows(fdl_duck *d, const fdl_rebase_plan *p, const char *t, const fdl_strlist *cols,
		       fdl_rebase_kind kind, const char *key, fdl_error *err)
{
	fdl_buf tmpl = {0}, sql = {0};
	int rc = fdl_buf_printf(&tmpl, err, "INSERT INTO {N}.%s (", t);
	for (size_t i = 0; !rc && i < cols->len; i++)
		rc = fdl_buf_printf(&tmpl, err, "%s\"%s\"", i ? ", " : "", cols->items[i]);
	if (!rc)
		rc = fdl_buf_puts(&tmpl, ") SELECT ", err);
	for (size_t i = 0; !rc && i < cols->len; i++) {
		rc = i ? fdl_buf_puts(&tmpl, ", ", err) : 0;
		if (!rc)
			rc = map_col(&tmpl, t, cols->items[i], err);
	}
	if (!rc)
		rc = fdl_buf_printf(&tmpl, err, " FROM {W}.%s o%s WHERE ", t,
				    !strcmp(t, "ducklake_data_file") ? " LEFT JOIN fdl_rb_shift s USING (table_id)" : "");
	if (!rc)
		rc = selected(&tmpl, kind, key, err);
	if (!rc)
		rc = fdl_rebase_sql(&sql, p, tmpl.data, NULL, NULL, err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	if (rc)
		fdl_error_prefix(err, "replaying %s", t);
	fdl_buf_free(&tmpl);
	fdl_buf_free(&sql);
	return rc;
}

/* The base's rows the working catalog ended after the base (a drop, an
 * alteration, a delete file replaced) end in the new catalog at the moved
 * snapshot. Each must still be there as the base had it; one the tip
 * changed too is a conflict the rules did not name (a safety net). */
static int end_rows(fdl_duck *d, fdl_rebase_plan *p, const char *t, const fdl_strlist *cols, const char *key,
		    fdl_error *err)
{
	fdl_buf tmpl = {0}, sql = {0};
	int rc = fdl_buf_printf(&tmpl, err,
				"UPDATE {N}.%1$s AS n SET end_snapshot = o.end_snapshot + {dS} FROM {W}.%1$s AS o"
				" WHERE n.end_snapshot IS NULL AND o.begin_snapshot <= {b} AND o.end_snapshot > {b}",
				t);
	if (!rc && key)
		rc = fdl_buf_printf(&tmpl, err, " AND o.%s < {fb}", key);
	for (size_t i = 0; !rc && i < cols->len; i++)
		if (strcmp(cols->items[i], "end_snapshot"))
			rc = fdl_buf_printf(&tmpl, err, " AND n.\"%1$s\" IS NOT DISTINCT FROM o.\"%1$s\"", cols->items[i]);
	int64_t done = 0, want = 0;
	if (!rc)
		rc = fdl_rebase_int(d, p, &done, tmpl.data, err);
	fdl_buf_free(&tmpl);
	if (!rc)
		rc = fdl_buf_printf(&tmpl, err,
				    "SELECT count(*) FROM {W}.%s o WHERE o.begin_snapshot <= {b} AND o.end_snapshot > {b}%s%s%s",
				    t, key ? " AND o." : "", key ? key : "", key ? " < {fb}" : "");
	if (!rc)
		rc = fdl_rebase_int(d, p, &want, tmpl.data, err);
	if (!rc && done != want) {
		char what[256];
		snprintf(what, sizeof what, "%" PRId64 " row(s) of %s that this catalog ended were changed on the tip too",
			 want - done, t);
		rc = fdl_rebase_add_conflict(p, NULL, "changed", what, err);
	}
	fdl_buf_free(&tmpl);
	fdl_buf_free(&sql);
	if (rc && rc != FDL_ECONFLICT)
		fdl_error_prefix(err, "replaying the ends of %s", t);
	return rc;
}

/* A delete file that took over a base delete file of the same data file
 * (DuckLake rewrites the older one's deletes into the new one and removes
 * its row) removes that row from the new catalog too. */
static const char taken_over_sql[] =
	"DELETE FROM {N}.ducklake_delete_file WHERE delete_file_id < {fb}"
	" AND delete_file_id NOT IN (SELECT delete_file_id FROM {W}.ducklake_delete_file)"
	" AND data_file_id IN (SELECT data_file_id FROM {W}.ducklake_delete_file WHERE delete_file_id >= {fb})";

/* Every delete file replayed must still name its data file as the working
 * catalog has it (live, or ended where the working catalog ended it): a
 * delete into a file the tip no longer holds would be read by nothing,
 * its rows left in place (a safety net behind the plan's rules). */
static const char dangling_sql[] =
	"SELECT DISTINCT coalesce(n.name, CAST(f.table_id AS VARCHAR)), 'delete', 'rows deleted here from ' || f.path"
	" || ', which the tip no longer holds as the base had it'"
	" FROM {W}.ducklake_delete_file x JOIN {W}.ducklake_data_file f USING (data_file_id)"
	" LEFT JOIN fdl_rb_name n ON n.id = f.table_id WHERE x.delete_file_id >= {fb}"
	" AND NOT EXISTS (SELECT 1 FROM {N}.ducklake_data_file m WHERE m.data_file_id = CASE WHEN f.data_file_id >= {fb}"
	"  THEN f.data_file_id + {dF} ELSE f.data_file_id END AND m.end_snapshot IS NOT DISTINCT FROM"
	"  CASE WHEN f.end_snapshot > {b} THEN f.end_snapshot + {dS} ELSE f.end_snapshot END)";

/* Every data file replayed must belong to a table the new catalog holds:
 * rows added to a table the tip no longer has would be read by nothing (a
 * safety net behind the plan's rules, which name the drop). */
static const char orphaned_sql[] =
	"SELECT DISTINCT coalesce(n.name, CAST(f.table_id AS VARCHAR)), 'dropped',"
	" 'rows added here to a table the tip no longer holds' FROM {W}.ducklake_data_file f"
	" LEFT JOIN fdl_rb_name n ON n.id = f.table_id WHERE f.data_file_id >= {fb}"
	" AND NOT EXISTS (SELECT 1 FROM {N}.ducklake_table t WHERE t.table_id = CASE WHEN f.table_id >= {cb}"
	"  THEN f.table_id + {dC} ELSE f.table_id END)";

/* ---- statistics and options -------------------------------------------------------- */

/* Column bounds merged by the column's DuckLake type; NULL (unknown, as
 * DuckLake reads it) where the type or a value cannot be compared. */
static const char macros_sql[] =
	"CREATE OR REPLACE TEMP MACRO fdl_rb_cmp(x, y) AS CASE WHEN x < y THEN -1 WHEN x > y THEN 1 WHEN x = y THEN 0 END;"
	"CREATE OR REPLACE TEMP MACRO fdl_rb_order(ty, a, b) AS CASE WHEN a IS NULL OR b IS NULL THEN NULL"
	" WHEN ty IN ('int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'int128', 'uint128')"
	"  THEN fdl_rb_cmp(TRY_CAST(a AS HUGEINT), TRY_CAST(b AS HUGEINT))"
	" WHEN ty IN ('float32', 'float64') THEN fdl_rb_cmp(TRY_CAST(a AS DOUBLE), TRY_CAST(b AS DOUBLE))"
	" WHEN ty = 'date' THEN fdl_rb_cmp(TRY_CAST(a AS DATE), TRY_CAST(b AS DATE))"
	" WHEN ty IN ('timestamp', 'timestamp_us', 'timestamp_ms', 'timestamp_s')"
	"  THEN fdl_rb_cmp(TRY_CAST(a AS TIMESTAMP), TRY_CAST(b AS TIMESTAMP))"
	" WHEN ty = 'timestamp_ns' THEN fdl_rb_cmp(TRY_CAST(a AS TIMESTAMP_NS), TRY_CAST(b AS TIMESTAMP_NS))"
	" WHEN ty = 'timestamptz' THEN fdl_rb_cmp(TRY_CAST(a AS TIMESTAMPTZ), TRY_CAST(b AS TIMESTAMPTZ))"
	" WHEN ty = 'time' THEN fdl_rb_cmp(TRY_CAST(a AS TIME), TRY_CAST(b AS TIME))"
	" WHEN ty = 'boolean' THEN fdl_rb_cmp(TRY_CAST(a AS BOOLEAN), TRY_CAST(b AS BOOLEAN))"
	" WHEN ty = 'uuid' THEN fdl_rb_cmp(TRY_CAST(a AS UUID), TRY_CAST(b AS UUID))"
	" WHEN ty = 'varchar' THEN fdl_rb_cmp(a, b) END;"
	"CREATE OR REPLACE TEMP MACRO fdl_rb_lo(ty, a, b) AS CASE fdl_rb_order(ty, a, b) WHEN 1 THEN b"
	" WHEN -1 THEN a WHEN 0 THEN a END;"
	"CREATE OR REPLACE TEMP MACRO fdl_rb_hi(ty, a, b) AS CASE fdl_rb_order(ty, a, b) WHEN -1 THEN b"
	" WHEN 1 THEN a WHEN 0 THEN a END";

/* What the working catalog changed in its statistics and options since the
 * base (temporary tables, made before the transaction: it writes to the
 * new catalog alone). */
static const char changed_sql[] =
	"CREATE OR REPLACE TEMP TABLE fdl_rb_wstats AS SELECT table_id, record_count, next_row_id, file_size_bytes"
	" FROM {W}.ducklake_table_stats;"
	"CREATE OR REPLACE TEMP TABLE fdl_rb_dstats AS SELECT w.table_id,"
	" CASE WHEN w.table_id >= {cb} THEN w.table_id + {dC} ELSE w.table_id END AS nid,"
	" w.record_count - coalesce(b.record_count, 0) AS drc, w.next_row_id - coalesce(b.next_row_id, 0) AS dnr,"
	" w.file_size_bytes - coalesce(b.file_size_bytes, 0) AS dfs, w.record_count, w.next_row_id, w.file_size_bytes"
	" FROM fdl_rb_wstats w LEFT JOIN fdl_rb_bstats b USING (table_id) WHERE b.table_id IS NULL"
	" OR w.record_count IS DISTINCT FROM b.record_count OR w.next_row_id IS DISTINCT FROM b.next_row_id"
	" OR w.file_size_bytes IS DISTINCT FROM b.file_size_bytes;"
	"CREATE OR REPLACE TEMP TABLE fdl_rb_wcols AS SELECT table_id, column_id,"
	" CAST(contains_null AS BOOLEAN) AS contains_null, CAST(contains_nan AS BOOLEAN) AS contains_nan,"
	" min_value, max_value, extra_stats FROM {W}.ducklake_table_column_stats;"
	"CREATE OR REPLACE TEMP TABLE fdl_rb_dcols AS SELECT w.*,"
	" CASE WHEN w.table_id >= {cb} THEN w.table_id + {dC} ELSE w.table_id END AS nid"
	" FROM fdl_rb_wcols w LEFT JOIN fdl_rb_bcols b USING (table_id, column_id) WHERE b.table_id IS NULL"
	" OR w.contains_null IS DISTINCT FROM b.contains_null OR w.contains_nan IS DISTINCT FROM b.contains_nan"
	" OR w.min_value IS DISTINCT FROM b.min_value OR w.max_value IS DISTINCT FROM b.max_value"
	" OR w.extra_stats IS DISTINCT FROM b.extra_stats;"
	"CREATE OR REPLACE TEMP TABLE fdl_rb_wmeta AS SELECT key, value, scope,"
	" CASE WHEN scope IN ('table', 'schema') AND scope_id >= {cb} THEN scope_id + {dC} ELSE scope_id END AS scope_id"
	" FROM {W}.ducklake_metadata w WHERE key <> 'data_path' AND NOT EXISTS (SELECT 1 FROM fdl_rb_bmeta b"
	" WHERE b.key = w.key AND b.value IS NOT DISTINCT FROM w.value AND b.scope IS NOT DISTINCT FROM w.scope"
	" AND b.scope_id IS NOT DISTINCT FROM w.scope_id)";

/* Table statistics: a table only one side changed takes that side's; one
 * both added rows to adds the working catalog's growth to the tip's; the
 * column bounds of both are merged. Options the working catalog set. */
static const char merge_sql[] =
	"UPDATE {N}.ducklake_table_stats n SET record_count = n.record_count + d.drc, next_row_id = n.next_row_id"
	" + d.dnr, file_size_bytes = n.file_size_bytes + d.dfs FROM fdl_rb_dstats d WHERE n.table_id = d.nid"
	" AND d.table_id < {cb};"
	"INSERT INTO {N}.ducklake_table_stats (table_id, record_count, next_row_id, file_size_bytes)"
	" SELECT nid, record_count, next_row_id, file_size_bytes FROM fdl_rb_dstats"
	" WHERE nid NOT IN (SELECT table_id FROM {N}.ducklake_table_stats);"
	"DELETE FROM {N}.ducklake_table_stats WHERE table_id IN (SELECT table_id FROM fdl_rb_bstats"
	" WHERE table_id NOT IN (SELECT table_id FROM fdl_rb_wstats));"
	"CREATE OR REPLACE TEMP TABLE fdl_rb_mcols AS SELECT d.nid AS table_id, d.column_id,"
	" CASE WHEN same THEN d.contains_null ELSE d.contains_null OR n_null END AS contains_null,"
	" CASE WHEN same THEN d.contains_nan ELSE d.contains_nan OR n_nan END AS contains_nan,"
	" CASE WHEN same THEN d.min_value ELSE fdl_rb_lo(ty, d.min_value, n_min) END AS min_value,"
	" CASE WHEN same THEN d.max_value ELSE fdl_rb_hi(ty, d.max_value, n_max) END AS max_value,"
	" CASE WHEN same OR d.extra_stats IS NOT DISTINCT FROM n_extra THEN d.extra_stats END AS extra_stats"
	" FROM (SELECT d.*, CAST(n.contains_null AS BOOLEAN) AS n_null, CAST(n.contains_nan AS BOOLEAN) AS n_nan,"
	"  n.min_value AS n_min, n.max_value AS n_max, n.extra_stats AS n_extra, c.column_type AS ty,"
	"  (b.table_id IS NOT NULL AND CAST(n.contains_null AS BOOLEAN) IS NOT DISTINCT FROM b.contains_null"
	"  AND CAST(n.contains_nan AS BOOLEAN) IS NOT DISTINCT FROM b.contains_nan"
	"  AND n.min_value IS NOT DISTINCT FROM b.min_value AND n.max_value IS NOT DISTINCT FROM b.max_value"
	"  AND n.extra_stats IS NOT DISTINCT FROM b.extra_stats) AS same"
	"  FROM fdl_rb_dcols d JOIN {N}.ducklake_table_column_stats n ON n.table_id = d.nid AND n.column_id = d.column_id"
	"  LEFT JOIN fdl_rb_bcols b ON b.table_id = d.table_id AND b.column_id = d.column_id"
	"  LEFT JOIN {N}.ducklake_column c ON c.table_id = d.nid AND c.column_id = d.column_id"
	"  AND c.end_snapshot IS NULL AND c.parent_column IS NULL) d;"
	"DELETE FROM {N}.ducklake_table_column_stats n WHERE EXISTS (SELECT 1 FROM fdl_rb_dcols d"
	" WHERE d.nid = n.table_id AND d.column_id = n.column_id) OR EXISTS (SELECT 1 FROM fdl_rb_bcols b"
	" WHERE b.table_id = n.table_id AND b.column_id = n.column_id AND NOT EXISTS (SELECT 1 FROM fdl_rb_wcols w"
	" WHERE w.table_id = b.table_id AND w.column_id = b.column_id));"
	"INSERT INTO {N}.ducklake_table_column_stats (table_id, column_id, contains_null, contains_nan, min_value,"
	" max_value, extra_stats) SELECT * FROM fdl_rb_mcols;"
	"INSERT INTO {N}.ducklake_table_column_stats (table_id, column_id, contains_null, contains_nan, min_value,"
	" max_value, extra_stats) SELECT nid, column_id, contains_null, contains_nan, min_value, max_value, extra_stats"
	" FROM fdl_rb_dcols d WHERE NOT EXISTS (SELECT 1 FROM fdl_rb_mcols m WHERE m.table_id = d.nid"
	" AND m.column_id = d.column_id);"
	"DELETE FROM {N}.ducklake_metadata n WHERE EXISTS (SELECT 1 FROM fdl_rb_wmeta w WHERE w.key = n.key"
	" AND w.scope IS NOT DISTINCT FROM n.scope AND w.scope_id IS NOT DISTINCT FROM n.scope_id);"
	"INSERT INTO {N}.ducklake_metadata (key, value, scope, scope_id) SELECT key, value, scope, scope_id"
	" FROM fdl_rb_wmeta";

/* ---- what the result must hold ----------------------------------------------------- */

/* A name taken twice in a schema (tables and views share names, as in
 * DuckDB, without regard to case), a schema name taken twice, a table or
 * view left in a dropped schema. */
static const char names_sql[] =
	"WITH live AS (SELECT schema_id, table_name AS name FROM {N}.ducklake_table WHERE end_snapshot IS NULL"
	"  UNION ALL SELECT schema_id, view_name FROM {N}.ducklake_view WHERE end_snapshot IS NULL),"
	" sch AS (SELECT schema_id, schema_name FROM {N}.ducklake_schema QUALIFY row_number() OVER"
	"  (PARTITION BY schema_id ORDER BY begin_snapshot DESC) = 1)"
	" SELECT coalesce(s.schema_name || '.', '') || min(l.name), 'name',"
	"  'created here and on the tip: two tables or views would have this name'"
	" FROM live l LEFT JOIN sch s USING (schema_id) GROUP BY l.schema_id, s.schema_name, lower(l.name)"
	" HAVING count(*) > 1"
	" UNION ALL SELECT min(schema_name), 'name', 'schema created here and on the tip'"
	" FROM {N}.ducklake_schema WHERE end_snapshot IS NULL GROUP BY lower(schema_name) HAVING count(*) > 1"
	" UNION ALL SELECT coalesce(s.schema_name || '.', '') || l.name, 'schema_dropped',"
	"  'its schema was dropped on one side while the other wrote in it' FROM live l LEFT JOIN sch s USING (schema_id)"
	" WHERE l.schema_id NOT IN (SELECT schema_id FROM {N}.ducklake_schema WHERE end_snapshot IS NULL)";

/* ---- delete files written again ---------------------------------------------------- */

/* The working catalog's own delete files whose rows carry the snapshot that
 * deleted each row (partial_max set): its path parts, to resolve. */
static const char deletes_sql[] =
	"SELECT f.delete_file_id, s.path, s.path_is_relative, t.path, t.path_is_relative, f.path, f.path_is_relative"
	" FROM {W}.ducklake_delete_file f"
	" JOIN (SELECT * FROM {W}.ducklake_table QUALIFY row_number() OVER (PARTITION BY table_id"
	"  ORDER BY begin_snapshot DESC) = 1) t USING (table_id)"
	" JOIN (SELECT * FROM {W}.ducklake_schema QUALIFY row_number() OVER (PARTITION BY schema_id"
	"  ORDER BY begin_snapshot DESC) = 1) s ON s.schema_id = t.schema_id"
	" WHERE f.delete_file_id >= {fb} AND f.partial_max IS NOT NULL ORDER BY f.delete_file_id";

/* COPY one delete file to `to` with its snapshot ids moved, the columns'
 * Parquet field ids kept (DuckLake reads them by id); its size and footer
 * size into the new catalog's row. */
static int rewrite_one(fdl_duck *d, fdl_rebase_plan *p, int64_t id, const char *from, const char *to,
		       const char *row_path, fdl_error *err)
{
	fdl_buf sql = {0};
	fdl_rows r = {0};
	int rc = fdl_buf_puts(&sql, "SELECT string_agg(name || ': ' || field_id, ', ') FROM parquet_schema(", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, from, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ") WHERE field_id IS NOT NULL", err);
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	char *ids = rc ? NULL : fdl_rows_str(&r, 0, 0);
	fdl_rows_free(&r);
	if (!rc && !ids)
		rc = fdl_fail(err, FDL_EINVALID, "%s: the delete file's columns carry no field ids", from);
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    "COPY (SELECT file_path, pos, CASE WHEN _ducklake_internal_snapshot_id > %1$" PRId64
				    " THEN _ducklake_internal_snapshot_id + %2$" PRId64 " ELSE _ducklake_internal_snapshot_id"
				    " END AS _ducklake_internal_snapshot_id FROM read_parquet(",
				    p->base, p->d_snapshot);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, from, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ")) TO ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, to, err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, " (FORMAT parquet, FIELD_IDS {%s}, RETURN_STATS)", ids);
	duckdb_free(ids);
	if (!rc && p->before_write)
		p->before_write(p->payload);
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	if (!rc && fdl_rows_count(&r) != 1)
		rc = fdl_fail(err, FDL_EDUCKDB, "writing %s: DuckDB reported no file", to);
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    "UPDATE %s.ducklake_delete_file SET file_size_bytes = %" PRId64 ", footer_size = %" PRId64
				    ", path = ",
				    p->onto, fdl_rows_int(&r, 2, 0), fdl_rows_int(&r, 3, 0));
	fdl_rows_free(&r);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, row_path, err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, " WHERE delete_file_id = %" PRId64, id + p->d_file);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

/* A new name beside the old file: same folder, DuckLake's pattern. */
static int rewrite_deletes(fdl_duck *d, fdl_rebase_plan *p, fdl_error *err)
{
	fdl_buf sql = {0};
	fdl_rows r = {0};
	fdl_uuid7_gen gen = {0};
	int rc = fdl_rebase_sql(&sql, p, deletes_sql, NULL, NULL, err);
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	for (size_t i = 0; !rc && i < fdl_rows_count(&r); i++) {
		char *rel = NULL, *own = fdl_rows_str(&r, 5, i), *from = NULL, *to = NULL, *row_path = NULL;
		char uuid[FDL_ID_LEN + 1];
		rc = fdl_catalog_resolve_path(&rel, &r, i, 1, "a delete file of the working catalog", err);
		if (!rc)
			rc = fdl_uuid7_next(&gen, uuid, err);
		if (!rc) {
			const char *slash = strrchr(own ? own : "", '/'), *rslash = strrchr(rel, '/');
			int keep = slash ? (int)(slash - own) + 1 : 0, rkeep = rslash ? (int)(rslash - rel) + 1 : 0;
			from = fdl_asprintf("%s%s", p->data_path, rel);
			to = fdl_asprintf("%s%.*sducklake-%s-delete.parquet", p->data_path, rkeep, rel, uuid);
			row_path = fdl_asprintf("%.*sducklake-%s-delete.parquet", keep, own ? own : "", uuid);
			if (!from || !to || !row_path)
				rc = fdl_oom(err);
		}
		if (!rc)
			rc = rewrite_one(d, p, fdl_rows_int(&r, 0, i), from, to, row_path, err);
		if (!rc)
			p->delete_files++;
		if (!rc)
			rc = fdl_strlist_add(&p->replaced, rel, err);
		free(rel);
		free(from);
		free(to);
		free(row_path);
		duckdb_free(own);
	}
	fdl_rows_free(&r);
	if (rc)
		fdl_error_prefix(err, "writing a delete file again with its snapshot ids moved");
	return rc;
}

/* ---- the replay -------------------------------------------------------------------- */

/* The new catalog's tables and their columns, in order. */
typedef struct table_cols {
	fdl_strlist names;
	fdl_strlist *cols;
} table_cols;

static void table_cols_free(table_cols *t)
{
	for (size_t i = 0; i < t->names.len; i++)
		fdl_strlist_free(&t->cols[i]);
	free(t->cols);
	fdl_strlist_free(&t->names);
}

static int read_cols(table_cols *out, fdl_duck *d, const char *alias, fdl_error *err)
{
	fdl_buf sql = {0};
	fdl_rows r = {0};
	int rc = fdl_buf_puts(&sql, "SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, alias, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, " ORDER BY table_name, column_index", err);
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	for (size_t i = 0; !rc && i < fdl_rows_count(&r); i++) {
		char *t = fdl_rows_str(&r, 0, i), *c = fdl_rows_str(&r, 1, i);
		if (!t || !c)
			rc = fdl_oom(err);
		if (!rc && (!out->names.len || strcmp(out->names.items[out->names.len - 1], t))) {
			fdl_strlist *grown = realloc(out->cols, (out->names.len + 1) * sizeof *grown);
			if (!grown)
				rc = fdl_oom(err);
			else {
				out->cols = grown;
				memset(&grown[out->names.len], 0, sizeof *grown);
				rc = fdl_strlist_add(&out->names, t, err);
			}
		}
		if (!rc)
			rc = fdl_strlist_add(&out->cols[out->names.len - 1], c, err);
		duckdb_free(t);
		duckdb_free(c);
	}
	fdl_rows_free(&r);
	return rc;
}

/* Every table's rows, then the checks: conflicts end the replay here. */
static int replay_rows(fdl_duck *d, fdl_rebase_plan *p, const table_cols *tc, fdl_error *err)
{
	size_t before = json_array_size(p->conflicts);
	int rc = 0;
	for (size_t i = 0; !rc && i < tc->names.len; i++) {
		const char *t = tc->names.items[i], *key;
		fdl_rebase_kind k = fdl_rebase_table_kind(t, &key);
		if (k == REBASE_VERSIONED || k == REBASE_SNAPSHOT || k == REBASE_FILE || k == REBASE_CHILD)
			rc = insert_rows(d, p, t, &tc->cols[i], k, key, err);
		const char *const end[] = {"end_snapshot", NULL};
		bool ends = false;
		for (size_t c = 0; c < tc->cols[i].len; c++)
			ends = ends || one_of(tc->cols[i].items[c], end);
		if (!rc && k == REBASE_VERSIONED && ends)
			rc = end_rows(d, p, t, &tc->cols[i], key, err);
	}
	if (!rc)
		rc = fdl_rebase_exec(d, p, taken_over_sql, err);
	if (!rc)
		rc = fdl_rebase_conflicts_from(d, p, dangling_sql, err);
	if (!rc)
		rc = fdl_rebase_conflicts_from(d, p, orphaned_sql, err);
	if (!rc)
		rc = fdl_rebase_conflicts_from(d, p, names_sql, err);
	if (!rc && json_array_size(p->conflicts) > before)
		rc = FDL_ECONFLICT;
	return rc;
}

int fdl_catalog_rebase_apply(fdl_rebase_plan *p, fdl_duck *d, fdl_error *err)
{
	table_cols tc = {0};
	int64_t bad = 0;
	int rc = read_cols(&tc, d, p->onto, err);
	if (!rc)
		rc = fdl_rebase_int(d, p, &bad,
				    "SELECT count(*) FROM {W}.ducklake_snapshot_changes WHERE snapshot_id > {b} AND"
				    " array_to_string(regexp_extract_all(changes_made, " CHANGE_ITEM "), ',') <> changes_made",
				    err);
	if (!rc && bad)
		rc = fdl_fail(err, FDL_EINVALID, "%" PRId64 " snapshot(s) of the working catalog record changes_made in a "
			      "form fdl rebase does not read", bad);
	if (!rc)
		rc = fdl_duck_exec(d, macros_sql, err);
	if (!rc)
		rc = fdl_rebase_exec(d, p, changed_sql, err);
	if (!rc)
		rc = fdl_duck_exec(d, "BEGIN TRANSACTION", err);
	if (rc) {
		table_cols_free(&tc);
		return rc;
	}
	rc = replay_rows(d, p, &tc, err);
	if (!rc)
		rc = fdl_rebase_exec(d, p, merge_sql, err);
	if (!rc)
		rc = rewrite_deletes(d, p, err);
	if (!rc)
		rc = fdl_duck_exec(d, "COMMIT", err);
	else
		fdl_duck_exec(d, "ROLLBACK", NULL);
	if (rc == FDL_ECONFLICT)
		fdl_fail(err, FDL_ECONFLICT, "the replay found %zu conflict(s)", json_array_size(p->conflicts));
	table_cols_free(&tc);
	return rc;
}
