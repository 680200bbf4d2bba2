/* fdl iceberg catalog: the repository's static Iceberg REST catalog
 * written at a location (iceberg_catalog.c keeps it), with the report the
 * command prints: where a client attaches it and which namespaces it has
 * (docs/format.md "Iceberg REST catalog"). */
#include "iceberg_int.h"
#include "../store/aws.h"
#include "../store/s3.h"

#include <stdlib.h>
#include <string.h>

/* ---- the operation ------------------------------------------------------ */

/* Where a client attaches the catalog: the bucket's own endpoint for an
 * s3:// location, the location itself for http(s)://, the tree's file://
 * URI for a folder (a host serving the folder serves it at that path). */
static int catalog_uri(char **out, const char *location, const char *path, fdl_error *err)
{
	if (strncmp(location, "s3://", 5))
		return (*out = fdl_asprintf("%s/%s", location, path)) ? 0 : fdl_oom(err);
	fdl_s3_config c = {0};
	fdl_buf b = {0};
	int rc = fdl_s3_config_load(&c, location, err);
	char *base = rc ? NULL : fdl_s3_bucket_url(&c);
	char *key = rc ? NULL : *c.prefix ? fdl_asprintf("%s/%s", c.prefix, path) : fdl_strdup(path);
	if (!rc && (!base || !key))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_buf_puts(&b, base, err);
	if (!rc)
		rc = fdl_s3_uri_encode(&b, key, true, err);
	if (!rc && !(*out = fdl_strdup(b.data)))
		rc = fdl_oom(err);
	fdl_buf_free(&b);
	free(base);
	free(key);
	fdl_s3_config_free(&c);
	return rc;
}

static int report_of(fdl_iceberg_catalog_report **out, const char *location, const char *lid,
		     const fdl_ice_catalog *c, bool index, fdl_error *err)
{
	fdl_iceberg_catalog_report *p = calloc(1, sizeof *p);
	size_t nn = json_array_size(c->namespaces);
	int rc = p && (!nn || (p->namespaces = calloc(nn, sizeof *p->namespaces))) &&
			 (p->location = fdl_strdup(location)) && (p->path = fdl_iceberg_catalog_dir(lid))
		 ? 0
		 : fdl_oom(err);
	if (!rc)
		rc = fdl_ice_notices_of(&p->notices, &p->notice_count, c->notices, err);
	if (!rc)
		rc = catalog_uri(&p->uri, location, p->path, err);
	size_t i;
	const json_t *x;
	json_array_foreach(rc ? NULL : c->namespaces, i, x)
	{
		fdl_iceberg_namespace *n = &p->namespaces[p->namespace_count++];
		const json_t *levels = json_object_get(x, "namespace");
		n->name = fdl_strdup(json_string_value(json_array_get(levels, 0)));
		n->schema = json_array_size(levels) > 1 ? fdl_strdup(json_string_value(json_array_get(levels, 1))) : NULL;
		n->ref = fdl_strdup(fdl_ice_str(x, "ref"));
		n->version = fdl_strdup(fdl_ice_str(x, "version"));
		n->tables = (size_t)json_integer_value(json_object_get(x, "tables"));
		if (!n->name || !n->ref || !n->version || (json_array_size(levels) > 1 && !n->schema))
			rc = fdl_oom(err);
	}
	if (p) {
		p->files_written = c->written;
		p->index_files = index;
	}
	if (rc)
		fdl_iceberg_catalog_report_free(p);
	else
		*out = p;
	return rc;
}

/* Every live version a ref names passes the one check of what a version
 * may name (fdl_catalog_version_confined) before the catalog leads a client to it: a view
 * written before a file was swapped for a symlink is not written again. */
static int refs_confined(fdl_repo *repo, fdl_error *err)
{
	fdl_refs refs;
	fdl_strlist done = {0};
	int rc = fdl_refs_all(&refs, repo, true, err);
	for (size_t i = 0; i < refs.names.len && !rc; i++) {
		const char *id = refs.ids[i];
		fdl_version *v = NULL;
		char *catalog = NULL;
		fdl_error e;
		if (fdl_strlist_has_sorted(&done, id) || fdl_version_check_live(repo, id, &e))
			continue; /* a ref on a version no longer live gets no namespace */
		rc = fdl_version_read(&v, repo, id, err);
		if (!rc)
			rc = fdl_version_fetch_catalog(&catalog, repo, v, err);
		if (!rc)
			rc = fdl_catalog_version_confined(NULL, NULL, NULL, catalog, repo->store, repo->data_dir,
							  fdl_version_id(v), err);
		if (!rc)
			rc = fdl_strlist_add(&done, id, err);
		fdl_strlist_sort(&done);
		free(catalog);
		fdl_version_free(v);
	}
	fdl_strlist_free(&done);
	fdl_refs_free(&refs);
	return rc;
}

int fdl_iceberg_catalog_write(fdl_iceberg_catalog_report **out, fdl_repo *repo, const char *location, fdl_error *err)
{
	char *loc = NULL;
	char lid[FDL_ICEBERG_LID_LEN + 1];
	fdl_ice_catalog c = {0};
	int rc = location ? fdl_iceberg_location_check(&loc, location, err) : fdl_iceberg_own_location(&loc, repo, err);
	if (!rc)
		rc = fdl_iceberg_location_id(lid, loc, err);
	if (!rc)
		rc = refs_confined(repo, err);
	if (!rc)
		rc = fdl_iceberg_views_add(repo, loc, true, err);
	if (!rc)
		rc = fdl_ice_catalog_sync(&c, repo, loc, NULL, err);
	if (!rc && out)
		rc = report_of(out, loc, lid, &c, fdl_iceberg_catalog_index(repo), err);
	json_decref(c.namespaces);
	json_decref(c.notices);
	free(loc);
	return rc;
}

void fdl_iceberg_catalog_report_free(fdl_iceberg_catalog_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->namespace_count; i++) {
		free(r->namespaces[i].name);
		free(r->namespaces[i].schema);
		free(r->namespaces[i].ref);
		free(r->namespaces[i].version);
	}
	fdl_ice_notices_free(r->notices, r->notice_count);
	free(r->namespaces);
	free(r->uri);
	free(r->path);
	free(r->location);
	free(r);
}

int fdl_iceberg_catalog_report_json(char **out, const fdl_iceberg_catalog_report *r, fdl_error *err)
{
	json_t *ns = json_array();
	for (size_t i = 0; ns && i < r->namespace_count; i++) {
		const fdl_iceberg_namespace *n = &r->namespaces[i];
		json_array_append_new(ns, n->schema ? json_pack("[s, s]", n->name, n->schema) : json_pack("[s]", n->name));
	}
	json_t *o = ns ? json_pack("{s:s, s:s, s:s, s:o}", "catalog", r->uri, "location", r->location, "path", r->path,
				   "namespaces", ns)
		       : NULL;
	int rc = o ? fdl_json_dump(out, NULL, o, err) : fdl_oom(err);
	json_decref(o);
	return rc;
}
