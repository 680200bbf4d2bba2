/* The rows a withdrawal takes away, by where they are, never by value: a
 * row is known by DuckLake's row id (its row lineage, kept when a merge,
 * a rewrite or an UPDATE moves the row to another file) and by the
 * snapshot that wrote it (DuckLake's snapshot_id virtual column, kept by
 * merges). The rows version v added are those it returns that one of its
 * own snapshots wrote, unless its first parent p returns the same row id
 * with the same values (a row v only rewrote or merged); an UPDATE in v
 * counts, the row goes whole. In a descendant of v (another version, a
 * working catalog of the branch) they are the rows with one of those row
 * ids, and the rows one of v's snapshots wrote that v knows under no row
 * id of its own (DuckLake 1.5 gives a row an UPDATE wrote a new row id when
 * a merge moves it), and the rows whose row id DuckLake allotted to one of
 * v's own files (the ids that merge gives them; a rewrite after it keeps
 * the id but not the snapshot). An equal row published before or after v
 * is another row, and stays.
 * Tables are matched by DuckLake's table id (in a descendant and in a
 * working catalog to clean: a table renamed, or whose name another table
 * took, after v), columns by v's names: a column
 * p lacks reads as NULL there, one of another type is cast. v, p and the
 * others are attached through DuckLake (fdl_catalog_attach_lake), so their
 * metadata is FDL_DUCKLAKE_META_PREFIX<alias>. */
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

/* The count the query built in `sql` answers (unless `rc`); frees `sql`. */
static int count_built(int64_t *n, fdl_duck *d, fdl_buf *sql, int rc, fdl_error *err)
{
	if (!rc)
		rc = fdl_duck_int(d, n, 0, sql->data, err);
	fdl_buf_free(sql);
	return rc;
}

/* Whether table schema.table of the lake attached as `alias` has a column
 * of its own named `name` (as DuckDB compares names): it hides DuckLake's
 * virtual column of that name. Read from the lake's own ducklake_column
 * rows of that one table (its top-level columns), not duckdb_columns(),
 * which lists every column of every attached catalog (a fifth of a
 * withdrawal's CPU). A lake not attached here (the SQL printed for a
 * user's working catalog) has none, as duckdb_columns() answered. */
static int has_column(bool *yes, fdl_duck *d, const char *alias, const char *schema, const char *table,
		      const char *name, fdl_error *err)
{
	fdl_buf sql = {0};
	int64_t n = 0;
	*yes = false;
	int rc = fdl_buf_printf(&sql, err,
				"SELECT count(*) FROM duckdb_databases() WHERE database_name = '%s'", alias);
	if (!(rc = count_built(&n, d, &sql, rc, err)) && !n)
		return 0;
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    "SELECT count(*) FROM " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_column c JOIN "
				    FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_table t ON t.table_id = c.table_id AND "
				    "t.end_snapshot IS NULL JOIN " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_schema s ON "
				    "s.schema_id = t.schema_id AND s.end_snapshot IS NULL WHERE c.end_snapshot IS NULL AND "
				    "c.parent_column IS NULL AND s.schema_name = ",
				    alias);
	const char *vals[] = {schema, table, name};
	const char *glue[] = {" AND t.table_name = ", " AND lower(c.column_name) = lower(", ")"};
	if (!rc)
		rc = fdl_sql_glued(&sql, 3, vals, glue, err);
	rc = count_built(&n, d, &sql, rc, err);
	*yes = !rc && n > 0;
	return rc;
}

/* The columns of table alias.schema.table, in order, as DuckDB types them
 * (DESCRIBE of that one table: duckdb_columns() would list every column of
 * every attached catalog). */
static int describe(fdl_rows *r, fdl_duck *d, const char *alias, const char *schema, const char *table,
		    fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "DESCRIBE ", err);
	if (!rc)
		rc = fdl_sql_table_ref(&sql, alias, schema, table, err);
	return fdl_duck_query_built(d, r, &sql, rc, err);
}

/* The type DESCRIBE's rows give column `name` (NULL: none of that name).
 * Caller frees with duckdb_free. */
static char *type_of(fdl_rows *r, const char *name)
{
	char *type = NULL;
	for (size_t j = 0; j < fdl_rows_count(r) && !type; j++) {
		char *c = fdl_rows_str(r, 0, j);
		if (c && !strcmp(c, name))
			type = fdl_rows_str(r, 1, j);
		duckdb_free(c);
	}
	return type;
}

/* Appends column c of v's type vt as x has it (type xty, NULL: none). */
static int column_as_v(fdl_buf *out, const char *c, const char *vt, const char *xty, fdl_error *err)
{
	bool variant = vt && strstr(vt, "VARIANT");
	const char *type = variant ? "VARCHAR" : vt ? vt : "VARCHAR";
	int rc = 0;
	if (!xty)
		rc = fdl_buf_printf(out, err, "CAST(NULL AS %s)", type);
	else if (!variant && vt && !strcmp(xty, vt))
		rc = fdl_buf_sql_ident(out, c, err);
	else {
		rc = fdl_buf_puts(out, "TRY_CAST(", err);
		if (!rc)
			rc = fdl_buf_sql_ident(out, c, err);
		if (!rc)
			rc = fdl_buf_printf(out, err, " AS %s)", type);
	}
	if (!rc)
		rc = fdl_buf_puts(out, " AS ", err);
	return rc ? rc : fdl_buf_sql_ident(out, c, err);
}

/* SELECT <lead><v's columns, as x has them> FROM x's table of that
 * id<where>; nothing (*has false) when x has no such table. */
static int select_as_v(fdl_buf *out, fdl_duck *d, const char *v, const vtable *t, const char *x, const char *lead,
		       const char *where, bool *has, fdl_error *err)
{
	char *xs = NULL, *xt = NULL;
	int rc = table_names(&xs, &xt, d, x, t->id, err);
	*has = xs != NULL;
	if (!rc && !*has) {
		free(xs);
		free(xt);
		return 0;
	}
	fdl_rows rv, rx;
	if (!rc && !(rc = describe(&rv, d, v, t->schema, t->table, err))) {
		if (!(rc = describe(&rx, d, x, xs, xt, err))) {
			rc = fdl_buf_printf(out, err, "SELECT %s", lead);
			for (size_t i = 0; i < fdl_rows_count(&rv) && !rc; i++) {
				char *c = fdl_rows_str(&rv, 0, i), *vt = fdl_rows_str(&rv, 1, i);
				char *xty = c ? type_of(&rx, c) : NULL;
				rc = i ? fdl_buf_puts(out, ", ", err) : 0;
				if (!rc)
					rc = c ? column_as_v(out, c, vt, xty, err) : fdl_oom(err);
				duckdb_free(c);
				duckdb_free(vt);
				duckdb_free(xty);
			}
			fdl_rows_free(&rx);
		}
		fdl_rows_free(&rv);
	}
	if (!rc)
		rc = fdl_buf_puts(out, " FROM ", err);
	if (!rc)
		rc = fdl_sql_table_ref(out, x, xs, xt, err);
	if (!rc)
		rc = fdl_buf_puts(out, where, err);
	free(xs);
	free(xt);
	return rc;
}

/* The row ids of the rows v added to t: those one of v's snapshots wrote
 * (all of them when `snap` is false: a column of the table hides the
 * snapshot), less those p returns with the same values. */
static int added_ids(fdl_buf *out, fdl_duck *d, const fdl_wd_version *w, const vtable *t, bool snap, fdl_error *err)
{
	char where[64] = "";
	bool has = false, phas = false;
	if (snap)
		snprintf(where, sizeof where, " WHERE snapshot_id >= %lld", (long long)w->from);
	int rc = fdl_buf_puts(out, "SELECT rowid FROM (", err);
	if (!rc)
		rc = select_as_v(out, d, w->v, t, w->v, "rowid, ", where, &has, err);
	if (!rc && !has)
		rc = fdl_fail(err, FDL_ENOTFOUND, "no table %lld in %s", (long long)t->id, w->v);
	if (!rc && w->p) {
		fdl_buf minus = {0};
		rc = select_as_v(&minus, d, w->v, t, w->p, "rowid, ", "", &phas, err);
		if (!rc && phas)
			rc = fdl_buf_printf(out, err, " EXCEPT %s", minus.data);
		fdl_buf_free(&minus);
	}
	if (!rc)
		rc = fdl_buf_puts(out, ")", err);
	return rc;
}

/* The condition, on a table of a descendant of v (or of v itself) named
 * fdl_x, that holds for the rows v added: one of their row ids, or written
 * by one of v's snapshots under a row id v does not know, or one of the
 * row ids DuckLake allotted to a file v wrote new rows into. An UPDATE's
 * file keeps the rows' old ids inside it, but DuckLake allots it a range
 * of its own all the same (next_row_id moves past it), and a merge gives
 * the rows those ids; a rewrite then keeps the id and gives the row its
 * own snapshot, so only that range still knows the row as v's. Such files
 * are v's own (begun by one of its snapshots), no merge of rows of several
 * snapshots (partial_max) and no rewrite (no row_id_start). */
static int added_where(fdl_buf *out, fdl_duck *d, const fdl_wd_version *w, const vtable *t, bool snap, fdl_error *err)
{
	int rc = fdl_buf_puts(out, "(fdl_x.rowid IN (", err);
	if (!rc)
		rc = added_ids(out, d, w, t, snap, err);
	if (!rc)
		rc = fdl_buf_printf(out, err,
				    ") OR EXISTS (SELECT 1 FROM " FDL_DUCKLAKE_META_PREFIX "%s.ducklake_data_file f WHERE"
				    " f.table_id = %lld AND f.begin_snapshot BETWEEN %lld AND %lld AND f.partial_max IS NULL"
				    " AND f.row_id_start IS NOT NULL AND fdl_x.rowid >= f.row_id_start"
				    " AND fdl_x.rowid < f.row_id_start + f.record_count",
				    w->v, (long long)t->id, (long long)w->from, (long long)w->to);
	if (!rc)
		rc = fdl_buf_puts(out, ")", err);
	if (!rc && snap) {
		rc = fdl_buf_printf(out, err,
				    " OR (fdl_x.snapshot_id BETWEEN %lld AND %lld AND fdl_x.rowid NOT IN (SELECT rowid FROM ",
				    (long long)w->from, (long long)w->to);
		if (!rc)
			rc = fdl_sql_table_ref(out, w->v, t->schema, t->table, err);
		if (!rc)
			rc = fdl_buf_puts(out, "))", err);
	}
	if (!rc)
		rc = fdl_buf_puts(out, ")", err);
	return rc;
}

/* DuckLake's virtual columns, in v's table and x's: a column of the
 * table's own named rowid leaves nothing to tell rows apart by (refused);
 * one named snapshot_id leaves the row ids alone (*snap false). */
static int virtuals(bool *snap, fdl_duck *d, const fdl_wd_version *w, const vtable *t, const char *x,
		    const char *xs, const char *xt, fdl_error *err)
{
	const char *aliases[] = {w->v, x}, *schemas[] = {t->schema, xs}, *tables[] = {t->table, xt};
	int rc = 0;
	*snap = true;
	for (size_t i = 0; i < 2 && !rc; i++) {
		bool rowid = false, snapshot = false;
		rc = has_column(&rowid, d, aliases[i], schemas[i], tables[i], "rowid", err);
		if (!rc)
			rc = has_column(&snapshot, d, aliases[i], schemas[i], tables[i], "snapshot_id", err);
		if (!rc && rowid)
			rc = fdl_fail(err, FDL_EINVALID,
				      "table %s.%s has a column named rowid, which hides DuckLake's row ids: fdl cannot "
				      "tell the rows the version added from the others",
				      schemas[i], tables[i]);
		*snap = *snap && !snapshot;
	}
	return rc;
}

/* x's table `key` (v's names): found in x by v's table id when `by_id`,
 * else by v's names; *ref empty when x has none. */
static int target(fdl_buf *ref, char **xs, char **xt, fdl_duck *d, const char *x, const vtable *t, bool by_id,
		  fdl_error *err)
{
	*xs = *xt = NULL;
	int rc = by_id ? table_names(xs, xt, d, x, t->id, err) : 0;
	if (!rc && !by_id && (!(*xs = fdl_strdup(t->schema)) || !(*xt = fdl_strdup(t->table))))
		rc = fdl_oom(err);
	if (!rc && *xs)
		rc = fdl_sql_table_ref(ref, x, *xs, *xt, err);
	return rc;
}

/* How many rows of table `key` (v's names) of x are rows v added. */
static int count_in(int64_t *n, fdl_duck *d, const fdl_wd_version *w, const char *x, const char *key, bool by_id,
		    fdl_error *err)
{
	vtable t;
	*n = 0;
	int rc = vtable_find(&t, d, w->v, key, err);
	if (rc)
		return rc;
	fdl_buf ref = {0}, q = {0};
	char *xs = NULL, *xt = NULL;
	bool snap = false;
	rc = target(&ref, &xs, &xt, d, x, &t, by_id, err);
	if (!rc && ref.len) {
		rc = virtuals(&snap, d, w, &t, x, xs, xt, err);
		if (!rc)
			rc = fdl_buf_printf(&q, err, "SELECT count(*) FROM %s AS fdl_x WHERE ", ref.data);
		if (!rc)
			rc = added_where(&q, d, w, &t, snap, err);
		if (!rc)
			rc = fdl_duck_int(d, n, 0, q.data, err);
	}
	fdl_buf_free(&ref);
	fdl_buf_free(&q);
	free(xs);
	free(xt);
	vtable_free(&t);
	return rc;
}

int fdl_catalog_new_row_tables(fdl_strlist *out, fdl_strmap *counts, fdl_duck *d, const fdl_wd_version *w,
			       fdl_error *err)
{
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT DISTINCT s.schema_name || '.' || t.table_name FROM " FDL_DUCKLAKE_META_PREFIX
		 "%1$s.ducklake_data_file f JOIN " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_table t ON t.table_id = f.table_id"
		 " AND t.end_snapshot IS NULL JOIN " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_schema s ON s.schema_id ="
		 " t.schema_id AND s.end_snapshot IS NULL WHERE f.end_snapshot IS NULL AND f.begin_snapshot >= %2$lld"
		 " ORDER BY 1",
		 w->v, (long long)w->from);
	fdl_strlist cand = {0};
	int rc = fdl_duck_strings(d, &cand, sql, err);
	for (size_t i = 0; i < cand.len && !rc; i++) {
		int64_t n = 0;
		rc = count_in(&n, d, w, w->v, cand.items[i], false, err);
		if (!rc && n > 0)
			rc = fdl_strlist_add(out, cand.items[i], err);
		if (!rc && n > 0 && counts)
			rc = fdl_strmap_put(counts, cand.items[i], n, err);
	}
	fdl_strlist_free(&cand);
	return rc;
}

int fdl_catalog_rows_left(int64_t *n, fdl_duck *d, const fdl_wd_version *w, const char *l, const char *key,
			  fdl_error *err)
{
	return count_in(n, d, w, l, key, true, err);
}

int fdl_catalog_clean_count(int64_t *n, fdl_duck *d, const fdl_wd_version *w, const char *work, const char *key,
			    fdl_error *err)
{
	return count_in(n, d, w, work, key, true, err);
}

/* A statement that stops the script with an error unless the table the
 * working catalog attached as `work` has under v's names is v's table (by
 * DuckLake's table id): renamed since, or its name given to another table,
 * the DELETE would find other rows under the same row ids. */
static int guard_sql(fdl_buf *out, const char *work, const vtable *t, fdl_error *err)
{
	int rc = fdl_buf_puts(out, "SELECT error(", err);
	char *msg = fdl_asprintf("%s.%s.%s is not the table the withdrawn version added rows to (it was renamed or "
				 "replaced since): run fdl withdraw --clean WORK, which finds it by its DuckLake table id",
				 work, t->schema, t->table);
	rc = rc ? rc : msg ? fdl_buf_sql_str(out, msg, err) : fdl_oom(err);
	free(msg);
	if (!rc)
		rc = fdl_buf_printf(out, err,
				    ") WHERE NOT EXISTS (SELECT 1 FROM " FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_table t JOIN "
				    FDL_DUCKLAKE_META_PREFIX "%1$s.ducklake_schema s ON s.schema_id = t.schema_id AND "
				    "s.end_snapshot IS NULL WHERE t.end_snapshot IS NULL AND t.table_id = %2$lld AND s.schema_name = ",
				    work, (long long)t->id);
	if (!rc)
		rc = fdl_buf_sql_str(out, t->schema, err);
	if (!rc)
		rc = fdl_buf_puts(out, " AND t.table_name = ", err);
	if (!rc)
		rc = fdl_buf_sql_str(out, t->table, err);
	if (!rc)
		rc = fdl_buf_puts(out, ");\n", err);
	return rc;
}

/* The statements for table `key` of v in `work`: attached here (found by
 * v's table id, under the names `work` gives it; nothing when `work` has
 * none), or not (v's names, behind a guard that they still name v's
 * table). */
static int clean_sql(fdl_buf *out, fdl_duck *d, const fdl_wd_version *w, const char *work, const char *key,
		     bool attached, fdl_error *err)
{
	vtable t;
	int rc = vtable_find(&t, d, w->v, key, err);
	if (rc)
		return rc;
	bool snap = false;
	fdl_buf ref = {0};
	char *xs = NULL, *xt = NULL;
	rc = target(&ref, &xs, &xt, d, work, &t, attached, err);
	if (!rc && !ref.len) { /* the table is gone from WORK: no rows of v's left there */
		fdl_buf_free(&ref);
		vtable_free(&t);
		return 0;
	}
	if (!rc)
		rc = virtuals(&snap, d, w, &t, work, xs, xt, err);
	if (!rc && !attached)
		rc = guard_sql(out, work, &t, err);
	if (!rc)
		rc = fdl_buf_printf(out, err, "DELETE FROM %s AS fdl_x WHERE ", ref.data);
	if (!rc)
		rc = added_where(out, d, w, &t, snap, err);
	if (!rc)
		rc = fdl_buf_printf(out, err, ";\nCALL ducklake_rewrite_data_files('%s', ", work);
	if (!rc)
		rc = fdl_buf_sql_str(out, xt, err);
	if (!rc)
		rc = fdl_buf_puts(out, ", schema => ", err);
	if (!rc)
		rc = fdl_buf_sql_str(out, xs, err);
	if (!rc)
		rc = fdl_buf_puts(out, ", delete_threshold => 0);\n", err);
	fdl_buf_free(&ref);
	free(xs);
	free(xt);
	vtable_free(&t);
	return rc;
}

int fdl_catalog_clean_sql(fdl_buf *out, fdl_duck *d, const fdl_wd_version *w, const char *work, const char *key,
			  bool attached, fdl_error *err)
{
	return clean_sql(out, d, w, work, key, attached, err);
}

int fdl_catalog_clean(fdl_duck *d, const fdl_wd_version *w, const char *work, const char *key, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = clean_sql(&sql, d, w, work, key, true, err);
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
