/* Differences between two frozen catalogs: schema changes (version.json's
 * `changes`, `fdl diff`) from the metadata, and row differences computed by
 * DuckDB over the two versions. Tables and columns are matched by DuckLake's
 * stable ids, so a rename is told apart from a drop and an add. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

typedef struct col {
	int64_t table_id, column_id;
	char *name, *type;
} col;

typedef struct tbl {
	int64_t id;
	char *name; /* schema.table */
} tbl;

typedef struct shape {
	tbl *tables;
	size_t ntables;
	col *cols;
	size_t ncols;
} shape;

static void shape_free(shape *s)
{
	for (size_t i = 0; i < s->ntables; i++)
		free(s->tables[i].name);
	for (size_t i = 0; i < s->ncols; i++) {
		free(s->cols[i].name);
		free(s->cols[i].type);
	}
	free(s->tables);
	free(s->cols);
	memset(s, 0, sizeof *s);
}

static char *dup_cell(fdl_rows *r, size_t c, size_t i)
{
	char *v = fdl_rows_str(r, c, i);
	char *copy = fdl_strdup(v ? v : "");
	duckdb_free(v);
	return copy;
}

static int shape_read(shape *s, fdl_duck *d, const char *alias, fdl_error *err)
{
	memset(s, 0, sizeof *s);
	char sql[1024];
	fdl_rows r;
	snprintf(sql, sizeof sql,
		 "SELECT t.table_id, s.schema_name || '.' || t.table_name FROM %1$s.ducklake_table t JOIN "
		 "%1$s.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL WHERE "
		 "t.end_snapshot IS NULL ORDER BY t.table_id",
		 alias);
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	s->tables = calloc(n ? n : 1, sizeof *s->tables);
	for (size_t i = 0; s->tables && i < n; i++) {
		s->tables[i].id = fdl_rows_int(&r, 0, i);
		s->tables[i].name = dup_cell(&r, 1, i);
		s->ntables++;
	}
	fdl_rows_free(&r);
	snprintf(sql, sizeof sql,
		 "SELECT table_id, column_id, column_name, column_type FROM %s.ducklake_column WHERE end_snapshot "
		 "IS NULL AND parent_column IS NULL ORDER BY table_id, column_order",
		 alias);
	if (!s->tables || (rc = fdl_duck_query(d, &r, sql, err))) {
		shape_free(s);
		return rc ? rc : fdl_oom(err);
	}
	n = fdl_rows_count(&r);
	s->cols = calloc(n ? n : 1, sizeof *s->cols);
	for (size_t i = 0; s->cols && i < n; i++) {
		col *c = &s->cols[s->ncols++];
		c->table_id = fdl_rows_int(&r, 0, i);
		c->column_id = fdl_rows_int(&r, 1, i);
		c->name = dup_cell(&r, 2, i);
		c->type = dup_cell(&r, 3, i);
	}
	fdl_rows_free(&r);
	if (!s->cols) {
		shape_free(s);
		return fdl_oom(err);
	}
	return 0;
}

static const tbl *find_table(const shape *s, int64_t id)
{
	for (size_t i = 0; i < s->ntables; i++)
		if (s->tables[i].id == id)
			return &s->tables[i];
	return NULL;
}

static const col *find_col(const shape *s, int64_t table_id, int64_t column_id, const char *name)
{
	for (size_t i = 0; i < s->ncols; i++)
		if (s->cols[i].table_id == table_id &&
		    (name ? !strcmp(s->cols[i].name, name) : s->cols[i].column_id == column_id))
			return &s->cols[i];
	return NULL;
}

static int add(json_t *list, const char *table, const char *kind, const char *column, bool breaking,
	       const char *k1, const char *v1, const char *k2, const char *v2)
{
	json_t *o = json_pack("{s:s, s:s}", "table", table, "kind", kind);
	if (!o)
		return -1;
	if (column)
		json_object_set_new(o, "column", json_string(column));
	if (k1)
		json_object_set_new(o, k1, json_string(v1));
	if (k2)
		json_object_set_new(o, k2, json_string(v2));
	json_object_set_new(o, "breaking", json_boolean(breaking));
	return json_array_append_new(list, o);
}

/* Column changes of one table present in both (same table_id). */
static int column_changes(json_t *list, const shape *a, const shape *b, const tbl *t)
{
	int rc = 0;
	for (size_t i = 0; i < b->ncols && !rc; i++) {
		const col *nc = &b->cols[i];
		if (nc->table_id != t->id)
			continue;
		const col *oc = find_col(a, t->id, nc->column_id, NULL);
		if (!oc) {
			/* same name, new id: dropped and added again */
			const col *same = find_col(a, t->id, 0, nc->name);
			if (same)
				rc = add(list, t->name, "recreate_column", nc->name, true, "from_type", same->type,
					 "type", nc->type);
			else
				rc = add(list, t->name, "add_column", nc->name, false, "type", nc->type, NULL, NULL);
			continue;
		}
		if (strcmp(oc->name, nc->name))
			rc = add(list, t->name, "rename_column", nc->name, true, "from", oc->name, NULL, NULL);
		if (!rc && strcmp(oc->type, nc->type))
			/* DuckLake only allows widening type changes, which old SQL survives */
			rc = add(list, t->name, "type_change", nc->name, false, "from_type", oc->type, "type",
				 nc->type);
	}
	for (size_t i = 0; i < a->ncols && !rc; i++) {
		const col *oc = &a->cols[i];
		if (oc->table_id != t->id || find_col(b, t->id, oc->column_id, NULL))
			continue;
		if (!find_col(b, t->id, 0, oc->name)) /* else reported as recreate_column */
			rc = add(list, t->name, "drop_column", oc->name, true, NULL, NULL, NULL, NULL);
	}
	return rc;
}

/* A table dropped and one of the same schema.name added within one
 * version (dbt's `table` materialisation: build x__dbt_tmp, drop x, rename
 * the new one to x) is the same table rebuilt: compared by column names and
 * types, not reported as a drop (breaking) and an add. */
static const tbl *rebuilt_from(const shape *a, const shape *b, const tbl *nt)
{
	for (size_t i = 0; i < a->ntables; i++)
		if (!strcmp(a->tables[i].name, nt->name) && !find_table(b, a->tables[i].id))
			return &a->tables[i];
	return NULL;
}

static int rebuilt_changes(json_t *list, const shape *a, const shape *b, const tbl *ot, const tbl *nt)
{
	int rc = 0;
	for (size_t i = 0; i < b->ncols && !rc; i++) {
		const col *nc = &b->cols[i];
		if (nc->table_id != nt->id)
			continue;
		const col *oc = find_col(a, ot->id, 0, nc->name);
		if (!oc)
			rc = add(list, nt->name, "add_column", nc->name, false, "type", nc->type, NULL, NULL);
		else if (strcmp(oc->type, nc->type))
			rc = add(list, nt->name, "recreate_column", nc->name, true, "from_type", oc->type, "type",
				 nc->type);
	}
	for (size_t i = 0; i < a->ncols && !rc; i++) {
		const col *oc = &a->cols[i];
		if (oc->table_id == ot->id && !find_col(b, nt->id, 0, oc->name))
			rc = add(list, nt->name, "drop_column", oc->name, true, NULL, NULL, NULL, NULL);
	}
	return rc;
}

int fdl_catalog_changes(json_t **out, fdl_duck *d, const char *old_alias, const char *new_alias, fdl_error *err)
{
	shape a, b;
	int rc = shape_read(&a, d, old_alias, err);
	if (rc)
		return rc;
	if ((rc = shape_read(&b, d, new_alias, err))) {
		shape_free(&a);
		return rc;
	}
	json_t *list = json_array();
	rc = list ? 0 : -1;
	for (size_t i = 0; i < b.ntables && !rc; i++) {
		const tbl *nt = &b.tables[i];
		const tbl *ot = find_table(&a, nt->id), *was = ot ? NULL : rebuilt_from(&a, &b, nt);
		if (was)
			rc = rebuilt_changes(list, &a, &b, was, nt);
		else if (!ot)
			rc = add(list, nt->name, "add_table", NULL, false, NULL, NULL, NULL, NULL);
		else {
			if (strcmp(ot->name, nt->name))
				rc = add(list, nt->name, "rename_table", NULL, true, "from", ot->name, NULL, NULL);
			if (!rc)
				rc = column_changes(list, &a, &b, nt);
		}
	}
	for (size_t i = 0; i < a.ntables && !rc; i++) {
		bool rebuilt = false; /* a table of that name is there again: see above */
		for (size_t j = 0; j < b.ntables && !rebuilt; j++)
			rebuilt = !strcmp(b.tables[j].name, a.tables[i].name) && !find_table(&a, b.tables[j].id);
		if (!find_table(&b, a.tables[i].id) && !rebuilt)
			rc = add(list, a.tables[i].name, "drop_table", NULL, true, NULL, NULL, NULL, NULL);
	}
	shape_free(&a);
	shape_free(&b);
	if (rc) {
		json_decref(list);
		return fdl_fail(err, FDL_ENOMEM, "out of memory computing changes");
	}
	*out = list;
	return 0;
}

typedef struct row_sink {
	const fdl_diff_rows_options *o;
	const char *table;
	int added;
	fdl_error *err;
	bool stopped; /* the receiver returned non-zero: its code, not the engine's */
} row_sink;

/* A receiver's non-zero: its negative FDL_E* code as it is, anything else
 * FDL_ERROR (fdl.h: a callback stops the diff with an error code). */
static int stopped(fdl_error *err, int rc)
{
	return fdl_fail(err, rc < 0 ? rc : FDL_ERROR, "the diff was stopped by its receiver (rc %d)", rc);
}

static int sink_row(const char *json, void *payload)
{
	row_sink *k = payload;
	int rc = k->o->on_row ? k->o->on_row(k->table, k->added, json ? json : "null", k->o->payload) : 0;
	k->stopped = rc != 0;
	return rc ? stopped(k->err, rc) : 0;
}

/* How many rows `from` has beyond `minus` (EXCEPT ALL, over `cols`), and
 * the first `limit` of them streamed to the sink, in ORDER BY ALL order. */
static int except_count(int64_t *out, fdl_duck *d, const char *from, const char *minus, const char *cols,
			fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_printf(&sql, err, "SELECT count(*) FROM (SELECT %s FROM %s EXCEPT ALL SELECT %s FROM %s)",
				cols, from, cols, minus);
	if (!rc)
		rc = fdl_duck_int(d, out, 0, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

static int except_rows(row_sink *k, fdl_duck *d, const char *from, const char *minus, const char *cols,
		       int64_t limit, fdl_error *err)
{
	if (limit == 0)
		return 0;
	fdl_buf sql = {0};
	int rc = fdl_buf_printf(&sql, err,
				"SELECT to_json(fdl_row)::VARCHAR FROM (SELECT %s FROM %s EXCEPT ALL SELECT %s FROM %s) fdl_row "
				"ORDER BY ALL",
				cols, from, cols, minus);
	if (!rc && limit > 0)
		rc = fdl_buf_printf(&sql, err, " LIMIT %lld", (long long)limit);
	if (!rc)
		rc = fdl_duck_each_string(d, sql.data, sink_row, k, err);
	fdl_buf_free(&sql);
	return rc;
}

/* The columns two attached versions of a table share, quoted, in b's order. */
static int common_columns(fdl_buf *out, fdl_duck *d, const char *a, const char *b, const char *schema,
			  const char *table, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT y.column_name, y.data_type LIKE '%VARIANT%' OR x2.data_type LIKE '%VARIANT%'"
				    " FROM duckdb_columns() y JOIN duckdb_columns() x2 ON x2.database_name = ", err);
	const char *vals[] = {a, b, schema, table, a};
	const char *glue[] = {(" AND x2.schema_name = y.schema_name AND x2.table_name = y.table_name AND "
			       "x2.column_name = y.column_name WHERE y.database_name = "),
			      " AND y.schema_name = ", " AND y.table_name = ",
			      " AND y.column_name IN (SELECT x.column_name FROM duckdb_columns() x WHERE x.database_name = ",
			      " AND x.schema_name = y.schema_name AND x.table_name = y.table_name) ORDER BY y.column_index"};
	if (!rc)
		rc = fdl_sql_glued(&sql, 5, vals, glue, err);
	fdl_rows r;
	if ((rc = fdl_duck_query_built(d, &r, &sql, rc, err)))
		return rc;
	for (size_t i = 0; i < fdl_rows_count(&r) && !rc; i++) {
		char *c = fdl_rows_str(&r, 0, i);
		/* EXCEPT cannot compare a VARIANT that mixes types: compare its
		 * text (in both versions, so equal values stay equal) */
		bool cast = !fdl_rows_null(&r, 1, i) && fdl_rows_int(&r, 1, i) != 0;
		if (i)
			rc = fdl_buf_puts(out, ", ", err);
		if (!rc && cast)
			rc = fdl_buf_puts(out, "CAST(", err);
		if (!rc)
			rc = fdl_buf_sql_ident(out, c ? c : "", err);
		if (!rc && cast)
			rc = fdl_buf_puts(out, " AS VARCHAR) AS ", err);
		if (!rc && cast)
			rc = fdl_buf_sql_ident(out, c ? c : "", err);
		duckdb_free(c);
	}
	fdl_rows_free(&r);
	if (!rc && out->len == 0)
		rc = fdl_fail(err, FDL_EINVALID, "%s.%s has no column in common between the two versions", schema,
			      table);
	return rc;
}

/* alias."schema"."table", the names quoted as identifiers. */
static int qualified(fdl_buf *out, const char *alias, const char *schema, const char *table, fdl_error *err)
{
	int rc = fdl_buf_printf(out, err, "%s.", alias);
	if (!rc)
		rc = fdl_buf_sql_ident(out, schema, err);
	if (!rc)
		rc = fdl_buf_puts(out, ".", err);
	return rc ? rc : fdl_buf_sql_ident(out, table, err);
}

/* A table whose live data and delete files and whose columns are the same
 * in both raw catalogs holds the same rows: no comparison needed. */
static const char SAME_SQL[] =
	"WITH fa AS (SELECT f.path, f.record_count, d.path AS dp, d.delete_count FROM {a}.ducklake_data_file f"
	"  JOIN {a}.ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL"
	"  JOIN {a}.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL"
	"  LEFT JOIN {a}.ducklake_delete_file d ON d.data_file_id = f.data_file_id AND d.end_snapshot IS NULL"
	"  WHERE f.end_snapshot IS NULL AND s.schema_name = $1 AND t.table_name = $2),"
	" fb AS (SELECT f.path, f.record_count, d.path AS dp, d.delete_count FROM {b}.ducklake_data_file f"
	"  JOIN {b}.ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL"
	"  JOIN {b}.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL"
	"  LEFT JOIN {b}.ducklake_delete_file d ON d.data_file_id = f.data_file_id AND d.end_snapshot IS NULL"
	"  WHERE f.end_snapshot IS NULL AND s.schema_name = $1 AND t.table_name = $2),"
	" ca AS (SELECT c.column_id, c.column_name, c.column_type, c.initial_default, c.default_value,"
	"  c.parent_column FROM {a}.ducklake_column c"
	"  JOIN {a}.ducklake_table t ON t.table_id = c.table_id AND t.end_snapshot IS NULL"
	"  JOIN {a}.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL"
	"  WHERE c.end_snapshot IS NULL AND s.schema_name = $1 AND t.table_name = $2),"
	" cb AS (SELECT c.column_id, c.column_name, c.column_type, c.initial_default, c.default_value,"
	"  c.parent_column FROM {b}.ducklake_column c"
	"  JOIN {b}.ducklake_table t ON t.table_id = c.table_id AND t.end_snapshot IS NULL"
	"  JOIN {b}.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL"
	"  WHERE c.end_snapshot IS NULL AND s.schema_name = $1 AND t.table_name = $2)"
	" SELECT (SELECT count(*) FROM (FROM fa EXCEPT ALL FROM fb)) + (SELECT count(*) FROM (FROM fb EXCEPT ALL FROM fa))"
	"  + (SELECT count(*) FROM (FROM ca EXCEPT ALL FROM cb)) + (SELECT count(*) FROM (FROM cb EXCEPT ALL FROM ca))"
	"  + (SELECT count(*) = 0 FROM cb)::INT";

static int same_files(bool *same, fdl_duck *d, const char *ra, const char *rb, const char *schema, const char *table,
		      fdl_error *err)
{
	*same = false;
	if (!ra || !rb)
		return 0;
	fdl_buf sql = {0}, lit_s = {0}, lit_t = {0};
	int rc = fdl_buf_sql_str(&lit_s, schema, err);
	if (!rc)
		rc = fdl_buf_sql_str(&lit_t, table, err);
	/* {a} and {b} are the raw catalogs, $1 and $2 the schema and table */
	const char *marks[] = {"{a}", "{b}", "$1", "$2"}, *with[] = {ra, rb, lit_s.data, lit_t.data};
	for (const char *p = SAME_SQL; *p && !rc;) {
		const char *hit = NULL;
		size_t which = 0;
		for (size_t m = 0; m < 4; m++) {
			const char *h = strstr(p, marks[m]);
			if (h && (!hit || h < hit))
				hit = h, which = m;
		}
		size_t n = hit ? (size_t)(hit - p) : strlen(p);
		rc = fdl_buf_add(&sql, p, n, err);
		if (!rc && hit)
			rc = fdl_buf_puts(&sql, with[which], err);
		p += n + (hit ? strlen(marks[which]) : 0);
	}
	int64_t differences = 1;
	if (!rc)
		rc = fdl_duck_int(d, &differences, 1, sql.data, err);
	fdl_buf_free(&sql);
	fdl_buf_free(&lit_s);
	fdl_buf_free(&lit_t);
	*same = !rc && differences == 0;
	return rc;
}

int fdl_catalog_row_diff(fdl_duck *d, const char *a, const char *b, const fdl_diff_rows_options *o, fdl_error *err)
{
	return fdl_catalog_row_diff_raw(d, a, b, NULL, NULL, o, err);
}

int fdl_catalog_row_diff_raw(fdl_duck *d, const char *a, const char *b, const char *ra, const char *rb,
			     const fdl_diff_rows_options *o, fdl_error *err)
{
	/* tables present in both versions, by name */
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT y.schema_name || '.' || y.table_name FROM duckdb_tables() y JOIN duckdb_tables() x ON "
		 "x.database_name = '%s' AND x.schema_name = y.schema_name AND x.table_name = y.table_name "
		 "WHERE y.database_name = '%s' ORDER BY y.schema_name, y.table_name",
		 a, b);
	fdl_strlist keys = {0};
	int rc = fdl_duck_strings(d, &keys, sql, err);
	const char *only = o->table;
	bool found = only == NULL;
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const char *key = keys.items[i], *dot = strchr(key, '.');
		bool want = !only || !strcmp(only, key) || (!strchr(only, '.') && !strncmp(key, "main.", 5) &&
							   !strcmp(only, key + 5));
		if (!want || !dot)
			continue;
		found = true;
		char *schema = strndup(key, (size_t)(dot - key));
		fdl_buf cols = {0}, qa = {0}, qb = {0};
		bool same = false;
		rc = schema ? same_files(&same, d, ra, rb, schema, dot + 1, err) : fdl_oom(err);
		if (!rc && !same)
			rc = common_columns(&cols, d, a, b, schema, dot + 1, err);
		if (!rc && !same)
			rc = qualified(&qa, a, schema, dot + 1, err);
		if (!rc && !same)
			rc = qualified(&qb, b, schema, dot + 1, err);
		int64_t added = 0, removed = 0;
		if (!rc && !same)
			rc = except_count(&added, d, qb.data, qa.data, cols.data, err);
		if (!rc && !same)
			rc = except_count(&removed, d, qa.data, qb.data, cols.data, err);
		row_sink plus = {o, key, 1, err, false}, minus = {o, key, 0, err, false};
		if (!rc && o->on_table && (rc = o->on_table(key, added, removed, o->payload)))
			rc = stopped(err, rc), plus.stopped = true;
		if (!rc && !same)
			rc = except_rows(&plus, d, qb.data, qa.data, cols.data, o->limit, err);
		if (!rc && !same)
			rc = except_rows(&minus, d, qa.data, qb.data, cols.data, o->limit, err);
		if (rc && !plus.stopped && !minus.stopped) /* the receiver's own message stays as it is */
			fdl_error_prefix(err, "comparing the rows of %s", key);
		fdl_buf_free(&cols);
		fdl_buf_free(&qa);
		fdl_buf_free(&qb);
		free(schema);
	}
	fdl_strlist_free(&keys);
	if (!rc && !found)
		rc = fdl_fail(err, FDL_ENOTFOUND, "table %s is not in both versions", only);
	return rc;
}
