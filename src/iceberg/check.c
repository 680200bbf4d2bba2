/* What fdl verify says about the Iceberg views (docs/format.md "Iceberg
 * views"): each view is of a live version, every snapshot of a live
 * version of its history with its snapshot id (derived from the version's
 * id; a view of format 1, written by an older fdl, its seq, with a
 * warning), every location in it inside the
 * repository at the view's location, and the current snapshot's manifests
 * list exactly the version's live files with their recorded sizes and
 * delete files holding the same positions as DuckLake's. Read back with
 * DuckDB's avro extension. Findings are "key\tmessage". */
#include "iceberg_int.h"
#include "../layout/keys.h"

#include <stdlib.h>
#include <string.h>

typedef struct ice_check {
	fdl_repo *repo;
	fdl_strlist *problems, *warnings;
	const char *location;
	char lid[FDL_ICEBERG_LID_LEN + 1];
	fdl_strmap present; /* keys under iceberg/<lid>/ */
	fdl_strmap live;    /* version id -> 1 live, 0 gone */
	fdl_duck *duck;
} ice_check;

#define note fdl_finding_add

static bool is_live(ice_check *c, const char *id)
{
	int64_t v;
	if (fdl_strmap_get(&c->live, id, &v))
		return v != 0;
	fdl_error e;
	v = fdl_id_is_valid(id) && fdl_version_check_live(c->repo, id, &e) == 0;
	fdl_strmap_put(&c->live, id, v, NULL);
	return v != 0;
}

/* Where DuckDB reads a URI of the view: the repository's own copy of the
 * key it names; NULL when it names nothing inside the repository. */
static char *readable(const ice_check *c, const char *uri, char **key)
{
	size_t n = strlen(c->location);
	*key = NULL;
	if (!uri || strncmp(uri, c->location, n) || uri[n] != '/' || fdl_path_check_relative(uri + n + 1, "a view's file", NULL))
		return NULL;
	*key = fdl_strdup(uri + n + 1);
	return *key ? fdl_asprintf("%s/%s", c->repo->root, *key) : NULL;
}

static const json_t *files_of(const json_t *files_json, const char *table)
{
	return json_object_get(json_object_get(json_object_get(files_json, "tables"), table), "files");
}

/* One data entry of the current snapshot against files.json. */
static int check_data(ice_check *c, const char *mkey, const fdl_ice_read *e, const json_t *files, json_t *seen)
{
	char *key = NULL, *path = readable(c, e->path, &key);
	const char *data_prefix = c->repo->data_dir;
	size_t dn = strlen(data_prefix);
	const json_t *hit = NULL;
	size_t i;
	const json_t *f;
	json_array_foreach(files, i, f)
	if (key && !strncmp(key, data_prefix, dn) && key[dn] == '/' &&
	    !strcmp(json_string_value(json_object_get(f, "path")), key + dn + 1)) hit = f;
	int rc = 0;
	if (!hit)
		rc = note(c->problems, mkey, "names %s, which is not a live data file of its version", e->path);
	else if (json_integer_value(json_object_get(hit, "bytes")) != e->bytes ||
		 json_integer_value(json_object_get(hit, "rows")) != e->rows)
		rc = note(c->problems, mkey, "records %s with %lld bytes and %lld rows; the version records %lld and %lld",
			  e->path, (long long)e->bytes, (long long)e->rows,
			  (long long)json_integer_value(json_object_get(hit, "bytes")),
			  (long long)json_integer_value(json_object_get(hit, "rows")));
	else
		json_object_set_new(seen, key + dn + 1, json_true());
	free(key);
	free(path);
	return rc;
}

/* One delete entry: in the view's tree, of a listed data file, with the
 * positions of that file's DuckLake delete file. */
static int check_delete(ice_check *c, const char *mkey, const fdl_ice_read *e, const json_t *files, fdl_error *err)
{
	char *key = NULL, *path = readable(c, e->path, &key);
	char *rkey = NULL, *rpath = readable(c, e->referenced, &rkey);
	size_t dn = strlen(c->repo->data_dir);
	const json_t *dels = NULL;
	size_t i;
	const json_t *f;
	json_array_foreach(files, i, f)
	if (rkey && !strncmp(rkey, c->repo->data_dir, dn) && !strcmp(json_string_value(json_object_get(f, "path")), rkey + dn + 1))
		dels = json_object_get(f, "deletes");
	int64_t there;
	int rc = 0;
	if (!path || !fdl_strmap_get(&c->present, key, &there))
		rc = note(c->problems, mkey, "names the delete file %s, which is not in the view's tree", e->path);
	else if (!dels)
		rc = note(c->problems, mkey, "deletes from %s, which has no deletes in its version", e->referenced ? e->referenced : "(nothing)");
	else {
		char *src = fdl_asprintf("%s%s", c->repo->data_url, json_string_value(json_object_get(dels, "path")));
		bool same = false;
		rc = src ? fdl_catalog_positions_equal(&same, c->duck, path, src, err) : fdl_oom(err);
		if (!rc && !same)
			rc = note(c->problems, key, "does not hold the positions of %s", src);
		free(src);
	}
	free(key);
	free(path);
	free(rkey);
	free(rpath);
	return rc;
}

/* The current snapshot's files against the version's files.json. */
static int check_current(ice_check *c, const char *mkey, const char *list_uri, const json_t *files, fdl_error *err)
{
	char *lkey = NULL, *lpath = readable(c, list_uri, &lkey);
	fdl_strlist manifests = {0};
	json_t *seen = json_object();
	int rc = seen ? 0 : fdl_oom(err);
	if (!rc && !lpath)
		rc = note(c->problems, mkey, "names the manifest list %s outside the view's tree", list_uri ? list_uri : "(none)");
	else if (!rc)
		rc = fdl_catalog_iceberg_list(&manifests, c->duck, lpath, err);
	for (size_t i = 0; i < manifests.len && !rc; i++) {
		char *key = NULL, *path = readable(c, manifests.items[i], &key);
		fdl_ice_read *e = NULL;
		size_t n = 0;
		if (!path)
			rc = note(c->problems, mkey, "names the manifest %s outside the view's tree", manifests.items[i]);
		else
			rc = fdl_catalog_iceberg_manifest(&e, &n, c->duck, path, err);
		for (size_t k = 0; k < n && !rc; k++)
			rc = e[k].content == 0 ? check_data(c, key, &e[k], files, seen) : check_delete(c, key, &e[k], files, err);
		fdl_ice_reads_free(e, n);
		free(key);
		free(path);
	}
	if (!rc && lpath && json_object_size(seen) != json_array_size(files))
		rc = note(c->problems, mkey, "lists %zu of the %zu live data files of its version", json_object_size(seen),
			  json_array_size(files));
	json_decref(seen);
	fdl_strlist_free(&manifests);
	free(lkey);
	free(lpath);
	return rc;
}

/* One table's metadata.json; `ids`: each version's snapshot id. */
static int check_table(ice_check *c, const char *vdir, const char *table, const json_t *t, const json_t *files,
		       const json_t *ids, fdl_error *err)
{
	const char *rel = json_string_value(json_object_get(t, "metadata"));
	char *key = rel ? fdl_asprintf("%s/%s", vdir, rel) : NULL;
	int64_t there;
	fdl_buf b = {0};
	json_t *m = NULL;
	fdl_error e;
	if (!key || !fdl_strmap_get(&c->present, key, &there) ||
	    fdl_store_get(c->repo->store, key, FDL_META_MAX_BYTES, &b, NULL, &e) || fdl_json_parse(&m, b.data, b.len, key, &e)) {
		int rc = note(c->problems, key ? key : vdir, "the metadata.json of %s is missing or not JSON", table);
		free(key);
		fdl_buf_free(&b);
		return rc;
	}
	int rc = 0;
	const json_t *cur = NULL;
	size_t i;
	const json_t *s;
	json_array_foreach(json_object_get(m, "snapshots"), i, s)
	{
		const char *vid = json_string_value(json_object_get(json_object_get(s, "summary"), "fdl.version"));
		json_int_t sid = json_integer_value(json_object_get(s, "snapshot-id"));
		if (rc)
			break;
		if (!vid || !is_live(c, vid))
			rc = note(c->problems, key, "snapshot %lld is of version %s, which is gone", (long long)sid, vid ? vid : "(none)");
		else if (!json_is_integer(json_object_get(ids, vid)) || json_integer_value(json_object_get(ids, vid)) != sid)
			rc = note(c->problems, key, "snapshot %lld is of version %s, whose snapshot id is not %lld", (long long)sid,
				  vid, (long long)sid);
		if (sid == json_integer_value(json_object_get(m, "current-snapshot-id")))
			cur = s;
	}
	if (!rc && !cur)
		rc = note(c->problems, key, "has no current snapshot");
	if (!rc)
		rc = check_current(c, key, json_string_value(json_object_get(cur, "manifest-list")), files, err);
	json_decref(m);
	fdl_buf_free(&b);
	free(key);
	return rc;
}

/* The view of version `id` (its view.json at `key`). */
static int check_view(ice_check *c, const char *id, const char *key, fdl_error *err)
{
	if (!is_live(c, id))
		return note(c->problems, key, "a view of version %s, which is gone (expired or withdrawn): fdl gc writes "
			    "the views again", id);
	fdl_buf b = {0};
	json_t *view = NULL, *files = NULL, *ids = json_object();
	fdl_version *v = NULL;
	fdl_error e;
	int rc = ids ? 0 : fdl_oom(err);
	if (!rc && (fdl_store_get(c->repo->store, key, FDL_META_MAX_BYTES, &b, NULL, &e) ||
		    fdl_json_parse(&view, b.data, b.len, key, &e) ||
		    strcmp(json_string_value(json_object_get(view, "version")) ? json_string_value(json_object_get(view, "version")) : "", id) ||
		    strcmp(json_string_value(json_object_get(view, "location")) ? json_string_value(json_object_get(view, "location")) : "", c->location)))
		rc = note(c->problems, key, "is not the view.json of version %s for %s", id, c->location);
	else if (!rc && (rc = fdl_version_read(&v, c->repo, id, err)) == 0)
		rc = fdl_version_load_json(&files, c->repo, v, "files", err);
	json_int_t format = json_integer_value(json_object_get(view, "fdl_iceberg"));
	if (!rc && files && format != FDL_ICEBERG_VIEW_FORMAT)
		rc = format == 1 ? note(c->warnings, key, "was written by an older fdl: its snapshot ids are seqs, which a "
					"branch moved back gives to other versions, and its earlier snapshots may lack "
					"a column widened since (fdl iceberg ROOT@%s writes it again)", id)
				 : note(c->problems, key, "has format %lld, which this fdl does not know", (long long)format);
	size_t i;
	const json_t *x;
	json_array_foreach(rc || !files ? NULL : json_object_get(view, "chain"), i, x)
	{
		const char *vid = json_string_value(json_array_get(x, 3));
		int64_t sid = json_integer_value(json_array_get(x, 0)); /* format 1: the seq */
		if (vid && format != 1)
			rc = fdl_iceberg_snapshot_id(&sid, vid, err);
		if (!rc && vid && json_object_set_new(ids, vid, json_integer(sid)))
			rc = fdl_oom(err);
		if (rc)
			break;
	}
	char *vdir = fdl_iceberg_view_dir(c->lid, id);
	const char *table;
	json_t *t;
	json_object_foreach(rc || !files || (format != 1 && format != FDL_ICEBERG_VIEW_FORMAT) ? NULL
			    : json_object_get(view, "tables"), table, t)
	{
		if ((rc = vdir ? check_table(c, vdir, table, t, files_of(files, table), ids, err) : fdl_oom(err)))
			break;
	}
	free(vdir);
	json_decref(view);
	json_decref(files);
	json_decref(ids);
	fdl_version_free(v);
	fdl_buf_free(&b);
	return rc;
}

/* A key of iceberg/<lid>/: a view.json (*id set), or another file a view
 * may hold, or the catalog's (when the location has one); false for
 * anything else. */
static bool view_key(const char *rel, bool catalog, char id[FDL_ID_LEN + 1])
{
	id[0] = '\0';
	const char *rest = NULL;
	if (fdl_version_key_parse(rel, id, &rest) && rest[-1] == '/') { /* versions/<id>/... */
		if (strcmp(rest, FDL_ICEBERG_VIEW_JSON))
			id[0] = '\0';
		return true;
	}
	id[0] = '\0'; /* the version folder itself (no slash after the id): not a view's key */
	bool manifest = fdl_iceberg_rel_in(rel, FDL_ICEBERG_MANIFESTS) &&
			strlen(rel) == sizeof FDL_ICEBERG_MANIFESTS + 64 + 5; /* manifests/<sha256>.avro */
	return manifest || fdl_iceberg_rel_in(rel, FDL_ICEBERG_DELETES) ||
	       (fdl_iceberg_rel_in(rel, FDL_ICEBERG_CATALOG) && catalog); /* the catalog's check reads those */
}

static int check_location(ice_check *c, bool catalog, fdl_error *err)
{
	fdl_strlist keys = {0};
	char *dir = fdl_asprintf(FDL_ICEBERG_DIR "/%s", c->lid);
	int rc = dir ? fdl_store_list(c->repo->store, dir, &keys, err) : fdl_oom(err);
	for (size_t i = 0; i < keys.len && !rc; i++)
		rc = fdl_strmap_put(&c->present, keys.items[i], 1, err);
	fdl_strlist_sort(&keys);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		char id[FDL_ID_LEN + 1];
		if (!view_key(keys.items[i] + strlen(dir) + 1, catalog, id))
			rc = note(c->warnings, keys.items[i], "is not part of an Iceberg view");
		else if (id[0])
			rc = check_view(c, id, keys.items[i], err);
	}
	free(dir);
	fdl_strlist_free(&keys);
	return rc;
}

int fdl_iceberg_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, fdl_error *err)
{
	ice_check c = {.repo = repo, .problems = problems, .warnings = warnings};
	json_t *views = NULL;
	fdl_error e;
	if (fdl_iceberg_views_read(&views, repo, &e))
		return note(problems, FDL_ICEBERG_VIEWS, "%s", e.message);
	int rc = 0;
	size_t i;
	const json_t *v;
	json_array_foreach(json_object_get(views, "views"), i, v)
	{
		c.location = json_string_value(json_object_get(v, "location"));
		rc = fdl_iceberg_location_id(c.lid, c.location, err);
		if (!rc && !c.duck && !(rc = fdl_duck_new(&c.duck, false, err)))
			rc = fdl_duck_load(c.duck, "avro", err);
		if (!rc)
			rc = fdl_duck_use_data(c.duck, repo->data_url, repo->store, err);
		bool catalog = fdl_iceberg_view_has_catalog(v);
		if (!rc)
			rc = check_location(&c, catalog, err);
		if (!rc && catalog)
			rc = fdl_ice_catalog_check(problems, warnings, repo, c.location, &c.present, err);
		fdl_strmap_free(&c.present);
		if (rc)
			break;
	}
	fdl_duck_free(c.duck);
	fdl_strmap_free(&c.live);
	json_decref(views);
	return rc;
}
