/* Reading a frozen catalog's whole history for its Iceberg view, and
 * rewriting DuckLake delete files as Iceberg position deletes (iceberg.h). */
#include "iceberg.h"
#include "duck.h"

#include <stdlib.h>
#include <string.h>

/* The newest row of each table and schema: where their files live. */
#define PATHS_FROM                                                                                                 \
	" JOIN (SELECT DISTINCT ON (table_id) table_id AS tid, schema_id AS sid, path AS tpath,"                   \
	"       path_is_relative AS trel FROM {db}.ducklake_table ORDER BY table_id, begin_snapshot DESC) t"       \
	"   ON t.tid = f.table_id"                                                                                 \
	" JOIN (SELECT DISTINCT ON (schema_id) schema_id AS sid2, path AS spath, path_is_relative AS srel"         \
	"       FROM {db}.ducklake_schema ORDER BY schema_id, begin_snapshot DESC) s ON s.sid2 = t.sid"

static const char TABLES_SQL[] =
	"SELECT t.table_id, t.begin_snapshot, t.end_snapshot, t.schema_id, t.table_uuid::VARCHAR, t.table_name,"
	" (SELECT s.schema_name FROM {db}.ducklake_schema s WHERE s.schema_id = t.schema_id"
	"  ORDER BY s.begin_snapshot DESC LIMIT 1)"
	" FROM {db}.ducklake_table t ORDER BY t.table_id, t.begin_snapshot";

static const char COLUMNS_SQL[] =
	"SELECT column_id, table_id, begin_snapshot, end_snapshot, column_order, parent_column, column_name,"
	" column_type, initial_default FROM {db}.ducklake_column ORDER BY table_id, column_order, begin_snapshot";

static const char FILES_SQL[] =
	"SELECT f.data_file_id, f.table_id, f.begin_snapshot, f.end_snapshot, f.record_count, f.file_size_bytes,"
	" f.partition_id, f.partial_max, f.mapping_id IS NOT NULL, f.encryption_key IS NOT NULL,"
	" s.spath, s.srel, t.tpath, t.trel, f.path, f.path_is_relative"
	" FROM {db}.ducklake_data_file f" PATHS_FROM " ORDER BY f.data_file_id";

static const char DELETES_SQL[] =
	"SELECT f.delete_file_id, f.table_id, f.data_file_id, f.begin_snapshot, f.end_snapshot, f.delete_count,"
	" f.file_size_bytes, f.partial_max, f.encryption_key IS NOT NULL,"
	" s.spath, s.srel, t.tpath, t.trel, f.path, f.path_is_relative"
	" FROM {db}.ducklake_delete_file f" PATHS_FROM " ORDER BY f.delete_file_id";

/* Dates and times as Iceberg counts them (days, microseconds), by DuckDB. */
#define EPOCH_OF(v)                                                                                                \
	"CASE c.column_type WHEN 'date' THEN TRY_CAST(" v " AS DATE) - DATE '1970-01-01'"                           \
	" WHEN 'timestamp' THEN epoch_us(TRY_CAST(" v " AS TIMESTAMP))"                                            \
	" WHEN 'timestamptz' THEN epoch_us(TRY_CAST(" v " AS TIMESTAMPTZ))"                                        \
	" WHEN 'time' THEN epoch_us(DATE '1970-01-01' + TRY_CAST(" v " AS TIME)) END"

static const char STATS_SQL[] =
	"SELECT st.data_file_id, st.column_id, st.value_count, st.null_count, st.min_value, st.max_value,"
	" st.contains_nan, " EPOCH_OF("st.min_value") ", " EPOCH_OF("st.max_value") " FROM {db}.ducklake_file_column_stats st"
	" JOIN (SELECT DISTINCT ON (table_id, column_id) table_id, column_id, column_type FROM {db}.ducklake_column"
	"       ORDER BY table_id, column_id, begin_snapshot DESC) c"
	"   ON c.table_id = st.table_id AND c.column_id = st.column_id"
	" ORDER BY st.data_file_id, st.column_id";

static const char PARTS_SQL[] = "SELECT data_file_id, partition_key_index, partition_value"
				" FROM {db}.ducklake_file_partition_value ORDER BY data_file_id, partition_key_index";

static const char PARTITIONS_SQL[] =
	"SELECT p.partition_id, p.table_id, p.begin_snapshot, p.end_snapshot, c.column_id, c.transform"
	" FROM {db}.ducklake_partition_info p LEFT JOIN {db}.ducklake_partition_column c"
	"   ON c.partition_id = p.partition_id AND c.table_id = p.table_id"
	" ORDER BY p.partition_id, c.partition_key_index";

static const char SNAPSHOTS_SQL[] =
	"SELECT snapshot_id, epoch_ms(snapshot_time) FROM {db}.ducklake_snapshot ORDER BY snapshot_id";

/* Run tmpl with `where` (NULL: none) before its ORDER BY. */
static int query_where(fdl_duck *d, fdl_rows *r, const char *tmpl, const char *where, const char *alias,
		       fdl_error *err)
{
	fdl_buf t = {0}, sql = {0};
	const char *order = where ? strstr(tmpl, " ORDER BY ") : NULL;
	int rc = order ? fdl_buf_add(&t, tmpl, (size_t)(order - tmpl), err) : fdl_buf_puts(&t, tmpl, err);
	if (!rc && order)
		rc = fdl_buf_puts(&t, where, err);
	if (!rc && order)
		rc = fdl_buf_puts(&t, order, err);
	if (!rc)
		rc = fdl_sql_with_db(&sql, t.data, alias, err);
	fdl_buf_free(&t);
	return fdl_duck_query_built(d, r, &sql, rc, err);
}

static int query(fdl_duck *d, fdl_rows *r, const char *tmpl, const char *alias, fdl_error *err)
{
	return query_where(d, r, tmpl, NULL, alias, err);
}

/* What a view built on its parent's reads: the live files alone. */
#define LIVE_FILE " WHERE f.end_snapshot IS NULL"
#define OF_LIVE_FILE(col) " WHERE " col " IN (SELECT data_file_id FROM {db}.ducklake_data_file WHERE end_snapshot IS NULL)"

static int64_t cell_int(fdl_rows *r, size_t col, size_t row, int64_t if_null)
{
	return fdl_rows_null(r, col, row) ? if_null : fdl_rows_int(r, col, row);
}

/* A text cell as a string of our own (NULL for SQL NULL); *bad on OOM. */
static char *cell_str(fdl_rows *r, size_t col, size_t row, bool *bad)
{
	char *s = fdl_rows_str(r, col, row);
	char *own = s ? fdl_strdup(s) : NULL;
	if (s && !own)
		*bad = true;
	duckdb_free(s);
	return own;
}

static void *alloc_rows(size_t n, size_t size, fdl_error *err, int *rc)
{
	void *p = n ? calloc(n, size) : NULL;
	if (n && !p)
		*rc = fdl_oom(err);
	return p;
}

static int read_tables(fdl_lake *l, fdl_duck *d, const char *alias, fdl_error *err)
{
	fdl_rows r;
	int rc = query(d, &r, TABLES_SQL, alias, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	l->tables = alloc_rows(n, sizeof *l->tables, err, &rc);
	bool bad = false;
	for (size_t i = 0; i < n && !rc; i++) {
		fdl_lake_table *t = &l->tables[l->ntables++];
		t->id = fdl_rows_int(&r, 0, i);
		t->begin = cell_int(&r, 1, i, 0);
		t->end = cell_int(&r, 2, i, FDL_LAKE_LIVE);
		t->schema_id = fdl_rows_int(&r, 3, i);
		t->uuid = cell_str(&r, 4, i, &bad);
		t->name = cell_str(&r, 5, i, &bad);
		t->schema = cell_str(&r, 6, i, &bad);
		if (bad || !t->name || !t->schema || !t->uuid)
			rc = bad ? fdl_oom(err) : fdl_fail(err, FDL_EINVALID, "table %lld has no name, schema or uuid",
							    (long long)t->id);
	}
	fdl_rows_free(&r);
	return rc;
}

static int read_columns(fdl_lake *l, fdl_duck *d, const char *alias, fdl_error *err)
{
	fdl_rows r;
	int rc = query(d, &r, COLUMNS_SQL, alias, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	l->columns = alloc_rows(n, sizeof *l->columns, err, &rc);
	bool bad = false;
	for (size_t i = 0; i < n && !rc; i++) {
		fdl_lake_column *c = &l->columns[l->ncolumns++];
		c->id = fdl_rows_int(&r, 0, i);
		c->table_id = fdl_rows_int(&r, 1, i);
		c->begin = cell_int(&r, 2, i, 0);
		c->end = cell_int(&r, 3, i, FDL_LAKE_LIVE);
		c->order = cell_int(&r, 4, i, 0);
		c->parent = cell_int(&r, 5, i, -1);
		c->name = cell_str(&r, 6, i, &bad);
		c->type = cell_str(&r, 7, i, &bad);
		c->initial_default = cell_str(&r, 8, i, &bad);
		if (bad || !c->name || !c->type)
			rc = bad ? fdl_oom(err) : fdl_fail(err, FDL_EINVALID, "column %lld has no name or type",
							    (long long)c->id);
	}
	fdl_rows_free(&r);
	return rc;
}

static int read_files(fdl_lake *l, fdl_duck *d, const char *alias, bool live_only, fdl_error *err)
{
	fdl_rows r;
	int rc = query_where(d, &r, FILES_SQL, live_only ? LIVE_FILE : NULL, alias, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	l->files = alloc_rows(n, sizeof *l->files, err, &rc);
	for (size_t i = 0; i < n && !rc; i++) {
		fdl_lake_file *f = &l->files[l->nfiles++];
		f->id = fdl_rows_int(&r, 0, i);
		f->table_id = fdl_rows_int(&r, 1, i);
		f->begin = cell_int(&r, 2, i, 0);
		f->end = cell_int(&r, 3, i, FDL_LAKE_LIVE);
		f->rows = cell_int(&r, 4, i, 0);
		f->bytes = cell_int(&r, 5, i, 0);
		f->partition_id = cell_int(&r, 6, i, -1);
		f->partial_max = cell_int(&r, 7, i, -1);
		f->mapped = fdl_rows_int(&r, 8, i) != 0;
		f->encrypted = fdl_rows_int(&r, 9, i) != 0;
		rc = fdl_catalog_resolve_path(&f->path, &r, i, 10, "a data file of the catalog", err);
	}
	fdl_rows_free(&r);
	return rc;
}

static int read_deletes(fdl_lake *l, fdl_duck *d, const char *alias, bool live_only, fdl_error *err)
{
	fdl_rows r;
	int rc = query_where(d, &r, DELETES_SQL, live_only ? LIVE_FILE : NULL, alias, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	l->deletes = alloc_rows(n, sizeof *l->deletes, err, &rc);
	for (size_t i = 0; i < n && !rc; i++) {
		fdl_lake_delete *x = &l->deletes[l->ndeletes++];
		x->id = fdl_rows_int(&r, 0, i);
		x->table_id = fdl_rows_int(&r, 1, i);
		x->data_file_id = cell_int(&r, 2, i, -1);
		x->begin = cell_int(&r, 3, i, 0);
		x->end = cell_int(&r, 4, i, FDL_LAKE_LIVE);
		x->rows = cell_int(&r, 5, i, 0);
		x->bytes = cell_int(&r, 6, i, 0);
		x->partial_max = cell_int(&r, 7, i, -1);
		x->encrypted = fdl_rows_int(&r, 8, i) != 0;
		rc = fdl_catalog_resolve_path(&x->path, &r, i, 9, "a delete file of the catalog", err);
	}
	fdl_rows_free(&r);
	return rc;
}

/* The file with data_file_id `id` (files are sorted by id). */
static fdl_lake_file *file_by_id(fdl_lake *l, int64_t id)
{
	size_t lo = 0, hi = l->nfiles;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->files[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->nfiles && l->files[lo].id == id ? &l->files[lo] : NULL;
}

/* Rows of one data file are consecutive (ORDER BY data_file_id): count them. */
static size_t run_of(fdl_rows *r, size_t i, size_t n)
{
	size_t j = i;
	while (j < n && fdl_rows_int(r, 0, j) == fdl_rows_int(r, 0, i))
		j++;
	return j - i;
}

static int read_stats(fdl_lake *l, fdl_duck *d, const char *alias, const char *where, fdl_error *err)
{
	fdl_rows r;
	int rc = query_where(d, &r, STATS_SQL, where, alias, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	bool bad = false;
	for (size_t i = 0; i < n && !rc;) {
		size_t k = run_of(&r, i, n);
		fdl_lake_file *f = file_by_id(l, fdl_rows_int(&r, 0, i));
		if (f && !f->stats && (f->stats = alloc_rows(k, sizeof *f->stats, err, &rc)))
			for (size_t j = i; j < i + k; j++) {
				fdl_lake_stat *s = &f->stats[f->nstats++];
				s->column_id = fdl_rows_int(&r, 1, j);
				s->values = cell_int(&r, 2, j, -1);
				s->nulls = cell_int(&r, 3, j, -1);
				s->min = cell_str(&r, 4, j, &bad);
				s->max = cell_str(&r, 5, j, &bad);
				s->contains_nan = (int)cell_int(&r, 6, j, -1);
				s->has_epoch = !fdl_rows_null(&r, 7, j) && !fdl_rows_null(&r, 8, j);
				s->min_epoch = cell_int(&r, 7, j, 0);
				s->max_epoch = cell_int(&r, 8, j, 0);
			}
		i += k;
	}
	fdl_rows_free(&r);
	return bad && !rc ? fdl_oom(err) : rc;
}

static int read_parts(fdl_lake *l, fdl_duck *d, const char *alias, bool live_only, fdl_error *err)
{
	fdl_rows r;
	int rc = query_where(d, &r, PARTS_SQL, live_only ? OF_LIVE_FILE("data_file_id") : NULL, alias, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	bool bad = false;
	for (size_t i = 0; i < n && !rc;) {
		size_t k = run_of(&r, i, n);
		fdl_lake_file *f = file_by_id(l, fdl_rows_int(&r, 0, i));
		if (f && !f->parts && (f->parts = alloc_rows(k, sizeof *f->parts, err, &rc))) {
			f->nparts = k;
			for (size_t j = i; j < i + k; j++) {
				int64_t key = fdl_rows_int(&r, 1, j);
				if (key >= 0 && (size_t)key < k)
					f->parts[key] = cell_str(&r, 2, j, &bad);
			}
		}
		i += k;
	}
	fdl_rows_free(&r);
	return bad && !rc ? fdl_oom(err) : rc;
}

static int read_partitions(fdl_lake *l, fdl_duck *d, const char *alias, fdl_error *err)
{
	fdl_rows r;
	int rc = query(d, &r, PARTITIONS_SQL, alias, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	l->partitions = alloc_rows(n, sizeof *l->partitions, err, &rc);
	bool bad = false;
	for (size_t i = 0; i < n && !rc;) {
		size_t k = run_of(&r, i, n);
		fdl_lake_partition *p = &l->partitions[l->npartitions++];
		p->id = fdl_rows_int(&r, 0, i);
		p->table_id = fdl_rows_int(&r, 1, i);
		p->begin = cell_int(&r, 2, i, 0);
		p->end = cell_int(&r, 3, i, FDL_LAKE_LIVE);
		p->column_ids = alloc_rows(k, sizeof *p->column_ids, err, &rc);
		p->transforms = rc ? NULL : alloc_rows(k, sizeof *p->transforms, err, &rc);
		for (size_t j = i; j < i + k && !rc && !fdl_rows_null(&r, 4, j); j++) {
			p->column_ids[p->ncols] = fdl_rows_int(&r, 4, j);
			p->transforms[p->ncols++] = cell_str(&r, 5, j, &bad);
		}
		i += k;
	}
	fdl_rows_free(&r);
	return bad && !rc ? fdl_oom(err) : rc;
}

static int read_snapshots(fdl_lake *l, fdl_duck *d, const char *alias, fdl_error *err)
{
	fdl_rows r;
	int rc = query(d, &r, SNAPSHOTS_SQL, alias, err);
	if (rc)
		return rc;
	size_t n = fdl_rows_count(&r);
	l->snapshot_ids = alloc_rows(n, sizeof *l->snapshot_ids, err, &rc);
	l->snapshot_ms = rc ? NULL : alloc_rows(n, sizeof *l->snapshot_ms, err, &rc);
	for (size_t i = 0; i < n && !rc; i++) {
		l->snapshot_ids[i] = fdl_rows_int(&r, 0, i);
		l->snapshot_ms[i] = cell_int(&r, 1, i, 0);
		l->nsnapshots++;
	}
	fdl_rows_free(&r);
	return rc;
}

int fdl_catalog_lake_read(fdl_lake **out, fdl_duck *d, const char *alias, bool live_only, bool stats,
			  fdl_error *err)
{
	fdl_lake *l = calloc(1, sizeof *l);
	int rc = l ? 0 : fdl_oom(err);
	if (!rc)
		rc = read_tables(l, d, alias, err);
	if (!rc)
		rc = read_columns(l, d, alias, err);
	if (!rc)
		rc = read_files(l, d, alias, live_only, err);
	if (!rc)
		rc = read_deletes(l, d, alias, live_only, err);
	if (!rc && stats)
		rc = read_stats(l, d, alias, live_only ? OF_LIVE_FILE("st.data_file_id") : NULL, err);
	if (!rc)
		rc = read_parts(l, d, alias, live_only, err);
	if (!rc)
		rc = read_partitions(l, d, alias, err);
	if (!rc)
		rc = read_snapshots(l, d, alias, err);
	l->live_only = live_only;
	l->stats_read = stats;
	if (rc) {
		fdl_error_prefix(err, "reading the catalog's history for its Iceberg view");
		fdl_lake_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

int fdl_catalog_lake_read_stats(fdl_lake *l, fdl_duck *d, const char *alias, const int64_t *ids, size_t n,
				fdl_error *err)
{
	fdl_buf where = {0};
	size_t listed = 0;
	int rc = fdl_buf_puts(&where, " WHERE st.data_file_id IN (", err);
	for (size_t i = 0; i < n && !rc; i++) {
		const fdl_lake_file *f = file_by_id(l, ids[i]);
		if (f && !f->stats) /* this lake's, not read yet */
			rc = fdl_buf_printf(&where, err, "%s%lld", listed++ ? ", " : "", (long long)ids[i]);
	}
	if (!rc && listed)
		rc = fdl_buf_puts(&where, ")", err);
	if (!rc && listed)
		rc = read_stats(l, d, alias, where.data, err);
	if (rc)
		fdl_error_prefix(err, "reading data files' statistics for an Iceberg view");
	fdl_buf_free(&where);
	return rc;
}

static void file_clear(fdl_lake_file *f)
{
	for (size_t i = 0; i < f->nstats; i++) {
		free(f->stats[i].min);
		free(f->stats[i].max);
	}
	for (size_t i = 0; i < f->nparts; i++)
		free(f->parts[i]);
	free(f->stats);
	free(f->parts);
	free(f->path);
}

void fdl_lake_free(fdl_lake *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->ntables; i++) {
		free(l->tables[i].uuid);
		free(l->tables[i].name);
		free(l->tables[i].schema);
	}
	for (size_t i = 0; i < l->ncolumns; i++) {
		free(l->columns[i].name);
		free(l->columns[i].type);
		free(l->columns[i].initial_default);
	}
	for (size_t i = 0; i < l->nfiles; i++)
		file_clear(&l->files[i]);
	for (size_t i = 0; i < l->ndeletes; i++)
		free(l->deletes[i].path);
	for (size_t i = 0; i < l->npartitions; i++) {
		for (size_t j = 0; j < l->partitions[i].ncols; j++)
			free(l->partitions[i].transforms[j]);
		free(l->partitions[i].column_ids);
		free(l->partitions[i].transforms);
	}
	free(l->tables);
	free(l->columns);
	free(l->files);
	free(l->deletes);
	free(l->partitions);
	free(l->snapshot_ids);
	free(l->snapshot_ms);
	free(l);
}

int fdl_catalog_iceberg_deletes(fdl_duck *d, const char *src, const char *data_uri, int64_t upto, const char *dst,
				int64_t *rows, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "COPY (SELECT ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, data_uri, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, "::VARCHAR AS file_path, pos::BIGINT AS pos FROM read_parquet(", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, src, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ")", err);
	if (!rc && upto >= 0)
		rc = fdl_buf_printf(&sql, err, " WHERE _ducklake_internal_snapshot_id <= %lld", (long long)upto);
	if (!rc)
		rc = fdl_buf_puts(&sql, " ORDER BY pos) TO ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, dst, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, " (FORMAT parquet, FIELD_IDS {file_path: 2147483546, pos: 2147483545})", err);
	fdl_rows r;
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	if (rc)
		return fdl_error_prefix(err, "rewriting %s as an Iceberg position-delete file", src);
	*rows = fdl_rows_count(&r) ? fdl_rows_int(&r, 0, 0) : 0;
	fdl_rows_free(&r);
	return 0;
}

/* ---- reading a view back ---------------------------------------------- */

static int read_avro_sql(fdl_buf *sql, const char *select, const char *path, fdl_error *err)
{
	int rc = fdl_buf_puts(sql, select, err);
	if (!rc)
		rc = fdl_buf_puts(sql, " FROM read_avro(", err);
	if (!rc)
		rc = fdl_buf_sql_str(sql, path, err);
	return rc ? rc : fdl_buf_puts(sql, ")", err);
}

int fdl_catalog_iceberg_list(fdl_strlist *out, fdl_duck *d, const char *list, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = read_avro_sql(&sql, "SELECT manifest_path", list, err);
	fdl_rows r;
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	if (rc)
		return fdl_error_prefix(err, "reading the manifest list %s", list);
	bool bad = false;
	for (size_t i = 0; i < fdl_rows_count(&r) && !rc; i++) {
		char *p = cell_str(&r, 0, i, &bad);
		rc = bad ? fdl_oom(err) : fdl_strlist_add(out, p ? p : "", err);
		free(p);
	}
	fdl_rows_free(&r);
	return rc;
}

int fdl_catalog_iceberg_manifest(fdl_ice_read **out, size_t *n, fdl_duck *d, const char *manifest, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = read_avro_sql(&sql,
			       "SELECT status, data_file.content, data_file.file_path, data_file.file_size_in_bytes,"
			       " data_file.record_count, data_file.referenced_data_file",
			       manifest, err);
	fdl_rows r;
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	if (rc)
		return fdl_error_prefix(err, "reading the manifest %s", manifest);
	*n = 0;
	*out = alloc_rows(fdl_rows_count(&r), sizeof **out, err, &rc);
	bool bad = false;
	for (size_t i = 0; i < fdl_rows_count(&r) && !rc; i++) {
		fdl_ice_read *e = &(*out)[(*n)++];
		e->status = (int)cell_int(&r, 0, i, -1);
		e->content = (int)cell_int(&r, 1, i, -1);
		e->path = cell_str(&r, 2, i, &bad);
		e->bytes = cell_int(&r, 3, i, -1);
		e->rows = cell_int(&r, 4, i, -1);
		e->referenced = cell_str(&r, 5, i, &bad);
		if (bad || !e->path)
			rc = bad ? fdl_oom(err) : fdl_fail(err, FDL_EINVALID, "%s: an entry without a file_path", manifest);
	}
	fdl_rows_free(&r);
	return rc;
}

void fdl_ice_reads_free(fdl_ice_read *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++) {
		free(e[i].path);
		free(e[i].referenced);
	}
	free(e);
}

int fdl_catalog_positions_equal(bool *same, fdl_duck *d, const char *a, const char *b, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT (SELECT list(pos ORDER BY pos) FROM read_parquet(", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, a, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ")) IS NOT DISTINCT FROM (SELECT list(pos ORDER BY pos) FROM read_parquet(", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, b, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, "))", err);
	fdl_rows r;
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	if (rc)
		return fdl_error_prefix(err, "comparing the positions of %s and %s", a, b);
	*same = fdl_rows_count(&r) && fdl_rows_int(&r, 0, 0);
	fdl_rows_free(&r);
	return 0;
}
