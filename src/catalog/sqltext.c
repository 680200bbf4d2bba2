/* The helpers every statement builder of src/catalog/ shares (duck.h):
 * a template's {db} filled, a native call spelled, and a file's path
 * joined from the catalog's schema, table and file paths as DuckLake
 * resolves them. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

/* Join schema path, table path and file path the way DuckLake resolves
 * them (ducklake-format.md 4.4); refuses absolute components. parts[k]
 * NULL: none. */
int fdl_catalog_join_path(char **out, const char *const parts[3], const bool rel[3], const char *what,
			  fdl_error *err)
{
	fdl_buf b = {0};
	int rc = 0;
	for (size_t k = 0; k < 3 && !rc; k++) {
		const char *p = parts[k];
		if (p && *p && !rel[k])
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s: the catalog records an absolute path '%s'; every data file of a version must "
				      "lie under data_dir, recorded relative to the data path",
				      what, p);
		else if (p)
			rc = fdl_buf_puts(&b, p, err);
	}
	if (!rc)
		rc = fdl_path_check_relative(b.data ? b.data : "", what, err);
	if (rc) {
		fdl_buf_free(&b);
		return rc;
	}
	*out = fdl_buf_detach(&b);
	return 0;
}

int fdl_catalog_resolve_path(char **out, fdl_rows *r, size_t row, size_t col0, const char *what, fdl_error *err)
{
	/* columns: schema path, rel, table path, rel, file path, rel */
	char *parts[3];
	bool rel[3];
	for (size_t k = 0; k < 3; k++) {
		parts[k] = fdl_rows_str(r, col0 + 2 * k, row);
		rel[k] = fdl_rows_null(r, col0 + 2 * k + 1, row) || fdl_rows_int(r, col0 + 2 * k + 1, row) != 0;
	}
	int rc = fdl_catalog_join_path(out, (const char *const *)parts, rel, what, err);
	for (size_t k = 0; k < 3; k++)
		duckdb_free(parts[k]);
	return rc;
}

/* Expand a query template: every {db} becomes the attached alias. */
int fdl_sql_native(fdl_buf *sql, const char *fn, const char *db, const char *native, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err, "%s('%s', ", fn, db);
	if (!rc)
		rc = fdl_buf_sql_str(sql, native, err);
	return rc ? rc : fdl_buf_puts(sql, ")", err);
}

int fdl_sql_glued(fdl_buf *sql, size_t n, const char *const vals[], const char *const glue[], fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = fdl_buf_sql_str(sql, vals[i], err);
		if (!rc)
			rc = fdl_buf_puts(sql, glue[i], err);
	}
	return rc;
}

int fdl_sql_table_ref(fdl_buf *sql, const char *alias, const char *schema, const char *table, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err, "%s.", alias);
	if (!rc)
		rc = fdl_buf_sql_ident(sql, schema, err);
	if (!rc)
		rc = fdl_buf_puts(sql, ".", err);
	return rc ? rc : fdl_buf_sql_ident(sql, table, err);
}

int fdl_sql_create_table(fdl_buf *sql, const char *alias, const char *schema, const char *table, bool schema_exists,
			 const fdl_strlist *names, const fdl_strlist *types, fdl_error *err)
{
	int rc = 0;
	if (!schema_exists) {
		rc = fdl_buf_printf(sql, err, "CREATE SCHEMA %s.", alias);
		if (!rc)
			rc = fdl_buf_sql_ident(sql, schema, err);
		if (!rc)
			rc = fdl_buf_puts(sql, "; ", err);
	}
	if (!rc)
		rc = fdl_buf_puts(sql, "CREATE TABLE ", err);
	if (!rc)
		rc = fdl_sql_table_ref(sql, alias, schema, table, err);
	for (size_t i = 0; !rc && i < names->len; i++) {
		rc = fdl_buf_puts(sql, i ? ", " : " (", err);
		if (!rc)
			rc = fdl_buf_sql_ident(sql, names->items[i], err);
		if (!rc)
			rc = fdl_buf_printf(sql, err, " %s", types->items[i]);
	}
	return rc ? rc : fdl_buf_puts(sql, names->len ? ")" : " ()", err);
}

int fdl_sql_with_db(fdl_buf *sql, const char *tmpl, const char *alias, fdl_error *err)
{
	int rc = 0;
	for (const char *p = tmpl; *p && !rc;) {
		const char *hit = strstr(p, "{db}");
		size_t n = hit ? (size_t)(hit - p) : strlen(p);
		rc = fdl_buf_add(sql, p, n, err);
		if (!rc && hit)
			rc = fdl_buf_puts(sql, alias, err);
		p += n + (hit ? 4 : 0);
	}
	return rc;
}
