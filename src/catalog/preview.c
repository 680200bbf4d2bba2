/* A version's preview in SQL (docs/format.md "Previews (fdl)"): each
 * table's state, its first rows and its column statistics over every row,
 * read through DuckLake from a catalog attached read only, every value as
 * DuckDB prints it. */
#include "duck.h"
#include "../util/pool.h"

#include <stdlib.h>
#include <string.h>

/* The live rows of a catalog's schemas, tables, columns, data and delete
 * files, from plain scans sorted by (kind, owner, id) and joined here:
 * DuckDB plans each join for a millisecond or more on catalogs this small
 * (listing.c), and this runs at every commit that keeps previews. */
enum { S_SCHEMA, S_TABLE, S_COLUMN, S_DATA, S_DELETE };
enum { S_KIND, S_OWNER, S_ID, S_TEXT, S_BYTES };
static const char STATES_SQL[] =
	"SELECT 0 AS kind, NULL::BIGINT AS owner, schema_id AS id, schema_name AS text, NULL::BIGINT AS bytes"
	" FROM {db}.ducklake_schema WHERE end_snapshot IS NULL"
	" UNION ALL SELECT 1, schema_id, table_id, table_name, NULL FROM {db}.ducklake_table WHERE end_snapshot IS NULL"
	" UNION ALL SELECT 2, table_id, column_id, column_id || ':' || coalesce(parent_column, -1) || ':' ||"
	"   column_name || ':' || column_type || ':' || coalesce(initial_default, '\\N'), NULL"
	"   FROM {db}.ducklake_column WHERE end_snapshot IS NULL"
	" UNION ALL SELECT 3, table_id, data_file_id, path, file_size_bytes FROM {db}.ducklake_data_file"
	"   WHERE end_snapshot IS NULL"
	" UNION ALL SELECT 4, data_file_id, delete_file_id, path, NULL FROM {db}.ducklake_delete_file"
	"   WHERE end_snapshot IS NULL"
	" ORDER BY kind, owner, id";

typedef struct srows {
	fdl_rows r;
	size_t at[6]; /* the first row of each kind (at[5]: the count) */
} srows;

/* The first row of `kind` owned by `owner` (rows sorted by owner). */
static size_t first_owned(srows *s, int kind, int64_t owner)
{
	size_t lo = s->at[kind], hi = s->at[kind + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fdl_rows_int(&s->r, S_OWNER, mid) < owner)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool owned(srows *s, int kind, size_t row, int64_t owner)
{
	return row < s->at[kind + 1] && fdl_rows_int(&s->r, S_OWNER, row) == owner;
}

/* Appends the cell's text (nothing for NULL), then `sep` when given. */
static int put_cell(fdl_buf *b, srows *s, size_t row, const char *sep, fdl_error *err)
{
	char *t = fdl_rows_str(&s->r, S_TEXT, row);
	int rc = t || fdl_rows_null(&s->r, S_TEXT, row) ? fdl_buf_puts(b, t ? t : "", err) : fdl_oom(err);
	duckdb_free(t);
	return rc || !sep ? rc : fdl_buf_puts(b, sep, err);
}

/* Table `id`'s state: its columns (by id) and live data files (by id)
 * with their delete files, as the grouped query fdl wrote before spelt it
 * (the table files' names stay the same); its files' bytes. */
static int table_state(fdl_buf *b, int64_t *bytes, srows *s, int64_t id, fdl_error *err)
{
	int rc = 0;
	*bytes = 0;
	for (size_t i = first_owned(s, S_COLUMN, id), n = 0; !rc && owned(s, S_COLUMN, i, id); i++)
		if (!fdl_rows_null(&s->r, S_TEXT, i) && !(rc = n++ ? fdl_buf_puts(b, "\n", err) : 0))
			rc = put_cell(b, s, i, NULL, err);
	if (!rc)
		rc = fdl_buf_puts(b, "\x1e", err);
	for (size_t i = first_owned(s, S_DATA, id), n = 0; !rc && owned(s, S_DATA, i, id); i++) {
		int64_t file = fdl_rows_int(&s->r, S_ID, i);
		*bytes += fdl_rows_int(&s->r, S_BYTES, i);
		rc = n++ ? fdl_buf_puts(b, "\n", err) : 0;
		if (!rc)
			rc = put_cell(b, s, i, "\t", err);
		size_t x = first_owned(s, S_DELETE, file);
		if (!rc && owned(s, S_DELETE, x, file))
			rc = put_cell(b, s, x, NULL, err);
	}
	return rc;
}

typedef struct stable {
	char *schema, *name;
	int64_t id;
} stable;

static int by_names(const void *a, const void *b)
{
	const stable *x = a, *y = b;
	int c = strcmp(x->schema, y->schema);
	return c ? c : strcmp(x->name, y->name);
}

/* The live tables with their schemas' names, sorted by schema and name. */
static int live_tables(stable **out, size_t *n, srows *s, fdl_error *err)
{
	size_t cap = s->at[S_TABLE + 1] - s->at[S_TABLE];
	stable *t = calloc(cap + 1, sizeof *t);
	int rc = t ? 0 : fdl_oom(err);
	*n = 0;
	for (size_t i = s->at[S_TABLE]; !rc && i < s->at[S_TABLE + 1]; i++) {
		int64_t schema = fdl_rows_int(&s->r, S_OWNER, i);
		size_t k = s->at[S_SCHEMA];
		while (k < s->at[S_SCHEMA + 1] && fdl_rows_int(&s->r, S_ID, k) != schema)
			k++;
		if (k == s->at[S_SCHEMA + 1])
			continue; /* its schema ended: not live */
		stable *e = &t[(*n)++];
		e->schema = fdl_rows_str(&s->r, S_TEXT, k);
		e->name = fdl_rows_str(&s->r, S_TEXT, i);
		e->id = fdl_rows_int(&s->r, S_ID, i);
		if (!e->schema || !e->name)
			rc = fdl_oom(err);
	}
	if (!rc && *n)
		qsort(t, *n, sizeof *t, by_names);
	*out = t;
	return rc;
}

static json_t *state_json(const stable *t, const char *state, int64_t bytes)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:I}", "schema", t->schema, "name", t->name, "table_id",
			 (json_int_t)t->id, "state", state, "bytes", (json_int_t)bytes);
}

/* Each live table of the catalog attached as `alias` (raw, or through DuckLake):
 * its names, its id and a text that changes whenever what a reader gets
 * from it may change (columns, live files and their deletes). */
int fdl_catalog_preview_states(json_t **out, fdl_duck *d, const char *alias, bool raw, fdl_error *err)
{
	fdl_buf sql = {0}, meta = {0};
	srows s = {0};
	int rc = raw ? fdl_buf_puts(&meta, alias, err) : fdl_buf_printf(&meta, err, "__ducklake_metadata_%s", alias);
	if (!rc)
		rc = fdl_sql_with_db(&sql, STATES_SQL, meta.data, err);
	fdl_buf_free(&meta);
	if ((rc = fdl_duck_query_built(d, &s.r, &sql, rc, err)))
		return rc;
	size_t rows = fdl_rows_count(&s.r);
	for (int k = 0, i = 0; k <= S_DELETE + 1; k++) {
		while ((size_t)i < rows && fdl_rows_int(&s.r, S_KIND, (size_t)i) < k)
			i++;
		s.at[k] = (size_t)i;
	}
	s.at[S_DELETE + 1] = rows;
	stable *t = NULL;
	size_t n = 0;
	rc = live_tables(&t, &n, &s, err);
	json_t *list = rc ? NULL : json_array();
	for (size_t i = 0; list && i < n; i++) {
		fdl_buf state = {0};
		int64_t bytes;
		json_t *e = NULL;
		if (!(rc = table_state(&state, &bytes, &s, t[i].id, err)))
			e = state_json(&t[i], state.data ? state.data : "", bytes);
		fdl_buf_free(&state);
		if (!e || json_array_append_new(list, e)) {
			json_decref(list);
			list = NULL;
		}
	}
	for (size_t i = 0; t && i < n; i++) {
		duckdb_free(t[i].schema);
		duckdb_free(t[i].name);
	}
	free(t);
	fdl_rows_free(&s.r);
	if (!list)
		return rc ? rc : fdl_oom(err);
	*out = list;
	return 0;
}

/* ---- one table ---------------------------------------------------------- */

typedef enum col_kind { COL_PLAIN, COL_RANGED, COL_TEXT, COL_NESTED } col_kind;

static bool starts(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* What statistics a column of DuckDB type `type` gets. */
static col_kind kind_of(const char *type)
{
	static const char *const numbers[] = {"TINYINT",  "SMALLINT", "INTEGER", "BIGINT",  "HUGEINT", "UTINYINT",
					      "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT",   "DOUBLE", "DATE"};
	if (!strcmp(type, "VARCHAR"))
		return COL_TEXT;
	if (strchr(type, '[') || starts(type, "STRUCT") || starts(type, "MAP") || starts(type, "UNION"))
		return COL_NESTED;
	if (starts(type, "DECIMAL(") || starts(type, "TIMESTAMP") || starts(type, "TIME"))
		return COL_RANGED;
	for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++)
		if (!strcmp(type, numbers[i]))
			return COL_RANGED;
	return COL_PLAIN;
}

typedef struct ptable {
	fdl_duck *d;
	char *from;  /* alias.schema.table, quoted, or the plain reading as (SELECT ...) */
	char *first; /* what the first rows are read from (from, or the leading files in order) */
	char *first_named; /* the same reading of the files as the version names them (rows_from's) */
	int64_t count; /* the rows, from files.json's counts (plain), else -1 */
	size_t ncols;
	char **names, **types;
	col_kind *kinds;
} ptable;

static void ptable_free(ptable *p)
{
	for (size_t i = 0; i < p->ncols; i++) {
		duckdb_free(p->names[i]);
		duckdb_free(p->types[i]);
	}
	free(p->names);
	free(p->types);
	free(p->kinds);
	free(p->from);
	free(p->first);
	free(p->first_named);
	memset(p, 0, sizeof *p);
}

/* The table through DuckLake: alias.schema.name. */
static int lake_from(ptable *p, const char *alias, const char *schema, const char *name, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_buf_sql_ident(&b, alias, err);
	if (!rc)
		rc = fdl_buf_puts(&b, ".", err);
	if (!rc)
		rc = fdl_buf_sql_ident(&b, schema, err);
	if (!rc)
		rc = fdl_buf_puts(&b, ".", err);
	if (!rc)
		rc = fdl_buf_sql_ident(&b, name, err);
	p->from = rc ? NULL : fdl_buf_detach(&b);
	p->first = rc ? NULL : fdl_strdup(p->from);
	p->count = -1;
	fdl_buf_free(&b);
	return rc || p->first ? rc : fdl_oom(err);
}

/* The plain reading of files[0..n) as a subquery, appended to b; ordered
 * and cut at `limit` rows when ordered. */
static int plain_from(fdl_buf *b, const fdl_preview_plain *x, const fdl_plain_file *files, size_t n, bool ordered,
		      size_t limit, fdl_error *err)
{
	int rc = fdl_buf_puts(b, "(", err);
	if (!rc)
		rc = fdl_reading_plain_sql(b, x->table, files, n, ordered, err);
	if (!rc && ordered)
		rc = fdl_buf_printf(b, err, " LIMIT %zu", limit);
	return rc ? rc : fdl_buf_puts(b, ") AS fdl_t", err);
}

/* A table without data files: its columns, typed, and no row. */
static int no_rows(fdl_buf *b, const json_t *table, fdl_error *err)
{
	const json_t *cols = json_object_get(table, "columns"), *c;
	size_t i;
	int rc = json_array_size(cols) ? fdl_buf_puts(b, "(SELECT ", err)
				       : fdl_fail(err, FDL_EINVALID, "the table's reading names no column");
	json_array_foreach(rc ? NULL : cols, i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));
		rc = fdl_buf_printf(b, err, "%sCAST(NULL AS %s) AS ", i ? ", " : "", type ? type : "");
		if (!rc)
			rc = fdl_buf_sql_ident(b, json_string_value(json_object_get(c, "name")), err);
		if (rc)
			break;
	}
	return rc ? rc : fdl_buf_puts(b, " WHERE false) AS fdl_t", err);
}

/* The rows a data file of files.json's `f` keeps (its rows less its
 * deleted ones: the counts the catalog records, exact). */
static int64_t live_rows(const json_t *f)
{
	return json_integer_value(json_object_get(f, "rows")) -
	       json_integer_value(json_object_get(json_object_get(f, "deletes"), "rows"));
}

/* The table from its data files: every row from all of them; the first
 * `first` rows from the leading files that hold them, in DuckLake's order;
 * the row count from files.json. */
static int plain_open(ptable *p, const fdl_preview_plain *x, size_t first, fdl_error *err)
{
	const json_t *files = json_object_get(x->table, "files");
	if (json_array_size(files) != x->n)
		return fdl_fail(err, FDL_EINVALID, "the table's reading lists %zu data files, %zu given",
				json_array_size(files), x->n);
	size_t lead = 0;
	int64_t got = 0;
	p->count = 0;
	for (size_t i = 0; i < x->n; i++) {
		int64_t n = live_rows(json_array_get(files, i));
		p->count += n;
		if (got < (int64_t)first) {
			got += n;
			lead = i + 1;
		}
	}
	fdl_buf all = {0}, head = {0}, named = {0};
	int rc = x->n ? plain_from(&all, x, x->files, x->n, false, 0, err) : no_rows(&all, x->table, err);
	if (!rc)
		rc = x->n ? plain_from(&head, x, x->files, lead ? lead : x->n, true, first, err)
			  : no_rows(&head, x->table, err);
	if (!rc && x->n && x->named)
		rc = plain_from(&named, x, x->named, lead ? lead : x->n, true, first, err);
	p->from = rc ? NULL : fdl_buf_detach(&all);
	p->first = rc ? NULL : fdl_buf_detach(&head);
	p->first_named = rc || !named.data ? NULL : fdl_buf_detach(&named);
	fdl_buf_free(&all);
	fdl_buf_free(&head);
	fdl_buf_free(&named);
	return rc;
}

static int ptable_open(ptable *p, const char *alias, const char *schema, const char *name,
		       const fdl_preview_plain *plain, size_t first, fdl_error *err)
{
	fdl_buf sql = {0}, typed = {0};
	int rc = plain ? plain_open(p, plain, first, err) : lake_from(p, alias, schema, name, err);
	/* from files.json, the names and types DuckDB spells: no file opened */
	if (!rc && plain)
		rc = no_rows(&typed, plain->table, err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM %s)",
				    plain ? typed.data : p->from);
	fdl_buf_free(&typed);
	fdl_rows rows = {0};
	if ((rc = fdl_duck_query_built(p->d, &rows, &sql, rc, err)))
		return rc;
	size_t n = fdl_rows_count(&rows);
	p->names = calloc(n + 1, sizeof *p->names);
	p->types = calloc(n + 1, sizeof *p->types);
	p->kinds = calloc(n + 1, sizeof *p->kinds);
	if (!p->names || !p->types || !p->kinds)
		rc = fdl_oom(err);
	for (size_t i = 0; i < n && !rc; i++, p->ncols++) {
		p->names[i] = fdl_rows_str(&rows, 0, i);
		p->types[i] = fdl_rows_str(&rows, 1, i);
		if (!p->names[i] || !p->types[i])
			rc = fdl_oom(err);
		else
			p->kinds[i] = kind_of(p->types[i]);
	}
	fdl_rows_free(&rows);
	return rc;
}

/* A cell as JSON: its text, or null. */
static json_t *cell(fdl_rows *rows, size_t col, size_t row)
{
	if (fdl_rows_null(rows, col, row))
		return json_null();
	char *s = fdl_rows_str(rows, col, row);
	json_t *v = s ? json_string(s) : NULL;
	duckdb_free(s);
	return v;
}

static int first_rows(json_t **out, ptable *p, size_t limit, fdl_error *err);

/* The first rows from `prior` (another version's file of the table) when
 * they were read from the same leading files as p->first reads (rows_from:
 * its sha256 in *from), else read now. */
static int first_rows_reused(json_t **out, char from[65], ptable *p, const json_t *prior, size_t limit,
			     fdl_error *err)
{
	const char *reading = p->first_named ? p->first_named : p->first;
	int rc = fdl_sha256_mem(from, reading, strlen(reading), err);
	const char *had = json_string_value(json_object_get(prior, "rows_from"));
	const json_t *rows = json_object_get(prior, "rows");
	if (!rc && had && !strcmp(had, from) && json_is_array(rows) && json_array_size(rows) <= limit) {
		fdl_duck_trace(p->d, "preview: first rows as in the parent's preview (the same leading files)");
		*out = json_deep_copy(rows);
		return *out ? 0 : fdl_oom(err);
	}
	return rc ? rc : first_rows(out, p, limit, err);
}

static int first_rows(json_t **out, ptable *p, size_t limit, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT ", err);
	for (size_t i = 0; i < p->ncols && !rc; i++) {
		rc = fdl_buf_puts(&sql, i ? ", CAST(" : "CAST(", err);
		if (!rc)
			rc = fdl_buf_sql_ident(&sql, p->names[i], err);
		if (!rc)
			rc = fdl_buf_puts(&sql, " AS VARCHAR)", err);
	}
	if (!rc)
		rc = fdl_buf_printf(&sql, err, "%s FROM %s LIMIT %zu", p->ncols ? "" : "1", p->first, limit);
	fdl_rows rows = {0};
	if ((rc = fdl_duck_query_built(p->d, &rows, &sql, rc, err)))
		return rc;
	json_t *list = json_array();
	for (size_t r = 0; list && r < fdl_rows_count(&rows); r++) {
		json_t *row = json_array();
		for (size_t c = 0; row && c < p->ncols; c++)
			if (json_array_append_new(row, cell(&rows, c, r))) {
				json_decref(row);
				row = NULL;
			}
		if (!row || json_array_append_new(list, row)) {
			json_decref(list);
			list = NULL;
		}
	}
	fdl_rows_free(&rows);
	if (!list)
		return fdl_oom(err);
	*out = list;
	return 0;
}

/* count(*), then per column nulls, distinct, min, max (and, for text,
 * the lengths): one scan of every row. */
static int summary_sql(fdl_buf *sql, ptable *p, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, "SELECT count(*)", err);
	for (size_t i = 0; i < p->ncols && !rc; i++) {
		fdl_buf c = {0};
		rc = fdl_buf_sql_ident(&c, p->names[i], err);
		const char *n = c.data;
		if (!rc && p->kinds[i] == COL_NESTED)
			rc = fdl_buf_printf(sql, err, ", count(*) - count(%s)", n);
		else if (!rc)
			rc = fdl_buf_printf(sql, err,
					    ", count(*) - count(%1$s), count(DISTINCT %1$s), CAST(min(%1$s) AS VARCHAR),"
					    " CAST(max(%1$s) AS VARCHAR)",
					    n);
		if (!rc && p->kinds[i] == COL_TEXT)
			rc = fdl_buf_printf(sql, err,
					    ", min(length(%1$s)), max(length(%1$s)), CAST(avg(length(%1$s)) AS VARCHAR)",
					    n);
		fdl_buf_free(&c);
	}
	if (!rc)
		rc = fdl_buf_printf(sql, err, " FROM %s", p->from);
	return rc;
}

static json_t *int_or_null(fdl_rows *rows, size_t col)
{
	return fdl_rows_null(rows, col, 0) ? json_null() : json_integer(fdl_rows_int(rows, col, 0));
}

/* The summary's row as the stats array (without histograms and tops). */
static int summary(json_t **stats, int64_t *count, ptable *p, fdl_error *err)
{
	fdl_buf sql = {0};
	fdl_rows rows = {0};
	int rc = summary_sql(&sql, p, err);
	if ((rc = fdl_duck_query_built(p->d, &rows, &sql, rc, err)))
		return rc;
	*count = fdl_rows_int(&rows, 0, 0);
	json_t *list = json_array();
	size_t k = 1;
	for (size_t i = 0; list && i < p->ncols; i++) {
		json_t *s = json_pack("{s:s, s:s, s:o}", "name", p->names[i], "type", p->types[i], "nulls",
				      int_or_null(&rows, k++));
		if (s && p->kinds[i] == COL_NESTED) {
			json_object_set_new(s, "distinct", json_null());
			json_object_set_new(s, "min", json_null());
			json_object_set_new(s, "max", json_null());
		} else if (s) {
			json_object_set_new(s, "distinct", int_or_null(&rows, k++));
			json_object_set_new(s, "min", cell(&rows, k++, 0));
			json_object_set_new(s, "max", cell(&rows, k++, 0));
		}
		if (s && p->kinds[i] == COL_TEXT) {
			json_t *l = json_pack("{s:o, s:o, s:o}", "min", int_or_null(&rows, k), "max",
					      int_or_null(&rows, k + 1), "avg", cell(&rows, k + 2, 0));
			k += 3;
			json_object_set_new(s, "lengths", l);
		}
		if (!s || json_array_append_new(list, s)) {
			json_decref(list);
			list = NULL;
		}
	}
	fdl_rows_free(&rows);
	if (!list)
		return fdl_oom(err);
	*stats = list;
	return 0;
}

/* [{key_name: text, "count": n}] from rows of (text, count). */
static json_t *pairs(fdl_rows *rows, const char *key_name)
{
	json_t *list = json_array();
	for (size_t r = 0; list && r < fdl_rows_count(rows); r++) {
		json_t *e = json_pack("{s:o, s:I}", key_name, cell(rows, 0, r), "count",
				      (json_int_t)fdl_rows_int(rows, 1, r));
		if (!e || json_array_append_new(list, e)) {
			json_decref(list);
			list = NULL;
		}
	}
	return list;
}

/* A ranged column's histogram over ten bins between its min and max (DuckDB's
 * equi_width_bins, "nice" bounds); NULL in *out when DuckDB has none for it
 * (a type equi_width_bins does not take, an infinite float). */
static int histogram(json_t **out, ptable *p, size_t i, const char *lo, const char *hi, fdl_error *err)
{
	fdl_buf sql = {0}, c = {0}, a = {0}, b = {0};
	int rc = fdl_buf_sql_ident(&c, p->names[i], err);
	if (!rc)
		rc = fdl_buf_sql_str(&a, lo, err);
	if (!rc)
		rc = fdl_buf_sql_str(&b, hi, err);
	/* the bounds the summary's scan printed, cast back (exact: DuckDB
	 * prints each of these types as text that casts back to the same
	 * value): one scan, not one for min/max and one for the counts */
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    "SELECT CAST(e.key AS VARCHAR), e.value FROM (SELECT unnest(map_entries(histogram(%s,"
				    " equi_width_bins(CAST(%s AS %s), CAST(%s AS %s), 10, true)))) AS e FROM %s)",
				    c.data, a.data, p->types[i], b.data, p->types[i], p->from);
	fdl_buf_free(&c);
	fdl_buf_free(&a);
	fdl_buf_free(&b);
	fdl_rows rows = {0};
	fdl_error e;
	*out = NULL;
	if (rc)
		return rc;
	if (fdl_duck_query_built(p->d, &rows, &sql, 0, &e)) /* no histogram for this column: */
		return fdl_duck_exec(p->d, "ROLLBACK; BEGIN TRANSACTION", err); /* a failed query ends it */
	*out = pairs(&rows, "upto");
	fdl_rows_free(&rows);
	return *out ? 0 : fdl_oom(err);
}

/* A text column's ten most frequent values (ties in value order). */
static int top_values(json_t **out, ptable *p, size_t i, fdl_error *err)
{
	fdl_buf sql = {0}, c = {0};
	int rc = fdl_buf_sql_ident(&c, p->names[i], err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    "SELECT %1$s, count(*) FROM %2$s WHERE %1$s IS NOT NULL GROUP BY %1$s"
				    " ORDER BY count(*) DESC, %1$s LIMIT 10",
				    c.data, p->from);
	fdl_buf_free(&c);
	fdl_rows rows = {0};
	if ((rc = fdl_duck_query_built(p->d, &rows, &sql, rc, err)))
		return rc;
	*out = pairs(&rows, "value");
	fdl_rows_free(&rows);
	return *out ? 0 : fdl_oom(err);
}

/* Each ranged column's histogram and, unless `tops` were read beside
 * (tops[i] for text column i, NULL: read here), each text column's most
 * frequent values, into the stats. */
static int column_extras(json_t *stats, ptable *p, json_t **tops, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < p->ncols && !rc; i++) {
		json_t *s = json_array_get(stats, i), *x = NULL;
		const char *lo = json_string_value(json_object_get(s, "min")),
			   *hi = json_string_value(json_object_get(s, "max"));
		if (p->kinds[i] == COL_RANGED && lo && hi) {
			if (!(rc = histogram(&x, p, i, lo, hi, err)) && x)
				json_object_set_new(s, "histogram", x);
		} else if (p->kinds[i] == COL_TEXT) {
			x = tops ? tops[i] : NULL;
			if (tops)
				tops[i] = NULL;
			if (x || !(rc = top_values(&x, p, i, err)))
				json_object_set_new(s, "top", x);
		}
	}
	return rc;
}

/* What a table's preview reads beside its summary, on a connection of its
 * own (the table read from its data files: no transaction to share): its
 * first rows, and, with statistics, each text column's most frequent
 * values. The summary and the histograms that need its min and max go on
 * meanwhile. */
typedef struct beside_reads {
	ptable p; /* the table's reading, p.d the second connection */
	const json_t *prior;
	size_t first;
	bool tops_wanted;
	json_t *rows, **tops;
	char from[65];
	fdl_error err;
	int rc;
} beside_reads;

static void beside_run(void *arg)
{
	beside_reads *b = arg;
	b->rc = first_rows_reused(&b->rows, b->from, &b->p, b->prior, b->first, &b->err);
	for (size_t i = 0; !b->rc && b->tops_wanted && i < b->p.ncols; i++)
		if (b->p.kinds[i] == COL_TEXT)
			b->rc = top_values(&b->tops[i], &b->p, i, &b->err);
}

/* A table read from its data files: its first rows (*from: their
 * rows_from) and, when `stats` is not NULL, its statistics, the first
 * rows and the text columns' tops read beside the summary when a second
 * connection and a thread can be had (else here, one after the other). */
static int plain_reads(json_t **rows, char from[65], json_t **stats, int64_t *count, ptable *p,
		       const fdl_preview_plain *plain, size_t first, fdl_error *err)
{
	beside_reads b = {.p = *p, .prior = plain->prior, .first = first, .tops_wanted = stats != NULL};
	if (stats && !(b.tops = calloc(p->ncols + 1, sizeof *b.tops)))
		return fdl_oom(err);
	fdl_duck *d2 = NULL;
	fdl_pool_side *side = NULL;
	fdl_error ignore; /* without a second connection, all is read here */
	if (stats && !fdl_duck_new_sharing(&d2, p->d, &ignore)) {
		b.p.d = d2;
		side = fdl_pool_side_start(beside_run, &b);
	}
	if (!side) {
		b.p.d = p->d;
		beside_run(&b);
	}
	int rc = stats ? summary(stats, count, p, err) : 0;
	fdl_pool_side_join(side);
	if (!rc && b.rc) {
		*err = b.err;
		rc = b.rc;
	}
	if (!rc && stats)
		rc = column_extras(*stats, p, b.tops, err);
	for (size_t i = 0; b.tops && i < p->ncols; i++)
		json_decref(b.tops[i]); /* those not taken (an error) */
	free(b.tops);
	fdl_duck_free(d2);
	*rows = b.rows;
	memcpy(from, b.from, sizeof b.from);
	return rc;
}

/* The preview of the table opened as `p` (fdl_catalog_preview_table);
 * `plain`: read from its data files. */
static int table_in(json_t **out, ptable *p, const fdl_preview_plain *plain, size_t first, bool with_stats,
		    fdl_error *err)
{
	json_t *cols = json_array(), *rows = NULL, *stats = NULL;
	int64_t count = p->count;
	char from[65] = "";
	int rc = cols ? 0 : fdl_oom(err);
	for (size_t i = 0; i < p->ncols && !rc; i++)
		if (json_array_append_new(cols, json_pack("{s:s, s:s}", "name", p->names[i], "type", p->types[i])))
			rc = fdl_oom(err);
	if (!rc && plain)
		rc = plain_reads(&rows, from, with_stats ? &stats : NULL, &count, p, plain, first, err);
	if (!rc && !plain)
		rc = first_rows(&rows, p, first, err);
	if (!rc && !plain && with_stats)
		rc = summary(&stats, &count, p, err);
	if (!rc && !plain && with_stats)
		rc = column_extras(stats, p, NULL, err);
	if (!rc && count < 0) {
		fdl_buf sql = {0};
		fdl_rows r = {0};
		if (!(rc = fdl_duck_query_built(p->d, &r, &sql,
						fdl_buf_printf(&sql, err, "SELECT count(*) FROM %s", p->from), err)))
			count = fdl_rows_int(&r, 0, 0);
		fdl_rows_free(&r);
	}
	json_t *doc = rc ? NULL : json_pack("{s:O, s:I, s:O}", "columns", cols, "row_count", (json_int_t)count, "rows", rows);
	if (doc && stats)
		json_object_set(doc, "stats", stats);
	if (doc && from[0] && json_object_set_new(doc, "rows_from", json_string(from))) {
		json_decref(doc);
		doc = NULL;
	}
	if (!rc && !doc)
		rc = fdl_oom(err);
	json_decref(cols);
	json_decref(rows);
	json_decref(stats);
	if (!rc)
		*out = doc;
	return rc;
}

int fdl_catalog_preview_table(json_t **out, fdl_duck *d, const char *alias, const char *schema, const char *name,
			      const fdl_preview_plain *plain, size_t first, bool with_stats, fdl_error *err)
{
	ptable p = {.d = d};
	/* one transaction: DuckLake reads the snapshot's metadata once, not
	 * for each query (each its own transaction took 30-90 ms more) */
	int rc = fdl_duck_exec(d, "BEGIN TRANSACTION", err);
	bool open = !rc;
	if (!rc)
		rc = ptable_open(&p, alias, schema, name, plain, first, err);
	if (!rc)
		rc = table_in(out, &p, plain, first, with_stats, err);
	fdl_error ignore; /* read only: nothing to keep */
	if (open)
		fdl_duck_exec(d, "ROLLBACK", &ignore);
	ptable_free(&p);
	return rc;
}
