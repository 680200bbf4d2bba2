/* The one entry for attaching a lake: every ATTACH fdl runs (working,
 * frozen, remote, PostgreSQL, raw or through DuckLake), the ATTACH script a
 * stock DuckDB user is given, and the record fdl keeps in a PostgreSQL
 * working catalog. */
#include "duck.h"

#include "../store/store.h"

#include <stdlib.h>
#include <string.h>

int fdl_attach_stmt(fdl_buf *b, const char *prefix, const char *target, const char *alias, const char *before,
		    const char *data_path, const char *after, fdl_error *err)
{
	char *full = fdl_asprintf("%s%s", prefix, target);
	int rc = full ? fdl_buf_puts(b, "ATTACH ", err) : fdl_oom(err);
	if (!rc)
		rc = fdl_buf_sql_str(b, full, err);
	if (!rc)
		rc = fdl_buf_printf(b, err, " AS %s (%s", alias, before);
	if (!rc && data_path) {
		rc = fdl_buf_puts(b, "DATA_PATH ", err);
		if (!rc)
			rc = fdl_buf_sql_str(b, data_path, err);
	}
	if (!rc)
		rc = fdl_buf_printf(b, err, "%s)", after);
	free(full);
	return rc;
}

int fdl_attach_run(fdl_duck *d, const char *prefix, const char *target, const char *alias, const char *before,
		   const char *data_path, const char *after, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_attach_stmt(&sql, prefix, target, alias, before, data_path, after, err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

int fdl_catalog_attach_raw(fdl_duck *d, const char *alias, const char *path, fdl_cat_kind kind, bool read_only,
			   fdl_error *err)
{
	const char *type = kind == FDL_CAT_SQLITE ? "TYPE sqlite" : kind == FDL_CAT_POSTGRES ? "TYPE postgres" : "TYPE duckdb";
	int rc = kind == FDL_CAT_POSTGRES ? fdl_duck_load(d, "postgres_scanner", err) : 0;
	if (!rc)
		rc = fdl_attach_run(d, "", path, alias, type, NULL, read_only ? ", READ_ONLY" : "", err);
	if (rc)
		fdl_error_prefix(err, "opening the catalog %s", path);
	return rc;
}

int fdl_catalog_attach_lake(fdl_duck *d, const char *alias, const char *catalog, const char *data_url,
			    fdl_error *err)
{
	return fdl_attach_run(d, "ducklake:", catalog, alias, "READ_ONLY, ", data_url, ", OVERRIDE_DATA_PATH true", err);
}

int fdl_catalog_detach(fdl_duck *d, const char *alias, fdl_error *err)
{
	char sql[128];
	snprintf(sql, sizeof sql, "DETACH %s", alias);
	return fdl_duck_exec(d, sql, err);
}

int fdl_catalog_is_lake(fdl_duck *d, const char *alias, fdl_cat_kind kind, bool *out, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT count(*) FROM duckdb_tables() WHERE database_name = ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, alias, err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, " AND schema_name = '%s' AND table_name = 'ducklake_metadata'",
				    kind == FDL_CAT_POSTGRES ? FDL_PG_SCHEMA : "main");
	int64_t n = 0;
	if (!rc)
		rc = fdl_duck_int(d, &n, 0, sql.data, err);
	fdl_buf_free(&sql);
	*out = n > 0;
	return rc;
}


static bool is_http(const char *url) { return !strncmp(url, "http://", 7) || !strncmp(url, "https://", 8); }

/* httpfs ($FDL_CA_FILE as the CA it checks hosts against), and for a
 * private host (fdl found a token for it) the http secret
 * a reader creates first: the token itself only when asked, else read from
 * the reader's own FDL_TOKEN. */
static int http_access_sql(fdl_buf *b, const fdl_lake_script *s, fdl_error *err)
{
	int rc = fdl_buf_puts(b, "LOAD httpfs;\n", err);
	const char *ca = getenv("FDL_CA_FILE");
	if (!rc && ca && *ca) {
		rc = fdl_buf_puts(b, "SET ca_cert_file = ", err);
		if (!rc)
			rc = fdl_buf_sql_str(b, ca, err);
		if (!rc)
			rc = fdl_buf_puts(b, "; -- FDL_CA_FILE: the private CA the host's certificate is signed by\n", err);
	}
	/* seen with DuckDB 1.5.5: its default (curl) client answers "database
	 * does not exist" to the ATTACH of a catalog over https after a HEAD
	 * and a GET that both succeed; httplib reads it (docs/decisions.md) */
	if (!rc && !strncmp(s->catalog, "https://", 8))
		rc = fdl_buf_puts(b, "SET httpfs_client_implementation = 'httplib'; -- DuckDB 1.5's curl client cannot "
				     "ATTACH a catalog over https\n", err);
	const char *token = fdl_store_http_token(s->store);
	if (rc || !token)
		return rc;
	if (!s->show_token)
		rc = fdl_buf_puts(b, "-- a private host: the token from FDL_TOKEN where DuckDB runs "
				     "(fdl attach --show-token writes it here)\n", err);
	if (!rc)
		rc = fdl_duck_http_secret_sql(b, s->store->url, s->show_token ? token : NULL, err);
	return rc;
}

/* httpfs (and a bucket's secret) where the data is not on this machine. */
static int data_access_sql(fdl_buf *b, const fdl_lake_script *s, fdl_error *err)
{
	if (s->data_path[0] == '/')
		return 0;
	if (is_http(s->data_path))
		return http_access_sql(b, s, err);
	return s->store ? fdl_duck_store_sql(b, s->store, err) : 0;
}

/* What fdl does in its own DuckDB before it reads a version, offered to a
 * stock DuckDB user as a comment: the data and the catalog's folder (DuckDB
 * also looks for its .wal there) and nothing else. */
static int confine_comment(fdl_buf *b, const fdl_lake_script *s, fdl_error *err)
{
	int rc = fdl_buf_puts(b, "-- A repository you do not trust: confine DuckDB to it before attaching\n"
				 "-- (a view in its catalog could otherwise read your files):\n-- SET allowed_directories = [",
			      err);
	if (!rc)
		rc = fdl_buf_sql_str(b, s->data_path, err);
	const char *slash = strrchr(s->catalog, '/');
	char *folder = slash ? strndup(s->catalog, (size_t)(slash + 1 - s->catalog)) : fdl_strdup("./");
	if (!rc)
		rc = fdl_buf_puts(b, ", ", err);
	if (!rc)
		rc = folder ? fdl_buf_sql_str(b, folder, err) : fdl_oom(err);
	free(folder);
	if (!rc)
		rc = fdl_buf_puts(b, "]; SET enable_external_access = false;\n", err);
	return rc;
}

/* fdl's own extensions after the user's own folder (issue 62): LOAD finds
 * the very builds fdl uses with nothing downloaded, in any DuckDB client,
 * and the user's INSTALLs still go to their own folder, the first one.
 * INSTALL looks in that first folder alone, so the script LOADs (never
 * INSTALLs) each extension it needs, a dependency before what needs it. */
static int extension_dirs_sql(fdl_buf *b, fdl_error *err)
{
	char *dir = fdl_duck_extension_dir();
	int rc = dir ? fdl_buf_puts(b, "SET extension_directories = ['~/.duckdb/extensions', ", err) : fdl_oom(err);
	if (!rc)
		rc = fdl_buf_sql_str(b, dir, err);
	if (!rc)
		rc = fdl_buf_puts(b, "]; -- fdl's own DuckDB extensions, after yours: nothing to download\n", err);
	free(dir);
	return rc;
}

int fdl_catalog_attach_script(char **out, const fdl_lake_script *s, fdl_error *err)
{
	fdl_buf b = {0};
	bool frozen = s->kind == FDL_CAT_DUCKDB;
	int rc = 0;
	if (s->comment)
		rc = fdl_buf_printf(&b, err, "-- %s\n", s->comment);
	if (!rc)
		rc = extension_dirs_sql(&b, err);
	if (!rc && frozen) {
		rc = data_access_sql(&b, s, err);
		if (!rc)
			rc = fdl_buf_puts(&b, "LOAD ducklake;\n", err);
		if (!rc)
			rc = confine_comment(&b, s, err);
	} else if (!rc) {
		rc = fdl_buf_printf(&b, err, "LOAD ducklake;\nLOAD %s;\n",
				    s->kind == FDL_CAT_POSTGRES ? "postgres_scanner" : "sqlite_scanner");
		if (!rc)
			rc = data_access_sql(&b, s, err);
	}
	const char *rest = frozen ? ", OVERRIDE_DATA_PATH true"
			   : s->kind == FDL_CAT_POSTGRES
				   ? ", OVERRIDE_DATA_PATH true, DATA_INLINING_ROW_LIMIT 0"
				   : ", OVERRIDE_DATA_PATH true, META_TYPE 'sqlite', DATA_INLINING_ROW_LIMIT 0, "
				     "META_JOURNAL_MODE 'WAL', BUSY_TIMEOUT 5000";
	if (!rc)
		rc = fdl_attach_stmt(&b, s->kind == FDL_CAT_POSTGRES ? "ducklake:postgres:" : "ducklake:", s->catalog,
				     s->alias ? s->alias : "lake", frozen ? "READ_ONLY, " : "", s->data_path, rest, err);
	if (!rc)
		rc = fdl_buf_puts(&b, ";\n", err);
	if (rc) {
		fdl_buf_free(&b);
		return rc;
	}
	*out = fdl_buf_detach(&b);
	return 0;
}

/* ---- the record of a PostgreSQL working catalog ------------------------------ */

/* The record's table, in the working catalog's own schema. */
#define PG_RECORD "fdl_pg.public." FDL_PG_RECORD_TABLE

static int pg_attach(fdl_duck **d, const char *conninfo, fdl_error *err)
{
	int rc = fdl_duck_new(d, true, err);
	if (!rc)
		rc = fdl_duck_load(*d, "postgres_scanner", err);
	if (!rc)
		rc = fdl_attach_run(*d, "", conninfo, "fdl_pg", "TYPE postgres", NULL, "", err);
	if (rc)
		fdl_error_prefix(err, "connecting to PostgreSQL (%s)", *conninfo ? conninfo : "PG* environment");
	return rc;
}

int fdl_catalog_pg_record_read(fdl_buf *out, const char *conninfo, fdl_error *err)
{
	fdl_duck *d = NULL;
	int rc = pg_attach(&d, conninfo, err);
	fdl_rows r;
	if (!rc && fdl_duck_query(d, &r, "SELECT value FROM " PG_RECORD " WHERE key = 'record'", NULL) == 0) {
		char *v = fdl_rows_count(&r) ? fdl_rows_str(&r, 0, 0) : NULL;
		rc = v ? fdl_buf_puts(out, v, err) : FDL_ENOTFOUND;
		duckdb_free(v);
		fdl_rows_free(&r);
	} else if (!rc) {
		rc = FDL_ENOTFOUND;
	}
	fdl_duck_free(d);
	return rc;
}

int fdl_catalog_pg_record_write(const char *conninfo, const char *text, const char *old, fdl_error *err)
{
	fdl_duck *d = NULL;
	int rc = pg_attach(&d, conninfo, err);
	fdl_buf sql = {0};
	if (!rc && !old) {
		rc = fdl_buf_puts(&sql, "CREATE TABLE IF NOT EXISTS " PG_RECORD " (key VARCHAR PRIMARY KEY, value VARCHAR); "
					"INSERT INTO " PG_RECORD " VALUES ('record', ",
				  err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, text, err);
		if (!rc)
			rc = fdl_buf_puts(&sql, ")", err);
		if (!rc)
			rc = fdl_duck_exec(d, sql.data, err);
	} else if (!rc) {
		rc = fdl_buf_puts(&sql, "UPDATE " PG_RECORD " SET value = ", err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, text, err);
		if (!rc)
			rc = fdl_buf_puts(&sql, " WHERE key = 'record' AND value = ", err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, old, err);
		int64_t changed = 0;
		if (!rc)
			rc = fdl_duck_int(d, &changed, 0, sql.data, err);
		/* PostgreSQL refuses one of two concurrent updates of the row: the
		 * same outcome as a changed value */
		if (rc && err && strstr(err->message, "could not serialize access"))
			rc = 0, changed = 0;
		if (!rc && changed != 1)
			rc = FDL_ECONFLICT;
	}
	fdl_buf_free(&sql);
	fdl_duck_free(d);
	return rc;
}

int fdl_catalog_pg_record_drop(const char *conninfo, fdl_error *err)
{
	fdl_duck *d = NULL;
	int rc = pg_attach(&d, conninfo, err);
	if (!rc)
		rc = fdl_duck_exec(d, "DELETE FROM " PG_RECORD " WHERE key = 'record'", err);
	fdl_duck_free(d);
	return rc;
}

int fdl_catalog_attach_work(fdl_duck *d, const char *alias, const char *catalog, fdl_cat_kind kind,
			    const char *data_path, fdl_error *err)
{
	int rc = kind == FDL_CAT_POSTGRES ? fdl_duck_load(d, "postgres_scanner", err) : 0;
	if (!rc)
		rc = fdl_attach_run(d, kind == FDL_CAT_POSTGRES ? "ducklake:postgres:" : "ducklake:", catalog, alias, "",
				    data_path,
				    kind == FDL_CAT_SQLITE ? ", OVERRIDE_DATA_PATH true, META_TYPE 'sqlite', BUSY_TIMEOUT 5000"
							   : ", OVERRIDE_DATA_PATH true",
				    err);
	if (rc)
		fdl_error_prefix(err, "attaching the working catalog %s", catalog);
	return rc;
}
