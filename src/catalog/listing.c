/* A catalog's files from one statement: the rows of its schemas, tables,
 * data and delete files, live or ended, read by plain scans and joined
 * here. DuckDB plans each join for a millisecond or more on catalogs this
 * small, while the scans cost a fraction of that; the live data files
 * (files.json) and every file any snapshot references (the hashes, the
 * files a version added) come from the same rows. */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

enum { L_KIND, L_ID, L_OWNER, L_LINK, L_PATH, L_REL, L_BEGIN, L_END, L_NAME, L_N, L_BYTES, L_FOOTER, L_ORDER, L_WHY };
enum { K_SCHEMA, K_TABLE, K_DATA, K_DELETE, K_KINDS };

/* owner: a table's schema, a file's table; link: a delete file's data
 * file. why: the least reason the file keeps a reader without the catalog
 * out (files.json's unreadable, reading.c), asked only where files.json
 * is derived: its columns (partial_max, format) are DuckLake 0.4's, and a
 * reader's check of another writer's catalog must not need them. The two
 * %s are the reasons of data files and of delete files, or NULL. */
static const char LISTING_SQL[] =
	"SELECT 0 AS kind, schema_id AS id, NULL::BIGINT AS owner, NULL::BIGINT AS link, path, path_is_relative,"
	" begin_snapshot, end_snapshot, schema_name AS name, NULL::BIGINT AS n, NULL::BIGINT AS bytes,"
	" NULL::BIGINT AS footer, NULL::BIGINT AS ord, NULL::VARCHAR AS why FROM {db}.ducklake_schema"
	" UNION ALL SELECT 1, table_id, schema_id, NULL, path, path_is_relative, begin_snapshot, end_snapshot,"
	" table_name, NULL, NULL, NULL, NULL, NULL FROM {db}.ducklake_table"
	" UNION ALL SELECT 2, data_file_id, table_id, NULL, path, path_is_relative, begin_snapshot, end_snapshot,"
	" NULL, record_count, file_size_bytes, footer_size, file_order, %s FROM {db}.ducklake_data_file"
	" UNION ALL SELECT 3, delete_file_id, table_id, data_file_id, path, path_is_relative, begin_snapshot,"
	" end_snapshot, NULL, delete_count, file_size_bytes, NULL, NULL, %s FROM {db}.ducklake_delete_file";

#define LAST_SNAPSHOT "(SELECT max(snapshot_id) FROM {db}.ducklake_snapshot)"

static const char DATA_WHY[] =
	"least(CASE WHEN mapping_id IS NOT NULL THEN 'its data file ' || path || ' has no Parquet field ids"
	" (it was added with ducklake_add_data_files and the catalog maps its columns by name)' END,"
	"  CASE WHEN encryption_key IS NOT NULL THEN 'its data file ' || path || ' is encrypted with a key kept"
	" in the catalog' END,"
	"  CASE WHEN partial_max > " LAST_SNAPSHOT " THEN 'its data file ' || path || ' holds rows of snapshots"
	" after this version''s' END)";

static const char DELETE_WHY[] =
	"least(CASE WHEN coalesce(format, 'parquet') <> 'parquet' THEN 'its delete file ' || path || ' is ' ||"
	" format || ', not Parquet' END,"
	"  CASE WHEN encryption_key IS NOT NULL THEN 'its delete file ' || path || ' is encrypted with a key"
	" kept in the catalog' END,"
	"  CASE WHEN partial_max > " LAST_SNAPSHOT " THEN 'its delete file ' || path || ' holds deletes of"
	" snapshots after this version''s' END)";

typedef struct lrow {
	size_t row;
	int64_t id, owner, link, begin;
	bool live, has_order;
	int64_t order;
	/* a file's path once resolved under table row `under_t` and schema
	 * row `under_s` (resolved): the live files' and every file's lists
	 * take each path once */
	char *path;
	const struct lrow *under_s, *under_t;
} lrow;

struct fdl_listing {
	fdl_rows r;
	lrow *rows[K_KINDS];
	size_t n[K_KINDS];
};

void fdl_listing_free(fdl_listing *l)
{
	if (!l)
		return;
	fdl_rows_free(&l->r);
	for (int k = 0; k < K_KINDS; k++) {
		for (size_t i = 0; k >= K_DATA && i < l->n[k]; i++)
			free(l->rows[k][i].path);
		free(l->rows[k]);
	}
	free(l);
}

static int by_id(const void *a, const void *b)
{
	const lrow *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int by_link(const void *a, const void *b)
{
	const lrow *x = a, *y = b;
	if (x->link != y->link)
		return x->link < y->link ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

int fdl_listing_read(fdl_listing **out, fdl_duck *d, const char *alias, bool reasons, fdl_error *err)
{
	fdl_listing *l = calloc(1, sizeof *l);
	if (!l)
		return fdl_oom(err);
	fdl_buf tmpl = {0}, sql = {0};
	int rc = fdl_buf_printf(&tmpl, err, LISTING_SQL, reasons ? DATA_WHY : "NULL", reasons ? DELETE_WHY : "NULL");
	if (!rc)
		rc = fdl_sql_with_db(&sql, tmpl.data, alias, err);
	fdl_buf_free(&tmpl);
	rc = fdl_duck_query_built(d, &l->r, &sql, rc, err);
	if (rc) {
		free(l);
		return fdl_error_prefix(err, "listing the catalog's files");
	}
	size_t n = fdl_rows_count(&l->r);
	for (int k = 0; k < K_KINDS && !rc; k++)
		if (n && !(l->rows[k] = calloc(n, sizeof(lrow))))
			rc = fdl_oom(err);
	for (size_t i = 0; i < n && !rc; i++) {
		int64_t kind = fdl_rows_int(&l->r, L_KIND, i);
		fdl_rows *r = &l->r;
		lrow *x = &l->rows[kind][l->n[kind]++];
		*x = (lrow){i,
			    fdl_rows_int(r, L_ID, i),
			    fdl_rows_null(r, L_OWNER, i) ? -1 : fdl_rows_int(r, L_OWNER, i),
			    fdl_rows_null(r, L_LINK, i) ? -1 : fdl_rows_int(r, L_LINK, i),
			    fdl_rows_int(r, L_BEGIN, i),
			    fdl_rows_null(r, L_END, i),
			    !fdl_rows_null(r, L_ORDER, i),
			    fdl_rows_null(r, L_ORDER, i) ? 0 : fdl_rows_int(r, L_ORDER, i),
			    NULL,
			    NULL,
			    NULL};
	}
	for (int k = 0; k < K_KINDS && !rc; k++)
		if (l->n[k] && k != K_DATA) /* data files stay in catalog order */
			qsort(l->rows[k], l->n[k], sizeof(lrow), k == K_DELETE ? by_link : by_id);
	if (rc) {
		fdl_listing_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

/* The row of schema or table `id`: its live one (live), else its latest. */
static const lrow *find(const fdl_listing *l, int kind, int64_t id, bool live)
{
	const lrow *rows = l->rows[kind], *hit = NULL;
	size_t lo = 0, hi = l->n[kind];
	while (lo < hi) { /* the first row of id */
		size_t mid = lo + (hi - lo) / 2;
		if (rows[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < l->n[kind] && rows[i].id == id; i++)
		if (!live || rows[i].live) {
			hit = &rows[i];
			if (live)
				break;
		}
	return hit;
}

/* The path of file row `f` under table row `t` and schema row `s`; `what`
 * names the file in the message when it is not a clean relative path. */
static int join(char **out, fdl_listing *l, const lrow *s, const lrow *t, const lrow *f, const char *what,
		fdl_error *err)
{
	char *parts[3];
	bool rel[3];
	const lrow *at[3] = {s, t, f};
	for (int k = 0; k < 3; k++) {
		parts[k] = fdl_rows_str(&l->r, L_PATH, at[k]->row);
		rel[k] = fdl_rows_null(&l->r, L_REL, at[k]->row) || fdl_rows_int(&l->r, L_REL, at[k]->row) != 0;
	}
	int rc = fdl_catalog_join_path(out, (const char *const *)parts, rel, what, err);
	for (int k = 0; k < 3; k++)
		duckdb_free(parts[k]);
	return rc;
}

/* The path of file row `f` (of kind `kind`) under table row `t` and schema
 * row `s`, owned by the listing: resolved once for those rows. Its name
 * in a message ("data file 12 of table t") is made only for one. */
static int resolve(const char **out, fdl_listing *l, const lrow *s, const lrow *t, lrow *f, int kind,
		   fdl_error *err)
{
	if (f->path && f->under_s == s && f->under_t == t) {
		*out = f->path;
		return 0;
	}
	char *path = NULL, what[600];
	fdl_error e;
	int rc = join(&path, l, s, t, f, "a file", &e);
	if (rc == FDL_EINVALID) {
		char *schema = fdl_rows_str(&l->r, L_NAME, s->row), *table = fdl_rows_str(&l->r, L_NAME, t->row);
		snprintf(what, sizeof what, "%s file %lld of table %s.%s", kind == K_DELETE ? "delete" : "data",
			 (long long)f->id, schema ? schema : "?", table ? table : "?");
		duckdb_free(schema);
		duckdb_free(table);
		rc = join(&path, l, s, t, f, what, &e);
	}
	if (rc) {
		*err = e;
		return rc;
	}
	free(f->path);
	f->path = path;
	f->under_s = s;
	f->under_t = t;
	*out = path;
	return 0;
}

/* The live data files in catalog order: by table, file_order (NULLS
 * LAST), data_file_id. */
static int live_order(const void *a, const void *b)
{
	const lrow *x = *(const lrow *const *)a, *y = *(const lrow *const *)b;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	if (x->has_order != y->has_order)
		return x->has_order ? -1 : 1;
	if (x->has_order && x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The lesser of the reasons of f and x (bytewise, as DuckDB's least()),
 * malloc'd; NULL when neither has one. */
static int least_why(char **out, fdl_listing *l, const lrow *f, const lrow *x, fdl_error *err)
{
	char *a = fdl_rows_str(&l->r, L_WHY, f->row), *b = x ? fdl_rows_str(&l->r, L_WHY, x->row) : NULL;
	const char *w = a && b ? (strcmp(a, b) <= 0 ? a : b) : a ? a : b;
	*out = w ? fdl_strdup(w) : NULL;
	duckdb_free(a);
	duckdb_free(b);
	return w && !*out ? fdl_oom(err) : 0;
}

/* One item: data file f of table t in schema s, with its delete file x
 * (NULL: none). */
static int add_live(fdl_listing *l, fdl_data_files *out, const lrow *s, const lrow *t, lrow *f, lrow *x,
		    fdl_error *err)
{
	if (out->len == out->cap) {
		size_t cap = out->cap ? 2 * out->cap : 64;
		fdl_data_file *grown = realloc(out->items, cap * sizeof *grown);
		if (!grown)
			return fdl_oom(err);
		out->items = grown;
		out->cap = cap;
	}
	fdl_data_file *it = &out->items[out->len];
	memset(it, 0, sizeof *it);
	char *sn = fdl_rows_str(&l->r, L_NAME, s->row), *tn = fdl_rows_str(&l->r, L_NAME, t->row);
	const char *path = NULL;
	it->table_key = sn && tn ? fdl_asprintf("%s.%s", sn, tn) : fdl_strdup("");
	duckdb_free(sn);
	duckdb_free(tn);
	it->table_id = f->owner;
	it->id = f->id;
	it->begin_snapshot = f->begin;
	fdl_rows *r = &l->r;
	it->rows = fdl_rows_null(r, L_N, f->row) ? 0 : fdl_rows_int(r, L_N, f->row);
	it->bytes = fdl_rows_null(r, L_BYTES, f->row) ? 0 : fdl_rows_int(r, L_BYTES, f->row);
	it->footer_bytes = fdl_rows_null(r, L_FOOTER, f->row) ? -1 : fdl_rows_int(r, L_FOOTER, f->row);
	int rc = it->table_key ? 0 : fdl_oom(err);
	if (!rc && !(rc = resolve(&path, l, s, t, f, K_DATA, err)) && !(it->path = fdl_strdup(path)))
		rc = fdl_oom(err);
	if (!rc && x) {
		if (!(rc = resolve(&path, l, s, t, x, K_DELETE, err)) && !(it->delete_path = fdl_strdup(path)))
			rc = fdl_oom(err);
		it->delete_rows = fdl_rows_null(r, L_N, x->row) ? 0 : fdl_rows_int(r, L_N, x->row);
		it->delete_bytes = fdl_rows_null(r, L_BYTES, x->row) ? 0 : fdl_rows_int(r, L_BYTES, x->row);
	}
	if (!rc)
		rc = least_why(&it->unreadable, l, f, x, err);
	out->len++; /* freed with the list on failure */
	return rc;
}

int fdl_listing_live(fdl_listing *l, fdl_data_files *out, fdl_error *err)
{
	size_t nd = l->n[K_DATA], n = 0;
	lrow **pick = calloc(nd + 1, sizeof *pick);
	int rc = pick ? 0 : fdl_oom(err);
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < nd && !rc; i++) {
		lrow *f = &l->rows[K_DATA][i];
		const lrow *t = f->live ? find(l, K_TABLE, f->owner, true) : NULL;
		if (t && find(l, K_SCHEMA, t->owner, true))
			pick[n++] = f;
	}
	if (n)
		qsort(pick, n, sizeof *pick, live_order);
	lrow *dels = l->rows[K_DELETE];
	for (size_t i = 0; i < n && !rc; i++) {
		lrow *f = pick[i];
		const lrow *t = find(l, K_TABLE, f->owner, true), *s = find(l, K_SCHEMA, t->owner, true);
		size_t lo = 0, hi = l->n[K_DELETE], added = 0;
		while (lo < hi) { /* the first delete file of f */
			size_t mid = lo + (hi - lo) / 2;
			if (dels[mid].link < f->id)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k < l->n[K_DELETE] && dels[k].link == f->id && !rc; k++)
			if (dels[k].live && ++added)
				rc = add_live(l, out, s, t, f, &dels[k], err);
		if (!rc && !added)
			rc = add_live(l, out, s, t, f, NULL, err);
	}
	free(pick);
	if (rc)
		fdl_data_files_free(out);
	return rc;
}

int fdl_listing_all(fdl_listing *l, fdl_strlist *all, fdl_strmap *sizes, fdl_strlist *added, int64_t added_from,
		    fdl_error *err)
{
	int rc = 0;
	for (int kind = K_DATA; kind <= K_DELETE && !rc; kind++)
		for (size_t i = 0; i < l->n[kind] && !rc; i++) {
			lrow *f = &l->rows[kind][i];
			const lrow *t = find(l, K_TABLE, f->owner, false), *s = t ? find(l, K_SCHEMA, t->owner, false) : NULL;
			bool is_added = added && (added_from < 0 || f->begin >= added_from);
			if (!s || (!all && !is_added))
				continue;
			const char *path = NULL;
			rc = resolve(&path, l, s, t, f, kind, err);
			if (!rc && all)
				rc = fdl_strlist_add(all, path, err);
			if (!rc && is_added)
				rc = fdl_strlist_add(added, path, err);
			/* the size the catalog records (-1: none) */
			if (!rc && sizes)
				rc = fdl_strmap_put(sizes, path,
						    fdl_rows_null(&l->r, L_BYTES, f->row) ? -1
											 : fdl_rows_int(&l->r, L_BYTES, f->row),
						    err);
		}
	return rc;
}

int fdl_listing_tables(fdl_listing *l, fdl_strlist *keys, int64_t **ids, fdl_error *err)
{
	*ids = calloc(l->n[K_TABLE] + 1, sizeof **ids);
	int rc = *ids ? 0 : fdl_oom(err);
	size_t n = 0;
	for (size_t i = 0; i < l->n[K_TABLE] && !rc; i++) {
		const lrow *t = &l->rows[K_TABLE][i], *s = t->live ? find(l, K_SCHEMA, t->owner, true) : NULL;
		if (!s)
			continue;
		char *schema = fdl_rows_str(&l->r, L_NAME, s->row), *name = fdl_rows_str(&l->r, L_NAME, t->row);
		char *key = schema && name ? fdl_asprintf("%s.%s", schema, name) : NULL;
		rc = key ? fdl_strlist_add(keys, key, err) : fdl_oom(err);
		if (!rc)
			(*ids)[n++] = t->id;
		free(key);
		duckdb_free(schema);
		duckdb_free(name);
	}
	return rc;
}

void fdl_data_files_free(fdl_data_files *f)
{
	for (size_t i = 0; i < f->len; i++) {
		free(f->items[i].table_key);
		free(f->items[i].path);
		free(f->items[i].delete_path);
		free(f->items[i].unreadable);
	}
	free(f->items);
	memset(f, 0, sizeof *f);
}
