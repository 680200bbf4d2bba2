/* The statistics DuckLake keeps of a catalog's latest state only
 * (ducklake_table_stats, ducklake_table_column_stats): recomputed for a
 * frozen catalog cut at an earlier snapshot, and checked by fdl verify
 * against the per-file statistics of the version's live files. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

/* ducklake_table_stats describes the catalog's latest state; cut at an
 * earlier snapshot (a writer added more while commit ran), recompute it from
 * the files live at the cut, as DuckLake keeps it: record_count and
 * file_size_bytes of the live data files, next_row_id past every row id
 * handed out. */
static int recompute_table_stats(fdl_duck *d, const char *dst, fdl_error *err)
{
	char sql[1536];
	snprintf(sql, sizeof sql,
		 "UPDATE %1$s.ducklake_table_stats s SET"
		 " record_count = coalesce((SELECT sum(f.record_count) FROM %1$s.ducklake_data_file f"
		 "   WHERE f.table_id = s.table_id AND f.end_snapshot IS NULL), 0),"
		 " file_size_bytes = coalesce((SELECT sum(f.file_size_bytes) FROM %1$s.ducklake_data_file f"
		 "   WHERE f.table_id = s.table_id AND f.end_snapshot IS NULL), 0),"
		 " next_row_id = greatest(coalesce((SELECT max(f.row_id_start + f.record_count) FROM"
		 "   %1$s.ducklake_data_file f WHERE f.table_id = s.table_id), 0), 0)",
		 dst);
	return fdl_duck_exec(d, sql, err);
}

/* The DuckDB type DuckLake's column_type names, to order the text of its
 * statistics as DuckLake does (by value, not as text); NULL: a type fdl
 * does not order (nested, geometry, variant, interval): no min/max. */
const char *fdl__catalog_stats_cast(const char *t)
{
	static const char *const map[][2] = {
		{"boolean", "BOOLEAN"}, {"int8", "TINYINT"}, {"int16", "SMALLINT"}, {"int32", "INTEGER"},
		{"int64", "BIGINT"}, {"int128", "HUGEINT"}, {"uint8", "UTINYINT"}, {"uint16", "USMALLINT"},
		{"uint32", "UINTEGER"}, {"uint64", "UBIGINT"}, {"uint128", "UHUGEINT"}, {"float32", "FLOAT"},
		{"float64", "DOUBLE"}, {"date", "DATE"}, {"time", "TIME"}, {"timetz", "TIMETZ"},
		{"timestamp", "TIMESTAMP"}, {"timestamptz", "TIMESTAMPTZ"}, {"timestamp_s", "TIMESTAMP_S"},
		{"timestamp_ms", "TIMESTAMP_MS"}, {"timestamp_ns", "TIMESTAMP_NS"}, {"varchar", "VARCHAR"},
		{"json", "VARCHAR"}, {"blob", "BLOB"}, {"uuid", "UUID"}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(t, map[i][0]))
			return map[i][1];
	/* decimal(p,s) is spelled the same in DuckDB */
	if (!strncmp(t, "decimal(", 8) && strspn(t + 8, "0123456789,") == strlen(t + 8) - 1 && t[strlen(t) - 1] == ')')
		return t;
	return NULL;
}

/* One branch of the merged statistics: the live files' statistics of the
 * columns of DuckLake type `type`, ordered as `cast`. A file whose value
 * is not known (no min or max while it holds a value, or text that does
 * not cast) makes the column's bound unknown. */
static int merged_branch(fdl_buf *sql, const char *dst, const char *type, const char *cast, fdl_error *err)
{
	int rc = fdl_buf_printf(sql, err,
				"SELECT f.table_id, f.column_id, count(*) AS n, count(f.null_count) AS nn,"
				" bool_or(f.null_count > 0) AS has_null, bool_or(f.contains_nan) AS has_nan,"
				" arg_min(f.min_value, TRY_CAST(f.min_value AS %2$s)) AS lo,"
				" arg_max(f.max_value, TRY_CAST(f.max_value AS %2$s)) AS hi,"
				" count(*) FILTER (WHERE (TRY_CAST(f.min_value AS %2$s) IS NULL OR"
				"   TRY_CAST(f.max_value AS %2$s) IS NULL) AND f.null_count IS DISTINCT FROM"
				"   f.value_count) AS unknown"
				" FROM %1$s.ducklake_file_column_stats f"
				" JOIN %1$s.ducklake_data_file df ON df.data_file_id = f.data_file_id AND df.end_snapshot IS NULL"
				" JOIN %1$s.ducklake_column c ON c.table_id = f.table_id AND c.column_id = f.column_id"
				"   AND c.end_snapshot IS NULL AND c.column_type = ",
				dst, cast);
	if (!rc)
		rc = fdl_buf_sql_str(sql, type, err);
	if (!rc)
		rc = fdl_buf_puts(sql, " GROUP BY f.table_id, f.column_id", err);
	return rc;
}

/* ducklake_table_column_stats at the cut: DuckLake answers min() and max()
 * from it without reading a file while no row was deleted, so a version
 * must never keep the bounds of rows written after its snapshot. Each row
 * is recomputed from the statistics of the data files live at the cut:
 * min and max are those of the file holding the least and the greatest
 * value (ordered by the column's type), known only when every live file of
 * the table has them; contains_null and contains_nan merged the same way.
 * extra_stats (a geometry's box, a variant's paths) is not merged: NULL,
 * which DuckLake reads as no statistics. */
static int recompute_column_stats(fdl_duck *d, const char *dst, fdl_error *err)
{
	char q[768];
	snprintf(q, sizeof q,
		 "SELECT DISTINCT c.column_type FROM %1$s.ducklake_table_column_stats s JOIN %1$s.ducklake_column c"
		 " ON c.table_id = s.table_id AND c.column_id = s.column_id AND c.end_snapshot IS NULL ORDER BY 1",
		 dst);
	fdl_strlist types = {0};
	int rc = fdl_duck_strings(d, &types, q, err);
	fdl_buf sql = {0};
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    "UPDATE %1$s.ducklake_table_column_stats s SET contains_null = n.contains_null,"
				    " contains_nan = n.contains_nan, min_value = n.min_value, max_value = n.max_value,"
				    " extra_stats = NULL FROM (WITH files AS (SELECT table_id, count(*) AS n FROM"
				    " %1$s.ducklake_data_file WHERE end_snapshot IS NULL GROUP BY table_id), merged AS (",
				    dst);
	const char *sep = "";
	for (size_t i = 0; !rc && i < types.len; i++) {
		const char *cast = fdl__catalog_stats_cast(types.items[i]);
		if (!cast)
			continue;
		rc = fdl_buf_puts(&sql, sep, err);
		if (!rc)
			rc = merged_branch(&sql, dst, types.items[i], cast, err);
		sep = " UNION ALL ";
	}
	if (!rc && !*sep) /* no type fdl orders: an empty branch */
		rc = fdl_buf_puts(&sql, "SELECT NULL::BIGINT AS table_id, NULL::BIGINT AS column_id, 0 AS n, 0 AS nn,"
					" NULL::BOOLEAN AS has_null, NULL::BOOLEAN AS has_nan, NULL::VARCHAR AS lo,"
					" NULL::VARCHAR AS hi, 0 AS unknown WHERE false",
				  err);
	/* complete: every live file of the table has statistics of the column */
	if (!rc)
		rc = fdl_buf_printf(&sql, err,
				    ") SELECT s.table_id, s.column_id,"
				    " CASE WHEN m.n = coalesce(f.n, 0) AND m.nn = m.n THEN m.has_null END AS contains_null,"
				    " CASE WHEN m.n = coalesce(f.n, 0) THEN m.has_nan END AS contains_nan,"
				    " CASE WHEN m.n = coalesce(f.n, 0) AND m.unknown = 0 THEN m.lo END AS min_value,"
				    " CASE WHEN m.n = coalesce(f.n, 0) AND m.unknown = 0 THEN m.hi END AS max_value"
				    " FROM %1$s.ducklake_table_column_stats s LEFT JOIN files f ON f.table_id = s.table_id"
				    " LEFT JOIN merged m ON m.table_id = s.table_id AND m.column_id = s.column_id) n"
				    " WHERE s.table_id = n.table_id AND s.column_id = n.column_id",
				    dst);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	fdl_strlist_free(&types);
	return rc;
}

int fdl_catalog_stats_recompute(fdl_duck *d, const char *dst, fdl_error *err)
{
	int rc = recompute_table_stats(d, dst, err);
	if (!rc)
		rc = recompute_column_stats(d, dst, err);
	if (rc)
		fdl_error_prefix(err, "recomputing the statistics at the frozen snapshot");
	return rc;
}


/* What the check of the statistics reads, in one statement of scans:
 * kind 0, each table's record_count (n); kind 1, each bound (lo, hi);
 * kind 2, each file whose statistics hold a bound of its column (n: 1 its
 * min, 2 its max, 3 both); kind 3, each live top-level column. The joins
 * are done in C: DuckDB plans each for a millisecond on catalogs this
 * small, and verify runs this on every version. */
static const char STATS_ROWS_SQL[] =
	"SELECT 0 AS kind, table_id, NULL::BIGINT AS column_id, NULL::BIGINT AS file, record_count AS n,"
	" NULL::VARCHAR AS lo, NULL::VARCHAR AS hi FROM %1$s.ducklake_table_stats"
	" UNION ALL SELECT 1, table_id, column_id, NULL, NULL, min_value, max_value"
	" FROM %1$s.ducklake_table_column_stats"
	" UNION ALL SELECT 2, fs.table_id, fs.column_id, fs.data_file_id,"
	" coalesce(fs.min_value = b.min_value, false)::BIGINT + 2 * coalesce(fs.max_value = b.max_value, false)::BIGINT,"
	" NULL, NULL FROM %1$s.ducklake_file_column_stats fs JOIN %1$s.ducklake_table_column_stats b"
	" USING (table_id, column_id) WHERE fs.min_value = b.min_value OR fs.max_value = b.max_value"
	" UNION ALL SELECT 3, table_id, column_id, NULL, NULL, NULL, NULL FROM %1$s.ducklake_column"
	" WHERE end_snapshot IS NULL AND parent_column IS NULL";

enum { S_KIND, S_TABLE, S_COLUMN, S_FILE, S_N, S_LO, S_HI };

/* A bound DuckLake takes as exact that no live file holds. */
typedef struct unheld {
	int64_t table, column;
	int which; /* 0 min, 1 max */
	size_t row;
} unheld;

static int unheld_order(const void *a, const void *b)
{
	const unheld *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return x->which - y->which;
}

/* (table, column) keys with a value, sorted for lookups: a catalog may
 * hold thousands of tables, columns and files, and this runs on every
 * version verify reads. */
typedef struct key {
	int64_t table, column, value;
} key;

typedef struct keys {
	key *k;
	size_t n;
} keys;

static int key_order(const void *a, const void *b)
{
	const key *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return x->column < y->column ? -1 : x->column > y->column;
}

/* Sort, and fold the keys that are equal into one: their values summed
 * (sum) or OR'd. */
static void keys_fold(keys *ks, bool sum)
{
	if (!ks->n)
		return;
	qsort(ks->k, ks->n, sizeof *ks->k, key_order);
	size_t w = 0;
	for (size_t i = 1; i < ks->n; i++)
		if (!key_order(&ks->k[i], &ks->k[w]))
			ks->k[w].value = sum ? ks->k[w].value + ks->k[i].value : ks->k[w].value | ks->k[i].value;
		else
			ks->k[++w] = ks->k[i];
	ks->n = w + 1;
}

static const key *keys_find(const keys *ks, int64_t table, int64_t column)
{
	key want = {table, column, 0};
	return ks->n ? bsearch(&want, ks->k, ks->n, sizeof *ks->k, key_order) : NULL;
}

static int keys_add(keys *ks, size_t cap, int64_t table, int64_t column, int64_t value)
{
	if (ks->n >= cap)
		return -1;
	ks->k[ks->n++] = (key){table, column, value};
	return 0;
}

/* The keys the check looks up: exact, the tables that record exactly
 * their live rows (no row deleted since the bounds were taken: DuckLake
 * then answers min() and max() from them); cols, the live top-level
 * columns; held, the bounds a live file holds (bit 1 the min, 2 the max). */
typedef struct facts {
	keys net, exact, cols, held;
} facts;

static void facts_free(facts *f)
{
	free(f->net.k);
	free(f->exact.k);
	free(f->cols.k);
	free(f->held.k);
}

static int facts_read(facts *f, fdl_rows *r, const fdl_data_files *live, fdl_error *err)
{
	size_t rows = fdl_rows_count(r), cap = rows + live->len + 1;
	keys ids = {calloc(live->len + 1, sizeof(key)), 0};
	f->net.k = calloc(live->len + 1, sizeof(key));
	f->exact.k = calloc(cap, sizeof(key));
	f->cols.k = calloc(cap, sizeof(key));
	f->held.k = calloc(cap, sizeof(key));
	if (!ids.k || !f->net.k || !f->exact.k || !f->cols.k || !f->held.k) {
		free(ids.k);
		return fdl_oom(err);
	}
	/* the live rows of each table, as the old join summed them: one per
	 * data file and live delete file pair */
	for (size_t i = 0; i < live->len; i++) {
		keys_add(&f->net, cap, live->items[i].table_id, -1, live->items[i].rows - live->items[i].delete_rows);
		keys_add(&ids, cap, live->items[i].id, 0, 0);
	}
	keys_fold(&f->net, true);
	keys_fold(&ids, false);
	for (size_t i = 0; i < rows; i++) {
		int64_t kind = fdl_rows_int(r, S_KIND, i), t = fdl_rows_int(r, S_TABLE, i);
		if (kind == 0 && !fdl_rows_null(r, S_N, i)) {
			const key *net = keys_find(&f->net, t, -1);
			if (fdl_rows_int(r, S_N, i) == (net ? net->value : 0))
				keys_add(&f->exact, cap, t, -1, 0);
		} else if (kind == 2 && keys_find(&ids, fdl_rows_int(r, S_FILE, i), 0))
			keys_add(&f->held, cap, t, fdl_rows_int(r, S_COLUMN, i), fdl_rows_int(r, S_N, i));
		else if (kind == 3)
			keys_add(&f->cols, cap, t, fdl_rows_int(r, S_COLUMN, i), 0);
	}
	free(ids.k);
	keys_fold(&f->exact, false);
	keys_fold(&f->cols, false);
	keys_fold(&f->held, false);
	return 0;
}

/* The bounds of kind-1 rows no live file holds, in the order of the
 * messages (table, column, min before max). */
static int find_unheld(unheld **out, size_t *n, fdl_rows *r, const fdl_data_files *live, fdl_error *err)
{
	size_t rows = fdl_rows_count(r);
	facts f = {0};
	*n = 0;
	*out = rows ? calloc(2 * rows, sizeof **out) : NULL;
	int rc = rows && !*out ? fdl_oom(err) : facts_read(&f, r, live, err);
	for (size_t i = 0; i < rows && !rc; i++) {
		int64_t t = fdl_rows_int(r, S_TABLE, i), c = fdl_rows_int(r, S_COLUMN, i);
		if (fdl_rows_int(r, S_KIND, i) != 1 || !keys_find(&f.cols, t, c) || !keys_find(&f.exact, t, -1))
			continue;
		const key *h = keys_find(&f.held, t, c);
		for (int which = 0; which < 2; which++)
			if (!fdl_rows_null(r, which ? S_HI : S_LO, i) && !(h && (h->value >> which & 1)))
				(*out)[(*n)++] = (unheld){t, c, which, i};
	}
	facts_free(&f);
	if (!rc && *n)
		qsort(*out, *n, sizeof **out, unheld_order);
	return rc;
}

/* The names of table `t` and its column `c` in the catalog attached as alias. */
static int names_of(fdl_duck *d, const char *alias, int64_t t, int64_t c, char **table, char **column,
		    fdl_error *err)
{
	char sql[640];
	snprintf(sql, sizeof sql,
		 "SELECT sc.schema_name || '.' || tb.table_name, co.column_name FROM %1$s.ducklake_table tb"
		 " JOIN %1$s.ducklake_schema sc ON sc.schema_id = tb.schema_id AND sc.end_snapshot IS NULL"
		 " JOIN %1$s.ducklake_column co ON co.table_id = tb.table_id AND co.end_snapshot IS NULL"
		 " WHERE tb.end_snapshot IS NULL AND tb.table_id = %2$lld AND co.column_id = %3$lld",
		 alias, (long long)t, (long long)c);
	fdl_rows r;
	int rc = fdl_duck_query(d, &r, sql, err);
	char *a = !rc && fdl_rows_count(&r) ? fdl_rows_str(&r, 0, 0) : NULL,
	     *b = !rc && fdl_rows_count(&r) ? fdl_rows_str(&r, 1, 0) : NULL;
	*table = fdl_strdup(a ? a : "?");
	*column = fdl_strdup(b ? b : "?");
	duckdb_free(a);
	duckdb_free(b);
	if (!rc)
		fdl_rows_free(&r);
	return rc ? rc : *table && *column ? 0 : fdl_oom(err);
}

int fdl_catalog_stats_check(fdl_strlist *problems, fdl_duck *d, const char *alias, const fdl_data_files *live,
			    fdl_error *err)
{
	char sql[sizeof STATS_ROWS_SQL + 1024];
	snprintf(sql, sizeof sql, STATS_ROWS_SQL, alias);
	fdl_rows r;
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return fdl_error_prefix(err, "reading the column statistics");
	unheld *u = NULL;
	size_t n = 0;
	rc = find_unheld(&u, &n, &r, live, err);
	for (size_t i = 0; !rc && i < n; i++) {
		const char *w = u[i].which ? "max" : "min";
		char *t = NULL, *c = NULL, *v = fdl_rows_str(&r, u[i].which ? S_HI : S_LO, u[i].row);
		rc = names_of(d, alias, u[i].table, u[i].column, &t, &c, err);
		char *msg = rc ? NULL : fdl_asprintf(
			"table %s, column %s: its statistics say the %s is %s, which none of its data files holds; "
			"DuckLake answers %s() from them without reading the data, so this version returns a value it "
			"does not hold (a commit made while a writer went on, by an fdl that did not recompute the "
			"statistics at the snapshot). Its catalog cannot be repaired (docs/format.md, \"Statistics\"): "
			"withdraw or expire the version, and commit again",
			t, c, w, v ? v : "?", w);
		if (!rc)
			rc = msg ? fdl_strlist_add(problems, msg, err) : fdl_oom(err);
		free(msg);
		free(t);
		free(c);
		duckdb_free(v);
	}
	free(u);
	fdl_rows_free(&r);
	return rc;
}
