/* The rows a withdrawal takes away, and where else they are still
 * returned. The rows version v added are those it returns and its first
 * parent p does not (EXCEPT ALL over v's columns); another version l still
 * returns them when the rows it returns beyond p's hold one of them (a
 * CHECKPOINT or ducklake_merge_adjacent_files copied them into a new file).
 * Tables are matched by DuckLake's table id, columns by v's names: a column
 * another version lacks reads as NULL there, one of another type is cast.
 * v, p and l are attached through DuckLake (fdl_catalog_attach_lake), so
 * their metadata is FDL_DUCKLAKE_META_PREFIX<alias>. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

/* The schema and name of table `id` live in the catalog attached as `alias`
 * (both NULL when it has none). Caller frees both. */
static int table_names(char **schema, char **table, fdl_duck *d, const char *alias, int64_t id, fdl_error *err)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT s.schema_name, t.table_name FROM " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_table t JOIN "
		 FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL"
		 " WHERE t.table_id = %2$lld AND t.end_snapshot IS NULL",
		 alias, (long long)id);
	fdl_rows r;
	*schema = *table = NULL;
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return rc;
	if (fdl_rows_count(&r)) {
		char *s = fdl_rows_str(&r, 0, 0), *t = fdl_rows_str(&r, 1, 0);
		*schema = s ? fdl_strdup(s) : NULL;
		*table = t ? fdl_strdup(t) : NULL;
		duckdb_free(s);
		duckdb_free(t);
		if (!*schema || !*table) {
			free(*schema);
			free(*table);
			*schema = *table = NULL;
			rc = fdl_oom(err);
		}
	}
	fdl_rows_free(&r);
	return rc;
}

/* One table of v with new rows: its names in v and its id. */
typedef struct vtable {
	char *schema, *table;
	int64_t id;
} vtable;

static void vtable_free(vtable *t)
{
	free(t->schema);
	free(t->table);
}

/* `key` ("schema.table" in v) as a vtable. */
static int vtable_find(vtable *out, fdl_duck *d, const char *v, const char *key, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	const char *dot = strchr(key, '.');
	fdl_buf sql = {0};
	int rc = dot ? 0 : fdl_fail(err, FDL_EINVALID, "'%s' is not schema.table", key);
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    "SELECT t.table_id FROM " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_table t JOIN "
				    FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_schema s ON s.schema_id = t.schema_id AND "
				    "s.end_snapshot IS NULL WHERE t.end_snapshot IS NULL AND s.schema_name = ",
				    v);
	char *schema = dot ? strndup(key, (size_t)(dot - key)) : NULL;
	if (!rc)
		rc = schema ? fdl_buf_sql_str(&sql, schema, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_buf_puts(&sql, " AND t.table_name = ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, dot + 1, err);
	if (!rc)
		rc = fdl_duck_int(d, &out->id, -1, sql.data, err);
	fdl_buf_free(&sql);
	out->schema = schema;
	out->table = dot ? fdl_strdup(dot + 1) : NULL;
	if (!rc && (!out->table || out->id < 0))
		rc = out->table ? fdl_fail(err, FDL_ENOTFOUND, "table %s is not in the version", key) : fdl_oom(err);
	if (rc)
		vtable_free(out);
	return rc;
}

/* SELECT <v's columns, as x has them> FROM x's table of that id; NULL (no
 * rows) when x has no such table. */
static int select_as_v(fdl_buf *out, fdl_duck *d, const char *v, const vtable *t, const char *x, bool *has,
		       fdl_error *err)
{
	char *xs = NULL, *xt = NULL;
	int rc = table_names(&xs, &xt, d, x, t->id, err);
	fdl_buf sql = {0};
	*has = xs != NULL;
	if (!rc && !*has) {
		free(xs);
		free(xt);
		return 0;
	}
	if (!rc)
		rc = fdl_buf_puts(&sql, "SELECT vc.column_name, vc.data_type, xc.data_type FROM duckdb_columns() vc LEFT JOIN "
					"duckdb_columns() xc ON xc.column_name = vc.column_name AND xc.database_name = ",
				  err);
	const char *vals[] = {x, xs, xt, v, t->schema, t->table};
	const char *glue[] = {" AND xc.schema_name = ", " AND xc.table_name = ", " WHERE vc.database_name = ",
			      " AND vc.schema_name = ", " AND vc.table_name = ", " ORDER BY vc.column_index"};
	for (size_t i = 0; i < 6 && !rc; i++) {
		rc = fdl_buf_sql_str(&sql, vals[i], err);
		if (!rc)
			rc = fdl_buf_puts(&sql, glue[i], err);
	}
	fdl_rows r;
	if (!(rc = fdl_duck_query_built(d, &r, &sql, rc, err))) {
		rc = fdl_buf_puts(out, "SELECT ", err);
		for (size_t i = 0; i < fdl_rows_count(&r) && !rc; i++) {
			char *c = fdl_rows_str(&r, 0, i), *vt = fdl_rows_str(&r, 1, i), *xty = fdl_rows_str(&r, 2, i);
			bool variant = vt && strstr(vt, "VARIANT");
			const char *type = variant ? "VARCHAR" : vt ? vt : "VARCHAR";
			rc = i ? fdl_buf_puts(out, ", ", err) : 0;
			if (!rc && !xty)
				rc = fdl_buf_printf(out, err, "CAST(NULL AS %s)", type);
			else if (!rc && !variant && !strcmp(xty, vt))
				rc = fdl_buf_sql_ident(out, c, err);
			else if (!rc) {
				rc = fdl_buf_puts(out, "TRY_CAST(", err);
				if (!rc)
					rc = fdl_buf_sql_ident(out, c, err);
				if (!rc)
					rc = fdl_buf_printf(out, err, " AS %s)", type);
			}
			if (!rc)
				rc = fdl_buf_puts(out, " AS ", err);
			if (!rc)
				rc = fdl_buf_sql_ident(out, c, err);
			duckdb_free(c);
			duckdb_free(vt);
			duckdb_free(xty);
		}
		fdl_rows_free(&r);
	}
	if (!rc)
		rc = fdl_buf_printf(out, err, " FROM %s.", x);
	if (!rc)
		rc = fdl_buf_sql_ident(out, xs, err);
	if (!rc)
		rc = fdl_buf_puts(out, ".", err);
	if (!rc)
		rc = fdl_buf_sql_ident(out, xt, err);
	free(xs);
	free(xt);
	return rc;
}

/* (rows of x beyond p's): x's rows EXCEPT ALL p's, as v's columns. */
static int beyond(fdl_buf *out, fdl_duck *d, const char *v, const vtable *t, const char *x, const char *p,
		  fdl_error *err)
{
	bool has = false, phas = false;
	int rc = fdl_buf_puts(out, "(", err);
	if (!rc)
		rc = select_as_v(out, d, v, t, x, &has, err);
	if (!rc && !has)
		rc = fdl_fail(err, FDL_ENOTFOUND, "no table %lld in %s", (long long)t->id, x);
	if (!rc && p) {
		fdl_buf minus = {0};
		rc = select_as_v(&minus, d, v, t, p, &phas, err);
		if (!rc && phas)
			rc = fdl_buf_printf(out, err, " EXCEPT ALL %s", minus.data);
		fdl_buf_free(&minus);
	}
	if (!rc)
		rc = fdl_buf_puts(out, ")", err);
	return rc;
}

int fdl_catalog_new_row_tables(fdl_strlist *out, fdl_duck *d, const char *v, const char *p, int64_t added_from,
			       fdl_error *err)
{
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT DISTINCT s.schema_name || '.' || t.table_name FROM " FDL_DUCKLAKE_META_PREFIX
		 "%1$s.ducklake_data_file f JOIN " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_table t ON t.table_id = f.table_id"
		 " AND t.end_snapshot IS NULL JOIN " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_schema s ON s.schema_id ="
		 " t.schema_id AND s.end_snapshot IS NULL WHERE f.end_snapshot IS NULL AND f.begin_snapshot >= %2$lld"
		 " ORDER BY 1",
		 v, (long long)added_from);
	fdl_strlist cand = {0};
	int rc = fdl_duck_strings(d, &cand, sql, err);
	for (size_t i = 0; i < cand.len && !rc; i++) {
		vtable t;
		fdl_buf q = {0};
		int64_t n = 0;
		if ((rc = vtable_find(&t, d, v, cand.items[i], err)))
			break;
		rc = fdl_buf_puts(&q, "SELECT count(*) FROM ", err);
		if (!rc)
			rc = beyond(&q, d, v, &t, v, p, err);
		if (!rc)
			rc = fdl_duck_int(d, &n, 0, q.data, err);
		if (!rc && n > 0)
			rc = fdl_strlist_add(out, cand.items[i], err);
		fdl_buf_free(&q);
		vtable_free(&t);
	}
	fdl_strlist_free(&cand);
	return rc;
}

int fdl_catalog_rows_left(int64_t *n, fdl_duck *d, const char *v, const char *p, const char *l, const char *key,
			  fdl_error *err)
{
	vtable t;
	*n = 0;
	int rc = vtable_find(&t, d, v, key, err);
	if (rc)
		return rc;
	char *ls = NULL, *lt = NULL;
	rc = table_names(&ls, &lt, d, l, t.id, err);
	fdl_buf q = {0};
	if (!rc && ls) {
		rc = fdl_buf_puts(&q, "SELECT count(*) FROM (FROM ", err);
		if (!rc)
			rc = beyond(&q, d, v, &t, l, p, err);
		if (!rc)
			rc = fdl_buf_puts(&q, " INTERSECT ALL FROM ", err);
		if (!rc)
			rc = beyond(&q, d, v, &t, v, p, err);
		if (!rc)
			rc = fdl_buf_puts(&q, ")", err);
		if (!rc)
			rc = fdl_duck_int(d, n, 0, q.data, err);
	}
	fdl_buf_free(&q);
	free(ls);
	free(lt);
	vtable_free(&t);
	return rc;
}

int fdl_catalog_clean_sql(fdl_buf *out, fdl_duck *d, const char *v, const char *p, const char *work,
			  const char *key, fdl_error *err)
{
	vtable t;
	int rc = vtable_find(&t, d, v, key, err);
	if (rc)
		return rc;
	fdl_buf rows = {0}, cols = {0};
	rc = beyond(&rows, d, v, &t, v, p, err);
	/* every column of v, compared as NOT DISTINCT (NULL equals NULL) */
	fdl_buf q = {0};
	if (!rc)
		rc = fdl_buf_printf(&q, err, "SELECT column_name FROM duckdb_columns() WHERE database_name = '%s' AND "
					     "schema_name = ", v);
	if (!rc)
		rc = fdl_buf_sql_str(&q, t.schema, err);
	if (!rc)
		rc = fdl_buf_puts(&q, " AND table_name = ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&q, t.table, err);
	if (!rc)
		rc = fdl_buf_puts(&q, " ORDER BY column_index", err);
	fdl_strlist names = {0};
	if (!rc)
		rc = fdl_duck_strings(d, &names, q.data, err);
	fdl_buf_free(&q);
	for (size_t i = 0; i < names.len && !rc; i++) {
		rc = fdl_buf_puts(&cols, i ? " AND fdl_x." : "fdl_x.", err);
		if (!rc)
			rc = fdl_buf_sql_ident(&cols, names.items[i], err);
		if (!rc)
			rc = fdl_buf_puts(&cols, " IS NOT DISTINCT FROM fdl_w.", err);
		if (!rc)
			rc = fdl_buf_sql_ident(&cols, names.items[i], err);
	}
	if (!rc)
		rc = fdl_buf_printf(out, err, "DELETE FROM %s.", work);
	if (!rc)
		rc = fdl_buf_sql_ident(out, t.schema, err);
	if (!rc)
		rc = fdl_buf_puts(out, ".", err);
	if (!rc)
		rc = fdl_buf_sql_ident(out, t.table, err);
	if (!rc)
		rc = fdl_buf_printf(out, err, " AS fdl_x WHERE EXISTS (SELECT 1 FROM %s fdl_w WHERE %s);\n", rows.data,
				    cols.data);
	if (!rc)
		rc = fdl_buf_printf(out, err, "CALL ducklake_rewrite_data_files('%s', ", work);
	if (!rc)
		rc = fdl_buf_sql_str(out, t.table, err);
	if (!rc)
		rc = fdl_buf_puts(out, ", schema => ", err);
	if (!rc)
		rc = fdl_buf_sql_str(out, t.schema, err);
	if (!rc)
		rc = fdl_buf_puts(out, ", delete_threshold => 0);\n", err);
	fdl_strlist_free(&names);
	fdl_buf_free(&rows);
	fdl_buf_free(&cols);
	vtable_free(&t);
	return rc;
}

int fdl_catalog_clean(fdl_duck *d, const char *v, const char *p, const char *work, const char *key, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_catalog_clean_sql(&sql, d, v, p, work, key, err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

int fdl_catalog_expire_before_latest(fdl_duck *d, const char *work, fdl_error *err)
{
	char sql[256];
	snprintf(sql, sizeof sql, "CALL ducklake_expire_snapshots('%s', older_than => now())", work);
	return fdl_duck_exec(d, sql, err);
}
