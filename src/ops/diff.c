/* What changed: schema and row differences between two versions, and the
 * DuckLake snapshots a version froze. */
#include "../catalog/catalog.h"
#include "../layout/dataset.h"
#include "../layout/layout.h"
#include "../layout/walk.h"
#include "report.h"

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
		rc = fdl_version_fetch_catalog(&o->catalog, repo, o->v, err);
	return rc;
}

static void opened_free(opened *o)
{
	fdl_version_free(o->v);
	free(o->catalog);
}

/* Two versions opened side by side in one DuckDB: their catalogs attached
 * raw (fdl_a, fdl_b) for schema changes and, with `lakes`, through DuckLake
 * (fdl_va, fdl_vb) for rows. */
typedef struct pair {
	opened a, b;
	fdl_duck *d;
} pair;

static void pair_close(pair *p)
{
	fdl_duck_free(p->d);
	opened_free(&p->a);
	opened_free(&p->b);
}

static int pair_open(pair *p, fdl_repo *repo, const char *a, const char *b, bool lakes, fdl_error *err)
{
	memset(p, 0, sizeof *p);
	int rc = open_version(&p->a, repo, a, err);
	if (!rc)
		rc = open_version(&p->b, repo, b, err);
	if (!rc)
		rc = fdl_duck_new(&p->d, false, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(p->d, "fdl_a", p->a.catalog, FDL_CAT_DUCKDB, true, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(p->d, "fdl_b", p->b.catalog, FDL_CAT_DUCKDB, true, err);
	/* a reader's guard: the one check of what a version may name
	 * (fdl_catalog_version_confined), and DuckDB is confined to the repository once they are
	 * attached */
	if (!rc)
		rc = fdl_catalog_version_confined(NULL, p->d, "fdl_a", p->a.catalog, repo->store, repo->data_dir,
						  fdl_version_id(p->a.v), err);
	if (!rc)
		rc = fdl_catalog_version_confined(NULL, p->d, "fdl_b", p->b.catalog, repo->store, repo->data_dir,
						  fdl_version_id(p->b.v), err);
	if (!rc && lakes)
		rc = fdl_duck_use_data(p->d, repo->data_url, repo->store, err);
	if (!rc && lakes)
		rc = fdl_catalog_attach_lake(p->d, "fdl_va", p->a.catalog, repo->data_url, err);
	if (!rc && lakes)
		rc = fdl_catalog_attach_lake(p->d, "fdl_vb", p->b.catalog, repo->data_url, err);
	const char *dirs[] = {repo->data_url, NULL}, *paths[] = {p->a.catalog, p->b.catalog, NULL};
	if (!rc && lakes)
		rc = fdl_duck_confine(p->d, dirs, paths, err);
	if (rc)
		pair_close(p);
	return rc;
}

/* A version's dataset.json (NULL for one written before it was required). */
static int dataset_of(json_t **out, fdl_repo *repo, const fdl_version *v, fdl_error *err)
{
	int rc = fdl_version_load_json(out, repo, v, "dataset", err);
	if (rc == FDL_ENOTFOUND && !fdl_version_check_live(repo, fdl_version_id(v), err)) {
		fdl_error_clear(err); /* none recorded */
		return 0;
	}
	return rc;
}

static int desc_changes(fdl_diff *d, fdl_repo *repo, const fdl_version *a, const fdl_version *b, fdl_error *err)
{
	json_t *da = NULL, *db = NULL, *list = NULL;
	int rc = dataset_of(&da, repo, a, err);
	if (!rc)
		rc = dataset_of(&db, repo, b, err);
	if (!rc)
		rc = fdl_dataset_diff(&list, da, db, err);
	size_t n = json_array_size(list);
	if (!rc && n && !(d->desc_changes = calloc(n, sizeof *d->desc_changes)))
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && i < n; i++) {
		const json_t *o = json_array_get(list, i);
		fdl_desc_change *c = &d->desc_changes[d->desc_change_count++];
		const char *vals[4] = {json_string_value(json_object_get(o, "table")),
				       json_string_value(json_object_get(o, "column")),
				       json_string_value(json_object_get(o, "field")),
				       json_string_value(json_object_get(o, "kind"))};
		char **slots[4] = {&c->table, &c->column, &c->field, &c->kind};
		for (size_t k = 0; k < 4 && !rc; k++)
			if (vals[k] && !(*slots[k] = fdl_strdup(vals[k])))
				rc = fdl_oom(err);
	}
	json_decref(da);
	json_decref(db);
	json_decref(list);
	return rc;
}

int fdl_diff_descriptions(fdl_diff **out, fdl_repo *repo, const char *a, const char *b, fdl_error *err)
{
	fdl_version *va = NULL, *vb = NULL;
	char ia[FDL_ID_LEN + 1], ib[FDL_ID_LEN + 1];
	fdl_diff *d = calloc(1, sizeof *d);
	int rc = d ? fdl_ref_resolve(ia, repo, a, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_ref_resolve(ib, repo, b, err);
	if (!rc)
		rc = fdl_version_read(&va, repo, ia, err);
	if (!rc)
		rc = fdl_version_read(&vb, repo, ib, err);
	if (!rc) {
		memcpy(d->from, ia, sizeof d->from);
		memcpy(d->to, ib, sizeof d->to);
		rc = desc_changes(d, repo, va, vb, err);
	}
	fdl_version_free(va);
	fdl_version_free(vb);
	if (rc) {
		fdl_diff_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int fdl_diff_versions(fdl_diff **out, fdl_repo *repo, const char *a, const char *b, fdl_error *err)
{
	pair p;
	int rc = pair_open(&p, repo, a, b, false, err);
	if (rc)
		return rc;
	json_t *changes = NULL;
	fdl_diff *d = calloc(1, sizeof *d);
	rc = d ? fdl_catalog_changes(&changes, p.d, "fdl_a", "fdl_b", err) : fdl_oom(err);
	if (!rc) {
		snprintf(d->from, sizeof d->from, "%s", fdl_version_id(p.a.v));
		snprintf(d->to, sizeof d->to, "%s", fdl_version_id(p.b.v));
		rc = fdl_changes_from_json(&d->changes, &d->change_count, changes, err);
	}
	if (!rc)
		rc = desc_changes(d, repo, p.a.v, p.b.v, err);
	json_decref(changes);
	pair_close(&p);
	if (rc) {
		fdl_diff_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int fdl_diff_rows(fdl_repo *repo, const char *a, const char *b, const fdl_diff_rows_options *opts, fdl_error *err)
{
	if (opts && fdl_options_check(opts->version, FDL_DIFF_ROWS_OPTIONS_VERSION, "fdl_diff_rows",
				      "fdl_diff_rows_options", err))
		return FDL_EINVALID;
	pair p;
	int rc = pair_open(&p, repo, a, b, true, err);
	if (rc)
		return rc;
	rc = fdl_catalog_row_diff_raw(p.d, "fdl_va", "fdl_vb", "fdl_a", "fdl_b", opts, err);
	pair_close(&p);
	return rc;
}

/* ---- fdl diff --json --rows, streamed ---------------------------------------------- */

/* The diff's own object, then "rows" streamed into it, one table and one
 * row at a time, as fdl_diff_rows hands them over. */
typedef struct json_rows {
	FILE *f;
	bool any, in_table, in_added, first;
} json_rows;

static void close_table(json_rows *o)
{
	if (!o->in_table)
		return;
	if (o->in_added)
		fputs("], \"removed\": [", o->f);
	fputs("]}", o->f);
	o->in_table = false;
}

static int json_table(const char *table, int64_t added, int64_t removed, void *payload)
{
	json_rows *o = payload;
	close_table(o);
	fputs(o->any ? ",\n    " : "\n    ", o->f);
	o->any = true;
	json_t *j = json_string(table);
	char *name = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	json_decref(j);
	fputs(name ? name : "null", o->f);
	free(name);
	fprintf(o->f, ": {\"added_total\": %lld, \"removed_total\": %lld, \"added\": [", (long long)added, (long long)removed);
	o->in_table = o->in_added = o->first = true;
	return ferror(o->f) ? FDL_EIO : 0;
}

static int json_row(const char *table, int added, const char *row, void *payload)
{
	(void)table;
	json_rows *o = payload;
	if (!added && o->in_added) {
		fputs("], \"removed\": [", o->f);
		o->in_added = false;
		o->first = true;
	}
	fprintf(o->f, "%s\n      %s", o->first ? "" : ",", row);
	o->first = false;
	return ferror(o->f) ? FDL_EIO : 0;
}

int fdl_diff_rows_json(FILE *out, fdl_repo *repo, const fdl_diff *d, const fdl_diff_rows_options *rows,
		       fdl_error *err)
{
	if (fdl_options_check(rows->version, FDL_DIFF_ROWS_OPTIONS_VERSION, "fdl_diff_rows_json", "fdl_diff_rows_options",
			      err))
		return FDL_EINVALID;
	char *text = NULL;
	int rc = fdl_diff_json(&text, d, err);
	if (!rc) { /* the object without its closing brace: the rows go in */
		size_t n = strlen(text);
		while (n && text[n - 1] != '}')
			n--;
		fprintf(out, "%.*s", (int)(n ? n - 1 : 0), text);
	}
	free(text);
	json_rows o = {out, false, false, false, false};
	fdl_diff_rows_options streamed = *rows;
	streamed.on_table = json_table;
	streamed.on_row = json_row;
	streamed.payload = &o;
	if (!rc) {
		fputs(",\n  \"rows\": {", out);
		rc = fdl_diff_rows(repo, d->from, d->to, &streamed, err);
		close_table(&o);
		fputs(o.any ? "\n  }" : "}", out);
	}
	if (!rc)
		fputs("}\n", out);
	if (!rc && (fflush(out) != 0 || ferror(out)))
		rc = fdl_fail(err, FDL_EIO, "cannot write the diff");
	return rc;
}

/* ---- snapshots ---------------------------------------------------------------------- */

int fdl_version_snapshots(fdl_snapshot_list **out, fdl_repo *repo, const char *id, fdl_error *err)
{
	opened o;
	fdl_duck *d = NULL;
	int rc = open_version(&o, repo, id, err);
	if (!rc)
		rc = fdl_duck_new(&d, false, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(d, "fdl_v", o.catalog, FDL_CAT_DUCKDB, true, err);
	fdl_version *parent = NULL;
	if (!rc && fdl_version_parent(o.v, 0))
		rc = fdl_version_read(&parent, repo, fdl_version_parent(o.v, 0), err);
	if (!rc)
		rc = fdl_catalog_snapshots(out, d, "fdl_v", fdl_version_added_from(o.v, parent),
					   fdl_version_snapshot_id(o.v), err);
	fdl_version_free(parent);
	fdl_duck_free(d);
	opened_free(&o);
	return rc;
}
