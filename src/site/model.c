/* One version as the pages wing renders it: version.json, dataset.json,
 * files.json and the preview's first rows, and for each table whether a
 * plain Parquet reader returns its rows (docs/format.md "Reading a table
 * without the catalog"), and if not, why. */
#include "site_int.h"
#include "../layout/keys.h"
#include "../layout/preview.h"
#include "../layout/site.h"

#include <stdlib.h>
#include <string.h>

const char *fdl__site_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

const char *fdl__site_title(const site_model *m)
{
	const char *t = fdl__site_str(m->dataset, "title");
	return *t ? t : fdl__site_str(m->dataset, "name");
}

char *fdl__site_data_url(const site_model *m, const char *path)
{
	return fdl_asprintf("%s%s/%s", m->root, m->repo->data_dir, path);
}

char *fdl__site_version_url(const site_model *m, const char *name)
{
	size_t n = strlen(m->root);
	char *root = fdl_asprintf("%.*s", (int)(n && m->root[n - 1] == '/' ? n - 1 : n), m->root);
	char *url = root ? fdl_version_url(*root ? root : ".", fdl_version_id(m->v), name) : NULL;
	if (url && !*root)
		memmove(url, url + 2, strlen(url + 2) + 1); /* the leading "./" dropped */
	free(root);
	return url;
}

/* The types a plain reader and both descriptions name the same way:
 * DuckDB's, Croissant's, a Data Package's. */
static const char *const TYPES[][3] = {
	{"BOOLEAN", "sc:Boolean", "boolean"}, {"TINYINT", "sc:Integer", "integer"},
	{"SMALLINT", "sc:Integer", "integer"}, {"INTEGER", "sc:Integer", "integer"},
	{"BIGINT", "sc:Integer", "integer"},   {"UTINYINT", "sc:Integer", "integer"},
	{"USMALLINT", "sc:Integer", "integer"}, {"UINTEGER", "sc:Integer", "integer"},
	{"UBIGINT", "sc:Integer", "integer"},  {"FLOAT", "sc:Float", "number"},
	{"DOUBLE", "sc:Float", "number"},      {"VARCHAR", "sc:Text", "string"},
	{"DATE", "sc:Date", "date"},           {"TIMESTAMP", "sc:DateTime", "datetime"},
};

static const char *type_of(const char *duck, int which)
{
	for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
		if (!strcmp(duck, TYPES[i][0]))
			return TYPES[i][which];
	return NULL;
}

const char *fdl__site_croissant_type(const char *duck) { return type_of(duck, 1); }
const char *fdl__site_frictionless_type(const char *duck) { return type_of(duck, 2); }

static bool plain_type(const char *t) { return type_of(t, 0) != NULL; }

/* Why a plain Parquet reader would not return the table's rows as DuckLake
 * does (NULL: it would). */
static char *why_not_plain(const json_t *f)
{
	if (!f)
		return fdl_strdup(FDL_FILES_JSON " does not list it");
	if (json_is_string(json_object_get(f, "unreadable")))
		return fdl_asprintf("only the catalog reads it: %s", json_string_value(json_object_get(f, "unreadable")));
	const json_t *files = json_object_get(f, "files"), *cols = json_object_get(f, "columns"), *x;
	size_t i;
	if (!json_array_size(files))
		return fdl_strdup("it has no data file (no rows)");
	json_array_foreach(files, i, x) if (json_object_get(x, "deletes")) return fdl_strdup(
		"a data file has deleted rows (a delete file), which a plain Parquet reader would return");
	if (json_is_true(json_object_get(f, "renamed_columns")))
		return fdl_strdup("a column was renamed: older data files hold it under its old name");
	if (json_is_true(json_object_get(f, "schema_changed")))
		return fdl_strdup("a column began after its first data file was written");
	if (!json_array_size(cols))
		return fdl_strdup(FDL_FILES_JSON " records no columns for it (written by an older fdl)");
	if (json_array_size(files) > 1) /* docs/decisions.md: a record set and a resource read one file */
		return fdl_asprintf("its rows are in %zu data files, and a Croissant record set or a Data Package "
				    "resource reads one Parquet file (fdl commit --compact makes one)",
				    json_array_size(files));
	json_array_foreach(cols, i, x)
	{
		const char *t = fdl__site_str(x, "type");
		if (!plain_type(t))
			return fdl_asprintf("column %s is %s, which Croissant and a Data Package have no type for",
					    fdl__site_str(x, "name"), t);
	}
	return NULL;
}

static const json_t *preview_of(const json_t *preview, const char *schema, const char *name)
{
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(preview, "tables"), i, t) if (!strcmp(fdl__site_str(t, "schema"), schema) &&
									 !strcmp(fdl__site_str(t, "name"), name)) return t;
	return NULL;
}

/* The preview's first rows (src/layout/preview.h); NULL when there is none,
 * or it cannot be read: the pages then show no rows, and say so. */
static int preview_load(json_t **out, fdl_repo *repo, const char *id, fdl_error *err)
{
	*out = NULL;
	int rc = fdl_preview_load(out, repo, id, err);
	if (rc == FDL_ENOTFOUND || rc == FDL_EINVALID) {
		fdl_error_clear(err);
		rc = 0;
	}
	return rc;
}

static int load_tables(site_model *m, fdl_error *err)
{
	const json_t *all = json_object_get(m->dataset, "tables"), *t;
	json_t *views = json_array();
	m->tables = calloc(json_array_size(all) + 1, sizeof *m->tables);
	if (!m->tables || !views || json_object_set_new(m->dataset, "fdl_site_views", views))
		return fdl_oom(err);
	m->views = views;
	size_t i;
	json_array_foreach(all, i, t)
	{
		if (!strcmp(fdl__site_str(t, "kind"), "view")) {
			if (json_array_append(views, (json_t *)t))
				return fdl_oom(err);
			continue;
		}
		const char *schema = *fdl__site_str(t, "schema") ? fdl__site_str(t, "schema") : "main";
		site_table *st = &m->tables[m->ntables++];
		st->desc = t;
		if (!(st->qname = fdl_asprintf("%s.%s", schema, fdl__site_str(t, "name"))))
			return fdl_oom(err);
		st->files = json_object_get(json_object_get(m->files, "tables"), st->qname);
		st->preview = preview_of(m->preview, schema, fdl__site_str(t, "name"));
		if (!m->expired[0] && !(st->why = why_not_plain(st->files)))
			continue;
		if (m->expired[0] && !(st->why = fdl_asprintf("the version was %s", m->expired)))
			return fdl_oom(err);
	}
	return 0;
}

int fdl__site_model_load(site_model *m, fdl_repo *repo, const char *id, const char *base, const char *up,
			 fdl_error *err)
{
	memset(m, 0, sizeof *m);
	m->repo = repo;
	const char *pub = fdl_site_public_url(repo);
	m->absolute = base || pub;
	m->root = base ? fdl_strdup(base) : pub ? fdl_asprintf("%s/", pub) : fdl_strdup(up);
	if (!m->root)
		return fdl_oom(err);
	fdl_expiry ex;
	int rc = fdl_version_read(&m->v, repo, id, err);
	if (!rc)
		rc = fdl_version_expiry(&ex, repo, id, err);
	if (!rc && ex.expired)
		snprintf(m->expired, sizeof m->expired, "%s", !strcmp(ex.reason, "withdrawn") ? "withdrawn" : "expired");
	if (!rc)
		rc = fdl_version_load_json(&m->dataset, repo, m->v, "dataset", err);
	if (!rc && !m->dataset && !(m->dataset = json_object()))
		rc = fdl_oom(err);
	if (!rc && !m->expired[0])
		rc = fdl_version_load_json(&m->files, repo, m->v, "files", err);
	if (!rc)
		rc = preview_load(&m->preview, repo, id, err);
	return rc ? rc : load_tables(m, err);
}

void fdl__site_model_free(site_model *m)
{
	for (size_t i = 0; i < m->ntables; i++) {
		free(m->tables[i].qname);
		free(m->tables[i].why);
	}
	free(m->tables);
	fdl_version_free(m->v);
	json_decref(m->dataset);
	json_decref(m->files);
	json_decref(m->preview);
	free(m->root);
	memset(m, 0, sizeof *m);
}
