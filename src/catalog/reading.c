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
	/* every column row, ended or not: table_id, column_id, name, type,
	 * initial_default, parent_column, begin_snapshot, end_snapshot */
	fdl_rows cols;
	const fdl_data_files *files; /* the live data files, with their first reason (FILES_SQL) */
	int64_t *renamed;            /* tables with a column that had two names, sorted */
	size_t nrenamed;
};

enum { C_TABLE, C_ID, C_NAME, C_TYPE, C_DEFAULT, C_PARENT, C_BEGIN, C_END };

/* Ordered within a table by position, then id and age: the live rows keep
 * the order they have alone, and ties among ended rows are settled. */
static const char COLUMNS_SQL[] =
	"SELECT table_id, column_id, column_name, column_type, initial_default, parent_column, begin_snapshot,"
	" end_snapshot FROM {db}.ducklake_column ORDER BY table_id, column_order, column_id, begin_snapshot";

static bool live(fdl_rows *c, size_t i)
{
	return fdl_rows_null(c, C_END, i);
}

void fdl_reading_free(fdl_reading *rd)
{
	if (!rd)
		return;
	fdl_rows_free(&rd->cols);
	free(rd->renamed);
	free(rd);
}

typedef struct col_name {
	int64_t table, id;
	char *name;
} col_name;

static int by_column(const void *a, const void *b)
{
	const col_name *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The tables where one column_id had two names over the history: each
 * file's columns must be found by field id (files.json's renamed_columns). */
static int find_renamed(fdl_reading *rd, fdl_error *err)
{
	size_t n = fdl_rows_count(&rd->cols);
	col_name *c = n ? calloc(n, sizeof *c) : NULL;
	rd->renamed = n ? calloc(n, sizeof *rd->renamed) : NULL;
	int rc = n && (!c || !rd->renamed) ? fdl_oom(err) : 0;
	for (size_t i = 0; i < n && !rc; i++) {
		c[i] = (col_name){fdl_rows_int(&rd->cols, C_TABLE, i), fdl_rows_int(&rd->cols, C_ID, i),
				  fdl_rows_str(&rd->cols, C_NAME, i)};
		if (!c[i].name && !fdl_rows_null(&rd->cols, C_NAME, i))
			rc = fdl_oom(err);
	}
	if (!rc && n)
		qsort(c, n, sizeof *c, by_column);
	/* as GROUP BY table_id, column_id HAVING min(name) <> max(name) */
	const char *first = NULL;
	for (size_t i = 0; i < n && !rc; i++) {
		if (!i || c[i].table != c[i - 1].table || c[i].id != c[i - 1].id)
			first = NULL;
		if (!first)
			first = c[i].name;
		else if (c[i].name && strcmp(first, c[i].name) &&
			 (!rd->nrenamed || rd->renamed[rd->nrenamed - 1] != c[i].table))
			rd->renamed[rd->nrenamed++] = c[i].table;
	}
	for (size_t i = 0; i < n && c; i++)
		duckdb_free(c[i].name);
	free(c);
	return rc;
}

int fdl_reading_load(fdl_reading **out, fdl_duck *d, const char *alias, const fdl_data_files *files,
		     fdl_error *err)
{
	fdl_reading *rd = calloc(1, sizeof *rd);
	if (!rd)
		return fdl_oom(err);
	rd->files = files;
	fdl_buf sql = {0};
	int rc = fdl_duck_query_built(d, &rd->cols, &sql, fdl_sql_with_db(&sql, COLUMNS_SQL, alias, err), err);
	if (!rc)
		rc = find_renamed(rd, err);
	if (rc) {
		fdl_reading_free(rd);
		return fdl_error_prefix(err, "reading how the catalog's tables read as plain Parquet");
	}
	*out = rd;
	return 0;
}

bool fdl_reading_renamed(const fdl_reading *rd, int64_t table_id)
{
	for (size_t i = 0; i < rd->nrenamed; i++)
		if (rd->renamed[i] == table_id)
			return true;
	return false;
}

int fdl_reading_field_ids(json_t **out, fdl_reading *rd, int64_t table_id, fdl_error *err)
{
	json_t *ids = json_object();
	for (size_t i = 0; ids && i < fdl_rows_count(&rd->cols); i++) {
		if (fdl_rows_int(&rd->cols, C_TABLE, i) != table_id || !live(&rd->cols, i) ||
		    !fdl_rows_null(&rd->cols, C_PARENT, i))
			continue;
		char *name = fdl_rows_str(&rd->cols, C_NAME, i);
		if (!name || json_object_set_new(ids, name, json_integer(fdl_rows_int(&rd->cols, C_ID, i)))) {
			json_decref(ids);
			ids = NULL;
		}
		duckdb_free(name);
	}
	*out = ids;
	return ids ? 0 : fdl_oom(err);
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
		if (fdl_rows_int(c, C_TABLE, i) != table || fdl_rows_null(c, C_PARENT, i) ||
		    fdl_rows_int(c, C_PARENT, i) != id || !live(c, i))
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

/* A live column of `table` with id `id`. */
static bool live_column(fdl_rows *c, int64_t table, int64_t id)
{
	for (size_t i = 0; i < fdl_rows_count(c); i++)
		if (fdl_rows_int(c, C_TABLE, i) == table && fdl_rows_int(c, C_ID, i) == id && live(c, i))
			return true;
	return false;
}

/* Keep in *why the least of it and `reason` (bytewise, as DuckDB's min()),
 * taking `reason` (malloc'd) in. */
static int least_reason(char **why, char *reason, fdl_error *err)
{
	if (!reason)
		return fdl_oom(err);
	if (!*why || strcmp(reason, *why) < 0) {
		free(*why);
		*why = reason;
	} else
		free(reason);
	return 0;
}

/* For a table with live data files: whether a top-level column began
 * after its first one (added, renamed, retyped, re-added: each file's
 * columns must be mapped by field id), and the first reason a reader
 * without the catalog cannot read it as DuckLake does (*why, NULL: none):
 * a file's own (FILES_SQL), or a field of a nested column that changed
 * after the first file. */
static int table_facts(fdl_reading *rd, int64_t table_id, bool *changed, char **why, fdl_error *err)
{
	const fdl_data_files *f = rd->files;
	bool any = false;
	int64_t first = 0;
	int rc = 0;
	*changed = false;
	*why = NULL;
	for (size_t k = 0; f && k < f->len && !rc; k++) {
		if (f->items[k].table_id != table_id)
			continue;
		first = any && first < f->items[k].begin_snapshot ? first : f->items[k].begin_snapshot;
		any = true;
		if (f->items[k].unreadable)
			rc = least_reason(why, fdl_strdup(f->items[k].unreadable), err);
	}
	fdl_rows *c = &rd->cols;
	for (size_t i = 0; any && !rc && i < fdl_rows_count(c); i++) {
		if (fdl_rows_int(c, C_TABLE, i) != table_id)
			continue;
		bool top = fdl_rows_null(c, C_PARENT, i), late = fdl_rows_int(c, C_BEGIN, i) > first;
		if (top && live(c, i) && late)
			*changed = true;
		if (top || !(late || (!live(c, i) && fdl_rows_int(c, C_END, i) > first)) ||
		    !live_column(c, table_id, fdl_rows_int(c, C_PARENT, i)))
			continue;
		char *field = fdl_rows_str(c, C_NAME, i);
		rc = least_reason(why, fdl_asprintf("the field %s of a nested column was added, dropped, renamed or "
						    "retyped after some of its data files were written", field ? field : ""),
				  err);
		duckdb_free(field);
	}
	return rc;
}

int fdl_reading_describe(fdl_reading *rd, json_t *table, int64_t table_id, fdl_error *err)
{
	json_t *cols = json_array();
	int rc = cols ? 0 : fdl_oom(err);
	for (size_t i = 0; !rc && i < fdl_rows_count(&rd->cols); i++)
		if (fdl_rows_int(&rd->cols, C_TABLE, i) == table_id && fdl_rows_null(&rd->cols, C_PARENT, i) &&
		    live(&rd->cols, i))
			rc = column_json(cols, &rd->cols, i, err);
	if (rc) {
		json_decref(cols);
		return rc;
	}
	if (json_object_set_new(table, "columns", cols))
		return fdl_oom(err);
	bool changed = false;
	char *why = NULL;
	rc = table_facts(rd, table_id, &changed, &why, err);
	if (!rc && why && json_object_set_new(table, "unreadable", json_string(why)))
		rc = fdl_oom(err);
	free(why);
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

/* The file list `[data, ...]` of files[0..n), appended to b. */
static int file_list(fdl_buf *b, const fdl_plain_file *files, size_t n, fdl_error *err)
{
	int rc = fdl_buf_puts(b, "[", err);
	for (size_t k = 0; k < n && !rc; k++) {
		if (k)
			rc = fdl_buf_puts(b, ", ", err);
		if (!rc)
			rc = fdl_buf_sql_str(b, files[k].data, err);
	}
	return rc ? rc : fdl_buf_puts(b, "]", err);
}

int fdl_reading_plain_sql(fdl_buf *sql, const json_t *table, const fdl_plain_file *files, size_t n, bool ordered,
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
	int rc = fdl_buf_puts(sql, "SELECT ", err);
	size_t i;
	const json_t *c;
	json_array_foreach(cols, i, c)
	{
		if (!rc && i)
			rc = fdl_buf_puts(sql, ", ", err);
		if (!rc)
			rc = fdl_buf_puts(sql, "d.", err);
		if (!rc)
			rc = fdl_buf_sql_ident(sql, json_string_value(json_object_get(c, "name")), err);
	}
	if (!rc)
		rc = fdl_buf_puts(sql, " FROM read_parquet(", err);
	if (!rc)
		rc = file_list(sql, files, n, err);
	if (!rc)
		rc = fdl_buf_puts(sql, ", schema = ", err);
	if (!rc)
		rc = schema_map(sql, cols, err);
	if (!rc)
		rc = fdl_buf_puts(sql, deletes ? ", hive_partitioning = false, filename = 'fdl_file', file_row_number = true) d"
						  " LEFT JOIN ("
						: ", hive_partitioning = false) d",
				  err);
	if (!rc && deletes)
		rc = deleted_rows(sql, files, n, err);
	if (!rc && deletes)
		rc = fdl_buf_puts(sql, ") x ON d.fdl_file = x.fdl_file AND d.file_row_number = x.fdl_pos"
					" WHERE x.fdl_pos IS NULL", err);
	/* a join need not keep the scan's order: said again */
	if (!rc && deletes && ordered)
		rc = fdl_buf_puts(sql, " ORDER BY list_position(", err);
	if (!rc && deletes && ordered)
		rc = file_list(sql, files, n, err);
	if (!rc && deletes && ordered)
		rc = fdl_buf_puts(sql, ", d.fdl_file), d.file_row_number", err);
	return rc;
}

int fdl_catalog_read_plain(fdl_duck *d, const json_t *table, const fdl_plain_file *files, size_t n, const char *to,
			   fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "COPY (", err);
	if (!rc)
		rc = fdl_reading_plain_sql(&sql, table, files, n, false, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ") TO ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, to, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, " (FORMAT parquet, USE_TMP_FILE false)", err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}
