/* The Iceberg view tree's names and its record of locations (iceberg.h). */
#include "iceberg.h"

#include <stdlib.h>
#include <string.h>

int fdl_iceberg_location_check(char **out, const char *uri, fdl_error *err)
{
	static const char *const schemes[] = {"file:///", "s3://", "https://", "http://", NULL};
	bool known = false;
	for (const char *const *s = schemes; *s && !known; s++)
		known = !strncmp(uri, *s, strlen(*s)) && uri[strlen(*s)] && uri[strlen(*s)] != '/';
	if (!known)
		return fdl_fail(err, FDL_EINVALID,
				"--location '%s': expected an absolute file:///, s3://, https:// or http:// URI", uri);
	for (const char *p = uri; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == '?' || *p == '#' || *p == '\\' || *p == '"')
			return fdl_fail(err, FDL_EINVALID,
					"--location '%s': a space, control character, '?', '#', '\\' or '\"' cannot "
					"be part of an Iceberg location",
					uri);
	if (strstr(uri, "/../") || strstr(uri, "/./") || strstr(uri, "//") != strstr(uri, "://") + 1)
		return fdl_fail(err, FDL_EINVALID, "--location '%s': '.', '..' or an empty path segment", uri);
	char *s = fdl_strdup(uri);
	if (!s)
		return fdl_oom(err);
	size_t n = strlen(s);
	while (n && s[n - 1] == '/')
		s[--n] = '\0';
	*out = s;
	return 0;
}

int fdl_iceberg_own_location(char **out, fdl_repo *repo, fdl_error *err)
{
	const char *root = repo->root;
	if (fdl_store_can(repo->store, FDL_STORE_LOCAL)) {
		char *uri = fdl_asprintf("file://%s", root);
		int rc = uri ? fdl_iceberg_location_check(out, uri, err) : fdl_oom(err);
		free(uri);
		return rc;
	}
	if (fdl_store_can(repo->store, FDL_STORE_BUCKET | FDL_STORE_WRITE))
		return fdl_iceberg_location_check(out, root, err);
	return fdl_fail(err, FDL_EINVALID,
			"%s cannot be written: an Iceberg view is written into the repository, so run fdl iceberg "
			"where it is kept (a folder or a bucket), with --location %s",
			root, root);
}

int fdl_iceberg_location_id(char lid[FDL_ICEBERG_LID_LEN + 1], const char *location, fdl_error *err)
{
	char hex[65];
	int rc = fdl_sha256_mem(hex, location, strlen(location), err);
	if (!rc) {
		memcpy(lid, hex, FDL_ICEBERG_LID_LEN);
		lid[FDL_ICEBERG_LID_LEN] = '\0';
	}
	return rc;
}

int fdl_iceberg_snapshot_id(int64_t *out, const char *version_id, fdl_error *err)
{
	char hex[65];
	int rc = fdl_sha256_mem(hex, version_id, strlen(version_id), err);
	uint64_t v = 0;
	for (int i = 0; i < 16 && !rc; i++)
		v = v << 4 | (uint64_t)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	*out = rc ? 0 : (int64_t)((v & 0x3fffffffffffffffu) | 0x4000000000000000u);
	return rc;
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* [A-Za-z0-9][A-Za-z0-9_-]* (and '.' when `dot`), at most 100 bytes */
static bool plain_name(const char *name, bool dot)
{
	size_t n = strlen(name);
	bool plain = n > 0 && n <= 100 && alnum(name[0]);
	for (size_t i = 0; i < n && plain; i++)
		plain = alnum(name[i]) || name[i] == '_' || name[i] == '-' || (dot && name[i] == '.');
	return plain;
}

char *fdl_iceberg_segment(const char *name, int64_t id)
{
	return plain_name(name, false) ? fdl_strdup(name) : fdl_asprintf("_%lld", (long long)id);
}

char *fdl_iceberg_catalog_name(const char *name, int64_t id)
{
	return plain_name(name, true) && strcmp(name, FDL_ICEBERG_CATALOG_INDEX) ? fdl_strdup(name)
										  : fdl_asprintf("_%lld", (long long)id);
}

bool fdl_iceberg_namespace_ok(const char *ref)
{
	if (!*ref)
		return false;
	for (const char *p = ref; *p; p++)
		if (!alnum(*p) && !strchr("._-/", *p))
			return false;
	for (const char *part = ref; part;) {
		const char *end = strchr(part, '/');
		size_t n = end ? (size_t)(end - part) : strlen(part);
		if ((n == 6 && !strncmp(part, "tables", 6)) ||
		    (n == strlen(FDL_ICEBERG_CATALOG_INDEX) && !strncmp(part, FDL_ICEBERG_CATALOG_INDEX, n)))
			return false;
		part = end ? end + 1 : NULL;
	}
	return true;
}

char *fdl_iceberg_catalog_dir(const char *lid)
{
	return fdl_asprintf(FDL_ICEBERG_DIR "/%s/" FDL_ICEBERG_CATALOG, lid);
}

char *fdl_iceberg_catalog_key(const char *lid, const char *path, bool folder, bool index)
{
	return fdl_asprintf(FDL_ICEBERG_DIR "/%s/catalog/%s%s", lid, path,
			    folder && index ? "/" FDL_ICEBERG_CATALOG_INDEX : "");
}

bool fdl_iceberg_catalog_index(fdl_repo *repo)
{
	return !fdl_store_can(repo->store, FDL_STORE_BUCKET);
}

char *fdl_iceberg_view_dir(const char *lid, const char *version_id)
{
	return fdl_asprintf(FDL_ICEBERG_DIR "/%s/versions/%s", lid, version_id);
}

char *fdl_iceberg_manifest_key(const char *lid, const char *sha256)
{
	return fdl_asprintf(FDL_ICEBERG_DIR "/%s/" FDL_ICEBERG_MANIFESTS "/%s.avro", lid, sha256);
}

char *fdl_iceberg_deletes_key(const char *lid, const char *data_path)
{
	return fdl_asprintf(FDL_ICEBERG_DIR "/%s/" FDL_ICEBERG_DELETES "/%s", lid, data_path);
}

char *fdl_iceberg_manifests_dir(const char *lid)
{
	return fdl_asprintf(FDL_ICEBERG_DIR "/%s/" FDL_ICEBERG_MANIFESTS, lid);
}

char *fdl_iceberg_manifests_uri(const char *location, const char *lid)
{
	return fdl_asprintf("%s/" FDL_ICEBERG_DIR "/%s/" FDL_ICEBERG_MANIFESTS "/", location, lid);
}

char *fdl_iceberg_metadata_key(const char *table_dir, int64_t seq, const char *version_id)
{
	return fdl_asprintf("%s/metadata/%05lld-%s.metadata.json", table_dir, (long long)seq, version_id);
}

bool fdl_iceberg_rel_in(const char *rel, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(rel, dir, n) && rel[n] == '/';
}

int fdl_iceberg_views_parse(json_t **out, const char *data, size_t len, const char *src, fdl_error *err)
{
	json_t *doc = NULL;
	int rc = fdl_json_parse(&doc, data, len, src, err);
	const json_t *views = NULL;
	if (!rc)
		rc = fdl_json_get_typed(&views, doc, "views", JSON_ARRAY, true, src, "views", err);
	size_t i;
	const json_t *v;
	json_array_foreach(rc ? NULL : views, i, v)
	{
		const char *loc = json_string_value(json_object_get(v, "location"));
		char lid[FDL_ICEBERG_LID_LEN + 1];
		const char *id = json_string_value(json_object_get(v, "id"));
		if (!loc || !id || fdl_iceberg_location_id(lid, loc, err) || strcmp(lid, id)) {
			rc = fdl_fail(err, FDL_EINVALID, "%s: views[%zu] needs a location and its id", src, i);
			break;
		}
	}
	if (rc) {
		json_decref(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

static int views_get(json_t **out, char etag[FDL_ETAG_MAX], bool *exists, fdl_repo *repo, fdl_error *err)
{
	fdl_buf b = {0};
	char *src = fdl_asprintf("%s/%s", repo->root, FDL_ICEBERG_VIEWS);
	int rc = src ? fdl_store_get(repo->store, FDL_ICEBERG_VIEWS, FDL_META_MAX_BYTES, &b, etag, err) : fdl_oom(err);
	*exists = rc != FDL_ENOTFOUND;
	if (rc == FDL_ENOTFOUND) {
		rc = 0;
		*out = json_pack("{s:i, s:[]}", "fdl_iceberg", 1, "views");
		if (!*out)
			rc = fdl_oom(err);
	} else if (!rc)
		rc = fdl_iceberg_views_parse(out, b.data, b.len, src, err);
	fdl_buf_free(&b);
	free(src);
	return rc;
}

int fdl_iceberg_views_read(json_t **out, fdl_repo *repo, fdl_error *err)
{
	char etag[FDL_ETAG_MAX];
	bool exists;
	return views_get(out, etag, &exists, repo, err);
}

bool fdl_iceberg_view_has_catalog(const json_t *entry)
{
	return json_is_true(json_object_get(entry, "catalog"));
}

static json_t *views_entry(const json_t *doc, const char *location)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(doc, "views"), i, v)
	if (!strcmp(json_string_value(json_object_get(v, "location")), location)) return v;
	return NULL;
}

int fdl_iceberg_views_add(fdl_repo *repo, const char *location, bool catalog, fdl_error *err)
{
	char lid[FDL_ICEBERG_LID_LEN + 1];
	int rc = fdl_iceberg_location_id(lid, location, err);
	for (int attempt = 0; attempt < 5 && !rc; attempt++) {
		json_t *doc = NULL;
		char etag[FDL_ETAG_MAX] = "";
		bool exists = false;
		rc = views_get(&doc, etag, &exists, repo, err);
		json_t *entry = rc ? NULL : views_entry(doc, location);
		if (rc || (entry && (!catalog || fdl_iceberg_view_has_catalog(entry)))) {
			json_decref(doc);
			return rc;
		}
		if (entry)
			json_object_set_new(entry, "catalog", json_true());
		else
			json_array_append_new(json_object_get(doc, "views"),
					      catalog ? json_pack("{s:s, s:s, s:b}", "id", lid, "location", location, "catalog", 1)
						      : json_pack("{s:s, s:s}", "id", lid, "location", location));
		char *text = NULL;
		size_t len = 0;
		rc = fdl_json_dump(&text, &len, doc, err);
		json_decref(doc);
		if (!rc)
			rc = fdl_store_put_if_match(repo->store, FDL_ICEBERG_VIEWS, text, len, exists ? etag : NULL, err);
		free(text);
		if (rc != FDL_ECONFLICT && rc != FDL_EEXISTS)
			return rc;
		rc = 0;
	}
	return rc ? rc : fdl_fail(err, FDL_ECONFLICT, "%s/%s kept changing under fdl", repo->root, FDL_ICEBERG_VIEWS);
}
