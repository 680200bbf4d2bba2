/* The incremental freeze: a new version's frozen catalog made from the base
 * version's frozen catalog plus only the rows the working catalog's
 * snapshots since the base added or ended, equal row for row to the full
 * copy (copy.c) of the same working catalog at the same snapshot.
 *
 * The base catalog is the working catalog cut at snapshot b. For each
 * table the rows of the working catalog that the cut at b keeps (begun up
 * to b; for per-file tables, those of files begun up to b; ended rows open
 * again after b) are summed up in the working catalog's own engine
 * (SQLite or PostgreSQL answer in a millisecond where DuckDB's scanner
 * would read every row) and in the base: the number of rows, the sum of
 * each integer column, the number of values of each other one. Equal, the
 * table is the base's plus the rows begun in (b, u] plus the ends set in
 * (b, u]; different (compaction merged files, snapshots were expired), the
 * table is copied whole, as the full copy does. Tables without snapshot
 * columns (settings, statistics, mappings) are small and copied whole.
 * Anything the base cannot be trusted for (another format, other tables or
 * columns, another writer's layout) makes the caller freeze in full. */
#include "copy.h"

#include <stdlib.h>
#include <string.h>

typedef enum { K_WHOLE, K_SNAPSHOT, K_VERSIONED, K_FILE } table_kind;

/* How meta_where_upto cuts the table, in the same order. */
static table_kind kind_of(const char *t, const fdl_strlist *cols)
{
	if (fdl__meta_has(cols, "snapshot_id") && (!strcmp(t, "ducklake_snapshot") || !strcmp(t, "ducklake_snapshot_changes")))
		return K_SNAPSHOT;
	if (fdl__meta_has(cols, "begin_snapshot"))
		return K_VERSIONED;
	if (fdl__meta_has(cols, "data_file_id") && strcmp(t, "ducklake_data_file") != 0)
		return K_FILE;
	return K_WHOLE;
}

/* The working catalog, queried in its own engine. */
typedef struct source {
	const char *alias; /* as attached raw: "fdl_work" or "fdl_work.public" */
	char db[64];       /* the attached database */
	char prefix[64];   /* "" (SQLite) or "public." (PostgreSQL) before a table's name */
	const char *fn;    /* sqlite_query or postgres_query */
} source;

/* ` FROM <fn>('<db>', '<native>')` */
static int native_from(fdl_buf *sql, const source *s, const char *native, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, " FROM ", err);
	return rc ? rc : fdl_sql_native(sql, s->fn, s->db, native, err);
}

/* The rows of table t (kind k) the cut at `from` < snapshot <= `to` adds
 * (to < 0: every row up to `from`), in native SQL. */
static int rows_where(fdl_buf *sql, const source *s, const char *t, table_kind k, int64_t from, int64_t to,
		      fdl_error *err)
{
	const char *col = k == K_SNAPSHOT ? "snapshot_id" : "begin_snapshot";
	if (k == K_FILE) {
		int rc = fdl_buf_printf(sql, err, "data_file_id IN (SELECT data_file_id FROM %sducklake_data_file WHERE ",
					s->prefix);
		if (!rc)
			rc = rows_where(sql, s, "ducklake_data_file", K_VERSIONED, from, to, err);
		return rc ? rc : fdl_buf_puts(sql, ")", err);
	}
	(void)t;
	if (to < 0)
		return fdl_buf_printf(sql, err, "%s <= %lld", col, (long long)from);
	return fdl_buf_printf(sql, err, "%s > %lld AND %s <= %lld", col, (long long)from, col, (long long)to);
}

static bool integer_type(const char *type)
{
	static const char *const ints[] = {"BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT",
					   "UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT", NULL};
	for (size_t i = 0; ints[i]; i++)
		if (!strcmp(type, ints[i]))
			return true;
	return false;
}

/* What the rows of one table add up to, the same text in SQLite,
 * PostgreSQL and DuckDB: "[count, sum of each integer column]", an
 * end_snapshot as the cut at b leaves it. DuckLake never changes a row
 * but its end_snapshot; merging files and expiring snapshots delete rows
 * and add others with new ids, which change the count or a sum. `duck`:
 * DuckDB's own list, cast to text (cheaper there than concatenation). */
static int fingerprint(fdl_buf *sql, const fdl_strlist *cols, const fdl_strlist *types, int64_t b, bool duck,
		       fdl_error *err)
{
	int rc = fdl_buf_puts(sql, duck ? "CAST(list_value(CAST(count(*) AS HUGEINT)" : "'[' || count(*)", err);
	for (size_t i = 0; !rc && i < cols->len; i++) {
		if (!integer_type(types->items[i]))
			continue;
		char col[160];
		if (!strcmp(cols->items[i], "end_snapshot"))
			snprintf(col, sizeof col, "CASE WHEN end_snapshot > %lld THEN NULL ELSE end_snapshot END", (long long)b);
		else
			snprintf(col, sizeof col, "\"%s\"", cols->items[i]);
		rc = fdl_buf_printf(sql, err, duck ? ", CAST(coalesce(sum(%s), 0) AS HUGEINT)" : " || ', ' || coalesce(sum(%s), 0)",
				    col);
	}
	if (!rc)
		rc = fdl_buf_puts(sql, duck ? ") AS VARCHAR)" : " || ']'", err);
	return rc;
}

/* One table's line of the working catalog's summary. */
typedef struct tline {
	char *fp;        /* "=" when the base's rows sum up the same */
	bool empty;      /* a table kept whole, empty in both */
	int64_t added;   /* rows begun in (b, u] */
	int64_t ended;   /* rows begun up to b and ended in (b, u] */
} tline;

/* The base's schema (its column types) against the working catalog's: the
 * same tables with the same columns in the same order, the per-table
 * inlined tables aside. NULL when they agree, else why not. */
static const char *schema_differs(const meta_schema *bs, const meta_schema *ws)
{
	size_t nw = 0;
	for (size_t i = 0; i < ws->tables.len; i++) {
		const char *t = ws->tables.items[i];
		if (fdl__meta_per_table(t))
			continue;
		nw++;
		const fdl_strlist *b = fdl__meta_cols(bs, t);
		if (b->len != ws->cols[i].len)
			return "the base catalog's tables or columns differ from the working catalog's";
		for (size_t c = 0; c < b->len; c++)
			if (strcmp(b->items[c], ws->cols[i].items[c]))
				return "the base catalog's tables or columns differ from the working catalog's";
	}
	return nw == bs->tables.len ? NULL : "the base catalog's tables differ from the working catalog's";
}

/* One branch per table of a summary, in the working catalog's own SQL
 * (`s`; its rows the cut at b keeps, and those added and ended in (b, u])
 * or, with s NULL, in DuckDB over the base `base` (all its rows). A table
 * kept whole is only counted, to be skipped when empty in both. */
static int summary_sql(fdl_buf *q, const source *s, const char *base, const meta_schema *bs, int64_t b, int64_t u,
		       fdl_error *err)
{
	int rc = 0;
	const char *sep = "";
	char from[160];
	for (size_t i = 0; !rc && i < bs->tables.len; i++) {
		const char *t = bs->tables.items[i];
		table_kind k = kind_of(t, &bs->cols[i]);
		if (fdl__meta_working_only(t))
			continue;
		snprintf(from, sizeof from, s ? "%s%s" : "%s.%s", s ? s->prefix : base, t);
		if (k == K_WHOLE && !s)
			continue; /* the base's is empty when DuckDB sizes it 0 (fdl_since_base) */
		if (k == K_WHOLE) {
			rc = fdl_buf_printf(q, err, "%sSELECT '%s' AS t, '[' || count(*) || ']' AS fp, 0 AS added, 0 AS ended FROM %s",
					    sep, t, from);
			sep = " UNION ALL ";
			continue;
		}
		/* DuckDB: an aggregate straight over the table, cheaper to plan */
		rc = fdl_buf_printf(q, err, s ? "%sSELECT '%s' AS t, (SELECT " : "%sSELECT '%s' AS t, ", sep, t);
		if (!rc)
			rc = fingerprint(q, &bs->cols[i], &bs->types[i], b, !s, err);
		if (!rc)
			rc = fdl_buf_printf(q, err, s ? " FROM %s WHERE " : " AS fp FROM %s", from);
		sep = " UNION ALL ";
		if (rc || !s)
			continue;
		rc = rows_where(q, s, t, k, b, -1, err);
		if (!rc)
			rc = fdl_buf_printf(q, err, ") AS fp, (SELECT count(*) FROM %s WHERE ", from);
		if (!rc)
			rc = rows_where(q, s, t, k, b, u, err);
		if (!rc && k == K_VERSIONED && fdl__meta_has(&bs->cols[i], "end_snapshot"))
			rc = fdl_buf_printf(q, err,
					    ") AS added, (SELECT count(*) FROM %s WHERE begin_snapshot <= %lld AND "
					    "end_snapshot > %lld AND end_snapshot <= %lld) AS ended",
					    from, (long long)b, (long long)b, (long long)u);
		else if (!rc)
			rc = fdl_buf_puts(q, ") AS added, 0 AS ended", err);
	}
	/* the format; the base's last snapshot; whether the working catalog's
	 * schema changed since b (no schema change: no `changes`) */
	if (!rc && s)
		rc = fdl_buf_printf(q, err,
				    "%1$sSELECT '#format', (SELECT value FROM %2$sducklake_metadata WHERE key = 'version' AND "
				    "scope IS NULL), 0, 0 UNION ALL SELECT '#schema', CASE WHEN (SELECT schema_version FROM "
				    "%2$sducklake_snapshot WHERE snapshot_id = %3$lld) = (SELECT schema_version FROM "
				    "%2$sducklake_snapshot WHERE snapshot_id = %4$lld) THEN 'same' ELSE 'changed' END, 0, 0",
				    sep, s->prefix, (long long)b, (long long)u);
	else if (!rc)
		rc = fdl_buf_printf(q, err,
				    "%1$sSELECT '#format', (SELECT value FROM %2$s.ducklake_metadata WHERE key = 'version' AND "
				    "scope IS NULL) UNION ALL SELECT '#last', CAST((SELECT max(snapshot_id) FROM "
				    "%2$s.ducklake_snapshot) AS VARCHAR)",
				    sep, base);
	return rc;
}

/* Row r's value in column 1 of the result whose column 0 is `name`
 * (UNION ALL keeps no order); NULL when absent or NULL. Caller frees. */
static char *named(fdl_rows *r, const char *name, size_t *row)
{
	for (size_t i = 0; i < fdl_rows_count(r); i++) {
		char *t = fdl_rows_str(r, 0, i);
		bool hit = t && !strcmp(t, name);
		duckdb_free(t);
		if (hit) {
			if (row)
				*row = i;
			char *v = fdl_rows_str(r, 1, i), *copy = v ? fdl_strdup(v) : NULL;
			duckdb_free(v);
			return copy;
		}
	}
	return NULL;
}

struct fdl_since {
	char base[64];       /* the base catalog's alias */
	int64_t b;           /* its snapshot */
	meta_schema bs;      /* its tables, columns and types */
	fdl_rows sum;        /* its summary: table, fp */
	fdl_duck_beside *summing; /* that summary, until joined (base_summed) */
	bool summed;
	char why[600];       /* empty: usable so far */
	fdl_strlist whole;   /* tables copied whole */
	fdl_strlist grown;   /* tables with rows begun in (b, u] (sorted) */
	fdl_strlist empty;   /* its tables with no row (sorted) */
	bool schema_same;    /* no schema change in the working catalog since b */
};

/* Why a step failed, kept for the caller's trace; 0: the full freeze
 * will say what is wrong, or succeed. */
static int give_up(fdl_since *sn, const char *what, const fdl_error *err)
{
	snprintf(sn->why, sizeof sn->why, "%s: %.500s", what, err->message);
	return 0;
}

/* Nothing runs beside the caller any more: what did not serve is waited
 * for and dropped (`copying`: fdl_since_copy's), before the caller
 * detaches the base or the new file. */
static void quiet(fdl_since *sn, fdl_duck_beside **copying)
{
	fdl_duck_beside_join(sn->summing, NULL, NULL);
	sn->summing = NULL;
	if (copying) {
		fdl_duck_beside_join(*copying, NULL, NULL);
		*copying = NULL;
	}
}

/* The base's summary, summed up beside the caller since fdl_since_base:
 * joined once, and its last snapshot checked against the version's. */
static void base_summed(fdl_since *sn)
{
	if (!sn->summing)
		return;
	fdl_error e;
	if (fdl_duck_beside_join(sn->summing, &sn->sum, &e))
		give_up(sn, "the base catalog could not be summed up", &e);
	else
		sn->summed = true;
	sn->summing = NULL;
	char *last = sn->summed ? named(&sn->sum, "#last", NULL) : NULL;
	if (sn->summed && (!last || atoll(last) != sn->b))
		snprintf(sn->why, sizeof sn->why, "the base catalog does not stop at its version's snapshot");
	free(last);
}

/* The working catalog's summary against the base's: lines[i] for
 * bs->tables.items[i]; sn->why says why the base cannot be carried, if it
 * cannot. */
static int compare(fdl_since *sn, fdl_duck *d, const source *s, int64_t u, tline *lines, fdl_error *err)
{
	fdl_buf w = {0}, q = {0};
	int rc = summary_sql(&w, s, NULL, &sn->bs, sn->b, u, err);
	if (!rc) /* sqlite_query() types a column by its values */
		rc = fdl_buf_puts(&q, "SELECT t, fp, CAST(added AS BIGINT), CAST(ended AS BIGINT)", err);
	if (!rc)
		rc = native_from(&q, s, w.data, err);
	fdl_rows rw = {0};
	if (!rc)
		rc = fdl_duck_query(d, &rw, q.data, err);
	fdl_buf_free(&w);
	fdl_buf_free(&q);
	base_summed(sn); /* the base's, summed up meanwhile */
	if (sn->why[0]) { /* it says why */
		fdl_rows_free(&rw);
		return 0;
	}
	for (size_t i = 0; !rc && i < sn->bs.tables.len; i++) {
		size_t row = 0;
		char *fp = named(&rw, sn->bs.tables.items[i], &row);
		if (!fp)
			continue; /* not summed up: a table a version never holds */
		char *nfp = named(&sn->sum, sn->bs.tables.items[i], NULL);
		lines[i].fp = fdl_strdup(nfp && !strcmp(fp, nfp) ? "=" : "");
		lines[i].empty = !strcmp(fp, "[0]") && fdl_strlist_has_sorted(&sn->empty, sn->bs.tables.items[i]);
		lines[i].added = fdl_rows_int(&rw, 2, row);
		lines[i].ended = fdl_rows_int(&rw, 3, row);
		if (!lines[i].fp)
			rc = fdl_oom(err);
		free(fp);
		free(nfp);
	}
	char *wf = rc ? NULL : named(&rw, "#format", NULL), *bf = rc ? NULL : named(&sn->sum, "#format", NULL),
	     *schema = rc ? NULL : named(&rw, "#schema", NULL);
	if (!rc && (!wf || !bf || strcmp(wf, bf)))
		snprintf(sn->why, sizeof sn->why, "the base catalog is in another DuckLake format than the working catalog");
	sn->schema_same = schema && !strcmp(schema, "same");
	free(wf);
	free(bf);
	free(schema);
	fdl_rows_free(&rw);
	return rc;
}

/* Set the ends the working catalog's snapshots (b, u] gave to rows the base
 * holds open, matching each by its integer and text columns; exactly
 * `ended` of them, or the base is not what the summary said. A file's
 * path is not compared: the working catalog records a published file by
 * its place in the data folder (stage.c), the base relative to the data
 * path; its id names it. */
static int apply_ends(fdl_duck *d, const source *s, const char *dst, const char *t, const fdl_strlist *cols,
		      const fdl_strlist *types, int64_t b, int64_t u, int64_t ended, fdl_error *err)
{
	fdl_buf sql = {0}, native = {0};
	int rc = fdl_buf_printf(&native, err,
				"SELECT * FROM %s%s WHERE begin_snapshot <= %lld AND end_snapshot > %lld AND "
				"end_snapshot <= %lld",
				s->prefix, t, (long long)b, (long long)b, (long long)u);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, "UPDATE %s.%s SET end_snapshot = CAST(e.end_snapshot AS BIGINT)", dst, t);
	if (!rc)
		rc = native_from(&sql, s, native.data, err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, " AS e WHERE %s.%s.end_snapshot IS NULL", dst, t);
	for (size_t i = 0; !rc && i < cols->len; i++) {
		const char *c = cols->items[i];
		if (!strcmp(c, "end_snapshot") || (!integer_type(types->items[i]) && strcmp(types->items[i], "VARCHAR")))
			continue;
		if (!strcmp(c, "path") && (!strcmp(t, "ducklake_data_file") || !strcmp(t, "ducklake_delete_file")))
			continue;
		rc = fdl_buf_printf(&sql, err, " AND %s.%s.\"%s\" IS NOT DISTINCT FROM CAST(e.\"%s\" AS %s)", dst, t, c,
				    c, types->items[i]);
	}
	int64_t n = 0;
	if (!rc)
		rc = fdl_duck_int(d, &n, 0, sql.data, err);
	if (!rc && n != ended)
		rc = fdl_fail(err, FDL_EINVALID, "%s: %lld rows ended since the base, %lld of them matched in it", t,
			      (long long)ended, (long long)n);
	fdl_buf_free(&sql);
	fdl_buf_free(&native);
	return rc;
}

/* One table of the new catalog: the base's rows carried, then the rows
 * begun and ended since; or copied whole. */
static int apply_table(fdl_duck *d, const source *s, const char *dst, const meta_schema *bs, const meta_schema *ws,
		       size_t i, const tline *line, int64_t b, const fdl_copy_options *o, fdl_strlist *whole,
		       fdl_error *err)
{
	const char *t = bs->tables.items[i];
	const fdl_strlist *scols = fdl__meta_cols(ws, t);
	table_kind k = kind_of(t, &bs->cols[i]);
	if (k == K_WHOLE && line->empty)
		return 0; /* nothing in either (macros, sort keys, mappings unused) */
	if (k == K_WHOLE || !line->fp || strcmp(line->fp, "=")) {
		int rc = fdl__meta_copy_table(d, s->alias, dst, t, &bs->cols[i], scols, o, err);
		return rc || k == K_WHOLE ? rc : fdl_strlist_add(whole, t, err);
	}
	int rc = 0;
	if (line->added > 0) {
		fdl_buf sql = {0}, native = {0};
		rc = fdl_buf_printf(&native, err, "SELECT * FROM %s%s WHERE ", s->prefix, t);
		if (!rc)
			rc = rows_where(&native, s, t, k, b, o->upto, err);
		if (!rc)
			rc = fdl__meta_insert_head(&sql, dst, t, &bs->cols[i], &bs->types[i], scols, o, err);
		if (!rc)
			rc = native_from(&sql, s, native.data, err);
		if (!rc)
			rc = fdl_duck_exec(d, sql.data, err);
		fdl_buf_free(&sql);
		fdl_buf_free(&native);
	}
	if (!rc && line->ended > 0)
		rc = apply_ends(d, s, dst, t, &bs->cols[i], &bs->types[i], b, o->upto, line->ended, err);
	return rc;
}

static int source_of(source *s, const char *alias, bool sqlite)
{
	memset(s, 0, sizeof *s);
	s->alias = alias;
	const char *dot = strchr(alias, '.');
	snprintf(s->db, sizeof s->db, "%.*s", dot ? (int)(dot - alias) : (int)strlen(alias), alias);
	if (dot)
		snprintf(s->prefix, sizeof s->prefix, "%s.", dot + 1);
	s->fn = sqlite ? "sqlite_query" : dot ? "postgres_query" : NULL;
	return s->fn ? 0 : -1;
}

/* Everything after the summaries: the copy of the base, each table, the
 * statistics at the cut. */
static int build(fdl_duck *d, const source *s, fdl_duck_beside **copying, const char *dst, const meta_schema *bs,
		 const meta_schema *ws, const tline *lines, int64_t b, const fdl_copy_options *o, fdl_strlist *whole,
		 fdl_error *err)
{
	int rc = fdl_duck_beside_join(*copying, NULL, err);
	*copying = NULL;
	if (!rc)
		rc = fdl_duck_exec(d, "BEGIN TRANSACTION", err);
	for (size_t i = 0; !rc && i < bs->tables.len; i++)
		if (!fdl__meta_working_only(bs->tables.items[i]))
			rc = apply_table(d, s, dst, bs, ws, i, &lines[i], b, o, whole, err);
	if (!rc) {
		/* read last, as the full copy does: a writer past the cut while
		 * the rows were read leaves the latest statistics behind */
		fdl_buf q = {0};
		char native[128];
		snprintf(native, sizeof native, "SELECT max(snapshot_id) AS m FROM %sducklake_snapshot", s->prefix);
		int64_t last = 0;
		rc = fdl_buf_puts(&q, "SELECT CAST(m AS BIGINT)", err);
		if (!rc)
			rc = native_from(&q, s, native, err);
		if (!rc)
			rc = fdl_duck_int(d, &last, 0, q.data, err);
		fdl_buf_free(&q);
		if (!rc && last > o->upto)
			rc = fdl_catalog_stats_recompute(d, dst, err);
	}
	if (!rc)
		rc = fdl_duck_exec(d, "COMMIT", err);
	else
		fdl_duck_exec(d, "ROLLBACK", NULL);
	return rc;
}

/* The base's DuckLake tables (sn->bs) and those with no row (sn->empty):
 * its tables and whatever else it holds (views, sequences, indexes, a
 * table outside main: *only false), which another writer's file may hold
 * and COPY FROM DATABASE would carry, in one statement; then their
 * columns. estimated_size counts rows, deleted ones too: 0 is empty. */
static int base_schema(fdl_since *sn, fdl_duck *d, bool *only, fdl_error *err)
{
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "SELECT 1 AS k, schema_name, table_name, estimated_size = 0 FROM duckdb_tables()"
		 " WHERE database_name = '%1$s'"
		 " UNION ALL SELECT 2, schema_name, view_name, NULL FROM duckdb_views()"
		 " WHERE database_name = '%1$s' AND NOT internal"
		 " UNION ALL SELECT 2, schema_name, sequence_name, NULL FROM duckdb_sequences() WHERE database_name = '%1$s'"
		 " UNION ALL SELECT 2, schema_name, index_name, NULL FROM duckdb_indexes() WHERE database_name = '%1$s'"
		 " ORDER BY 1, 3",
		 sn->base);
	fdl_rows r;
	fdl_strlist tables = {0};
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return rc;
	*only = true;
	for (size_t i = 0; !rc && i < fdl_rows_count(&r); i++) {
		char *schema = fdl_rows_str(&r, 1, i), *t = fdl_rows_str(&r, 2, i);
		if (!schema || !t)
			rc = fdl_oom(err);
		else if (fdl_rows_int(&r, 0, i) == 2 || strcmp(schema, "main") != 0)
			*only = false;
		else if (!(rc = fdl_strlist_add(&tables, t, err)) && fdl_rows_int(&r, 3, i))
			rc = fdl_strlist_add(&sn->empty, t, err);
		duckdb_free(schema);
		duckdb_free(t);
	}
	fdl_rows_free(&r);
	fdl_strlist_sort(&sn->empty);
	if (!rc && *only)
		rc = fdl__meta_schema_read(d, sn->base, &tables, false, &sn->bs, err);
	fdl_strlist_free(&tables);
	return rc;
}

int fdl_since_base(fdl_since **out, fdl_duck *d, const char *base, int64_t base_snapshot, fdl_error *err)
{
	fdl_since *sn = calloc(1, sizeof *sn);
	if (!sn)
		return fdl_oom(err);
	*out = sn;
	snprintf(sn->base, sizeof sn->base, "%s", base);
	sn->b = base_snapshot;
	fdl_buf q = {0};
	bool only = true;
	fdl_error e;
	if (base_schema(sn, d, &only, &e))
		return give_up(sn, "the base catalog's tables could not be read", &e);
	if (!only) {
		snprintf(sn->why, sizeof sn->why, "the base catalog holds more than DuckLake's tables");
		return 0;
	}
	/* summed up beside what follows: attaching and reading the working
	 * catalog */
	int rc = summary_sql(&q, NULL, base, &sn->bs, base_snapshot, -1, err);
	if (!rc && fdl_duck_beside_start(&sn->summing, d, q.data, &e))
		give_up(sn, "the base catalog could not be summed up", &e);
	fdl_buf_free(&q);
	return rc;
}

int fdl_since_copy(fdl_since *sn, fdl_duck *d, const char *src, const char *dst, const fdl_copy_options *o,
		   fdl_error *err)
{
	if (sn->why[0]) {
		quiet(sn, NULL);
		return 0;
	}
	source s;
	meta_schema ws = {0};
	tline *lines = NULL;
	/* the base copied beside the reading of the working catalog; when the
	 * incremental freeze is given up, the new file goes with it */
	char sql[256];
	fdl_duck_beside *copying = NULL;
	fdl_error ce;
	snprintf(sql, sizeof sql, "COPY FROM DATABASE %s TO %s", sn->base, dst);
	if (fdl_duck_beside_start(&copying, d, sql, &ce)) {
		quiet(sn, NULL);
		return give_up(sn, "the base catalog could not be copied", &ce);
	}
	const char *why = source_of(&s, src, o->src_sqlite) ? "the working catalog is not SQLite or PostgreSQL" : NULL;
	if (!why && o->upto < sn->b)
		why = "the working catalog is not past its base";
	int rc = why ? 0 : fdl__meta_schema_read(d, src, NULL, o->src_sqlite, &ws, err);
	if (!rc && !why)
		why = schema_differs(&sn->bs, &ws);
	/* the working catalog's own refusal, as in the full copy */
	if (!rc && !why && o->refuse_inlined)
		rc = fdl__meta_check_inlined(d, src, &ws, o->upto, err);
	if (!rc && !why && !(lines = calloc(sn->bs.tables.len + 1, sizeof *lines)))
		rc = fdl_oom(err);
	if (!rc && !why && (rc = compare(sn, d, &s, o->upto, lines, err)) && rc != FDL_ENOMEM)
		rc = give_up(sn, "the summaries failed", err); /* not an allocation: the engine could not answer */
	if (!rc && !why && !sn->why[0] && build(d, &s, &copying, dst, &sn->bs, &ws, lines, sn->b, o, &sn->whole, err))
		rc = give_up(sn, "the incremental copy failed", err);
	quiet(sn, &copying); /* given up: the new file goes, and the base may be detached */
	if (why)
		snprintf(sn->why, sizeof sn->why, "%s", why);
	for (size_t i = 0; !rc && !sn->why[0] && lines && i < sn->bs.tables.len; i++)
		if (lines[i].added > 0)
			rc = fdl_strlist_add(&sn->grown, sn->bs.tables.items[i], err);
	fdl_strlist_sort(&sn->grown);
	for (size_t i = 0; lines && i < sn->bs.tables.len; i++)
		free(lines[i].fp);
	free(lines);
	fdl__meta_schema_free(&ws);
	return rc;
}

const char *fdl_since_why(const fdl_since *sn)
{
	return sn->why;
}

const fdl_strlist *fdl_since_whole(const fdl_since *sn)
{
	return &sn->whole;
}

bool fdl_since_schema_same(const fdl_since *sn)
{
	return !sn->why[0] && sn->schema_same;
}

bool fdl_since_files_carried(const fdl_since *sn)
{
	for (size_t i = 0; i < sn->whole.len; i++)
		if (!strcmp(sn->whole.items[i], "ducklake_data_file") || !strcmp(sn->whole.items[i], "ducklake_delete_file"))
			return false;
	return !sn->why[0];
}

bool fdl_since_grown(const fdl_since *sn, const char *table)
{
	return !sn->why[0] && fdl_strlist_has_sorted(&sn->grown, table);
}

void fdl_since_free(fdl_since *sn)
{
	if (!sn)
		return;
	quiet(sn, NULL);
	fdl__meta_schema_free(&sn->bs);
	fdl_rows_free(&sn->sum);
	fdl_strlist_free(&sn->whole);
	fdl_strlist_free(&sn->grown);
	fdl_strlist_free(&sn->empty);
	free(sn);
}
