/* dataset.json's "tables" from a frozen catalog attached raw: its live
 * tables (rows, top-level fields, COMMENT ON texts), then its views. One
 * statement of plain scans, joined here: on catalogs this small DuckDB
 * spends more planning a correlated subquery than reading the rows, and
 * the three statements this replaced took 5 of a one-row commit's ms. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

/* Rows by kind (column 0), each kind ordered by id (column 1), then
 * column_order and column_id (2, 3). */
static const char TABLES_SQL[] =
	"SELECT 0 AS k, t.table_id AS id, NULL::BIGINT AS ord, NULL::BIGINT AS sub, s.schema_name AS a,"
	" t.table_name AS b, NULL::VARCHAR AS c, NULL::BOOLEAN AS flag"
	" FROM {db}.ducklake_table t JOIN {db}.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL"
	" WHERE t.end_snapshot IS NULL"
	" UNION ALL SELECT 1, table_id, column_order, column_id, column_name, column_type, NULL, nulls_allowed"
	" FROM {db}.ducklake_column WHERE end_snapshot IS NULL AND parent_column IS NULL"
	" UNION ALL SELECT 2, v.view_id, NULL, NULL, s.schema_name, v.view_name, v.sql, NULL"
	" FROM {db}.ducklake_view v JOIN {db}.ducklake_schema s ON s.schema_id = v.schema_id AND s.end_snapshot IS NULL"
	" WHERE v.end_snapshot IS NULL"
	" UNION ALL SELECT 3, object_id, NULL, NULL, value, NULL, NULL, NULL"
	" FROM {db}.ducklake_tag WHERE key = 'comment' AND end_snapshot IS NULL"
	" UNION ALL SELECT 4, table_id, NULL, column_id, value, NULL, NULL, NULL"
	" FROM {db}.ducklake_column_tag WHERE key = 'comment' AND end_snapshot IS NULL"
	" ORDER BY 1, 2, 3, 4, 5";

enum { K_TABLE, K_COLUMN, K_VIEW, K_TAG, K_COLUMN_TAG, K_KINDS };

typedef struct described {
	fdl_rows r;
	size_t at[K_KINDS + 1]; /* kind k's rows: [at[k], at[k + 1]) */
} described;

/* The first row of kind k whose id is `id` (and column 3 `sub`, when
 * sub >= 0); SIZE_MAX when none. */
static size_t find(described *ds, int k, int64_t id, int64_t sub)
{
	size_t lo = ds->at[k], hi = ds->at[k + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t i = fdl_rows_int(&ds->r, 1, mid), s = sub >= 0 ? fdl_rows_int(&ds->r, 3, mid) : 0;
		if (i < id || (i == id && sub >= 0 && s < sub))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ds->at[k + 1] && fdl_rows_int(&ds->r, 1, lo) == id &&
	    (sub < 0 || fdl_rows_int(&ds->r, 3, lo) == sub))
		return lo;
	return SIZE_MAX;
}

/* o's "description": the comment row `row` holds, when one does. */
static int describe(json_t *o, described *ds, size_t row)
{
	char *text = row == SIZE_MAX ? NULL : fdl_rows_str(&ds->r, 4, row);
	int rc = text && *text ? json_object_set_new(o, "description", json_string(text)) : 0;
	duckdb_free(text);
	return rc;
}

/* An object of text fields (key, column) pairs from row `row`. */
static json_t *texts(described *ds, size_t row, const char *k1, size_t c1, const char *k2, size_t c2)
{
	char *a = fdl_rows_str(&ds->r, c1, row), *b = fdl_rows_str(&ds->r, c2, row);
	json_t *o = json_pack("{s:s, s:s}", k1, a ? a : "", k2, b ? b : "");
	duckdb_free(a);
	duckdb_free(b);
	return o;
}

/* Take `o` into `tables` when `ok`, else drop it (the _new calls take
 * their value, even when they fail). */
static int append(json_t *tables, json_t *o, bool ok)
{
	if (!ok) {
		json_decref(o);
		return -1;
	}
	return json_array_append_new(tables, o);
}

/* The fields of table `id`: its column rows, from *at on (in table order). */
static json_t *fields_of(described *ds, int64_t id, size_t *at)
{
	json_t *fields = json_array();
	for (; *at < ds->at[K_COLUMN + 1] && fdl_rows_int(&ds->r, 1, *at) < id; (*at)++)
		;
	for (; fields && *at < ds->at[K_COLUMN + 1] && fdl_rows_int(&ds->r, 1, *at) == id; (*at)++) {
		size_t i = *at;
		json_t *f = texts(ds, i, "name", 4, "type", 5);
		bool nullable = fdl_rows_null(&ds->r, 7, i) || fdl_rows_int(&ds->r, 7, i) != 0;
		bool ok = f && !json_object_set_new(f, "nullable", json_boolean(nullable)) &&
			  !describe(f, ds, find(ds, K_COLUMN_TAG, id, fdl_rows_int(&ds->r, 3, i)));
		if (append(fields, f, ok)) {
			json_decref(fields);
			fields = NULL;
		}
	}
	return fields;
}

/* Each table's rows: its files' less their deleted ones. */
static int64_t *table_rows(described *ds, const fdl_data_files *files)
{
	size_t n = ds->at[K_TABLE + 1] - ds->at[K_TABLE];
	int64_t *rows = calloc(n + 1, sizeof *rows);
	for (size_t k = 0; rows && k < files->len; k++) {
		size_t t = find(ds, K_TABLE, files->items[k].table_id, -1);
		if (t != SIZE_MAX)
			rows[t - ds->at[K_TABLE]] += files->items[k].rows - files->items[k].delete_rows;
	}
	return rows;
}

static int add_all(json_t *tables, described *ds, const fdl_data_files *files)
{
	int64_t *rows = table_rows(ds, files);
	size_t at = ds->at[K_COLUMN];
	int rc = rows ? 0 : -1;
	for (size_t i = ds->at[K_TABLE]; !rc && i < ds->at[K_TABLE + 1]; i++) {
		int64_t id = fdl_rows_int(&ds->r, 1, i);
		json_t *t = texts(ds, i, "schema", 4, "name", 5), *fields = fields_of(ds, id, &at);
		bool ok = t && fields && !describe(t, ds, find(ds, K_TAG, id, -1)) &&
			  !json_object_set_new(t, "rows", json_integer(rows[i - ds->at[K_TABLE]]));
		if (!ok)
			json_decref(fields);
		rc = append(tables, t, ok && !json_object_set_new(t, "fields", fields));
	}
	for (size_t i = ds->at[K_VIEW]; !rc && i < ds->at[K_VIEW + 1]; i++) {
		json_t *v = texts(ds, i, "schema", 4, "name", 5);
		char *sql = fdl_rows_str(&ds->r, 6, i);
		rc = append(tables, v, v && !json_object_set_new(v, "kind", json_string("view")) &&
					       !json_object_set_new(v, "sql", json_string(sql ? sql : "")) &&
					       !describe(v, ds, find(ds, K_TAG, fdl_rows_int(&ds->r, 1, i), -1)));
		duckdb_free(sql);
	}
	free(rows);
	return rc;
}

int fdl_catalog_tables_json(json_t **out, fdl_duck *d, const char *alias, const fdl_data_files *files,
			    fdl_error *err)
{
	described ds = {0};
	fdl_buf sql = {0};
	int rc = fdl_sql_with_db(&sql, TABLES_SQL, alias, err);
	if ((rc = fdl_duck_query_built(d, &ds.r, &sql, rc, err)))
		return fdl_error_prefix(err, "listing the catalog's tables, columns and views");
	size_t n = fdl_rows_count(&ds.r);
	for (int k = 0, i = 0; k <= K_KINDS; k++) {
		while ((size_t)i < n && fdl_rows_int(&ds.r, 0, (size_t)i) < k)
			i++;
		ds.at[k] = (size_t)i;
	}
	ds.at[K_KINDS] = n;
	json_t *tables = json_array();
	if (!tables || add_all(tables, &ds, files)) {
		json_decref(tables);
		rc = fdl_fail(err, FDL_ENOMEM, "out of memory describing the tables");
	} else
		*out = tables;
	fdl_rows_free(&ds.r);
	return rc;
}
