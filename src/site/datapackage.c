/* A version's Frictionless Data Package (datapackage.json, the open-data
 * community's descriptor): the dataset's title, licences, people and
 * sources, and one resource per table a plain Parquet reader reads right
 * (model.c), its Parquet file with a Table Schema. The other
 * tables are named, with the reason, in the description. */
#include "site_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A name as a Data Package allows one: lower case, digits, '.', '_', '-'. */
static char *pkg_name(const char *s)
{
	char *out = fdl_strdup(*s ? s : "dataset");
	for (char *p = out; p && *p; p++)
		*p = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : strchr("._-", *p) ? *p : '-';
	return out;
}

static json_t *licences(const site_model *m)
{
	json_t *out = json_array();
	size_t i;
	const json_t *l;
	json_array_foreach(json_object_get(m->dataset, "licenses"), i, l)
	{
		const char *id, *title;
		char *url;
		fdl__site_licence(l, &id, &url, &title);
		json_array_append_new(out, json_pack("{s:s, s:s*, s:s*}", "name", id, "path", url, "title", title));
		free(url);
	}
	return out;
}

static json_t *resource(const site_model *m, const site_table *t)
{
	json_t *paths = json_array(), *fields = json_array();
	const json_t *f, *col;
	size_t i;
	json_array_foreach(json_object_get(t->files, "files"), i, f)
	{
		char *url = fdl__site_data_url(m, fdl__site_str(f, "path"));
		json_array_append_new(paths, json_string(url ? url : ""));
		free(url);
	}
	json_array_foreach(json_object_get(t->files, "columns"), i, col)
	{
		const char *name = fdl__site_str(col, "name");
		json_t *fd = json_pack("{s:s, s:s*}", "name", name, "type",
				       fdl__site_frictionless_type(fdl__site_str(col, "type")));
		size_t k;
		const json_t *d;
		json_array_foreach(json_object_get(t->desc, "fields"), k, d) if (!strcmp(fdl__site_str(d, "name"), name))
		{
			if (*fdl__site_str(d, "title"))
				json_object_set(fd, "title", json_object_get(d, "title"));
			if (*fdl__site_str(d, "description"))
				json_object_set(fd, "description", json_object_get(d, "description"));
		}
		json_array_append_new(fields, fd);
	}
	char *name = pkg_name(t->qname);
	json_t *r = json_pack("{s:s*, s:s, s:o, s:s, s:s, s:{s:o}}", "name", name, "title", t->qname, "path",
			      json_incref(json_array_get(paths, 0)), /* its one file (model.c) */
			      "format", "parquet", "mediatype", "application/vnd.apache.parquet", "schema", "fields",
			      fields);
	if (r && *fdl__site_str(t->desc, "description"))
		json_object_set(r, "description", json_object_get(t->desc, "description"));
	json_decref(paths);
	free(name);
	return r;
}

static void people(json_t *pkg, const site_model *m)
{
	json_t *who = json_array(), *src = json_array();
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(m->dataset, "contributors"), i, c)
	{
		json_t *p = json_pack("{s:s}", "title", fdl__site_str(c, "title"));
		if (json_array_size(json_object_get(c, "roles")))
			json_object_set(p, "roles", json_object_get(c, "roles"));
		json_array_append_new(who, p);
	}
	json_array_foreach(json_object_get(m->dataset, "sources"), i, c)
	{
		const char *title = fdl__site_str(c, "title"), *path = fdl__site_str(c, "path");
		json_array_append_new(src, json_pack("{s:s, s:s*}", "title", *title ? title : path, "path",
						     *path ? path : NULL));
	}
	if (json_array_size(who))
		json_object_set(pkg, "contributors", who);
	if (json_array_size(src))
		json_object_set(pkg, "sources", src);
	json_decref(who);
	json_decref(src);
}

int fdl__site_datapackage(fdl_buf *out, const site_model *m, fdl_error *err)
{
	if (m->expired[0])
		return fdl_fail(err, FDL_EEXPIRED, "version %s was %s: its data cannot be described for loading",
				fdl_version_id(m->v), m->expired);
	json_t *ds = fdl__site_schema_org(m, true), *res = json_array();
	char *name = pkg_name(fdl__site_str(m->dataset, "name"));
	json_t *pkg = json_pack("{s:s*, s:s, s:s*, s:s, s:s, s:o}", "name", name, "title", fdl__site_title(m),
				"description", json_string_value(json_object_get(ds, "description")), "version",
				json_string_value(json_object_get(ds, "version")), "created",
				fdl_version_created_at(m->v), "licenses", licences(m));
	int rc = !pkg || !res ? fdl_oom(err) : 0;
	if (!rc) {
		json_object_set_new(pkg, "id", json_string(fdl_version_id(m->v)));
		if (*fdl__site_str(m->dataset, "homepage"))
			json_object_set(pkg, "homepage", json_object_get(m->dataset, "homepage"));
		if (json_array_size(json_object_get(m->dataset, "keywords")))
			json_object_set(pkg, "keywords", json_object_get(m->dataset, "keywords"));
		people(pkg, m);
	}
	fdl_buf why = {0};
	for (size_t i = 0; !rc && i < m->ntables; i++) {
		const site_table *t = &m->tables[i];
		if (t->why)
			rc = fdl_buf_printf(&why, err, "%s%s (%s)", why.len ? "; " : "", t->qname, t->why);
		else if (json_array_append_new(res, resource(m, t)))
			rc = fdl_oom(err);
	}
	if (!rc && why.len)
		json_object_set_new(pkg, "fdl:not_plainly_readable", json_string(why.data));
	if (!rc && json_object_set(pkg, "resources", res))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl__site_json(out, pkg, false, err);
	fdl_buf_free(&why);
	free(name);
	json_decref(ds);
	json_decref(res);
	json_decref(pkg);
	return rc;
}
