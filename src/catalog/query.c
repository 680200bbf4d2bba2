/* Running a reader's SQL and streaming its result as a table, CSV or JSON
 * lines: DuckDB's streaming result is fetched chunk by chunk, so a large
 * result is never held in memory (the table format buffers only its first
 * chunk, to size its columns). Values are rendered by DuckDB itself (cast to
 * VARCHAR, or to_json for JSON), so every type prints the way DuckDB prints
 * it. */

#include "duck.h"

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

typedef struct stream_state {
	FILE *out;
	fdl_format fmt;
	table_state table;
	fdl_buf header; /* the table format's header line, for a result with no rows */
	fdl_error *err;
} stream_state;

static int on_chunk(duckdb_data_chunk chunk, duckdb_result *res, void *payload)
{
	stream_state *s = payload;
	table_state *t = &s->table;
	if (!chunk && !t->width) { /* the columns: the CSV header, the table's widths */
		t->ncols = (size_t)duckdb_column_count(res);
		t->width = calloc(t->ncols ? t->ncols : 1, sizeof *t->width);
		if (!t->width)
			return fdl_oom(s->err);
		/* the table format's header, for a result with no rows */
		for (size_t c = 0; s->fmt == FDL_FORMAT_TABLE && c < t->ncols; c++) {
			t->width[c] = strlen(duckdb_column_name(res, c));
			if (fdl_buf_printf(&s->header, s->err, "%s%s", duckdb_column_name(res, c),
					   c + 1 < t->ncols ? " | " : "\n"))
				return FDL_ENOMEM;
		}
		for (size_t c = 0; s->fmt == FDL_FORMAT_CSV && c < t->ncols; c++) {
			put_csv(s->out, duckdb_column_name(res, c));
			fputc(c + 1 < t->ncols ? ',' : '\n', s->out);
		}
		return 0;
	}
	if (chunk)
		return emit_chunk(s->out, s->fmt, chunk, t, res) ? fdl_fail(s->err, FDL_EIO, "cannot write the result") : 0;
	return 0;
}

/* After the last chunk: a table with no rows still shows its header. */
static void finish_table(stream_state *s)
{
	if (s->fmt != FDL_FORMAT_TABLE || s->table.sized)
		return;
	fputs(s->header.data ? s->header.data : "\n", s->out);
	table_rule(s->out, &s->table);
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
	if (!rc)
		rc = fdl_duck_lock_extensions(d, err);
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
	stream_state t = {out, fmt, {0}, {0}, err};
	if (!rc)
		rc = fdl_duck_stream_chunks(st, on_chunk, &t, err);
	if (!rc)
		finish_table(&t);
	free(t.table.width);
	fdl_buf_free(&t.header);
	duckdb_destroy_prepare(&st);
	return rc;
}

/* ---- export ------------------------------------------------------------------- */

/* Finish "COPY (query)" with " TO 'to' (FORMAT parquet)" and run it. */
static int copy_to_parquet(fdl_duck *d, fdl_buf *sql, const char *to, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, " TO ", err);
	if (!rc)
		rc = fdl_buf_sql_str(sql, to, err);
	if (!rc)
		rc = fdl_buf_puts(sql, " (FORMAT parquet, USE_TMP_FILE false)", err);
	return rc ? rc : fdl_duck_exec(d, sql->data, err);
}

int fdl_catalog_export_table(fdl_duck *d, const char *alias, const char *table, const char *to, fdl_error *err)
{
	const char *dot = strchr(table, '.');
	if (!dot)
		return fdl_fail(err, FDL_EINVALID, "table '%s' is not schema.table", table);
	fdl_buf sql = {0};
	char *schema = strndup(table, (size_t)(dot - table));
	int rc = schema ? fdl_buf_puts(&sql, "COPY (SELECT * FROM ", err) : fdl_oom(err);
	if (!rc)
		rc = fdl_buf_sql_ident(&sql, alias, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ".", err);
	if (!rc)
		rc = fdl_buf_sql_ident(&sql, schema, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ".", err);
	if (!rc)
		rc = fdl_buf_sql_ident(&sql, dot + 1, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ")", err);
	if (!rc)
		rc = copy_to_parquet(d, &sql, to, err);
	free(schema);
	fdl_buf_free(&sql);
	return rc;
}

