/* fdl add --iceberg: the SQL of making an Iceberg table's current snapshot
 * the contents of a table of a working catalog (src/ops/add_iceberg.c
 * decides which files, and checks them). The snapshot's files are read
 * through DuckDB's iceberg extension (iceberg_metadata); its position
 * deletes are carried by a DuckLake DELETE on (filename, file_row_number),
 * which writes DuckLake's own delete files, one per data file; everything
 * is one DuckLake transaction. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

#define META_PREFIX "__ducklake_metadata_"

void fdl_ice_entries_free(fdl_ice_entries *e)
{
	fdl_strlist_free(&e->data);
	fdl_strlist_free(&e->pos_deletes);
	fdl_strlist_free(&e->eq_deletes);
	fdl_strlist_free(&e->other);
	free(e->records);
	memset(e, 0, sizeof *e);
}

static int entry(fdl_ice_entries *e, fdl_rows *r, size_t i, fdl_error *err)
{
	char *content = fdl_rows_str(r, 0, i), *path = fdl_rows_str(r, 1, i), *format = fdl_rows_str(r, 2, i);
	int rc = content && path && format ? 0 : fdl_oom(err);
	fdl_strlist *to = NULL;
	if (!rc && strcmp(format, "PARQUET") && strcmp(format, "parquet"))
		to = &e->other;
	else if (!rc)
		to = !strcmp(content, "EXISTING") || !strcmp(content, "DATA") ? &e->data
		     : !strcmp(content, "POSITION_DELETES")			? &e->pos_deletes
		     : !strcmp(content, "EQUALITY_DELETES")			? &e->eq_deletes
										: &e->other;
	if (!rc && to == &e->data)
		e->records[e->data.len] = fdl_rows_int(r, 3, i);
	if (!rc)
		rc = fdl_strlist_add(to, path, err);
	duckdb_free(content);
	duckdb_free(path);
	duckdb_free(format);
	return rc;
}

int fdl_catalog_ice_entries(fdl_duck *d, const char *metadata, fdl_ice_entries *e, fdl_error *err)
{
	memset(e, 0, sizeof *e);
	fdl_buf sql = {0};
	fdl_rows r;
	int rc = fdl_buf_puts(&sql, "SELECT content, file_path, file_format, record_count FROM iceberg_metadata(", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, metadata, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ") WHERE status <> 'DELETED' ORDER BY file_path", err);
	if ((rc = fdl_duck_query_built(d, &r, &sql, rc, err)))
		return fdl_error_prefix(err, "reading the manifests of Iceberg table %s. Nothing was added", metadata);
	size_t n = fdl_rows_count(&r);
	if (!(e->records = calloc(n ? n : 1, sizeof *e->records)))
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && i < n; i++)
		rc = entry(e, &r, i, err);
	fdl_rows_free(&r);
	if (rc)
		fdl_ice_entries_free(e);
	return rc;
}

int fdl_catalog_table_files(fdl_duck *d, const char *alias, const char *schema, const char *table,
			    const char *data_path, fdl_strlist *out, fdl_error *err)
{
	size_t n = strlen(data_path);
	bool slash = n && data_path[n - 1] == '/';
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT CASE WHEN CAST(f.path_is_relative AS BOOLEAN) THEN ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, data_path, err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    " || '%s' || s.path || t.path || f.path ELSE f.path END FROM " META_PREFIX
				    "%s.ducklake_data_file f JOIN " META_PREFIX
				    "%s.ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL JOIN " META_PREFIX
				    "%s.ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL WHERE "
				    "f.end_snapshot IS NULL AND t.table_name = ",
				    slash ? "" : "/", alias, alias, alias);
	const char *vals[] = {table, schema}, *glue[] = {" AND s.schema_name = ", ""};
	if (!rc)
		rc = fdl_sql_glued(&sql, 2, vals, glue, err);
	if (!rc)
		rc = fdl_duck_strings(d, out, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

int fdl_catalog_parquet_field_ids(fdl_duck *d, const char *file, fdl_strlist *names, fdl_strlist *ids,
				  fdl_error *err)
{
	fdl_buf sql = {0};
	fdl_rows r;
	int rc = fdl_buf_puts(&sql, "SELECT name, num_children, field_id FROM parquet_schema(", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, file, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ")", err);
	if ((rc = fdl_duck_query_built(d, &r, &sql, rc, err)))
		return rc;
	/* depth-first: the root, then each top-level column and its subtree */
	int64_t below = 0; /* elements of the current column's subtree still to come */
	for (size_t i = 1; !rc && i < fdl_rows_count(&r); i++) {
		int64_t kids = fdl_rows_null(&r, 1, i) ? 0 : fdl_rows_int(&r, 1, i);
		if (below > 0) {
			below += kids - 1;
			continue;
		}
		below = kids;
		char *name = fdl_rows_str(&r, 0, i), *id = fdl_rows_str(&r, 2, i);
		rc = name ? fdl_strlist_add(names, name, err) : fdl_oom(err);
		if (!rc)
			rc = fdl_strlist_add(ids, id ? id : "", err);
		duckdb_free(name);
		duckdb_free(id);
	}
	fdl_rows_free(&r);
	return rc;
}

int fdl_catalog_canonical_types(fdl_duck *d, const fdl_strlist *types, fdl_strlist *out, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT column_type FROM (DESCRIBE SELECT ", err);
	for (size_t i = 0; !rc && i < types->len; i++)
		rc = fdl_buf_printf(&sql, err, "%sNULL::%s AS c%zu", i ? ", " : "", types->items[i], i);
	if (!rc)
		rc = fdl_buf_puts(&sql, ")", err);
	if (!rc)
		rc = fdl_duck_strings(d, out, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

/* VALUES (iceberg path, DuckLake filename), ... */
static int values_sql(fdl_buf *sql, const fdl_strlist *ice, const fdl_strlist *duck, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, "(VALUES ", err);
	for (size_t i = 0; !rc && i < ice->len; i++) {
		rc = fdl_buf_puts(sql, i ? ", (" : "(", err);
		if (!rc)
			rc = fdl_buf_sql_str(sql, ice->items[i], err);
		if (!rc)
			rc = fdl_buf_puts(sql, ", ", err);
		if (!rc)
			rc = fdl_buf_sql_str(sql, duck->items[i], err);
		if (!rc)
			rc = fdl_buf_puts(sql, ")", err);
	}
	return rc ? rc : fdl_buf_puts(sql, ") m(ice, duck)", err);
}

static int list_sql(fdl_buf *sql, const fdl_strlist *l, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, "[", err);
	for (size_t i = 0; !rc && i < l->len; i++) {
		rc = fdl_buf_puts(sql, i ? ", " : "", err);
		if (!rc)
			rc = fdl_buf_sql_str(sql, l->items[i], err);
	}
	return rc ? rc : fdl_buf_puts(sql, "]", err);
}

/* SELECT m.duck, d.pos FROM <the position deletes of the snapshot's data files> */
static int deletes_sql(fdl_buf *sql, const fdl_ice_batch *b, const char *what, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err, "SELECT %s FROM read_parquet(", what);
	if (!rc)
		rc = list_sql(sql, b->pos_deletes, err);
	if (!rc)
		rc = fdl_buf_puts(sql, ", hive_partitioning = false) d JOIN ", err);
	if (!rc)
		rc = values_sql(sql, b->ice, b->duck, err);
	return rc ? rc : fdl_buf_puts(sql, " ON d.file_path = m.ice", err);
}

int fdl_catalog_ice_deleted(fdl_duck *d, const fdl_ice_batch *b, int64_t *out, fdl_error *err)
{
	*out = 0;
	if (!b->pos_deletes->len || !b->ice->len)
		return 0;
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT count(*) FROM (", err);
	if (!rc)
		rc = deletes_sql(&sql, b, "DISTINCT m.duck, d.pos", err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ")", err);
	if (!rc)
		rc = fdl_duck_int(d, out, 0, sql.data, err);
	fdl_buf_free(&sql);
	if (rc)
		fdl_error_prefix(err, "reading the Iceberg table's position delete files. Nothing was added");
	return rc;
}

static int table_name(fdl_buf *sql, const char *alias, const fdl_ice_batch *b, fdl_error *err)
{
	return fdl_sql_table_ref(sql, alias, b->schema, b->table, err);
}

static int create_sql(fdl_buf *sql, const char *alias, const fdl_ice_batch *b, fdl_error *err)
{
	return fdl_sql_create_table(sql, alias, b->schema, b->table, b->schema_exists, b->names, b->types, err);
}

static int add_sql(fdl_buf *sql, const char *alias, const fdl_ice_batch *b, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err, "CALL ducklake_add_data_files('%s', ", alias);
	if (!rc)
		rc = fdl_buf_sql_str(sql, b->table, err);
	if (!rc)
		rc = fdl_buf_puts(sql, ", ", err);
	if (!rc)
		rc = list_sql(sql, b->added, err);
	if (!rc)
		rc = fdl_buf_puts(sql, ", schema => ", err);
	if (!rc)
		rc = fdl_buf_sql_str(sql, b->schema, err);
	/* a column the file lacks was added to the table after it was written
	 * (NULL, as Iceberg reads it); one the table lacks was dropped since */
	return rc ? rc
		  : fdl_buf_puts(sql, ", hive_partitioning => false, allow_missing => true, ignore_extra_columns => "
				      "true)",
				 err);
}

static int gone_sql(fdl_buf *sql, const char *alias, const fdl_ice_batch *b, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, "DELETE FROM ", err);
	if (!rc)
		rc = table_name(sql, alias, b, err);
	if (!rc)
		rc = fdl_buf_puts(sql, " WHERE filename IN (SELECT unnest(", err);
	if (!rc)
		rc = list_sql(sql, b->gone, err);
	return rc ? rc : fdl_buf_puts(sql, "))", err);
}

static int delete_sql(fdl_buf *sql, const char *alias, const fdl_ice_batch *b, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, "DELETE FROM ", err);
	if (!rc)
		rc = table_name(sql, alias, b, err);
	if (!rc)
		rc = fdl_buf_puts(sql, " WHERE (filename, file_row_number) IN (", err);
	if (!rc)
		rc = deletes_sql(sql, b, "m.duck, d.pos", err);
	return rc ? rc : fdl_buf_puts(sql, ")", err);
}

/* One statement of the transaction, built by `build` (skipped when it is
 * NULL). */
static int step(fdl_duck *d, const char *alias, const fdl_ice_batch *b,
		int (*build)(fdl_buf *, const char *, const fdl_ice_batch *, fdl_error *), fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = build(&sql, alias, b, err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

/* The table's rows as the transaction leaves them. */
static int count_rows(fdl_duck *d, const char *alias, const fdl_ice_batch *b, int64_t *n, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT count(*) FROM ", err);
	if (!rc)
		rc = table_name(&sql, alias, b, err);
	if (!rc)
		rc = fdl_duck_int(d, n, 0, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

int fdl_catalog_ice_apply(fdl_duck *d, const char *alias, const fdl_ice_batch *b, fdl_error *err)
{
	int rc = fdl_duck_exec(d, "BEGIN TRANSACTION", err);
	int64_t rows = -1;
	if (!rc && b->create)
		rc = step(d, alias, b, create_sql, err);
	if (!rc && b->added->len)
		rc = step(d, alias, b, add_sql, err);
	if (!rc && b->gone->len)
		rc = step(d, alias, b, gone_sql, err);
	if (!rc && b->pos_deletes->len && b->ice->len)
		rc = step(d, alias, b, delete_sql, err);
	if (!rc)
		rc = count_rows(d, alias, b, &rows, err);
	if (!rc && rows != b->expect_rows)
		rc = fdl_fail(err, FDL_EINVALID,
			      "table %s.%s would hold %lld rows, the Iceberg snapshot holds %lld (rows deleted in the "
			      "working catalog that the snapshot still has, or position deletes naming no row of their "
			      "file)",
			      b->schema, b->table, (long long)rows, (long long)b->expect_rows);
	if (!rc)
		rc = fdl_duck_exec(d, "COMMIT", err);
	if (rc) {
		fdl_error ignore;
		fdl_duck_exec(d, "ROLLBACK", &ignore);
		return fdl_error_prefix(err, "making the Iceberg snapshot the contents of table %s.%s (nothing was "
					     "added)",
					b->schema, b->table);
	}
	char tables[128];
	snprintf(tables, sizeof tables, META_PREFIX "%s", alias);
	return fdl_catalog_paths_relative(d, tables, b->data_path, -1, true, true, err);
}
