/* How a table reads without DuckLake (docs/format.md, files.json's
 * "columns", "schema_changed" and "unreadable", fdl's additions): the facts a
 * reader of plain Parquet needs, derived from a frozen catalog attached raw,
 * and the one reading of a table from those facts in stock DuckDB (fdl
 * export). The page reads the same way in DuckDB-Wasm (web/src/app.js). */
#include "duck.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct fdl_reading {
	fdl_rows cols;  /* live columns: table_id, column_id, name, type, initial_default, parent_column */
	fdl_rows facts; /* tables with data files: table_id, schema_changed, reason or NULL */
};

static const char COLUMNS_SQL[] =
	"SELECT table_id, column_id, column_name, column_type, initial_default, parent_column"
	" FROM {db}.ducklake_column WHERE end_snapshot IS NULL ORDER BY table_id, column_order";

/* Per table with live data files: whether a top-level column began after
 * its first file (added, renamed, retyped, re-added: each file's columns
 * must be mapped by field id), and the first reason a reader without the
 * catalog cannot read it as DuckLake does. */
static const char FACTS_SQL[] =
	"WITH snap AS (SELECT max(snapshot_id) AS s FROM {db}.ducklake_snapshot),"
	" f AS (SELECT table_id, min(begin_snapshot) AS first FROM {db}.ducklake_data_file"
	"       WHERE end_snapshot IS NULL GROUP BY table_id),"
	" live AS (SELECT * FROM {db}.ducklake_data_file WHERE end_snapshot IS NULL),"
	" dels AS (SELECT * FROM {db}.ducklake_delete_file WHERE end_snapshot IS NULL),"
	" why AS ("
	"  SELECT table_id, 'its data file ' || path || ' has no Parquet field ids (it was added with"
	" ducklake_add_data_files and the catalog maps its columns by name)' AS reason FROM live WHERE mapping_id IS NOT NULL"
	"  UNION ALL SELECT table_id, 'its data file ' || path || ' is encrypted with a key kept in the catalog'"
	"   FROM live WHERE encryption_key IS NOT NULL"
	"  UNION ALL SELECT table_id, 'its data file ' || path || ' holds rows of snapshots after this version''s'"
	"   FROM live, snap WHERE partial_max > snap.s"
	"  UNION ALL SELECT table_id, 'its delete file ' || path || ' is ' || format || ', not Parquet'"
	"   FROM dels WHERE coalesce(format, 'parquet') <> 'parquet'"
	"  UNION ALL SELECT table_id, 'its delete file ' || path || ' is encrypted with a key kept in the catalog'"
	"   FROM dels WHERE encryption_key IS NOT NULL"
	"  UNION ALL SELECT table_id, 'its delete file ' || path || ' holds deletes of snapshots after this version''s'"
	"   FROM dels, snap WHERE partial_max > snap.s"
	"  UNION ALL SELECT c.table_id, 'the field ' || c.column_name || ' of a nested column was added, dropped,"
	" renamed or retyped after some of its data files were written'"
	"   FROM {db}.ducklake_column c JOIN f ON f.table_id = c.table_id"
	"   WHERE c.parent_column IS NOT NULL AND (c.begin_snapshot > f.first OR c.end_snapshot > f.first)"
	"   AND c.parent_column IN (SELECT column_id FROM {db}.ducklake_column p"
	"                           WHERE p.table_id = c.table_id AND p.end_snapshot IS NULL))"
	" SELECT f.table_id,"
	"  EXISTS (SELECT 1 FROM {db}.ducklake_column c WHERE c.table_id = f.table_id AND c.parent_column IS NULL"
	"          AND c.end_snapshot IS NULL AND c.begin_snapshot > f.first),"
	"  (SELECT min(reason) FROM why WHERE why.table_id = f.table_id)"
	" FROM f ORDER BY f.table_id";

void fdl_reading_free(fdl_reading *rd)
{
	if (!rd)
		return;
	fdl_rows_free(&rd->cols);
	fdl_rows_free(&rd->facts);
	free(rd);
}

int fdl_reading_load(fdl_reading **out, fdl_duck *d, const char *alias, fdl_error *err)
{
	fdl_reading *rd = calloc(1, sizeof *rd);
	if (!rd)
		return fdl_oom(err);
	fdl_buf sql = {0};
	int rc = fdl_duck_query_built(d, &rd->cols, &sql, fdl_sql_with_db(&sql, COLUMNS_SQL, alias, err), err);
	if (!rc)
		rc = fdl_duck_query_built(d, &rd->facts, &sql, fdl_sql_with_db(&sql, FACTS_SQL, alias, err), err);
	if (rc) {
		fdl_reading_free(rd);
		return fdl_error_prefix(err, "reading how the catalog's tables read as plain Parquet");
	}
	*out = rd;
	return 0;
}

/* DuckLake's name of a primitive type as DuckDB SQL (both engines the
 * readers use parse these spellings). */
static const char *sql_type_name(const char *t)
{
	static const char *const map[][2] = {
		{"boolean", "BOOLEAN"},     {"int8", "TINYINT"},
		{"int16", "SMALLINT"},      {"int32", "INTEGER"},
		{"int64", "BIGINT"},        {"int128", "HUGEINT"},
		{"uint8", "UTINYINT"},      {"uint16", "USMALLINT"},
		{"uint32", "UINTEGER"},     {"uint64", "UBIGINT"},
		{"uint128", "UHUGEINT"},    {"float32", "FLOAT"},
		{"float64", "DOUBLE"},      {"date", "DATE"},
		{"time", "TIME"},           {"timetz", "TIME WITH TIME ZONE"},
		{"timestamp", "TIMESTAMP"}, {"timestamptz", "TIMESTAMP WITH TIME ZONE"},
		{"timestamp_s", "TIMESTAMP_S"}, {"timestamp_ms", "TIMESTAMP_MS"},
		{"timestamp_ns", "TIMESTAMP_NS"}, {"interval", "INTERVAL"},
		{"varchar", "VARCHAR"},     {"blob", "BLOB"},
		{"uuid", "UUID"},           {"json", "JSON"},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (!strcmp(t, map[i][0]))
			return map[i][1];
	return NULL;
}

/* The DuckDB type of column row `row` (its children follow in the same
 * table's rows), appended to b. */
static int sql_type(fdl_buf *b, fdl_rows *c, size_t row, fdl_error *err)
{
	char *t = fdl_rows_str(c, 3, row);
	int64_t table = fdl_rows_int(c, 0, row), id = fdl_rows_int(c, 1, row);
	bool st = t && !strcmp(t, "struct"), list = t && !strcmp(t, "list"), map = t && !strcmp(t, "map");
	const char *name = t ? sql_type_name(t) : NULL;
	int rc = 0, n = 0;
	if (st || map)
		rc = fdl_buf_puts(b, st ? "STRUCT(" : "MAP(", err);
	else if (name)
		rc = fdl_buf_puts(b, name, err);
	else if (t && !list) { /* decimal(p,s), geometry, variant, …: DuckDB's own spelling, upper case */
		size_t at = b->len;
		rc = fdl_buf_puts(b, t, err);
		for (size_t k = at; !rc && k < b->len; k++)
			b->data[k] = (char)toupper((unsigned char)b->data[k]);
	}
	for (size_t i = 0; (st || list || map) && !rc && i < fdl_rows_count(c); i++) {
		if (fdl_rows_int(c, 0, i) != table || fdl_rows_null(c, 5, i) || fdl_rows_int(c, 5, i) != id)
			continue;
		if (n++)
			rc = fdl_buf_puts(b, ", ", err);
		if (!rc && st) {
			char *field = fdl_rows_str(c, 2, i);
			rc = fdl_buf_sql_ident(b, field ? field : "", err);
			duckdb_free(field);
			if (!rc)
				rc = fdl_buf_puts(b, " ", err);
		}
		if (!rc)
			rc = sql_type(b, c, i, err);
	}
	if (!rc && (st || map))
		rc = fdl_buf_puts(b, ")", err);
	else if (!rc && list)
		rc = fdl_buf_puts(b, "[]", err);
	if (!rc && !t)
		rc = fdl_fail(err, FDL_EINVALID, "a column of table %lld has no type", (long long)table);
	duckdb_free(t);
	return rc;
}

static int column_json(json_t *cols, fdl_rows *c, size_t i, fdl_error *err)
{
	fdl_buf type = {0};
	char *name = fdl_rows_str(c, 2, i), *dflt = fdl_rows_str(c, 4, i);
	int rc = sql_type(&type, c, i, err);
	json_t *col = rc ? NULL
			 : json_pack("{s:s, s:I, s:s}", "name", name ? name : "", "field_id",
				     (json_int_t)fdl_rows_int(c, 1, i), "type", type.data);
	if (col && dflt)
		json_object_set_new(col, "initial_default", json_string(dflt));
	if (!rc && (!col || json_array_append_new(cols, col)))
		rc = fdl_oom(err);
	duckdb_free(name);
	duckdb_free(dflt);
	fdl_buf_free(&type);
	return rc;
}

int fdl_reading_describe(fdl_reading *rd, json_t *table, int64_t table_id, fdl_error *err)
{
	json_t *cols = json_array();
	int rc = cols ? 0 : fdl_oom(err);
	for (size_t i = 0; !rc && i < fdl_rows_count(&rd->cols); i++)
		if (fdl_rows_int(&rd->cols, 0, i) == table_id && fdl_rows_null(&rd->cols, 5, i))
			rc = column_json(cols, &rd->cols, i, err);
	if (rc) {
		json_decref(cols);
		return rc;
	}
	if (json_object_set_new(table, "columns", cols))
		return fdl_oom(err);
	bool changed = false;
	for (size_t i = 0; !rc && i < fdl_rows_count(&rd->facts); i++) {
		if (fdl_rows_int(&rd->facts, 0, i) != table_id)
			continue;
		changed = fdl_rows_int(&rd->facts, 1, i) != 0;
		char *why = fdl_rows_str(&rd->facts, 2, i);
		if (why && json_object_set_new(table, "unreadable", json_string(why)))
			rc = fdl_oom(err);
		duckdb_free(why);
	}
	if (!rc && json_object_set_new(table, "schema_changed", json_boolean(changed)))
		rc = fdl_oom(err);
	return rc;
}

/* ---- the reading, in stock DuckDB ------------------------------------------ */

/* read_parquet's schema: each column by field id, with the value of files
 * written before it existed. */
static int schema_map(fdl_buf *b, const json_t *cols, fdl_error *err)
{
	size_t i;
	const json_t *c;
	int rc = fdl_buf_puts(b, "MAP {", err);
	json_array_foreach(cols, i, c)
	{
		const char *dflt = json_string_value(json_object_get(c, "initial_default"));
		if (!rc)
			rc = fdl_buf_printf(b, err, "%s%lld: {name: ", i ? ", " : "",
					    (long long)json_integer_value(json_object_get(c, "field_id")));
		if (!rc)
			rc = fdl_buf_sql_str(b, json_string_value(json_object_get(c, "name")), err);
		if (!rc)
			rc = fdl_buf_puts(b, ", type: ", err);
		if (!rc)
			rc = fdl_buf_sql_str(b, json_string_value(json_object_get(c, "type")), err);
		if (!rc)
			rc = fdl_buf_puts(b, ", default_value: ", err);
		if (!rc)
			rc = dflt ? fdl_buf_sql_str(b, dflt, err) : fdl_buf_puts(b, "NULL::VARCHAR", err);
		if (!rc)
			rc = fdl_buf_puts(b, "}", err);
	}
	return rc ? rc : fdl_buf_puts(b, "}", err);
}

/* The deleted rows: (fdl_file, fdl_pos) of every delete file. */
static int deleted_rows(fdl_buf *b, const fdl_plain_file *files, size_t n, fdl_error *err)
{
	int rc = 0, k = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!files[i].deletes)
			continue;
		rc = fdl_buf_puts(b, k++ ? " UNION ALL SELECT " : "SELECT ", err);
		if (!rc)
			rc = fdl_buf_sql_str(b, files[i].data, err);
		if (!rc)
			rc = fdl_buf_puts(b, " AS fdl_file, pos AS fdl_pos FROM read_parquet(", err);
		if (!rc)
			rc = fdl_buf_sql_str(b, files[i].deletes, err);
		if (!rc)
			rc = fdl_buf_puts(b, ")", err);
	}
	return rc;
}

int fdl_catalog_read_plain(fdl_duck *d, const json_t *table, const fdl_plain_file *files, size_t n, const char *to,
			   fdl_error *err)
{
	const json_t *cols = json_object_get(table, "columns");
	const char *why = json_string_value(json_object_get(table, "unreadable"));
	if (why)
		return fdl_fail(err, FDL_EINVALID, "a reader of plain Parquet cannot read it as DuckLake does: %s", why);
	if (!json_array_size(cols) || !n)
		return fdl_fail(err, FDL_EINVALID, "no columns or no data files to read");
	bool deletes = false;
	for (size_t i = 0; i < n; i++)
		deletes = deletes || files[i].deletes;
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "COPY (SELECT ", err);
	size_t i;
	const json_t *c;
	json_array_foreach(cols, i, c)
	{
		if (!rc && i)
			rc = fdl_buf_puts(&sql, ", ", err);
		if (!rc)
			rc = fdl_buf_puts(&sql, "d.", err);
		if (!rc)
			rc = fdl_buf_sql_ident(&sql, json_string_value(json_object_get(c, "name")), err);
	}
	if (!rc)
		rc = fdl_buf_puts(&sql, " FROM read_parquet([", err);
	for (size_t k = 0; k < n && !rc; k++) {
		if (k)
			rc = fdl_buf_puts(&sql, ", ", err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, files[k].data, err);
	}
	if (!rc)
		rc = fdl_buf_puts(&sql, "], schema = ", err);
	if (!rc)
		rc = schema_map(&sql, cols, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, deletes ? ", hive_partitioning = false, filename = 'fdl_file', file_row_number = true) d"
						  " LEFT JOIN ("
						: ", hive_partitioning = false) d",
				  err);
	if (!rc && deletes)
		rc = deleted_rows(&sql, files, n, err);
	if (!rc && deletes)
		rc = fdl_buf_puts(&sql, ") x ON d.fdl_file = x.fdl_file AND d.file_row_number = x.fdl_pos"
					" WHERE x.fdl_pos IS NULL", err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ") TO ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, to, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, " (FORMAT parquet)", err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}
