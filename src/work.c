#include "work.h"
#include "catalog/duck.h"

#include <stdlib.h>
#include <string.h>

void fdl_work_free(fdl_work *w)
{
	free(w->dir);
	free(w->catalog);
	free(w->repository);
	free(w->branch);
	free(w->data_path);
	free(w->record);
	memset(w, 0, sizeof *w);
}

/* ---- the record of a PostgreSQL working catalog ------------------------------ */

static int pg_attach(fdl_duck *d, const char *conninfo, fdl_error *err)
{
	int rc = fdl_duck_open(d, err);
	if (!rc)
		rc = fdl_duck_load(d, "postgres_scanner", err);
	fdl_buf sql = {0};
	if (!rc)
		rc = fdl_buf_puts(&sql, "ATTACH ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, conninfo, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, " AS fdl_pg (TYPE postgres)", err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	if (rc)
		fdl_error_prefix(err, "connecting to PostgreSQL (%s)", *conninfo ? conninfo : "PG* environment");
	fdl_buf_free(&sql);
	return rc;
}

int fdl_work_pg_read(fdl_buf *out, const char *conninfo, fdl_error *err)
{
	fdl_duck d;
	int rc = pg_attach(&d, conninfo, err);
	fdl_rows r;
	if (!rc && fdl_duck_query(&d, &r, "SELECT value FROM fdl_pg.public." FDL_PG_RECORD_TABLE " WHERE key = 'record'",
				  NULL) == 0) {
		char *v = fdl_rows_count(&r) ? fdl_rows_str(&r, 0, 0) : NULL;
		rc = v ? fdl_buf_puts(out, v, err) : FDL_ENOTFOUND;
		duckdb_free(v);
		fdl_rows_free(&r);
	} else if (!rc)
		rc = FDL_ENOTFOUND;
	if (rc == FDL_ENOTFOUND)
		fdl_fail(err, rc, "PostgreSQL %s holds no fdl working catalog (no public.%s record; run fdl checkout)",
			 *conninfo ? conninfo : "(PG* environment)", FDL_PG_RECORD_TABLE);
	fdl_duck_close(&d);
	return rc;
}

/* Create the record (old NULL), or replace it only if it still is `old`. */
static int pg_write(const char *conninfo, const char *text, const char *old, fdl_error *err)
{
	fdl_duck d;
	int rc = pg_attach(&d, conninfo, err);
	fdl_buf sql = {0};
	if (!rc && !old) {
		rc = fdl_buf_puts(&sql, "CREATE TABLE IF NOT EXISTS fdl_pg.public." FDL_PG_RECORD_TABLE
					" (key VARCHAR PRIMARY KEY, value VARCHAR); INSERT INTO fdl_pg.public."
					FDL_PG_RECORD_TABLE " VALUES ('record', ",
				  err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, text, err);
		if (!rc)
			rc = fdl_buf_puts(&sql, ")", err);
		if (!rc)
			rc = fdl_duck_exec(&d, sql.data, err);
	} else if (!rc) {
		rc = fdl_buf_puts(&sql, "UPDATE fdl_pg.public." FDL_PG_RECORD_TABLE " SET value = ", err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, text, err);
		if (!rc)
			rc = fdl_buf_puts(&sql, " WHERE key = 'record' AND value = ", err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, old, err);
		int64_t changed = 0;
		if (!rc)
			rc = fdl_duck_int(&d, &changed, 0, sql.data, err);
		/* PostgreSQL refuses one of two concurrent updates of the row: the
		 * same outcome as a changed value */
		if (rc && err && strstr(err->message, "could not serialize access"))
			rc = 0, changed = 0;
		if (!rc && changed != 1)
			rc = fdl_fail(err, FDL_ECONFLICT,
				      "the working catalog's record in PostgreSQL changed meanwhile (another fdl commit "
				      "of the same catalog); run fdl commit again");
	}
	fdl_buf_free(&sql);
	fdl_duck_close(&d);
	return rc;
}

int fdl_work_load(fdl_work *w, const char *dir, fdl_error *err)
{
	memset(w, 0, sizeof *w);
	w->base_snapshot = -1;
	w->postgres = !strncmp(dir, FDL_PG_PREFIX, strlen(FDL_PG_PREFIX));
	int rc = w->postgres ? ((w->dir = fdl_strdup(dir)) ? 0 : FDL_ERROR) : fdl_path_absolute(&w->dir, dir, err);
	if (rc)
		return rc;
	char *path = w->postgres ? fdl_strdup(dir) : fdl_asprintf("%s/%s", w->dir, FDL_WORK_FILE);
	w->catalog = w->postgres ? fdl_strdup(dir + strlen(FDL_PG_PREFIX)) : fdl_asprintf("%s/%s", w->dir, FDL_WORK_CATALOG);
	fdl_buf b = {0};
	json_t *j = NULL;
	if (!path || !w->catalog)
		rc = fdl_fail(err, FDL_ERROR, "out of memory");
	if (!rc)
		rc = w->postgres ? fdl_work_pg_read(&b, w->catalog, err) : fdl_file_read(&b, path, 1 << 20, err);
	if (rc == FDL_ENOTFOUND && !w->postgres)
		rc = fdl_fail(err, FDL_ENOTFOUND, "%s is not a working catalog made by `fdl checkout` (no %s)",
			      w->dir, FDL_WORK_FILE);
	if (!rc)
		rc = fdl_json_parse(&j, b.data, b.len, path, err);
	const char *s;
	int64_t n;
	bool present;
	if (!rc) { /* null means "no base": the same as absent */
		if (json_is_null(json_object_get(j, "base")))
			json_object_del(j, "base");
		if (json_is_null(json_object_get(j, "base_snapshot")))
			json_object_del(j, "base_snapshot");
		if (json_is_null(json_object_get(j, "pending")))
			json_object_del(j, "pending");
	}
	if (!rc && !(rc = fdl_json_get_string(&s, j, "repository", true, path, "repository", err)))
		w->repository = fdl_strdup(s);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "branch", true, path, "branch", err)))
		w->branch = fdl_strdup(s);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "data_path", true, path, "data_path", err)))
		w->data_path = fdl_strdup(s);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "base", false, path, "base", err)) && s) {
		if (!fdl_id_is_valid(s))
			rc = fdl_fail(err, FDL_EINVALID, "%s: field 'base' is not a version id", path);
		else
			memcpy(w->base, s, FDL_ID_LEN + 1);
	}
	if (!rc && !(rc = fdl_json_get_string(&s, j, "pending", false, path, "pending", err)) && s) {
		if (!fdl_id_is_valid(s))
			rc = fdl_fail(err, FDL_EINVALID, "%s: field 'pending' is not a version id", path);
		else
			memcpy(w->pending, s, FDL_ID_LEN + 1);
	}
	if (!rc && !(rc = fdl_json_get_string(&s, j, "description_sha256", false, path, "description_sha256", err)) &&
	    s && strlen(s) == 64)
		memcpy(w->description_sha256, s, 65);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "description_from", false, path, "description_from", err)) &&
	    s && fdl_id_is_valid(s))
		memcpy(w->description_from, s, FDL_ID_LEN + 1);
	if (!rc && !(rc = fdl_json_get_int(&n, &present, j, "base_snapshot", false, path, "base_snapshot", err)) &&
	    present)
		w->base_snapshot = n;
	if (!rc && (!w->repository || !w->branch || !w->data_path))
		rc = fdl_fail(err, FDL_ERROR, "out of memory");
	if (!rc && w->postgres && !(w->record = fdl_strdup(b.data)))
		rc = fdl_fail(err, FDL_ERROR, "out of memory");
	json_decref(j);
	fdl_buf_free(&b);
	free(path);
	if (rc)
		fdl_work_free(w);
	return rc;
}

int fdl_work_save(fdl_work *w, fdl_error *err)
{
	json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s}", "fdl_work", 1, "repository", w->repository, "branch",
			      w->branch, "catalog", w->postgres ? "postgres" : FDL_WORK_CATALOG, "data_path", w->data_path);
	if (!j)
		return fdl_fail(err, FDL_ERROR, "out of memory");
	json_object_set_new(j, "base", w->base[0] ? json_string(w->base) : json_null());
	json_object_set_new(j, "base_snapshot", w->base_snapshot >= 0 ? json_integer(w->base_snapshot) : json_null());
	if (w->pending[0])
		json_object_set_new(j, "pending", json_string(w->pending));
	if (w->description_sha256[0])
		json_object_set_new(j, "description_sha256", json_string(w->description_sha256));
	if (w->description_from[0])
		json_object_set_new(j, "description_from", json_string(w->description_from));
	char *text = NULL;
	size_t len = 0;
	char *path = fdl_asprintf("%s/%s", w->dir, FDL_WORK_FILE);
	int rc = path ? fdl_json_dump(&text, &len, j, err) : fdl_fail(err, FDL_ERROR, "out of memory");
	if (!rc)
		rc = w->postgres ? pg_write(w->catalog, text, w->record, err) : fdl_file_write_atomic(path, text, len, err);
	if (!rc && w->postgres) {
		free(w->record);
		w->record = text;
		text = NULL;
	}
	free(text);
	free(path);
	json_decref(j);
	return rc;
}

int fdl_work_remove(const char *dir, fdl_error *err)
{
	fdl_work w;
	int rc = fdl_work_load(&w, dir, err);
	if (rc)
		return rc;
	if (w.postgres) {
		fdl_work_free(&w);
		return fdl_fail(err, FDL_EINVALID, "fdl does not drop PostgreSQL working catalogs; drop the schema yourself");
	}
	fdl_rm_rf(w.dir);
	fdl_work_free(&w);
	return 0;
}

/* Data in a bucket: httpfs and a secret made now from the writer's own AWS
 * configuration (never stored in the working catalog folder). */
static int remote_data_sql(fdl_buf *b, const fdl_work *w, fdl_error *err)
{
	if (w->data_path[0] == '/')
		return 0;
	fdl_store *store = NULL;
	int rc = fdl_store_open(&store, w->repository, err);
	if (!rc)
		rc = fdl_buf_puts(b, "INSTALL httpfs;\nLOAD httpfs;\n", err);
	if (!rc)
		rc = fdl_store_duck_secret(store, b, err);
	fdl_store_free(store);
	return rc;
}

int fdl_work_attach_sql(char **out, const char *work, const char *alias, fdl_error *err)
{
	fdl_work w;
	int rc = fdl_work_load(&w, work, err);
	if (rc)
		return rc;
	fdl_buf b = {0};
	char *target = fdl_asprintf("ducklake:%s%s", w.postgres ? FDL_PG_PREFIX : "", w.catalog);
	rc = target ? fdl_buf_printf(&b, err, "LOAD ducklake;\nLOAD %s;\n", w.postgres ? "postgres_scanner" : "sqlite_scanner")
		    : fdl_fail(err, FDL_ERROR, "out of memory");
	if (!rc)
		rc = remote_data_sql(&b, &w, err);
	if (!rc)
		rc = fdl_buf_puts(&b, "ATTACH ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&b, target, err);
	if (!rc)
		rc = fdl_buf_printf(&b, err, " AS %s (DATA_PATH ", alias ? alias : "lake");
	if (!rc)
		rc = fdl_buf_sql_str(&b, w.data_path, err);
	if (!rc)
		rc = fdl_buf_puts(&b,
				  w.postgres ? ", OVERRIDE_DATA_PATH true, DATA_INLINING_ROW_LIMIT 0);\n"
					     : ", OVERRIDE_DATA_PATH true, META_TYPE 'sqlite', DATA_INLINING_ROW_LIMIT 0, "
					       "META_JOURNAL_MODE 'WAL', BUSY_TIMEOUT 5000);\n",
				  err);
	free(target);
	fdl_work_free(&w);
	if (rc) {
		fdl_buf_free(&b);
		return rc;
	}
	*out = fdl_buf_detach(&b);
	return 0;
}

int fdl_work_info_read(fdl_work_info **out, const char *work, fdl_error *err)
{
	fdl_work w;
	int rc = fdl_work_load(&w, work, err);
	if (rc)
		return rc;
	fdl_work_info *i = calloc(1, sizeof *i);
	if (i) {
		i->repository = fdl_strdup(w.repository);
		i->branch = fdl_strdup(w.branch);
		i->data_path = fdl_strdup(w.data_path ? w.data_path : "");
		i->catalog = fdl_strdup(w.catalog);
		memcpy(i->base, w.base, sizeof i->base);
	}
	fdl_work_free(&w);
	if (!i || !i->repository || !i->branch || !i->data_path || !i->catalog) {
		fdl_work_info_free(i);
		return fdl_fail(err, FDL_ERROR, "out of memory");
	}
	*out = i;
	return 0;
}

void fdl_work_info_free(fdl_work_info *info)
{
	if (!info)
		return;
	free(info->repository);
	free(info->branch);
	free(info->data_path);
	free(info->catalog);
	free(info);
}
