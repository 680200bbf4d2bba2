/* What changed: schema and row differences between two versions, and the
 * DuckLake snapshots a version froze. */
#include "catalog/catalog.h"
#include "layout/layout.h"
#include "layout/walk.h"

#include <stdlib.h>
#include <string.h>

typedef struct opened {
	fdl_version *v;
	char *catalog; /* local, checked */
} opened;

static int open_version(opened *o, fdl_repo *repo, const char *spec, fdl_error *err)
{
	memset(o, 0, sizeof *o);
	char id[FDL_ID_LEN + 1];
	int rc = fdl_ref_resolve(id, repo, spec, err);
	if (!rc)
		rc = fdl_version_read(&o->v, repo, id, err);
	if (!rc)
		rc = fdl_version_fetch_checked(&o->catalog, repo, o->v, fdl_version_catalog_path(o->v),
					       fdl_version_catalog_bytes(o->v), fdl_version_catalog_sha256(o->v), err);
	return rc;
}

static void opened_free(opened *o)
{
	fdl_version_free(o->v);
	free(o->catalog);
}

static int attach_lake(fdl_duck *d, const char *alias, const char *catalog, const char *data_url, fdl_error *err)
{
	fdl_buf sql = {0};
	char *target = fdl_asprintf("ducklake:%s", catalog);
	int rc = target ? fdl_buf_puts(&sql, "ATTACH ", err) : fdl_fail(err, FDL_ERROR, "out of memory");
	if (!rc)
		rc = fdl_buf_sql_str(&sql, target, err);
	if (!rc)
		rc = fdl_buf_printf(&sql, err, " AS %s (READ_ONLY, DATA_PATH ", alias);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, data_url, err);
	if (!rc)
		rc = fdl_buf_puts(&sql, ", OVERRIDE_DATA_PATH true)", err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	free(target);
	fdl_buf_free(&sql);
	return rc;
}

int fdl_diff(char **out, fdl_repo *repo, const char *a_spec, const char *b_spec, int rows, const char *table,
	     fdl_error *err)
{
	opened a = {0}, b = {0};
	fdl_duck d = {0};
	json_t *changes = NULL, *row_diff = NULL;
	int rc = open_version(&a, repo, a_spec, err);
	if (!rc)
		rc = open_version(&b, repo, b_spec, err);
	if (!rc)
		rc = fdl_duck_open(&d, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(&d, "fdl_a", a.catalog, FDL_CAT_DUCKDB, true, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(&d, "fdl_b", b.catalog, FDL_CAT_DUCKDB, true, err);
	if (!rc)
		rc = fdl_catalog_changes(&changes, &d, "fdl_a", "fdl_b", err);
	if (!rc && rows) {
		rc = fdl_duck_use_store(&d, repo->store, err);
		if (!rc)
			rc = attach_lake(&d, "fdl_va", a.catalog, repo->data_url, err);
		if (!rc)
			rc = attach_lake(&d, "fdl_vb", b.catalog, repo->data_url, err);
		if (!rc)
			rc = fdl_catalog_row_diff(&row_diff, &d, "fdl_va", "fdl_vb", table, err);
	}
	if (!rc) {
		json_t *doc = json_pack("{s:s, s:s, s:O}", "from", fdl_version_id(a.v), "to", fdl_version_id(b.v),
					"changes", changes);
		if (doc && row_diff)
			json_object_set(doc, "rows", row_diff);
		rc = doc ? fdl_json_dump(out, NULL, doc, err) : fdl_fail(err, FDL_ERROR, "out of memory");
		json_decref(doc);
	}
	json_decref(changes);
	json_decref(row_diff);
	fdl_duck_close(&d);
	opened_free(&a);
	opened_free(&b);
	return rc;
}

int fdl_version_snapshots(char **out, fdl_repo *repo, const char *id, fdl_error *err)
{
	opened o;
	fdl_duck d = {0};
	int rc = open_version(&o, repo, id, err);
	if (!rc)
		rc = fdl_duck_open(&d, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(&d, "fdl_v", o.catalog, FDL_CAT_DUCKDB, true, err);
	fdl_rows r;
	char sql[512];
	fdl_version *parent = NULL;
	if (!rc && fdl_version_parent(o.v, 0))
		rc = fdl_version_read(&parent, repo, fdl_version_parent(o.v, 0), err);
	if (!rc) {
		int64_t first = fdl_version_added_from(o.v, parent);
		fdl_version_free(parent);
		snprintf(sql, sizeof sql,
			 "SELECT s.snapshot_id, strftime(s.snapshot_time AT TIME ZONE 'UTC', '%%Y-%%m-%%dT%%H:%%M:%%SZ'), "
			 "c.author, c.commit_message, c.commit_extra_info, c.changes_made FROM fdl_v.ducklake_snapshot s "
			 "LEFT JOIN fdl_v.ducklake_snapshot_changes c USING (snapshot_id) WHERE s.snapshot_id BETWEEN "
			 "%lld AND %lld ORDER BY s.snapshot_id",
			 (long long)first, (long long)fdl_version_snapshot_id(o.v));
		rc = fdl_duck_query(&d, &r, sql, err);
	}
	if (!rc) {
		json_t *list = json_array();
		const char *keys[] = {"time", "author", "message", "extra_info", "changes"};
		for (size_t i = 0; list && i < fdl_rows_count(&r); i++) {
			json_t *s = json_pack("{s:I}", "snapshot_id", (json_int_t)fdl_rows_int(&r, 0, i));
			for (size_t k = 0; s && k < 5; k++) {
				char *v = fdl_rows_str(&r, k + 1, i);
				if (v)
					json_object_set_new(s, keys[k], json_string(v));
				duckdb_free(v);
			}
			json_array_append_new(list, s);
		}
		fdl_rows_free(&r);
		rc = list ? fdl_json_dump(out, NULL, list, err) : fdl_fail(err, FDL_ERROR, "out of memory");
		json_decref(list);
	}
	fdl_duck_close(&d);
	opened_free(&o);
	return rc;
}
