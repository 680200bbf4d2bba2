/* What keeps DuckLake, run in a working catalog, from deleting published
 * data (docs/decisions.md, "Published files and DuckLake's clean-up").
 *
 * A working catalog writes into its own folder (work/<id>/ of the
 * repository, its DATA_PATH), where DuckLake's ducklake_delete_orphaned_files
 * looks; the data files it holds that a version published are recorded by
 * their absolute place in the repository's data folder, outside it; and a
 * trigger drops every row DuckLake adds to ducklake_files_scheduled_for_
 * deletion with an absolute path, so ducklake_cleanup_old_files only ever
 * deletes the working catalog's own files. Published files go when fdl gc
 * or fdl withdraw says so, never behind the publisher's back.
 *
 * A frozen catalog records every path relative to the data path, as the
 * format wants: the freeze turns the absolute ones back. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

/* table_id -> where its relative file paths resolve, with `data` as the
 * data path: the latest schema and table rows, as DuckLake resolves them. */
static int prefix_sql(fdl_buf *sql, const char *tables, const char *data, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err,
				"(SELECT tb.table_id, CASE"
				" WHEN NOT CAST(coalesce(tb.path_is_relative, true) AS BOOLEAN) THEN coalesce(tb.path, '')"
				" WHEN NOT CAST(coalesce(s.path_is_relative, true) AS BOOLEAN)"
				"  THEN coalesce(s.path, '') || coalesce(tb.path, '')"
				" ELSE ");
	if (!rc)
		rc = fdl_buf_sql_str(sql, data, err);
	if (!rc)
		rc = fdl_buf_printf(sql, err,
				    " || coalesce(s.path, '') || coalesce(tb.path, '') END AS prefix"
				    " FROM (SELECT DISTINCT ON (table_id) table_id, schema_id, path, path_is_relative"
				    "  FROM %1$s.ducklake_table ORDER BY table_id, begin_snapshot DESC) tb"
				    " JOIN (SELECT DISTINCT ON (schema_id) schema_id, path, path_is_relative"
				    "  FROM %1$s.ducklake_schema ORDER BY schema_id, begin_snapshot DESC) s"
				    " USING (schema_id)) p",
				    tables);
	return rc;
}

/* Record the data and delete file rows of `tables` (a catalog attached
 * raw: "alias", or "alias.public" for PostgreSQL; data files if which[0],
 * delete files if which[1]) begun after `after` (-1: any) by their place
 * under `data` (absolute: relative rows begun at or before `upto`, -1
 * all), or relative to the data path again (the rows under `data` where
 * their table resolves). */
static int move_paths(fdl_duck *d, const char *tables, const char *data, bool absolute, int64_t after,
		      int64_t upto, const bool which[2], fdl_error *err)
{
	int rc = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		if (!which[k])
			continue;
		const char *t = k ? "ducklake_delete_file" : "ducklake_data_file";
		fdl_buf sql = {0};
		rc = fdl_buf_printf(&sql, err, "UPDATE %s.%s f SET %s FROM ", tables, t,
				    absolute ? "path = p.prefix || f.path, path_is_relative = false"
					     : "path = substr(f.path, length(p.prefix) + 1), path_is_relative = true");
		if (!rc)
			rc = prefix_sql(&sql, tables, data, err);
		if (!rc)
			rc = fdl_buf_puts(&sql,
					  absolute ? " WHERE f.table_id = p.table_id AND CAST(f.path_is_relative AS BOOLEAN)"
						   : " WHERE f.table_id = p.table_id AND NOT CAST(f.path_is_relative AS "
						     "BOOLEAN) AND starts_with(f.path, p.prefix) AND length(f.path) > "
						     "length(p.prefix)",
					  err);
		if (!rc && absolute && upto >= 0)
			rc = fdl_buf_printf(&sql, err, " AND f.begin_snapshot <= %lld", (long long)upto);
		if (!rc && after >= 0)
			rc = fdl_buf_printf(&sql, err, " AND f.begin_snapshot > %lld", (long long)after);
		if (!rc)
			rc = fdl_duck_exec(d, sql.data, err);
		fdl_buf_free(&sql);
	}
	if (rc)
		fdl_error_prefix(err, absolute ? "recording the published data files by their place in the data folder"
					       : "recording the data files relative to the data path");
	return rc;
}

int fdl_catalog_paths_absolute(fdl_duck *d, const char *tables, const char *data, int64_t upto, bool files,
			       bool deletes, fdl_error *err)
{
	const bool which[2] = {files, deletes};
	return move_paths(d, tables, data, true, -1, upto, which, err);
}

/* The same in SQLite's own SQL, both tables in one transaction: SQLite
 * scans 10,000 file rows in a millisecond where DuckDB's scanner, reading
 * them all across, took 12. Table and schema rows resolve as prefix_sql's
 * do: each id's latest row. */
int fdl_catalog_paths_absolute_sqlite(const char *path, const char *data, int64_t upto, bool files, bool deletes,
				      fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "BEGIN;", err);
	for (int k = 0; k < 2 && !rc; k++) {
		if (!(k ? deletes : files))
			continue;
		rc = fdl_buf_printf(&sql, err,
				    " WITH tb AS (SELECT table_id, schema_id, path, path_is_relative FROM ducklake_table t"
				    "  WHERE NOT EXISTS (SELECT 1 FROM ducklake_table n WHERE n.table_id = t.table_id AND"
				    "  n.begin_snapshot > t.begin_snapshot)),"
				    " s AS (SELECT schema_id, path, path_is_relative FROM ducklake_schema t"
				    "  WHERE NOT EXISTS (SELECT 1 FROM ducklake_schema n WHERE n.schema_id = t.schema_id AND"
				    "  n.begin_snapshot > t.begin_snapshot)),"
				    " p AS (SELECT tb.table_id, CASE"
				    "  WHEN NOT coalesce(tb.path_is_relative, 1) THEN coalesce(tb.path, '')"
				    "  WHEN NOT coalesce(s.path_is_relative, 1) THEN coalesce(s.path, '') || coalesce(tb.path, '')"
				    "  ELSE ");
		if (!rc)
			rc = fdl_buf_sql_str(&sql, data, err);
		if (!rc)
			rc = fdl_buf_printf(&sql, err,
					    " || coalesce(s.path, '') || coalesce(tb.path, '') END AS prefix"
					    "  FROM tb JOIN s ON s.schema_id = tb.schema_id)"
					    " UPDATE %1$s SET path = (SELECT prefix FROM p WHERE p.table_id = %1$s.table_id) || path,"
					    " path_is_relative = 0 WHERE path_is_relative AND table_id IN (SELECT table_id FROM p)",
					    k ? "ducklake_delete_file" : "ducklake_data_file");
		if (!rc && upto >= 0)
			rc = fdl_buf_printf(&sql, err, " AND begin_snapshot <= %lld", (long long)upto);
		if (!rc)
			rc = fdl_buf_puts(&sql, ";", err);
	}
	if (!rc)
		rc = fdl_buf_puts(&sql, " COMMIT;", err);
	if (!rc)
		rc = fdl_catalog_sqlite_exec_once(path, NULL, sql.data, err);
	fdl_buf_free(&sql);
	if (rc)
		fdl_error_prefix(err, "recording the published data files by their place in the data folder");
	return rc;
}

int fdl_catalog_paths_absolute_after(fdl_duck *d, const char *tables, int64_t after, bool which[2], fdl_error *err)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT (SELECT count(*) FROM %1$s.ducklake_data_file WHERE begin_snapshot > %2$lld AND NOT path_is_relative),"
		 " (SELECT count(*) FROM %1$s.ducklake_delete_file WHERE begin_snapshot > %2$lld AND NOT path_is_relative)",
		 tables, (long long)after);
	fdl_rows r;
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return fdl_error_prefix(err, "looking for the new files recorded by an absolute path");
	which[0] = which[0] && fdl_rows_int(&r, 0, 0) > 0;
	which[1] = which[1] && fdl_rows_int(&r, 1, 0) > 0;
	fdl_rows_free(&r);
	return 0;
}

/* Any absolute path not under `data` stays, and the reader's checks refuse it. */
int fdl_catalog_paths_relative(fdl_duck *d, const char *tables, const char *data, int64_t after, bool files,
			       bool deletes, fdl_error *err)
{
	const bool which[2] = {files, deletes};
	return move_paths(d, tables, data, false, after, -1, which, err);
}

#define KEEP_TRIGGER "fdl_keep_published"

/* PostgreSQL: a row-level BEFORE INSERT trigger returning NULL skips the
 * row (also for COPY, which postgres_scanner writes with). */
static const char PG_TRIGGER[] =
	"CREATE OR REPLACE FUNCTION " FDL_PG_SCHEMA "." KEEP_TRIGGER "() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN IF NOT NEW.path_is_relative THEN RETURN NULL; END IF; RETURN NEW; END $$;"
	" DROP TRIGGER IF EXISTS " KEEP_TRIGGER " ON " FDL_PG_SCHEMA ".ducklake_files_scheduled_for_deletion;"
	" CREATE TRIGGER " KEEP_TRIGGER " BEFORE INSERT ON " FDL_PG_SCHEMA ".ducklake_files_scheduled_for_deletion"
	" FOR EACH ROW EXECUTE FUNCTION " FDL_PG_SCHEMA "." KEEP_TRIGGER "()";

/* SQLite: RAISE(IGNORE) in a BEFORE trigger skips the row and goes on. */
static const char SQLITE_TRIGGER[] =
	"CREATE TRIGGER IF NOT EXISTS " KEEP_TRIGGER " BEFORE INSERT ON ducklake_files_scheduled_for_deletion"
	" WHEN NOT NEW.path_is_relative BEGIN SELECT RAISE(IGNORE); END";
static const char SQLITE_PROBE[] = "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = '" KEEP_TRIGGER "'";

int fdl_catalog_keep_published_pg(fdl_duck *d, const char *alias, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_printf(&sql, err, "CALL postgres_execute('%s', ", alias);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, PG_TRIGGER, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ")", err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	if (rc)
		fdl_error_prefix(err, "adding the trigger that keeps published data files to the working catalog");
	return rc;
}

int fdl_catalog_keep_published_sqlite(const char *path, fdl_error *err)
{
	int rc = fdl_catalog_sqlite_exec_once(path, SQLITE_PROBE, SQLITE_TRIGGER, err);
	if (rc)
		fdl_error_prefix(err, "adding the trigger that keeps published data files to the working catalog");
	return rc;
}
