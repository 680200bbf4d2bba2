/* The repository as a static Iceberg REST catalog (docs/format.md "Iceberg
 * REST catalog"): the read path of Iceberg's REST protocol is GETs only,
 * so every answer a client asks for is a file under iceberg/<lid>/catalog/
 * that any static host (or a bucket's own endpoint) serves as it is. Each
 * live branch and tag is a namespace holding the tables of its version
 * ([ref] for DuckLake's schema main, [ref, schema] for another), each
 * table's answer embedding its Iceberg view's metadata. Written whole from
 * the refs and views as they are: a pass writes every file that differs,
 * deletes every other file, and runs again while the refs moved under it,
 * so the last writer to finish leaves the catalog of the refs it saw last. */
#include "iceberg_int.h"
#include "../layout/keys.h"
#include "../store/aws.h"
#include "../store/s3.h"

#include <stdlib.h>
#include <string.h>

#define CAT_PASSES 8

/* ---- the refs --------------------------------------------------------- */

typedef struct cat_ref {
	char name[256];
	char target[FDL_ID_LEN + 1];
	bool tag;
} cat_ref;

typedef struct cat_refs {
	cat_ref *items;
	size_t len;
} cat_refs;

static int refs_read(cat_refs *out, fdl_repo *repo, fdl_error *err)
{
	fdl_refs refs;
	int rc = fdl_refs_all(&refs, repo, true, err);
	if (!rc && !(out->items = calloc(refs.names.len + 1, sizeof *out->items)))
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && i < refs.names.len; i++) {
		fdl_ref_kind kind;
		const char *name = fdl_ref_short(refs.names.items[i], &kind);
		if (strlen(name) >= sizeof out->items[0].name)
			continue; /* as fdl_branch_list: no name a client could not hold */
		cat_ref *r = &out->items[out->len++];
		snprintf(r->name, sizeof r->name, "%s", name);
		memcpy(r->target, refs.ids[i], sizeof r->target);
		r->tag = kind == FDL_REF_TAG;
	}
	fdl_refs_free(&refs);
	return rc;
}

static bool refs_same(const cat_refs *a, const cat_refs *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->items, b->items, a->len * sizeof *a->items));
}

/* ---- what the catalog holds -------------------------------------------- */

typedef struct cat_file {
	char *key;
	char *text;
	size_t len;
} cat_file;

typedef struct cat_build {
	fdl_repo *repo;
	const char *location;
	char lid[FDL_ICEBERG_LID_LEN + 1];
	bool index;       /* folders with index.html: every store but a bucket */
	bool write_views; /* write a ref's missing view (verify only reads) */
	fdl_strmap *known; /* keys of the views written here (a rebuild keeps them) */
	cat_file *files;
	size_t nfiles;
	json_t *list;     /* the namespaces, as v1/namespaces lists them */
	json_t *report;   /* [{"namespace", "ref", "version", "tables"}] */
	json_t *notices;  /* [{"table", "column", "type", "reason"}] */
	fdl_strlist *missing; /* verify: "key\tmessage" for a ref without a view */
	json_t *seen;     /* what this build read once: "view:<id>", "live:<id>", "meta:<key>" */
} cat_build;

static void build_free(cat_build *b)
{
	for (size_t i = 0; i < b->nfiles; i++) {
		free(b->files[i].key);
		free(b->files[i].text);
	}
	free(b->files);
	json_decref(b->list);
	json_decref(b->report);
	json_decref(b->notices);
	json_decref(b->seen);
}

/* What the build remembers of `kind:name` (NULL: not yet). */
static json_t *seen_get(cat_build *b, const char *kind, const char *name)
{
	char *k = fdl_asprintf("%s:%s", kind, name);
	json_t *v = k ? json_object_get(b->seen, k) : NULL;
	free(k);
	return v;
}

static void seen_put(cat_build *b, const char *kind, const char *name, json_t *v)
{
	char *k = fdl_asprintf("%s:%s", kind, name);
	if (k && v)
		json_object_set(b->seen, k, v);
	free(k);
}

static int notice(cat_build *b, const char *what, const char *reason, fdl_error *err)
{
	json_t *n = json_pack("{s:s, s:s, s:s, s:s}", "table", what, "column", "", "type", "", "reason", reason);
	return n && !json_array_append_new(b->notices, n) ? 0 : fdl_oom(err);
}

/* Add resource `path` (a folder too when `folder`) holding doc (stolen). */
static int add_file(cat_build *b, const char *path, bool folder, json_t *doc, fdl_error *err)
{
	cat_file f = {.key = fdl_iceberg_catalog_key(b->lid, path, folder, b->index)};
	int rc = f.key && doc ? fdl_json_dump_as(&f.text, &f.len, doc, true, err) : fdl_oom(err);
	json_decref(doc);
	cat_file *p = rc ? NULL : realloc(b->files, (b->nfiles + 1) * sizeof *p);
	if (!rc && !p)
		rc = fdl_oom(err);
	if (rc) {
		free(f.key);
		free(f.text);
		return rc;
	}
	b->files = p;
	b->files[b->nfiles++] = f;
	return 0;
}

/* The view.json of version `id` at this location when it says what the
 * catalog needs (each table's schema, name and metadata) and, when the
 * build writes, is of this fdl's format (an older view is written again:
 * its snapshot ids are seqs); NULL otherwise. */
static json_t *view_read(cat_build *b, const char *id)
{
	char *dir = fdl_iceberg_view_dir(b->lid, id);
	char *key = dir ? fdl_asprintf("%s/" FDL_ICEBERG_VIEW_JSON, dir) : NULL;
	fdl_buf buf = {0};
	fdl_error e;
	json_t *doc = NULL;
	if (key && fdl_store_get(b->repo->store, key, FDL_META_MAX_BYTES, &buf, NULL, &e) == 0)
		fdl_json_parse(&doc, buf.data, buf.len, key, &e);
	json_int_t format = json_integer_value(json_object_get(doc, "fdl_iceberg"));
	bool ok = doc && !strcmp(fdl_ice_str(doc, "version"), id) && !strcmp(fdl_ice_str(doc, "location"), b->location) &&
		  json_is_object(json_object_get(doc, "tables")) &&
		  (format == FDL_ICEBERG_VIEW_FORMAT || (format == 1 && !b->write_views));
	const char *k;
	const json_t *t;
	json_object_foreach(ok ? json_object_get(doc, "tables") : NULL, k, t)
	{
		ok = ok && json_is_string(json_object_get(t, "schema")) && json_is_string(json_object_get(t, "name")) &&
		     json_is_integer(json_object_get(t, "schema_id")) && json_is_integer(json_object_get(t, "table_id")) &&
		     json_is_string(json_object_get(t, "metadata"));
	}
	if (!ok) {
		json_decref(doc);
		doc = NULL;
	}
	fdl_buf_free(&buf);
	free(dir);
	free(key);
	return doc;
}

/* The view of version `id`, written first when it has none (or one from
 * before the catalog, or of an older format) and the build may write. NULL
 * when there is none. */
static int view_of(json_t **out, cat_build *b, const char *id, fdl_error *err)
{
	int rc = 0;
	if ((*out = json_incref(seen_get(b, "view", id))))
		return 0;
	*out = view_read(b, id);
	if (!*out && b->write_views) {
		rc = fdl_ice_view_write(b->repo, id, b->location, b->known, err);
		if (!rc && !(*out = view_read(b, id)))
			rc = fdl_fail(err, FDL_ERROR, "the Iceberg view of %s was written but does not read back", id);
	}
	seen_put(b, "view", id, *out);
	return rc;
}

static bool live(cat_build *b, const char *id)
{
	const json_t *v = seen_get(b, "live", id);
	fdl_error e;
	bool yes = v ? json_is_true(v) : fdl_version_check_live(b->repo, id, &e) == 0;
	if (!v)
		seen_put(b, "live", id, json_boolean(yes));
	return yes;
}

/* A table's metadata as a view writes it: its location inside the
 * repository at b->location, its manifest lists in the view's tree, so the
 * catalog never names a file outside the repository (a planted metadata.json
 * is refused; `fdl iceberg ROOT@REF` writes the view again). */
static int inside_views(cat_build *b, const json_t *meta, const char *key, fdl_error *err)
{
	char *tree = fdl_asprintf("%s/" FDL_ICEBERG_DIR "/%s/", b->location, b->lid);
	const char *loc = fdl_ice_str(meta, "location");
	int rc = tree ? 0 : fdl_oom(err);
	if (!rc && (strncmp(loc, tree, strlen(tree)) || strstr(loc, "/../") || strstr(loc, "/./")))
		rc = fdl_fail(err, FDL_EINVALID, "%s: its location %s is not in the views' tree %s", key, loc, tree);
	size_t i;
	const json_t *x;
	json_array_foreach(rc ? NULL : json_object_get(meta, "snapshots"), i, x)
	{
		const char *ml = fdl_ice_str(x, "manifest-list");
		if (!rc && (strncmp(ml, tree, strlen(tree)) || !fdl_iceberg_rel_in(ml + strlen(tree), FDL_ICEBERG_MANIFESTS) ||
			    fdl_path_check_relative(ml + strlen(tree), "a manifest list", NULL)))
			rc = fdl_fail(err, FDL_EINVALID, "%s: snapshot %zu names %s, not a manifest of the views' tree %s "
				      "(fdl iceberg ROOT@REF writes the view again)", key, i, ml, tree);
	}
	if (!rc && json_array_size(json_object_get(meta, "metadata-log")))
		rc = fdl_fail(err, FDL_EINVALID, "%s: a metadata-log, which no view writes", key);
	free(tree);
	return rc;
}

/* One table's answer: its view's metadata.json embedded, with its URI. */
static int table_file(cat_build *b, const char *ns_path, const char *name, const char *view_dir, const json_t *t,
		      fdl_error *err)
{
	char *key = fdl_asprintf("%s/%s", view_dir, fdl_ice_str(t, "metadata"));
	char *uri = key ? fdl_asprintf("%s/%s", b->location, key) : NULL;
	char *path = fdl_asprintf("%s/tables/%s", ns_path, name);
	fdl_buf buf = {0};
	json_t *meta = key ? json_incref(seen_get(b, "meta", key)) : NULL;
	int rc = key && uri && path ? fdl_path_check_relative(key, "a view's metadata", err) : fdl_oom(err);
	if (!rc && !meta) {
		rc = fdl_store_get(b->repo->store, key, FDL_META_MAX_BYTES, &buf, NULL, err);
		if (!rc)
			rc = fdl_json_parse(&meta, buf.data, buf.len, key, err);
		if (!rc)
			rc = inside_views(b, meta, key, err);
		if (!rc)
			seen_put(b, "meta", key, meta);
	}
	if (!rc)
		rc = add_file(b, path, false,
			      json_pack("{s:s, s:O, s:{}}", "metadata-location", uri, "metadata", meta, "config"), err);
	json_decref(meta);
	fdl_buf_free(&buf);
	free(key);
	free(uri);
	free(path);
	return rc;
}

/* Namespace `levels` ([ref] or [ref, schema]) of ref r: its resource, its
 * list of tables and each table (`tables`: view.json's entries of one
 * DuckLake schema). */
static int namespace_files(cat_build *b, const cat_ref *r, json_t *levels, const json_t *tables, const char *view_dir,
			   fdl_error *err)
{
	const char *ref = json_string_value(json_array_get(levels, 0)), *schema = json_string_value(json_array_get(levels, 1));
	char *ns_path = schema ? fdl_asprintf("v1/namespaces/%s\x1f%s", ref, schema) : fdl_asprintf("v1/namespaces/%s", ref);
	char *full = fdl_ref_key(r->tag ? FDL_REF_TAG : FDL_REF_BRANCH, r->name);
	char *tables_path = ns_path ? fdl_asprintf("%s/tables", ns_path) : NULL;
	fdl_strlist names = {0};
	json_t *ids = json_array();
	int rc = ns_path && full && tables_path && ids ? 0 : fdl_oom(err);
	const char *k;
	const json_t *t;
	json_object_foreach(rc ? NULL : (json_t *)tables, k, t) if (!rc) rc = fdl_strlist_add(&names, k, err);
	fdl_strlist_sort(&names);
	for (size_t i = 0; i < names.len && !rc; i++) {
		rc = table_file(b, ns_path, names.items[i], view_dir, json_object_get(tables, names.items[i]), err);
		if (!rc)
			rc = json_array_append_new(ids, json_pack("{s:O, s:s}", "namespace", levels, "name", names.items[i]));
	}
	if (!rc)
		rc = add_file(b, tables_path, true, json_pack("{s:O}", "identifiers", ids), err);
	if (!rc)
		rc = add_file(b, ns_path, true,
			      json_pack("{s:O, s:{s:s, s:s}}", "namespace", levels, "properties", "fdl.ref", full,
					"fdl.version", r->target),
			      err);
	if (!rc && (json_array_append(b->list, levels) ||
		    json_array_append_new(b->report, json_pack("{s:O, s:s, s:s, s:I}", "namespace", levels, "ref", full,
							       "version", r->target, "tables", (json_int_t)names.len))))
		rc = fdl_oom(err);
	json_decref(ids);
	fdl_strlist_free(&names);
	free(ns_path);
	free(full);
	free(tables_path);
	return rc;
}

/* The view's tables grouped by the schema's catalog name, each
 * {"<table's catalog name>": entry}; renamed ones told. */
static int group_tables(json_t **out, cat_build *b, const json_t *view, fdl_error *err)
{
	json_t *by = json_object();
	int rc = by ? 0 : fdl_oom(err);
	const char *k;
	const json_t *t;
	json_object_foreach(rc ? NULL : json_object_get(view, "tables"), k, t)
	{
		const char *schema = fdl_ice_str(t, "schema"), *name = fdl_ice_str(t, "name");
		char *s = !strcmp(schema, "main") ? fdl_strdup("") : fdl_iceberg_catalog_name(schema, json_integer_value(json_object_get(t, "schema_id")));
		char *n = fdl_iceberg_catalog_name(name, json_integer_value(json_object_get(t, "table_id")));
		if (!s || !n) {
			rc = fdl_oom(err);
		} else if ((*s && strcmp(s, schema)) || strcmp(n, name)) {
			char *why = fdl_asprintf("named %s%s%s in the catalog: a namespace or table name there is "
						 "[A-Za-z0-9][A-Za-z0-9._-]*", *s ? s : "", *s ? "." : "", n);
			rc = why ? notice(b, k, why, err) : fdl_oom(err);
			free(why);
		}
		json_t *group = rc ? NULL : json_object_get(by, s);
		if (!rc && !group && json_object_set_new(by, s, group = json_object()))
			rc = fdl_oom(err);
		if (!rc && json_object_set(group, n, (json_t *)t))
			rc = fdl_oom(err);
		free(s);
		free(n);
	}
	if (!rc && !json_object_get(by, "") && json_object_set_new(by, "", json_object())) /* [ref] is always there */
		rc = fdl_oom(err);
	if (rc)
		json_decref(by);
	else
		*out = by;
	return rc;
}

/* Every namespace of ref r: [r] and [r, schema] for each other schema. */
static int ref_namespaces(cat_build *b, const cat_ref *r, fdl_error *err)
{
	char what[300], *full = fdl_ref_key(r->tag ? FDL_REF_TAG : FDL_REF_BRANCH, r->name);
	snprintf(what, sizeof what, "%s", full ? full : r->name);
	free(full);
	if (!fdl_iceberg_namespace_ok(r->name))
		return notice(b, what, "not a namespace: a name there is made of A-Z a-z 0-9 . _ - and /, and no part "
				       "of it is tables or index.html", err);
	if (!live(b, r->target))
		return notice(b, what, "not a namespace: its version is expired or withdrawn", err);
	json_t *view = NULL, *groups = NULL;
	int rc = view_of(&view, b, r->target, err);
	char *dir = fdl_iceberg_view_dir(b->lid, r->target);
	if (!rc && !dir)
		rc = fdl_oom(err);
	if (!rc && !view) { /* verify: reported, the rest checked */
		if (b->missing)
			rc = fdl_finding_add(b->missing, what, "names version %s, which has no Iceberg view for %s: its "
					     "namespace cannot be in the catalog (fdl iceberg ROOT --catalog writes it)",
					     r->target, b->location);
		free(dir);
		return rc;
	}
	if (!rc)
		rc = group_tables(&groups, b, view, err);
	fdl_strlist schemas = {0};
	const char *k;
	json_t *g;
	json_object_foreach(rc ? NULL : groups, k, g) if (!rc) rc = fdl_strlist_add(&schemas, k, err);
	fdl_strlist_sort(&schemas); /* "" (main) first */
	for (size_t i = 0; i < schemas.len && !rc; i++) {
		json_t *levels = *schemas.items[i] ? json_pack("[s, s]", r->name, schemas.items[i]) : json_pack("[s]", r->name);
		rc = levels ? namespace_files(b, r, levels, json_object_get(groups, schemas.items[i]), dir, err) : fdl_oom(err);
		json_decref(levels);
	}
	fdl_strlist_free(&schemas);
	json_decref(groups);
	json_decref(view);
	free(dir);
	return rc;
}

static int levels_cmp(const void *x, const void *y)
{
	const json_t *a = *(const json_t *const *)x, *b = *(const json_t *const *)y;
	for (size_t i = 0; i < json_array_size(a) && i < json_array_size(b); i++) {
		int c = strcmp(json_string_value(json_array_get(a, i)), json_string_value(json_array_get(b, i)));
		if (c)
			return c;
	}
	return json_array_size(a) < json_array_size(b) ? -1 : json_array_size(a) > json_array_size(b);
}

/* v1/namespaces: `list` (arrays of strings) sorted by their levels. */
static int add_list(cat_build *b, const json_t *list, fdl_error *err)
{
	size_t n = json_array_size(list);
	json_t **items = calloc(n ? n : 1, sizeof *items), *sorted = json_array();
	int rc = items && sorted ? 0 : fdl_oom(err);
	for (size_t i = 0; i < n && !rc; i++)
		items[i] = json_array_get(list, i);
	if (!rc)
		qsort(items, n, sizeof *items, levels_cmp);
	for (size_t i = 0; i < n && !rc; i++)
		if (json_array_append(sorted, items[i]))
			rc = fdl_oom(err);
	free(items);
	if (rc) {
		json_decref(sorted);
		return rc;
	}
	return add_file(b, "v1/namespaces", true, json_pack("{s:o}", "namespaces", sorted), err);
}

static int build_start(cat_build *b, fdl_error *err)
{
	b->list = json_array();
	b->report = json_array();
	b->notices = json_array();
	b->seen = json_object();
	b->index = fdl_iceberg_catalog_index(b->repo);
	return b->list && b->report && b->notices && b->seen ? fdl_iceberg_location_id(b->lid, b->location, err)
							      : fdl_oom(err);
}

/* The files of the catalog of these refs. */
static int build(cat_build *b, const cat_refs *refs, fdl_error *err)
{
	int rc = build_start(b, err);
	for (size_t i = 0; i < refs->len && !rc; i++)
		rc = ref_namespaces(b, &refs->items[i], err);
	/* metrics: Spark posts them after each scan unless told not to;
	 * endpoints: GETs only, no HEAD (a static host's redirect of a folder
	 * fails a HEAD in pyiceberg) */
	if (!rc)
		rc = add_file(b, "v1/config", false,
			      json_pack("{s:{}, s:{s:s}, s:[s, s, s, s]}", "defaults", "overrides",
					"rest-metrics-reporting-enabled", "false", "endpoints",
					"GET /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}",
					"GET /v1/{prefix}/namespaces/{namespace}/tables",
					"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"),
			      err);
	if (!rc)
		rc = add_list(b, b->list, err);
	return rc;
}

/* ---- writing ----------------------------------------------------------- */

/* Every file of b where it differs. */
static int write_files(cat_build *b, int64_t *written, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < b->nfiles && !rc; i++) {
		if (b->known)
			rc = fdl_strmap_put(b->known, b->files[i].key, 1, err);
		if (!rc)
			rc = fdl_store_replace_if_changed(b->repo->store, b->files[i].key, b->files[i].text, b->files[i].len, written, err);
	}
	return rc;
}

/* Whether `rel` (a key under the catalog's root) belongs to a namespace of
 * ref `name`: [name] or [name, schema], its tables, their answers. */
static bool of_ref(const char *rel, const char *name)
{
	static const char ns[] = "v1/namespaces/";
	size_t n = strlen(name);
	if (strncmp(rel, ns, sizeof ns - 1) || strncmp(rel + sizeof ns - 1, name, n))
		return false;
	const char *rest = rel + sizeof ns - 1 + n;
	return !*rest || *rest == '\x1f' || !strcmp(rest, "/" FDL_ICEBERG_CATALOG_INDEX) ||
	       (!strncmp(rest, "/tables", 7) && (!rest[7] || rest[7] == '/'));
}

/* Delete every file under `prefix` that b does not hold (and, with `ref`,
 * that belongs to a namespace of that ref), then the folders left empty. */
static int delete_under(cat_build *b, const fdl_strmap *want, const char *dir, const char *prefix, const char *ref,
			fdl_error *err)
{
	fdl_strlist keys = {0};
	int rc = fdl_store_list(b->repo->store, prefix, &keys, err);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		int64_t v;
		if (!fdl_strmap_get(want, keys.items[i], &v) && (!ref || of_ref(keys.items[i] + strlen(dir) + 1, ref)))
			rc = fdl_store_del_owned(b->repo->store, fdl_strdup(keys.items[i]), NULL, err);
	}
	if (!rc)
		rc = fdl_store_prune(b->repo->store, prefix, err);
	fdl_strlist_free(&keys);
	return rc;
}

/* Every other file of the catalog deleted, or, with `ref`, every other file
 * of its namespaces: [ref] and those in `nested` ([ref, schema] levels, the
 * ones the list named before and the ones b holds). On a bucket the prefix
 * of [ref] lists [ref, schema] too (and other refs that start with its name,
 * which of_ref leaves); on a file system each is a folder of its own. */
static int delete_stale(cat_build *b, const char *ref, const json_t *nested, fdl_error *err)
{
	fdl_strmap want = {0};
	char *dir = fdl_iceberg_catalog_dir(b->lid);
	char *prefix = !dir ? NULL : ref ? fdl_asprintf("%s/v1/namespaces/%s", dir, ref) : fdl_strdup(dir);
	int rc = prefix ? 0 : fdl_oom(err);
	for (size_t i = 0; i < b->nfiles && !rc; i++)
		rc = fdl_strmap_put(&want, b->files[i].key, 1, err);
	if (!rc)
		rc = delete_under(b, &want, dir, prefix, ref, err);
	size_t i;
	const json_t *levels;
	json_array_foreach(!rc && ref && b->index ? nested : NULL, i, levels)
	{
		char *sub = fdl_asprintf("%s\x1f%s", prefix, json_string_value(json_array_get(levels, 1)));
		rc = sub ? delete_under(b, &want, dir, sub, ref, err) : fdl_oom(err);
		free(sub);
		if (rc)
			break;
	}
	fdl_strmap_free(&want);
	free(dir);
	free(prefix);
	return rc;
}

/* One pass of the whole catalog: FDL_ECONFLICT when another writer moved
 * a file under it, *done when the refs did not move meanwhile. */
static int pass_all(fdl_ice_catalog *out, bool *done, fdl_repo *repo, const char *location, fdl_strmap *known,
		    int64_t *written, fdl_error *err)
{
	cat_refs before = {0}, after = {0};
	cat_build b = {.repo = repo, .location = location, .write_views = true, .known = known};
	int rc = refs_read(&before, repo, err);
	if (!rc)
		rc = build(&b, &before, err);
	if (!rc)
		rc = write_files(&b, written, err);
	if (!rc)
		rc = delete_stale(&b, NULL, NULL, err);
	if (!rc)
		rc = refs_read(&after, repo, err);
	*done = !rc && refs_same(&before, &after);
	if (*done && out) {
		out->namespaces = json_incref(b.report);
		out->notices = json_incref(b.notices);
	}
	build_free(&b);
	free(before.items);
	free(after.items);
	return rc;
}

int fdl_ice_catalog_sync(fdl_ice_catalog *out, fdl_repo *repo, const char *location, fdl_strmap *known,
			 fdl_error *err)
{
	int64_t written = 0;
	for (int pass = 0; pass < CAT_PASSES; pass++) {
		bool done = false;
		int rc = pass_all(out, &done, repo, location, known, &written, err);
		if (rc == FDL_ECONFLICT || rc == FDL_EEXISTS) { /* another writer of the catalog */
			fdl_error_clear(err);
			continue;
		}
		if (rc)
			return fdl_error_prefix(err, "the Iceberg catalog for %s", location);
		if (done) {
			if (out)
				out->written = written;
			return 0;
		}
	}
	return fdl_fail(err, FDL_ECONFLICT, "the refs of %s kept moving while fdl wrote its Iceberg catalog for %s",
			repo->root, location);
}

static bool has_levels(const json_t *list, const json_t *levels)
{
	size_t i;
	const json_t *x;
	json_array_foreach(list, i, x) if (json_equal(x, levels)) return true;
	return false;
}

/* v1/namespaces as it is, with the namespaces of branch `name` replaced by
 * those in b->list, added to b (last); *etag what the list had; `nested`
 * gets the [name, schema] namespaces of both. *whole (and nothing added)
 * when there is no list to start from, or one fdl did not write. */
static int list_with(bool *whole, cat_build *b, const char *name, char etag[FDL_ETAG_MAX], json_t *nested,
		     fdl_error *err)
{
	char *key = fdl_iceberg_catalog_key(b->lid, "v1/namespaces", true, b->index);
	fdl_buf old = {0};
	fdl_error e;
	json_t *list = json_array();
	int rc = key && list ? 0 : fdl_oom(err);
	*whole = !rc && fdl_store_get(b->repo->store, key, FDL_META_MAX_BYTES, &old, etag, &e);
	if (!rc && !*whole)
		rc = fdl_ice_namespaces_old(whole, list, nested, old.data, old.len, name, key, err);
	size_t i;
	const json_t *x;
	json_array_foreach(rc || *whole ? NULL : b->list, i, x)
	{
		if (!rc && json_array_append(list, (json_t *)x))
			rc = fdl_oom(err);
		if (!rc && json_array_size(x) > 1 && !has_levels(nested, x) && json_array_append(nested, (json_t *)x))
			rc = fdl_oom(err);
	}
	if (!rc && !*whole)
		rc = add_list(b, list, err);
	json_decref(list);
	fdl_buf_free(&old);
	free(key);
	return rc;
}

/* What a pass for one branch found: its namespaces written and the branch
 * still where the pass read it; the branch moved meanwhile (another pass);
 * the whole catalog to be written instead (none yet, or a list fdl did not
 * write). */
typedef enum { CAT_PASS_DONE, CAT_PASS_AGAIN, CAT_PASS_WHOLE } cat_pass;

/* A pass's files, then its list (last, by compare-and-swap from `etag`:
 * other branches' commits change it too), then what it no longer names. */
static int pass_write(cat_build *b, const char *name, const char *etag, json_t *nested, fdl_error *err)
{
	cat_file list = b->files[--b->nfiles];
	int rc = write_files(b, NULL, err);
	if (!rc) /* racing tests let another branch's commit change the list here */
		fdl_test_pause("iceberg-catalog-list");
	if (!rc)
		rc = fdl_store_put_if_match(b->repo->store, list.key, list.text, list.len, etag, err);
	if (!rc)
		rc = delete_stale(b, name, nested, err);
	free(list.key);
	free(list.text);
	return rc;
}

/* One pass for branch `name` alone; *next says what comes after it. */
static int pass_branch(cat_pass *next, fdl_repo *repo, const char *location, const char *name, fdl_error *err)
{
	cat_ref r = {.tag = false};
	json_t *nested = json_array();
	char again[FDL_ID_LEN + 1] = "";
	bool exists = false, still = false;
	char etag[FDL_ETAG_MAX] = "";
	char *ref = fdl_ref_key(FDL_REF_BRANCH, name);
	cat_build b = {.repo = repo, .location = location, .write_views = true};
	snprintf(r.name, sizeof r.name, "%s", name);
	int rc = ref && nested ? fdl_ref_read(repo, ref, r.target, &exists, NULL, err) : fdl_oom(err);
	if (!rc)
		rc = build_start(&b, err);
	if (!rc && exists)
		rc = ref_namespaces(&b, &r, err);
	bool whole = false; /* then nothing of this pass is written */
	if (!rc)
		rc = list_with(&whole, &b, name, etag, nested, err);
	if (!rc && !whole)
		rc = pass_write(&b, name, etag, nested, err);
	if (!rc && !whole)
		rc = fdl_ref_read(repo, ref, again, &still, NULL, err);
	*next = whole ? CAT_PASS_WHOLE
		: still == exists && (!exists || !strcmp(again, r.target)) ? CAT_PASS_DONE
									   : CAT_PASS_AGAIN;
	json_decref(nested);
	build_free(&b);
	free(ref);
	return rc;
}

int fdl_ice_catalog_sync_branch(fdl_repo *repo, const char *location, const char *branch, fdl_error *err)
{
	for (int pass = 0; pass < CAT_PASSES; pass++) {
		cat_pass next = CAT_PASS_AGAIN;
		int rc = pass_branch(&next, repo, location, branch, err);
		if (rc == FDL_ECONFLICT || rc == FDL_EEXISTS) {
			fdl_error_clear(err);
			continue;
		}
		if (rc)
			return fdl_error_prefix(err, "the Iceberg catalog for %s", location);
		if (next == CAT_PASS_WHOLE)
			return fdl_ice_catalog_sync(NULL, repo, location, NULL, err);
		if (next == CAT_PASS_DONE)
			return 0;
	}
	return fdl_fail(err, FDL_ECONFLICT, "branch %s of %s kept moving while fdl wrote its Iceberg catalog for %s",
			branch, repo->root, location);
}

/* ---- what fdl verify says ----------------------------------------------- */

/* Whether `uri` is the location followed by a key present in the view's tree. */
static bool names_present(const char *location, const fdl_strmap *present, const char *uri)
{
	size_t n = strlen(location);
	int64_t v;
	return uri && !strncmp(uri, location, n) && uri[n] == '/' &&
	       !fdl_path_check_relative(uri + n + 1, "a catalog's URI", NULL) && fdl_strmap_get(present, uri + n + 1, &v);
}

/* A table answer as it is: every file it leads to is in the repository, of a live version. */
static int check_answer(fdl_strlist *problems, cat_build *b, const fdl_strmap *present, const char *key,
			const json_t *doc)
{
	const json_t *meta = json_object_get(doc, "metadata");
	const char *loc = json_string_value(json_object_get(doc, "metadata-location"));
	const char *vid = json_string_value(json_object_get(json_object_get(meta, "properties"), "fdl.version"));
	fdl_error e;
	if (!names_present(b->location, present, loc))
		return fdl_finding_add(problems, key, "leads to %s, which is not a file of the repository's views",
				       loc ? loc : "(no metadata-location)");
	if (!vid || fdl_version_check_live(b->repo, vid, &e))
		return fdl_finding_add(problems, key, "is the view of version %s, which is not live", vid ? vid : "(none)");
	size_t i;
	const json_t *s;
	json_array_foreach(json_object_get(meta, "snapshots"), i, s)
	{
		const char *ml = json_string_value(json_object_get(s, "manifest-list"));
		if (!names_present(b->location, present, ml))
			return fdl_finding_add(problems, key, "leads to %s, which is not a file of the repository's views",
					       ml ? ml : "(no manifest-list)");
	}
	return 0;
}

/* One file of the catalog as it is against what it should hold. */
static int check_file(fdl_strlist *problems, fdl_strlist *warnings, cat_build *b, const fdl_strmap *present,
		      const char *key, const cat_file *want, fdl_error *err)
{
	fdl_buf buf = {0};
	fdl_error e;
	json_t *doc = NULL;
	int rc = 0;
	if (fdl_store_get(b->repo->store, key, FDL_META_MAX_BYTES, &buf, NULL, &e) ||
	    fdl_json_parse(&doc, buf.data, buf.len, key, &e)) {
		rc = fdl_finding_add(problems, key, "%s", e.message);
	} else if (json_object_get(doc, "metadata")) {
		rc = check_answer(problems, b, present, key, doc);
	}
	if (!rc && (!want || want->len != buf.len || memcmp(want->text, buf.data, buf.len)) && doc)
		rc = fdl_finding_add(warnings, key, "%s (a commit is writing it, or its hook failed: fdl iceberg ROOT "
				     "--catalog writes the catalog again)",
				     want ? "is behind the refs and views" : "is no resource of the catalog the refs make");
	(void)err;
	json_decref(doc);
	fdl_buf_free(&buf);
	return rc;
}

int fdl_ice_catalog_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, const char *location,
			  const fdl_strmap *present, fdl_error *err)
{
	cat_refs refs = {0};
	cat_build b = {.repo = repo, .location = location, .missing = warnings};
	fdl_strlist keys = {0};
	fdl_strmap have = {0};
	int rc = refs_read(&refs, repo, err);
	if (!rc)
		rc = build(&b, &refs, err);
	char *dir = rc ? NULL : fdl_iceberg_catalog_dir(b.lid);
	if (!rc)
		rc = dir ? fdl_store_list(repo->store, dir, &keys, err) : fdl_oom(err);
	fdl_strlist_sort(&keys);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const cat_file *want = NULL;
		for (size_t k = 0; k < b.nfiles && !want; k++)
			if (!strcmp(b.files[k].key, keys.items[i]))
				want = &b.files[k];
		rc = fdl_strmap_put(&have, keys.items[i], 1, err);
		if (!rc)
			rc = check_file(problems, warnings, &b, present, keys.items[i], want, err);
	}
	for (size_t k = 0; k < b.nfiles && !rc; k++) {
		int64_t v;
		if (!fdl_strmap_get(&have, b.files[k].key, &v))
			rc = fdl_finding_add(warnings, b.files[k].key, "missing: the catalog is behind the refs (fdl "
					     "iceberg ROOT --catalog writes it)");
	}
	free(dir);
	fdl_strlist_free(&keys);
	fdl_strmap_free(&have);
	build_free(&b);
	free(refs.items);
	return rc;
}
