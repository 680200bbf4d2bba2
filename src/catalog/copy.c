/* Creating catalog files and copying metadata rows between them: the freeze
 * (working SQLite catalog -> frozen DuckDB file) and the checkout (frozen
 * file -> new working catalog) are the same copy with other options. */
#include "copy.h"

#include <stdlib.h>
#include <string.h>

int fdl_catalog_create(fdl_duck *d, const char *path, fdl_cat_kind kind, const char *data_path, fdl_error *err)
{
	int rc = kind == FDL_CAT_DUCKDB ? fdl_fail(err, FDL_ERROR, "a DuckDB catalog is made by fdl_catalog_create_attached")
		 : kind == FDL_CAT_POSTGRES ? fdl_duck_load(d, "postgres_scanner", err)
					    : 0;
	if (!rc)
		rc = fdl_attach_run(d, kind == FDL_CAT_POSTGRES ? "ducklake:postgres:" : "ducklake:", path, "fdl_new", "",
				    data_path, kind == FDL_CAT_SQLITE ? ", META_TYPE 'sqlite'" : "", err);
	if (!rc)
		rc = fdl_duck_exec(d, "DETACH fdl_new", err);
	if (rc)
		fdl_error_prefix(err, "creating the DuckLake catalog %s", path);
	return rc;
}

/* DuckDB's storage tag of a DuckDB file ("v1.5.0+") as "duckdb-v1.5.0";
 * empty when DuckDB names none (NULL). */
static void storage_name(char storage[64], const char *tag)
{
	storage[0] = '\0';
	if (tag) {
		size_t n = strlen(tag);
		snprintf(storage, 64, "duckdb-%.*s", (int)(n && tag[n - 1] == '+' ? n - 1 : n), tag);
	}
}

/* The query for the storage tag of the file attached as `alias`, into sql
 * (a scalar subquery); "NULL" for DuckLake's metadata database, which
 * DuckDB does not list. */
static void storage_sql(char *sql, size_t size, const char *alias)
{
	if (!strncmp(alias, FDL_DUCKLAKE_META_PREFIX, strlen(FDL_DUCKLAKE_META_PREFIX)))
		snprintf(sql, size, "NULL");
	else
		snprintf(sql, size,
			 "(SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = '%s' AND "
			 "type = 'duckdb')",
			 alias);
}

static int storage_tag(fdl_duck *d, const char *alias, char storage[64], fdl_error *err)
{
	char sub[256], sql[300];
	fdl_rows r;
	storage_sql(sub, sizeof sub, alias);
	snprintf(sql, sizeof sql, "SELECT %s", sub);
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return rc;
	char *s = fdl_rows_count(&r) ? fdl_rows_str(&r, 0, 0) : NULL;
	storage_name(storage, s);
	duckdb_free(s);
	fdl_rows_free(&r);
	return 0;
}

int fdl_catalog_storage(fdl_duck *d, const char *path, char storage[64], fdl_error *err)
{
	int rc = fdl_catalog_attach_raw(d, "fdl_storage", path, FDL_CAT_DUCKDB, true, err);
	if (rc)
		return rc;
	rc = storage_tag(d, "fdl_storage", storage, err);
	int drc = fdl_catalog_detach(d, "fdl_storage", rc ? NULL : err);
	return rc ? rc : drc;
}

int fdl_catalog_create_attached(fdl_duck *d, const char *path, const char *alias, const char *data_path,
				fdl_error *err)
{
	/* 16 KiB blocks instead of DuckDB's 256 KiB: a frozen catalog holds
	 * 28 small tables, and is 300 KiB instead of 5 MiB to publish, download
	 * and cache. DuckDB reads any block size it wrote. */
	int rc = fdl_attach_run(d, "", path, "fdl_blocks", "BLOCK_SIZE 16384", NULL, "", err);
	if (!rc)
		rc = fdl_duck_exec(d, "DETACH fdl_blocks", err);
	if (!rc)
		/* no WAL in the metadata database: the rows are written once, by
		 * the checkpoint at the detach, not first to a log as well */
		rc = fdl_attach_run(d, "ducklake:", path, alias, "", data_path, ", META_RECOVERY_MODE 'no_wal_writes'", err);
	if (rc)
		fdl_error_prefix(err, "creating the DuckLake catalog %s", path);
	return rc;
}

int fdl_catalog_create_plain(fdl_duck *d, const char *path, const char *alias, fdl_error *err)
{
	/* the blocks of fdl_catalog_create_attached; the storage version
	 * DuckLake gives its catalogs; no WAL: the file is written once, at
	 * the detach, and a crash leaves a temporary file nobody reads */
	int rc = fdl_attach_run(d, "", path, alias,
				"BLOCK_SIZE 16384, STORAGE_VERSION 'latest', RECOVERY_MODE no_wal_writes", NULL, "", err);
	if (rc)
		fdl_error_prefix(err, "creating the catalog file %s", path);
	return rc;
}

int fdl_catalog_template_write(fdl_duck *d, const char *path, const char *data_path, fdl_error *err)
{
	int rc = fdl_catalog_create_attached(d, path, "fdl_template", data_path, err);
	if (!rc)
		rc = fdl_catalog_detach(d, "fdl_template", err);
	if (rc)
		remove(path);
	return rc;
}

int fdl_catalog_create_from(fdl_duck *d, const char *path, const char *alias, const char *tmpl, const char *format,
			    fdl_error *err)
{
	fdl_catalog_info t;
	int rc = fdl_catalog_attach_raw(d, "fdl_template", tmpl, FDL_CAT_DUCKDB, true, err);
	bool open = !rc, made = false;
	if (!rc && !(rc = fdl_catalog_info_read(d, "fdl_template", &t, err)) && strcmp(t.format, format))
		rc = fdl_fail(err, FDL_ECONFLICT, "%s holds DuckLake format %s, the working catalog %s", tmpl, t.format,
			      format);
	if (!rc)
		made = !(rc = fdl_catalog_create_plain(d, path, alias, err));
	char sql[256];
	snprintf(sql, sizeof sql, "COPY FROM DATABASE fdl_template TO %s", alias);
	if (!rc)
		rc = fdl_duck_exec(d, sql, err);
	if (open)
		fdl_catalog_detach(d, "fdl_template", NULL);
	if (rc && made) {
		fdl_catalog_detach(d, alias, NULL);
		remove(path);
	}
	return rc;
}

int fdl_catalog_meta_add(fdl_duck *d, const char *tables, const char *key, const char *value, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_printf(&sql, err, "INSERT INTO %s.ducklake_metadata (key, value, scope, scope_id) VALUES (",
				tables);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, key, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ", ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, value, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ", NULL, NULL)", err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

/* "db" or "db.schema" (a PostgreSQL catalog's tables live in a schema):
 * the WHERE clause naming it in duckdb_tables()/duckdb_columns(). */
static int where_db(fdl_buf *sql, const char *alias, fdl_error *err)
{
	const char *dot = strchr(alias, '.');
	char db[128];
	snprintf(db, sizeof db, "%.*s", dot ? (int)(dot - alias) : (int)strlen(alias), alias);
	int rc = fdl_buf_puts(sql, " database_name = ", err);
	if (!rc)
		rc = fdl_buf_sql_str(sql, db, err);
	if (!rc)
		rc = fdl_buf_puts(sql, " AND schema_name = ", err);
	if (!rc)
		rc = fdl_buf_sql_str(sql, dot ? dot + 1 : "main", err);
	return rc;
}

void fdl__meta_schema_free(meta_schema *m)
{
	for (size_t i = 0; i < m->tables.len; i++) {
		fdl_strlist_free(&m->cols[i]);
		fdl_strlist_free(&m->types[i]);
	}
	free(m->cols);
	free(m->types);
	fdl_strlist_free(&m->tables);
	memset(m, 0, sizeof *m);
}

bool fdl__meta_working_only(const char *t)
{
	return !strcmp(t, "ducklake_files_scheduled_for_deletion") || !strcmp(t, "ducklake_inlined_data_tables") ||
	       !strncmp(t, "ducklake_inlined_data_", 22) || !strncmp(t, "ducklake_inlined_delete_", 24);
}

bool fdl__meta_per_table(const char *t)
{
	return fdl__meta_working_only(t) && strcmp(t, "ducklake_files_scheduled_for_deletion") != 0 &&
	       strcmp(t, "ducklake_inlined_data_tables") != 0;
}

int fdl__meta_schema_read(fdl_duck *d, const char *db, const fdl_strlist *probe, bool sqlite, meta_schema *m,
			    fdl_error *err)
{
	memset(m, 0, sizeof *m);
	fdl_buf sql = {0};
	int rc = 0;
	if (sqlite && !strchr(db, '.')) {
		rc = fdl_buf_printf(&sql, err,
				    "SELECT * FROM sqlite_query('%s', 'SELECT m.name AS t, p.cid AS i, p.name AS c, p.type "
				    "FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = ''table'' AND "
				    "m.name LIKE ''ducklake\\_%%'' ESCAPE ''\\'' ORDER BY 1, 2')",
				    db);
	} else if (probe) {
		const char *sep = "";
		for (size_t i = 0; i < probe->len && !rc; i++) {
			if (fdl__meta_per_table(probe->items[i]))
				continue;
			rc = fdl_buf_printf(&sql, err,
					    "%sSELECT '%s' AS t, cid, name, type FROM pragma_table_info('%s.main.%s')",
					    sep, probe->items[i], db, probe->items[i]);
			sep = " UNION ALL ";
		}
		if (!rc)
			rc = fdl_buf_puts(&sql, " ORDER BY t, cid", err);
	} else {
		rc = fdl_buf_puts(&sql, "SELECT table_name, column_index, column_name, data_type FROM duckdb_columns() WHERE", err);
		if (!rc)
			rc = where_db(&sql, db, err);
		if (!rc)
			rc = fdl_buf_puts(&sql,
					  " AND table_name LIKE 'ducklake\\_%' ESCAPE '\\' ORDER BY table_name, column_index",
					  err);
	}
	fdl_rows r = {0};
	if (!rc)
		rc = fdl_duck_query(d, &r, sql.data, err);
	fdl_buf_free(&sql);
	size_t n = rc ? 0 : fdl_rows_count(&r);
	for (size_t i = 0; i < n && !rc; i++) {
		char *t = fdl_rows_str(&r, 0, i), *c = fdl_rows_str(&r, 2, i), *ty = fdl_rows_str(&r, 3, i);
		if (!t || !c)
			rc = fdl_oom(err);
		if (!rc && (m->tables.len == 0 || strcmp(m->tables.items[m->tables.len - 1], t) != 0)) {
			fdl_strlist *grown = realloc(m->cols, (m->tables.len + 1) * sizeof *grown);
			fdl_strlist *grown_t = grown ? realloc(m->types, (m->tables.len + 1) * sizeof *grown_t) : NULL;
			if (grown)
				m->cols = grown;
			if (!grown_t)
				rc = fdl_oom(err);
			else {
				m->types = grown_t;
				memset(&m->cols[m->tables.len], 0, sizeof *grown);
				memset(&m->types[m->tables.len], 0, sizeof *grown_t);
				rc = fdl_strlist_add(&m->tables, t, err);
			}
		}
		if (!rc)
			rc = fdl_strlist_add(&m->cols[m->tables.len - 1], c, err);
		if (!rc)
			rc = fdl_strlist_add(&m->types[m->tables.len - 1], ty ? ty : "", err);
		duckdb_free(t);
		duckdb_free(c);
		duckdb_free(ty);
	}
	fdl_rows_free(&r);
	if (rc)
		fdl__meta_schema_free(m);
	return rc;
}

const fdl_strlist *fdl__meta_cols(const meta_schema *m, const char *t)
{
	static const fdl_strlist none = {0};
	for (size_t i = 0; i < m->tables.len; i++)
		if (!strcmp(m->tables.items[i], t))
			return &m->cols[i];
	return &none;
}

bool fdl__meta_has(const fdl_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->len; i++)
		if (!strcmp(l->items[i], s))
			return true;
	return false;
}

int fdl__meta_where_upto(fdl_buf *sql, const char *src, const char *t, const fdl_strlist *cols, int64_t n,
		      fdl_error *err)
{
	if (n < 0)
		return 0;
	if (fdl__meta_has(cols, "snapshot_id") && (!strcmp(t, "ducklake_snapshot") || !strcmp(t, "ducklake_snapshot_changes")))
		return fdl_buf_printf(sql, err, " WHERE snapshot_id <= %lld", (long long)n);
	if (fdl__meta_has(cols, "begin_snapshot"))
		return fdl_buf_printf(sql, err, " WHERE begin_snapshot <= %lld", (long long)n);
	if (fdl__meta_has(cols, "data_file_id") && strcmp(t, "ducklake_data_file") != 0)
		return fdl_buf_printf(sql, err,
				      " WHERE data_file_id IN (SELECT data_file_id FROM %s.ducklake_data_file WHERE "
				      "begin_snapshot <= %lld)",
				      src, (long long)n);
	if (!strcmp(t, "ducklake_table_stats") || !strcmp(t, "ducklake_table_column_stats"))
		return fdl_buf_printf(sql, err,
				      " WHERE table_id IN (SELECT table_id FROM %s.ducklake_table WHERE "
				      "begin_snapshot <= %lld)",
				      src, (long long)n);
	return 0;
}

int fdl__meta_insert_head(fdl_buf *sql, const char *dst, const char *t, const fdl_strlist *dcols,
		     const fdl_strlist *dtypes, const fdl_strlist *scols, const fdl_copy_options *o, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err, "INSERT INTO %s.%s (", dst, t);
	for (size_t i = 0; i < dcols->len && !rc; i++)
		rc = fdl_buf_printf(sql, err, "%s\"%s\"", i ? ", " : "", dcols->items[i]);
	if (!rc)
		rc = fdl_buf_puts(sql, ") SELECT ", err);
	for (size_t i = 0; i < dcols->len && !rc; i++) {
		const char *c = dcols->items[i];
		if (i)
			rc = fdl_buf_puts(sql, ", ", err);
		if (rc)
			break;
		if (!fdl__meta_has(scols, c))
			rc = fdl_buf_puts(sql, "NULL", err);
		else if (!strcmp(c, "end_snapshot") && o->upto >= 0)
			rc = fdl_buf_printf(sql, err, dtypes ? "CASE WHEN CAST(end_snapshot AS BIGINT) > %lld THEN NULL ELSE "
							       "CAST(end_snapshot AS BIGINT) END"
							     : "CASE WHEN end_snapshot > %lld THEN NULL ELSE end_snapshot END",
					    (long long)o->upto);
		else if (!strcmp(t, "ducklake_metadata") && !strcmp(c, "value") && o->data_path) {
			rc = fdl_buf_puts(sql, "CASE WHEN key = 'data_path' AND scope IS NULL THEN ", err);
			if (!rc)
				rc = fdl_buf_sql_str(sql, o->data_path, err);
			if (!rc)
				rc = fdl_buf_puts(sql, " ELSE value END", err);
		} else if (dtypes)
			rc = fdl_buf_printf(sql, err, "CAST(\"%s\" AS %s)", c, dtypes->items[i]);
		else
			rc = fdl_buf_printf(sql, err, "\"%s\"", c);
	}
	return rc;
}

int fdl__meta_copy_table(fdl_duck *d, const char *src, const char *dst, const char *t, const fdl_strlist *dcols,
		    const fdl_strlist *scols, const fdl_copy_options *o, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = 0;
	if (scols->len == 0)
		rc = fdl_fail(err, FDL_EINVALID,
			      "the source catalog has no table %s: it is not a DuckLake catalog of this format", t);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, "DELETE FROM %s.%s; ", dst, t);
	if (!rc)
		rc = fdl__meta_insert_head(&sql, dst, t, dcols, NULL, scols, o, err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, " FROM %s.%s", src, t);
	if (!rc)
		rc = fdl__meta_where_upto(&sql, src, t, scols, o->upto, err);
	if (!rc && !strcmp(t, "ducklake_metadata") && o->no_inlining) {
		/* ducklake_metadata has no snapshot columns: no WHERE yet. */
		rc = fdl_buf_puts(&sql, " WHERE NOT (key = 'data_inlining_row_limit' AND scope IS NULL); INSERT INTO ",
					  err);
		if (!rc)
			rc = fdl_buf_printf(&sql, err,
					    "%s.ducklake_metadata (key, value, scope, scope_id) VALUES "
					    "('data_inlining_row_limit', '0', NULL, NULL)",
					    dst);
	}
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	if (rc)
		fdl_error_prefix(err, "copying %s", t);
	fdl_buf_free(&sql);
	return rc;
}

int fdl__meta_check_inlined(fdl_duck *d, const char *alias, const meta_schema *m, int64_t upto, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < m->tables.len; i++) {
		const char *t = m->tables.items[i];
		bool data = !strncmp(t, "ducklake_inlined_data_", 22) && strcmp(t, "ducklake_inlined_data_tables");
		bool del = !strncmp(t, "ducklake_inlined_delete_", 24);
		if (!data && !del)
			continue;
		const fdl_strlist *cols = &m->cols[i];
		char sql[512];
		const char *begin = fdl__meta_has(cols, "_ducklake_begin_snapshot") ? "_ducklake_begin_snapshot" : "begin_snapshot";
		const char *end = fdl__meta_has(cols, "_ducklake_end_snapshot") ? "_ducklake_end_snapshot" : "end_snapshot";
		if (data && fdl__meta_has(cols, end))
			snprintf(sql, sizeof sql,
				 "SELECT count(*) FROM %s.\"%s\" WHERE %s <= %lld AND (%s IS NULL OR %s > %lld)", alias,
				 t, begin, (long long)upto, end, end, (long long)upto);
		else
			snprintf(sql, sizeof sql, "SELECT count(*) FROM %s.\"%s\" WHERE %s <= %lld", alias, t, begin,
				 (long long)upto);
		int64_t n = 0;
		if (!rc)
			rc = fdl_duck_int(d, &n, 0, sql, err);
		if (!rc && n > 0)
			rc = fdl_fail(err, FDL_EINVALID,
				      "the working catalog holds %lld %s inline (%s); a version keeps all data in "
				      "data files: run CALL ducklake_flush_inlined_data('<catalog alias>') in DuckDB, "
				      "then commit again",
				      (long long)n, data ? "rows" : "deletes", t);
	}
	return rc;
}

int fdl_catalog_copy(fdl_duck *d, const char *src, const char *dst, const fdl_copy_options *o, fdl_error *err)
{
	meta_schema ds = {0}, ss;
	bool hidden = !strncmp(dst, FDL_DUCKLAKE_META_PREFIX, strlen(FDL_DUCKLAKE_META_PREFIX));
	int rc = fdl__meta_schema_read(d, src, NULL, o->src_sqlite, &ss, err);
	if (!rc && ss.tables.len == 0)
		rc = fdl_fail(err, FDL_EINVALID, "%s has no DuckLake tables: it is not a DuckLake catalog", src);
	if (!rc && o->refuse_inlined && o->upto >= 0)
		rc = fdl__meta_check_inlined(d, src, &ss, o->upto, err);
	if (!rc)
		rc = fdl__meta_schema_read(d, dst, hidden ? &ss.tables : NULL, false, &ds, err);
	if (!rc && ds.tables.len == 0)
		rc = fdl_fail(err, FDL_EINVALID, "the new catalog has no DuckLake tables");
	if (!rc)
		rc = fdl_duck_exec(d, "BEGIN TRANSACTION", err);
	for (size_t i = 0; i < ds.tables.len && !rc; i++) {
		const char *t = ds.tables.items[i];
		if (fdl__meta_working_only(t)) {
			char sql[256];
			snprintf(sql, sizeof sql, "DELETE FROM %s.%s", dst, t);
			rc = fdl_duck_exec(d, sql, err);
			continue;
		}
		rc = fdl__meta_copy_table(d, src, dst, t, &ds.cols[i], fdl__meta_cols(&ss, t), o, err);
	}
	if (!rc && o->upto >= 0) {
		/* the stats hold the source's latest state: right at the cut
		 * unless a writer went past it while the rows were read */
		char sql[256];
		int64_t last = 0;
		snprintf(sql, sizeof sql, "SELECT max(snapshot_id) FROM %s.ducklake_snapshot", src);
		rc = fdl_duck_int(d, &last, 0, sql, err);
		if (!rc && last > o->upto)
			rc = fdl_catalog_stats_recompute(d, dst, err);
	}
	if (!rc)
		rc = fdl_duck_exec(d, "COMMIT", err);
	else
		fdl_duck_exec(d, "ROLLBACK", NULL);
	fdl__meta_schema_free(&ds);
	fdl__meta_schema_free(&ss);
	return rc;
}

int fdl_catalog_info_read(fdl_duck *d, const char *alias, fdl_catalog_info *info, fdl_error *err)
{
	memset(info, 0, sizeof *info);
	char sql[1024], sub[256];
	fdl_rows r;
	storage_sql(sub, sizeof sub, alias);
	/* one statement: each costs DuckDB a millisecond or more */
	snprintf(sql, sizeof sql,
		 "SELECT (SELECT min(snapshot_id) FROM %1$s.ducklake_snapshot), (SELECT max(snapshot_id) FROM "
		 "%1$s.ducklake_snapshot), (SELECT value FROM %1$s.ducklake_metadata WHERE key = 'version' AND "
		 "scope IS NULL LIMIT 1), %2$s",
		 alias, sub);
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return fdl_error_prefix(err, "reading the catalog's snapshots");
	if (fdl_rows_count(&r) == 0 || fdl_rows_null(&r, 1, 0))
		rc = fdl_fail(err, FDL_EINVALID, "the catalog has no snapshots");
	else {
		info->first_snapshot = fdl_rows_int(&r, 0, 0);
		info->last_snapshot = fdl_rows_int(&r, 1, 0);
	}
	char *v = !rc && !fdl_rows_null(&r, 2, 0) ? fdl_rows_str(&r, 2, 0) : NULL;
	char *tag = !rc && !fdl_rows_null(&r, 3, 0) ? fdl_rows_str(&r, 3, 0) : NULL;
	fdl_rows_free(&r);
	if (!rc && !v)
		rc = fdl_fail(err, FDL_EINVALID, "the catalog's ducklake_metadata has no 'version'");
	else if (!rc)
		snprintf(info->format, sizeof info->format, "%s", v);
	/* DuckDB files carry a storage version tag, e.g. "v1.5.0+" */
	if (!rc)
		storage_name(info->storage, tag);
	duckdb_free(v);
	duckdb_free(tag);
	return rc;
}

