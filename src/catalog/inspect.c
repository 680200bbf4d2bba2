/* Reading what a frozen catalog holds: its live data files (for the data
 * check and files.json) and its tables and views (for dataset.json). The
 * catalog is attached raw and its end_snapshot values are already cut at
 * the frozen snapshot, so "live" is simply end_snapshot IS NULL. */
#include "duck.h"
#include "../store/store.h"

#include <stdlib.h>
#include <string.h>

int fdl_catalog_data_files(fdl_duck *d, const char *alias, fdl_data_files *out, fdl_error *err)
{
	fdl_listing *l = NULL;
	int rc = fdl_listing_read(&l, d, alias, true, err);
	if (!rc)
		rc = fdl_listing_live(l, out, err);
	fdl_listing_free(l);
	return rc;
}

static int file_json(json_t **out, const fdl_data_file *f)
{
	json_t *o = json_pack("{s:s, s:I, s:I}", "path", f->path, "rows", (json_int_t)f->rows, "bytes",
			      (json_int_t)f->bytes);
	if (o && f->footer_bytes >= 0)
		json_object_set_new(o, "footer_bytes", json_integer(f->footer_bytes));
	if (o && f->delete_path)
		json_object_set_new(o, "deletes",
				    json_pack("{s:s, s:I, s:I}", "path", f->delete_path, "rows",
					      (json_int_t)f->delete_rows, "bytes", (json_int_t)f->delete_bytes));
	*out = o;
	return o ? 0 : -1;
}

/* One table's object of files.json: its files, renamed_columns, field_ids
 * when renamed, and what a reader without the catalog needs (reading.c).
 * by_table: the indexes of `files` ordered by table_id. */
static int table_files_json(json_t **out, const fdl_data_files *files, const size_t *by_table, int64_t id,
			    fdl_reading *rd, fdl_error *err)
{
	bool renamed = fdl_reading_renamed(rd, id);
	json_t *list = json_array();
	size_t lo = 0, hi = files->len;
	while (lo < hi) { /* the first of the table's files */
		size_t mid = lo + (hi - lo) / 2;
		if (files->items[by_table[mid]].table_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < files->len && list && files->items[by_table[k]].table_id == id; k++) {
		json_t *fj;
		if (file_json(&fj, &files->items[by_table[k]]) || json_array_append_new(list, fj)) {
			json_decref(list);
			list = NULL;
		}
	}
	json_t *t = list ? json_pack("{s:o, s:b}", "files", list, "renamed_columns", (int)renamed) : NULL;
	json_t *ids = NULL;
	int rc = t ? 0 : fdl_oom(err);
	/* the Parquet field id (DuckLake's column_id) of each live top-level
	 * column by its current name: what a reader without the catalog needs
	 * to read files written before a rename (fdl's addition) */
	if (!rc && renamed && (rc = fdl_reading_field_ids(&ids, rd, id, err)) == 0)
		json_object_set_new(t, "field_ids", ids);
	if (!rc)
		rc = fdl_reading_describe(rd, t, id, err);
	if (rc) {
		json_decref(t);
		return rc;
	}
	*out = t;
	return 0;
}

typedef struct by_table_key {
	int64_t table;
	size_t index;
} by_table_key;

static int by_table_order(const void *a, const void *b)
{
	const by_table_key *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The indexes of files' items ordered by table_id, each table's in their
 * order in `files` (catalog order). */
static size_t *files_by_table(const fdl_data_files *files)
{
	by_table_key *keys = calloc(files->len + 1, sizeof *keys);
	size_t *order = calloc(files->len + 1, sizeof *order);
	for (size_t i = 0; keys && order && i < files->len; i++)
		keys[i] = (by_table_key){files->items[i].table_id, i};
	if (keys && order && files->len)
		qsort(keys, files->len, sizeof *keys, by_table_order);
	for (size_t i = 0; keys && order && i < files->len; i++)
		order[i] = keys[i].index;
	if (!keys) {
		free(order);
		order = NULL;
	}
	free(keys);
	return order;
}

int fdl_catalog_files_json(json_t **out, fdl_duck *d, const char *alias, fdl_listing *l,
			   const fdl_data_files *files, fdl_error *err)
{
	fdl_reading *rd = NULL;
	fdl_strlist keys = {0};
	int64_t *ids = NULL;
	size_t *by_table = NULL;
	int rc = fdl_listing_tables(l, &keys, &ids, err);
	if (!rc && !(by_table = files_by_table(files)))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_reading_load(&rd, d, alias, files, err);
	json_t *tables = rc ? NULL : json_object();
	if (!rc && !tables)
		rc = fdl_oom(err);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		json_t *t = NULL;
		rc = table_files_json(&t, files, by_table, ids[i], rd, err);
		if (rc)
			fdl_error_prefix(err, "describing %s for the list of data files", keys.items[i]);
		else if (json_object_set_new(tables, keys.items[i], t))
			rc = fdl_oom(err);
	}
	fdl_strlist_free(&keys);
	free(ids);
	free(by_table);
	fdl_reading_free(rd);
	if (rc) {
		json_decref(tables);
		return rc;
	}
	/* "o" takes the reference, even when packing fails */
	json_t *doc = json_pack("{s:o}", "tables", tables);
	if (!doc)
		return fdl_oom(err);
	*out = doc;
	return 0;
}

/* Every data and delete file any row of a working catalog references,
 * live or ended, resolved and checked like the live ones: the staged
 * files of a commit. The catalog may be SQLite's or PostgreSQL's, read
 * through their scanners: one join, not listing.c's union of scans whose
 * column types each backend spells its own way. */
static const char ALL_FILES_SQL[] =
	"WITH s AS (SELECT DISTINCT ON (schema_id) schema_id, path, path_is_relative FROM {db}.ducklake_schema"
	"           ORDER BY schema_id, begin_snapshot DESC),"
	" t AS (SELECT DISTINCT ON (table_id) table_id, schema_id, path, path_is_relative, table_name"
	"       FROM {db}.ducklake_table ORDER BY table_id, begin_snapshot DESC)"
	" SELECT s.path, s.path_is_relative, t.path, t.path_is_relative, f.path, f.path_is_relative, f.begin_snapshot,"
	"  false, f.data_file_id, t.table_name, f.file_size_bytes"
	" FROM {db}.ducklake_data_file f JOIN t USING (table_id) JOIN s USING (schema_id)"
	" UNION ALL"
	" SELECT s.path, s.path_is_relative, t.path, t.path_is_relative, d.path, d.path_is_relative, d.begin_snapshot,"
	"  true, d.delete_file_id, t.table_name, d.file_size_bytes"
	" FROM {db}.ducklake_delete_file d JOIN t USING (table_id) JOIN s USING (schema_id)";

/* The same rows for a SQLite working catalog, only those recorded relative
 * and begun at or before %lld, in SQLite's own SQL (run through
 * sqlite_query: SQLite filters its file rows in a fraction of the time
 * DuckDB's scanner takes to bring them all across). Each id's latest
 * table and schema row, as DISTINCT ON gives above. */
static const char STAGED_SQLITE_SQL[] =
	"WITH s AS (SELECT schema_id, path, path_is_relative FROM ducklake_schema x WHERE NOT EXISTS"
	"  (SELECT 1 FROM ducklake_schema n WHERE n.schema_id = x.schema_id AND n.begin_snapshot > x.begin_snapshot)),"
	" t AS (SELECT table_id, schema_id, path, path_is_relative, table_name FROM ducklake_table x WHERE NOT EXISTS"
	"  (SELECT 1 FROM ducklake_table n WHERE n.table_id = x.table_id AND n.begin_snapshot > x.begin_snapshot))"
	" SELECT s.path AS sp, s.path_is_relative AS sr, t.path AS tp, t.path_is_relative AS tr, f.path AS fp,"
	"  f.path_is_relative AS fr, f.begin_snapshot AS b, 0 AS is_delete, f.data_file_id AS id, t.table_name AS tname,"
	"  f.file_size_bytes AS size"
	" FROM ducklake_data_file f JOIN t ON t.table_id = f.table_id JOIN s ON s.schema_id = t.schema_id"
	" WHERE f.path_is_relative AND f.begin_snapshot <= %1$lld"
	" UNION ALL"
	" SELECT s.path, s.path_is_relative, t.path, t.path_is_relative, d.path, d.path_is_relative, d.begin_snapshot,"
	"  1, d.delete_file_id, t.table_name, d.file_size_bytes"
	" FROM ducklake_delete_file d JOIN t ON t.table_id = d.table_id JOIN s ON s.schema_id = t.schema_id"
	" WHERE d.path_is_relative AND d.begin_snapshot <= %1$lld";

/* The statement listing a working catalog's staged files: in SQLite's SQL
 * for a SQLite file (`alias` with no schema), else ALL_FILES_SQL's join. */
static int staged_sql(fdl_buf *sql, const char *alias, int64_t upto, fdl_error *err)
{
	fdl_buf inner = {0};
	int rc;
	if (!strchr(alias, '.')) {
		rc = fdl_buf_printf(&inner, err, STAGED_SQLITE_SQL, (long long)upto);
		if (!rc)
			rc = fdl_buf_puts(sql, "SELECT * FROM ", err);
		if (!rc)
			rc = fdl_sql_native(sql, "sqlite_query", alias, inner.data, err);
	} else {
		rc = fdl_sql_with_db(&inner, ALL_FILES_SQL, alias, err);
		if (!rc)
			rc = fdl_buf_printf(sql, err,
					    "SELECT * FROM (%s) q(sp, sr, tp, tr, fp, fr, b, is_delete, id, tname, size)"
					    " WHERE CAST(fr AS BOOLEAN) AND b <= %lld",
					    inner.data, (long long)upto);
	}
	fdl_buf_free(&inner);
	return rc;
}

/* The rows of ALL_FILES_SQL recorded relative to the data path and begun
 * at or before `upto`, into `out`, with the size the catalog records for
 * each in `sizes` (NULL: none); kinds[0] set when a data file row is among
 * them, kinds[1] when a delete file row is (NULL: not asked). */
static int staged_rows(fdl_strlist *out, fdl_strmap *sizes, bool *kinds, fdl_duck *d, const char *alias,
		       int64_t upto, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = staged_sql(&sql, alias, upto, err);
	fdl_rows r;
	if (!rc)
		rc = fdl_duck_query(d, &r, sql.data, err);
	fdl_buf_free(&sql);
	if (rc)
		return fdl_error_prefix(err, "listing the files the catalog references");
	for (size_t i = 0; i < fdl_rows_count(&r) && !rc; i++) {
		bool is_delete = fdl_rows_int(&r, 7, i) != 0;
		if (kinds)
			kinds[is_delete] = true;
		/* named for the messages: "data file 12 of table t" */
		char *path = NULL, *table = fdl_rows_str(&r, 9, i), what[512];
		snprintf(what, sizeof what, "%s file %lld of table %s", is_delete ? "delete" : "data",
			 (long long)fdl_rows_int(&r, 8, i), table ? table : "?");
		duckdb_free(table);
		rc = fdl_catalog_resolve_path(&path, &r, i, 0, what, err);
		if (!rc)
			rc = fdl_strlist_add(out, path, err);
		/* the size the catalog records (-1: none) */
		if (!rc && sizes)
			rc = fdl_strmap_put(sizes, path, fdl_rows_null(&r, 10, i) ? -1 : fdl_rows_int(&r, 10, i), err);
		free(path);
	}
	fdl_rows_free(&r);
	return rc;
}

int fdl_catalog_all_files_sized(fdl_strlist *out, fdl_strmap *sizes, fdl_strlist *added, fdl_duck *d,
				const char *alias, int64_t added_from, fdl_error *err)
{
	fdl_listing *l = NULL;
	int rc = fdl_listing_read(&l, d, alias, false, err);
	if (!rc)
		rc = fdl_listing_all(l, out, sizes, added, added_from, err);
	fdl_listing_free(l);
	return rc;
}

int fdl_catalog_all_files(fdl_strlist *out, fdl_duck *d, const char *alias, int64_t added_from, fdl_error *err)
{
	return fdl_catalog_all_files_sized(added_from < 0 ? out : NULL, NULL, added_from < 0 ? NULL : out, d, alias,
					   added_from, err);
}

int fdl_catalog_staged_files(fdl_strlist *out, fdl_strmap *sizes, bool *kinds, fdl_duck *d, const char *alias,
			     int64_t upto, fdl_error *err)
{
	if (kinds)
		kinds[0] = kinds[1] = false;
	return staged_rows(out, sizes, kinds, d, alias, upto < 0 ? 0 : upto, err);
}

/* Every schema and table row, ended or not: a path another snapshot would
 * resolve through must be relative and clean too. */
static const char PATHS_SQL[] =
	"SELECT 'schema ' || schema_name, path, path_is_relative FROM {db}.ducklake_schema"
	" UNION ALL SELECT 'table ' || table_name, path, path_is_relative FROM {db}.ducklake_table";

int fdl_catalog_check_confined(fdl_duck *d, const char *alias, fdl_strlist *files, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_sql_with_db(&sql, PATHS_SQL, alias, err);
	fdl_rows r;
	if (!rc)
		rc = fdl_duck_query(d, &r, sql.data, err);
	fdl_buf_free(&sql);
	if (rc)
		return fdl_error_prefix(err, "reading the catalog's paths");
	for (size_t i = 0; i < fdl_rows_count(&r) && !rc; i++) {
		char *what = fdl_rows_str(&r, 0, i), *path = fdl_rows_str(&r, 1, i);
		bool rel = fdl_rows_null(&r, 2, i) || fdl_rows_int(&r, 2, i) != 0;
		char where[600];
		snprintf(where, sizeof where, "the path of %s", what ? what : "?");
		if (path && *path && !rel)
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s: the catalog records an absolute path '%s'; every file of a version must lie "
				      "under data_dir, recorded relative to the data path",
				      where, path);
		else if (path && *path)
			rc = fdl_path_check_relative(path, where, err);
		duckdb_free(what);
		duckdb_free(path);
	}
	fdl_rows_free(&r);
	fdl_strlist none = {0};
	if (!rc)
		rc = fdl_catalog_all_files(files ? files : &none, d, alias, -1, err);
	fdl_strlist_free(&none);
	if (rc)
		fdl_error_prefix(err, "refusing this catalog");
	return rc;
}

int fdl_catalog_confined(fdl_strlist *files, fdl_duck *d, const char *alias, const char *catalog, fdl_error *err)
{
	fdl_duck *own = NULL;
	int rc = !d && !alias ? fdl_duck_new(&own, false, err) : 0;
	fdl_duck *use = d ? d : own;
	const char *as = alias ? alias : "fdl_names";
	if (!rc && !alias)
		rc = fdl_catalog_attach_raw(use, as, catalog, FDL_CAT_DUCKDB, true, err);
	bool attached = !rc && !alias;
	if (!rc)
		rc = fdl_catalog_check_confined(use, as, files, err);
	if (attached) {
		int drc = fdl_catalog_detach(use, as, rc ? NULL : err);
		rc = rc ? rc : drc;
	}
	fdl_duck_free(own);
	return rc;
}

int fdl_catalog_version_confined(fdl_strlist *files, fdl_duck *d, const char *alias, const char *catalog,
				 struct fdl_store *store, const char *data_dir, const char *id, fdl_error *err)
{
	fdl_strlist all = {0};
	int rc = fdl_catalog_confined(&all, d, alias, catalog, err);
	if (!rc)
		rc = fdl_store_files_confined(store, data_dir, &all, err);
	if (rc)
		fdl_error_prefix(err, "version %s", id);
	for (size_t i = 0; !rc && files && i < all.len; i++)
		rc = fdl_strlist_add(files, all.items[i], err);
	fdl_strlist_free(&all);
	return rc;
}

int fdl_duck_confine(fdl_duck *d, const char *const *dirs, const char *const *paths, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SET allowed_directories = [", err);
	for (size_t i = 0; !rc && dirs && dirs[i]; i++) {
		if (i)
			rc = fdl_buf_puts(&sql, ", ", err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, dirs[i], err);
	}
	if (!rc)
		rc = fdl_buf_puts(&sql, "]; SET allowed_paths = [", err);
	for (size_t i = 0; !rc && paths && paths[i]; i++) {
		if (i)
			rc = fdl_buf_puts(&sql, ", ", err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, paths[i], err);
	}
	if (!rc)
		rc = fdl_buf_puts(&sql, "]; SET enable_external_access = false; SET lock_configuration = true", err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

/* ---- snapshots ---------------------------------------------------------------------- */

void fdl_snapshot_list_free(fdl_snapshot_list *l)
{
	for (size_t i = 0; l && i < l->count; i++) {
		fdl_snapshot *s = &l->items[i];
		free(s->time);
		free(s->author);
		free(s->message);
		free(s->extra_info);
		free(s->changes);
	}
	if (l)
		free(l->items);
	free(l);
}

int fdl_catalog_snapshots(fdl_snapshot_list **out, fdl_duck *d, const char *alias, int64_t first, int64_t last,
			  fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_printf(&sql, err,
				"SELECT s.snapshot_id, strftime(s.snapshot_time AT TIME ZONE 'UTC', "
				"'%%Y-%%m-%%dT%%H:%%M:%%SZ'), c.author, c.commit_message, c.commit_extra_info, "
				"c.changes_made FROM %s.ducklake_snapshot s LEFT JOIN %s.ducklake_snapshot_changes c "
				"USING (snapshot_id) WHERE s.snapshot_id BETWEEN %lld AND %lld ORDER BY s.snapshot_id",
				alias, alias, (long long)first, (long long)last);
	fdl_rows r;
	if ((rc = fdl_duck_query_built(d, &r, &sql, rc, err)))
		return rc;
	size_t n = fdl_rows_count(&r);
	fdl_snapshot_list *list = calloc(1, sizeof *list);
	if (list && n)
		list->items = calloc(n, sizeof *list->items);
	bool oom = !list || (n && !list->items);
	for (size_t i = 0; !oom && i < n; i++) {
		fdl_snapshot *s = &list->items[list->count++];
		s->snapshot_id = fdl_rows_int(&r, 0, i);
		char **fields[] = {&s->time, &s->author, &s->message, &s->extra_info, &s->changes};
		for (size_t k = 0; k < 5; k++) {
			char *v = fdl_rows_str(&r, k + 1, i);
			if (v && !(*fields[k] = fdl_strdup(v)))
				oom = true;
			duckdb_free(v);
		}
	}
	fdl_rows_free(&r);
	if (oom) {
		fdl_snapshot_list_free(list);
		return fdl_oom(err);
	}
	*out = list;
	return 0;
}
