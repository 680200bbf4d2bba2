/* Running a reader's SQL and streaming its result as a table, CSV or JSON
 * lines: DuckDB's streaming result is fetched chunk by chunk, so a large
 * result is never held in memory (the table format buffers only its first
 * chunk, to size its columns). Values are rendered by DuckDB itself (cast to
 * VARCHAR, or to_json for JSON), so every type prints the way DuckDB prints
 * it. */
#include "query.h"

#include <stdlib.h>
#include <string.h>

static void put_csv(FILE *out, const char *v)
{
	if (!v)
		return;
	if (!strpbrk(v, ",\"\n\r")) {
		fputs(v, out);
		return;
	}
	fputc('"', out);
	for (const char *p = v; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

typedef struct table_state {
	size_t ncols;
	size_t *width;
	bool sized;
} table_state;

static void put_padded(FILE *out, const char *v, size_t width, bool last)
{
	fputs(v, out);
	if (!last)
		for (size_t n = strlen(v); n < width; n++)
			fputc(' ', out);
}

static void table_rule(FILE *out, const table_state *t)
{
	for (size_t c = 0; c < t->ncols; c++) {
		for (size_t n = 0; n < t->width[c]; n++)
			fputc('-', out);
		fputs(c + 1 < t->ncols ? "-+-" : "\n", out);
	}
}

static int emit_chunk(FILE *out, fdl_format fmt, duckdb_data_chunk chunk, table_state *t, duckdb_result *res)
{
	idx_t rows = duckdb_data_chunk_get_size(chunk);
	size_t ncols = (size_t)duckdb_data_chunk_get_column_count(chunk);
	if (fmt == FDL_FORMAT_TABLE && !t->sized) {
		/* size the columns on the first chunk (names and values) */
		t->sized = true;
		for (size_t c = 0; c < ncols; c++) {
			t->width[c] = strlen(duckdb_column_name(res, c));
			duckdb_vector v = duckdb_data_chunk_get_vector(chunk, c);
			for (idx_t r = 0; r < rows; r++) {
				char *s = fdl_duck_vector_string(v, r);
				size_t n = s ? strlen(s) : 4;
				if (n > t->width[c])
					t->width[c] = n > 60 ? 60 : n;
				free(s);
			}
		}
		for (size_t c = 0; c < ncols; c++) {
			put_padded(out, duckdb_column_name(res, c), t->width[c], c + 1 == ncols);
			fputs(c + 1 < ncols ? " | " : "\n", out);
		}
		table_rule(out, t);
	}
	for (idx_t r = 0; r < rows; r++) {
		for (size_t c = 0; c < ncols; c++) {
			char *s = fdl_duck_vector_string(duckdb_data_chunk_get_vector(chunk, c), r);
			if (fmt == FDL_FORMAT_CSV) {
				put_csv(out, s);
				fputc(c + 1 < ncols ? ',' : '\n', out);
			} else if (fmt == FDL_FORMAT_JSON) {
				fputs(s ? s : "null", out);
				fputc('\n', out);
			} else {
				put_padded(out, s ? s : "NULL", t->width[c], c + 1 == ncols);
				fputs(c + 1 < ncols ? " | " : "\n", out);
			}
			free(s);
		}
	}
	return ferror(out) ? -1 : 0;
}

/* The user's statement with any trailing semicolons and spaces removed. */
static char *trimmed(const char *sql)
{
	char *s = fdl_strdup(sql);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ';' || s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

int fdl_duck_stream(fdl_duck *d, const char *sql, fdl_format fmt, FILE *out, fdl_error *err)
{
	char *q = trimmed(sql);
	if (!q || !*q) {
		free(q);
		return fdl_fail(err, FDL_EINVALID, "no SQL to run");
	}
	fdl_buf wrapped = {0};
	int rc = fmt == FDL_FORMAT_JSON
			 ? fdl_buf_printf(&wrapped, err, "SELECT to_json(fdl_row)::VARCHAR AS json FROM (%s) fdl_row", q)
			 : fdl_buf_printf(&wrapped, err, "SELECT COLUMNS(*)::VARCHAR FROM (%s)", q);
	duckdb_prepared_statement st = NULL;
	if (!rc && duckdb_prepare(d->con, wrapped.data, &st) != DuckDBSuccess) {
		/* not a query that can be a subquery (e.g. a PRAGMA, or an error):
		 * prepare it as written so the message is DuckDB's own */
		duckdb_destroy_prepare(&st);
		if (duckdb_prepare(d->con, q, &st) != DuckDBSuccess)
			rc = fdl_fail(err, FDL_EDUCKDB, "DuckDB: %s", duckdb_prepare_error(st));
		else
			rc = fdl_fail(err, FDL_EINVALID,
				      "this statement does not return rows fdl can stream; use a SELECT");
	}
	fdl_buf_free(&wrapped);
	free(q);
	duckdb_result res;
	bool have_res = false;
	if (!rc) {
		if (duckdb_execute_prepared_streaming(st, &res) != DuckDBSuccess)
			rc = fdl_fail(err, FDL_EDUCKDB, "DuckDB: %s", duckdb_result_error(&res));
		have_res = true;
	}
	table_state t = {0};
	if (!rc) {
		t.ncols = (size_t)duckdb_column_count(&res);
		t.width = calloc(t.ncols ? t.ncols : 1, sizeof *t.width);
		if (!t.width)
			rc = fdl_fail(err, FDL_ERROR, "out of memory");
		if (!rc && fmt == FDL_FORMAT_CSV) {
			for (size_t c = 0; c < t.ncols; c++) {
				put_csv(out, duckdb_column_name(&res, c));
				fputc(c + 1 < t.ncols ? ',' : '\n', out);
			}
		}
	}
	while (!rc) {
		duckdb_data_chunk chunk = duckdb_fetch_chunk(res);
		if (!chunk) {
			const char *e = duckdb_result_error(&res);
			if (e && *e)
				rc = fdl_fail(err, FDL_EDUCKDB, "DuckDB: %s", e);
			break;
		}
		if (emit_chunk(out, fmt, chunk, &t, &res))
			rc = fdl_fail(err, FDL_EIO, "cannot write the result");
		duckdb_destroy_data_chunk(&chunk);
	}
	if (!rc && fmt == FDL_FORMAT_TABLE && !t.sized) {
		/* no rows: still show the header */
		for (size_t c = 0; c < t.ncols; c++) {
			t.width[c] = strlen(duckdb_column_name(&res, c));
			fputs(duckdb_column_name(&res, c), out);
			fputs(c + 1 < t.ncols ? " | " : "\n", out);
		}
		table_rule(out, &t);
	}
	free(t.width);
	if (have_res)
		duckdb_destroy_result(&res);
	duckdb_destroy_prepare(&st);
	return rc;
}
