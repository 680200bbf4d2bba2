/* version.json: the reader's checks (docs/format.md, "version.json"). */
#include "hindex.h"
#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

struct fdl_version {
	json_t *doc;
	const char *id, *created_at, *author_name, *author_email, *message;
	const char *catalog_path, *catalog_sha256, *catalog_storage, *ducklake_format;
	int64_t seq, catalog_bytes, snapshot_id;
	const json_t *parents;
	fdl_change *changes; /* `changes`, typed */
	size_t change_count;
	bool brief; /* only the head (fdl_version_from_head): no catalog, no files */
	const json_t *changes_json;
};

char *fdl_version_key(const char *id, const char *name)
{
	return fdl_asprintf(FDL_VERSIONS_DIR "/%s/%s", id, name);
}

bool fdl_is_sha256_hex(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (int i = 0; i < 64; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

/* A {path, bytes, sha256} reference to a file beside version.json. */
static int check_file_ref(const json_t *doc, const char *key, bool required, const char *src, fdl_error *err,
			  const char **path, int64_t *bytes, const char **sha)
{
	const json_t *o;
	int rc = fdl_json_get_typed(&o, doc, key, JSON_OBJECT, required, src, key, err);
	if (rc || !o)
		return rc;
	char f[64];
	const char *p, *h;
	int64_t n;
	snprintf(f, sizeof f, "%s.path", key);
	if ((rc = fdl_json_get_string(&p, o, "path", true, src, f, err)))
		return rc;
	if ((rc = fdl_path_check_relative(p, f, err)))
		return fdl_error_prefix(err, "%s", src);
	snprintf(f, sizeof f, "%s.bytes", key);
	if ((rc = fdl_json_get_int(&n, NULL, o, "bytes", true, src, f, err)))
		return rc;
	if (n < 0)
		return fdl_fail(err, FDL_EINVALID, "%s: field '%s' is negative", src, f);
	snprintf(f, sizeof f, "%s.sha256", key);
	if ((rc = fdl_json_get_string(&h, o, "sha256", true, src, f, err)))
		return rc;
	if (!fdl_is_sha256_hex(h))
		return fdl_fail(err, FDL_EINVALID, "%s: field '%s' is '%.80s'; expected 64 lower-case hex digits",
				src, f, h);
	if (path)
		*path = p;
	if (bytes)
		*bytes = n;
	if (sha)
		*sha = h;
	return 0;
}

/* The checks of the fields fdl log shows, once taken from a version.json
 * or a history index head: id, seq, parents, created_at. */
static int check_head(const fdl_version *v, const char *dir_id, const char *src, fdl_error *err)
{
	if (!fdl_id_is_valid(v->id))
		return fdl_fail(err, FDL_EINVALID, "%s: field 'id' is '%.80s'; expected a lower-case hyphenated UUID",
				src, v->id);
	if (dir_id && strcmp(v->id, dir_id) != 0)
		return fdl_fail(err, FDL_EINVALID,
				"%s: field 'id' is %s but the version's directory is %s; refusing to read it", src,
				v->id, dir_id);
	if (v->seq < 1)
		return fdl_fail(err, FDL_EINVALID, "%s: field 'seq' is %lld; expected 1 or more", src,
				(long long)v->seq);
	size_t i;
	const json_t *p;
	json_array_foreach(v->parents, i, p)
	{
		if (!json_is_string(p) || !fdl_id_is_valid(json_string_value(p)))
			return fdl_fail(err, FDL_EINVALID, "%s: field 'parents[%zu]' is not a version id", src, i);
	}
	if (json_array_size(v->parents) == 0 && v->seq != 1)
		return fdl_fail(err, FDL_EINVALID, "%s: field 'seq' is %lld but 'parents' is empty; a first version "
				"has seq 1", src, (long long)v->seq);
	if (json_array_size(v->parents) > 0 && v->seq < 2)
		return fdl_fail(err, FDL_EINVALID, "%s: field 'seq' is 1 but the version has a parent; expected the "
				"first parent's seq + 1", src);
	if (!fdl_time_is_iso_utc(v->created_at))
		return fdl_fail(err, FDL_EINVALID,
				"%s: field 'created_at' is '%.80s'; expected UTC ISO 8601 like 2026-10-30T09:00:00Z",
				src, v->created_at);
	return 0;
}

/* A history index head: [seq, id, parents, created_at, author name,
 * author email or null, message, changes or null] (layout/hindex.h). */
static int validate_head_array(fdl_version *v, const char *dir_id, const char *src, fdl_error *err)
{
	const json_t *a = v->doc, *seq = json_array_get(a, FDL_HEAD_SEQ), *email = json_array_get(a, FDL_HEAD_AUTHOR_EMAIL);
	v->id = json_string_value(json_array_get(a, FDL_HEAD_ID));
	v->parents = json_array_get(a, FDL_HEAD_PARENTS);
	v->created_at = json_string_value(json_array_get(a, FDL_HEAD_CREATED_AT));
	v->author_name = json_string_value(json_array_get(a, FDL_HEAD_AUTHOR_NAME));
	v->author_email = json_string_value(email);
	v->message = json_string_value(json_array_get(a, FDL_HEAD_MESSAGE));
	v->changes_json = json_array_get(a, FDL_HEAD_CHANGES);
	v->catalog_bytes = v->snapshot_id = -1;
	if (json_array_size(a) != FDL_HEAD_FIELDS || !json_is_integer(seq) || !v->id || !json_is_array(v->parents) ||
	    !v->created_at || !v->author_name || !(json_is_null(email) || v->author_email) || !v->message ||
	    !(json_is_null(v->changes_json) || json_is_array(v->changes_json)))
		return fdl_fail(err, FDL_EINVALID,
				"%s: a history index head is [seq, id, parents, created_at, author name, author email "
				"or null, message, changes or null]",
				src);
	v->seq = (int64_t)json_integer_value(seq);
	if (json_is_null(v->changes_json))
		v->changes_json = NULL;
	return check_head(v, dir_id, src, err);
}

/* The fields fdl log shows, then (unless brief) the rest. */
static int validate(fdl_version *v, const char *dir_id, const char *src, fdl_error *err)
{
	const json_t *d = v->doc;
	const char *s;
	int rc = 0;
	if (!json_is_object(d))
		return fdl_fail(err, FDL_EINVALID, "%s: expected a JSON object", src);
	if (!v->brief && (rc = fdl_json_get_string(&s, d, "fdl", true, src, "fdl", err)))
		return rc;
	if ((rc = fdl_json_get_string(&v->id, d, "id", true, src, "id", err)) ||
	    (rc = fdl_json_get_int(&v->seq, NULL, d, "seq", true, src, "seq", err)) ||
	    (rc = fdl_json_get_typed(&v->parents, d, "parents", JSON_ARRAY, true, src, "parents", err)) ||
	    (rc = fdl_json_get_string(&v->created_at, d, "created_at", true, src, "created_at", err)) ||
	    (rc = check_head(v, dir_id, src, err)))
		return rc;
	const json_t *author;
	if ((rc = fdl_json_get_typed(&author, d, "author", JSON_OBJECT, true, src, "author", err)))
		return rc;
	if ((rc = fdl_json_get_string(&v->author_name, author, "name", true, src, "author.name", err)))
		return rc;
	if ((rc = fdl_json_get_string(&v->author_email, author, "email", false, src, "author.email", err)))
		return rc;
	if ((rc = fdl_json_get_string(&v->message, d, "message", true, src, "message", err)))
		return rc;
	const json_t *o;
	if ((rc = fdl_json_get_typed(&v->changes_json, d, "changes", JSON_ARRAY, false, src, "changes", err)))
		return rc;
	if (v->brief) {
		v->catalog_bytes = v->snapshot_id = -1;
		return 0;
	}
	if ((rc = check_file_ref(d, "catalog", true, src, err, &v->catalog_path, &v->catalog_bytes,
				 &v->catalog_sha256)))
		return rc;
	if ((rc = fdl_json_get_string(&v->catalog_storage, json_object_get(d, "catalog"), "storage", true, src,
				      "catalog.storage", err)))
		return rc;
	/* dataset is a must field, but versions written before it became
	 * required lack it: check it only when present. */
	if ((rc = check_file_ref(d, "dataset", false, src, err, NULL, NULL, NULL)))
		return rc;
	const json_t *dl, *snaps;
	if ((rc = fdl_json_get_typed(&dl, d, "ducklake", JSON_OBJECT, true, src, "ducklake", err)))
		return rc;
	if ((rc = fdl_json_get_string(&v->ducklake_format, dl, "format", true, src, "ducklake.format", err)))
		return rc;
	if ((rc = fdl_json_get_int(&v->snapshot_id, NULL, dl, "snapshot_id", true, src, "ducklake.snapshot_id",
				   err)))
		return rc;
	if ((rc = fdl_json_get_typed(&snaps, dl, "snapshots", JSON_ARRAY, true, src, "ducklake.snapshots", err)))
		return rc;
	if (json_array_size(snaps) != 2 || !json_is_integer(json_array_get(snaps, 0)) ||
	    !json_is_integer(json_array_get(snaps, 1)))
		return fdl_fail(err, FDL_EINVALID,
				"%s: field 'ducklake.snapshots' must be [first, last], two integers", src);
	if (json_integer_value(json_array_get(snaps, 1)) != v->snapshot_id ||
	    json_integer_value(json_array_get(snaps, 0)) > v->snapshot_id)
		return fdl_fail(err, FDL_EINVALID,
				"%s: field 'ducklake.snapshots' is [%lld, %lld]; expected [first, %lld] with first <= "
				"snapshot_id",
				src, (long long)json_integer_value(json_array_get(snaps, 0)),
				(long long)json_integer_value(json_array_get(snaps, 1)), (long long)v->snapshot_id);
	/* may fields: checked when present */
	if ((rc = check_file_ref(d, "files", false, src, err, NULL, NULL, NULL)))
		return rc;
	if ((rc = fdl_json_get_typed(&o, d, "inputs", JSON_ARRAY, false, src, "inputs", err)) ||
	    (rc = fdl_json_get_typed(&o, d, "annotations", JSON_OBJECT, false, src, "annotations", err)))
		return rc;
	return 0;
}

int fdl_version_parse(fdl_version **out, const char *json, size_t len, const char *dir_id, const char *source,
		      fdl_error *err)
{
	json_t *doc = NULL;
	int rc = fdl_json_parse(&doc, json, len, source, err);
	if (!rc)
		rc = fdl_version_from_json(out, doc, dir_id, source, err);
	json_decref(doc);
	return rc;
}

static int from_json(fdl_version **out, json_t *doc, bool brief, const char *dir_id, const char *source,
		     fdl_error *err)
{
	fdl_version *v = calloc(1, sizeof *v);
	if (!v)
		return fdl_oom(err);
	v->brief = brief;
	v->doc = json_incref(doc);
	int rc = json_is_object(doc)		? validate(v, dir_id, source, err)
		 : brief && json_is_array(doc) ? validate_head_array(v, dir_id, source, err)
						: fdl_fail(err, FDL_EINVALID, "%s: a version.json is a JSON object", source);
	if (!rc)
		rc = fdl_changes_from_json(&v->changes, &v->change_count, v->changes_json, err);
	if (rc) {
		fdl_version_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int fdl_version_from_json(fdl_version **out, json_t *doc, const char *dir_id, const char *source, fdl_error *err)
{
	return from_json(out, doc, false, dir_id, source, err);
}

int fdl_version_from_head(fdl_version **out, json_t *doc, const char *dir_id, const char *source, fdl_error *err)
{
	return from_json(out, doc, true, dir_id, source, err);
}

/* A brief version has no version.json to print and no files to read. */
static int refuse_brief(const fdl_version *v, const char *what, fdl_error *err)
{
	return fdl_fail(err, FDL_EINVALID,
			"version %s was read brief (fdl_log_read_brief: what fdl log shows), so it has no %s; read it "
			"with fdl_version_read",
			v->id, what);
}

int fdl_version_read(fdl_version **out, fdl_repo *repo, const char *id, fdl_error *err)
{
	if (!fdl_id_is_valid(id))
		return fdl_fail(err, FDL_EINVALID, "'%s' is not a version id", id);
	char *key = fdl_version_key(id, FDL_VERSION_JSON);
	char *src = fdl_version_url(repo->root, id, FDL_VERSION_JSON);
	fdl_buf b = {0};
	int rc = (!key || !src) ? fdl_oom(err)
				: fdl_store_get(repo->store, key, FDL_META_MAX_BYTES, &b, NULL, err);
	if (rc == FDL_ENOTFOUND)
		rc = fdl_fail(err, FDL_ENOTFOUND, "version %s not found in %s (no %s)", id, repo->root, key);
	if (!rc)
		rc = fdl_version_parse(out, b.data, b.len, id, src, err);
	fdl_buf_free(&b);
	free(key);
	free(src);
	return rc;
}

void fdl_version_free(fdl_version *v)
{
	if (v) {
		json_decref(v->doc);
		fdl_changes_free(v->changes, v->change_count);
		free(v);
	}
}

size_t fdl_version_change_count(const fdl_version *v) { return v->change_count; }
const fdl_change *fdl_version_change(const fdl_version *v, size_t i)
{
	return i < v->change_count ? &v->changes[i] : NULL;
}

const char *fdl_version_id(const fdl_version *v) { return v->id; }
int64_t fdl_version_seq(const fdl_version *v) { return v->seq; }
size_t fdl_version_parent_count(const fdl_version *v) { return json_array_size(v->parents); }
const char *fdl_version_parent(const fdl_version *v, size_t i)
{
	return json_string_value(json_array_get(v->parents, i));
}
const char *fdl_version_created_at(const fdl_version *v) { return v->created_at; }
const char *fdl_version_author_name(const fdl_version *v) { return v->author_name; }
const char *fdl_version_author_email(const fdl_version *v) { return v->author_email; }
const char *fdl_version_message(const fdl_version *v) { return v->message; }
const char *fdl_version_catalog_path(const fdl_version *v) { return v->catalog_path; }
const char *fdl_version_catalog_sha256(const fdl_version *v) { return v->catalog_sha256; }
const char *fdl_version_catalog_storage(const fdl_version *v) { return v->catalog_storage; }
int64_t fdl_version_catalog_bytes(const fdl_version *v) { return v->catalog_bytes; }
const char *fdl_version_ducklake_format(const fdl_version *v) { return v->ducklake_format; }
int64_t fdl_version_snapshot_id(const fdl_version *v) { return v->snapshot_id; }
const json_t *fdl_version_json(const fdl_version *v) { return v->doc; }

int fdl_version_to_json(char **out, const fdl_version *v, fdl_error *err)
{
	if (v->brief)
		return refuse_brief(v, "whole version.json", err);
	return fdl_json_dump(out, NULL, v->doc, err);
}

int fdl_version_fetch_checked(char **local_path, fdl_repo *repo, const fdl_version *v, const char *path,
			      int64_t bytes, const char *sha256, fdl_error *err)
{
	if (v->brief)
		return refuse_brief(v, "files", err);
	char *key = fdl_version_key(v->id, path);
	int rc = key ? fdl_object_fetch_checked(local_path, repo, key, bytes, sha256, err)
		     : fdl_oom(err);
	free(key);
	return rc;
}

int64_t fdl_version_added_from(const fdl_version *v, const fdl_version *parent)
{
	if (parent)
		return fdl_version_snapshot_id(parent) + 1;
	const json_t *snaps = json_object_get(json_object_get(fdl_version_json(v), "ducklake"), "snapshots");
	return (int64_t)json_integer_value(json_array_get(snaps, 0));
}


/* The file version.json records at `ref` ({path, bytes, sha256}), checked,
 * read whole: metadata only up to FDL_META_MAX_BYTES, so a repository cannot
 * make a reader hold a file of any size. */
static int read_recorded(fdl_buf *out, fdl_repo *repo, const fdl_version *v, const json_t *ref, fdl_error *err)
{
	char *local = NULL;
	int rc = fdl_version_fetch_checked(&local, repo, v, json_string_value(json_object_get(ref, "path")),
					   (int64_t)json_integer_value(json_object_get(ref, "bytes")),
					   json_string_value(json_object_get(ref, "sha256")), err);
	if (!rc)
		rc = fdl_file_read(out, local, FDL_META_MAX_BYTES, err);
	free(local);
	if (rc)
		fdl_buf_free(out);
	return rc;
}

int fdl_version_dataset(char **out, fdl_repo *repo, const fdl_version *v, fdl_error *err)
{
	if (v->brief)
		return refuse_brief(v, "dataset.json", err);
	const json_t *ref = json_object_get(v->doc, "dataset");
	if (!ref)
		return fdl_fail(err, FDL_ENOTFOUND, "version %s has no dataset.json (written before it was required)",
				v->id);
	fdl_buf b = {0};
	int rc = read_recorded(&b, repo, v, ref, err);
	if (!rc)
		*out = fdl_buf_detach(&b);
	return rc;
}

int fdl_version_fetch_catalog(char **local_path, fdl_repo *repo, const fdl_version *v, fdl_error *err)
{
	if (fdl_object_cached(repo, v->catalog_bytes, v->catalog_sha256)) {
		int rc = fdl_version_check_live(repo, v->id, err);
		if (rc)
			return rc;
	}
	return fdl_version_fetch_checked(local_path, repo, v, v->catalog_path, v->catalog_bytes, v->catalog_sha256, err);
}

int fdl_version_load_json(json_t **out, fdl_repo *repo, const fdl_version *v, const char *field, fdl_error *err)
{
	*out = NULL;
	if (v->brief)
		return refuse_brief(v, field, err);
	const json_t *ref = json_object_get(v->doc, field);
	if (!ref)
		return 0;
	fdl_buf b = {0};
	int rc = read_recorded(&b, repo, v, ref, err);
	json_error_t jerr;
	if (!rc && !(*out = json_loadb(b.data ? b.data : "", b.len, JSON_REJECT_DUPLICATES, &jerr)))
		rc = fdl_fail(err, FDL_EINVALID, "version %s: %s, line %d: %s", v->id, field, jerr.line, jerr.text);
	fdl_buf_free(&b);
	if (!rc && !strcmp(field, "files")) { /* its paths are read as files: checked here */
		char *key = fdl_version_key(v->id, json_string_value(json_object_get(ref, "path")));
		rc = key ? fdl_files_json_check(*out, key, err) : fdl_oom(err);
		free(key);
	}
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

int fdl_version_tables(fdl_table_list **out, fdl_repo *repo, const fdl_version *v, fdl_error *err)
{
	*out = NULL;
	json_t *ds = NULL, *files = NULL;
	int rc = fdl_version_load_json(&ds, repo, v, "dataset", err);
	/* files.json is gone once a version expires: sizes are then unknown */
	if (!rc)
		rc = fdl_version_load_json(&files, repo, v, "files", err);
	if (rc == FDL_ENOTFOUND && ds) {
		fdl_error_clear(err);
		rc = 0;
	}
	fdl_table_list *l = rc ? NULL : calloc(1, sizeof *l);
	const json_t *tables = json_object_get(ds, "tables");
	size_t n = json_array_size(tables);
	if (!rc && (!l || (n && !(l->items = calloc(n, sizeof *l->items)))))
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && i < n; i++) {
		const json_t *t = json_array_get(tables, i);
		fdl_table_info *ti = &l->items[l->count];
		ti->name = fdl_asprintf("%s.%s", json_string_value(json_object_get(t, "schema")),
					json_string_value(json_object_get(t, "name")));
		if (!ti->name) {
			rc = fdl_oom(err);
			break;
		}
		l->count++;
		ti->view = json_object_get(t, "kind") != NULL;
		ti->rows = json_is_integer(json_object_get(t, "rows")) ? json_integer_value(json_object_get(t, "rows")) : -1;
		ti->columns = json_array_size(json_object_get(t, "fields"));
		ti->bytes = -1;
		const json_t *ft = json_object_get(json_object_get(files, "tables"), ti->name);
		if (ft) {
			size_t k;
			const json_t *f;
			ti->bytes = 0;
			ti->files = json_array_size(json_object_get(ft, "files"));
			json_array_foreach(json_object_get(ft, "files"), k, f)
			{
				ti->bytes += json_integer_value(json_object_get(f, "bytes"));
				ti->bytes += json_integer_value(json_object_get(json_object_get(f, "deletes"), "bytes"));
			}
		}
	}
	json_decref(ds);
	json_decref(files);
	if (rc) {
		fdl_table_list_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

void fdl_table_list_free(fdl_table_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->count; i++)
		free(l->items[i].name);
	free(l->items);
	free(l);
}

int fdl_version_expiry(fdl_expiry *out, fdl_repo *repo, const char *id, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	if (!fdl_id_is_valid(id))
		return fdl_fail(err, FDL_EINVALID, "'%s' is not a version id", id);
	snprintf(out->key, sizeof out->key, FDL_VERSIONS_DIR "/%s/" FDL_EXPIRED_JSON, id);
	fdl_buf b = {0};
	int rc = fdl_store_get(repo->store, out->key, 1 << 20, &b, NULL, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		rc = 0;
	} else if (!rc) {
		out->expired = true;
		json_t *j = json_loadb(b.data, b.len, 0, NULL);
		const char *reason, *when;
		fdl_error e;
		if (!fdl_expired_parse(&reason, &when, j, out->key, &e)) {
			snprintf(out->reason, sizeof out->reason, "%s", reason);
			snprintf(out->when, sizeof out->when, "%s", when);
		}
		const char *why = json_string_value(json_object_get(j, "message"));
		if (why && !strcmp(out->reason, "withdrawn"))
			snprintf(out->why, sizeof out->why, "%s", why);
		json_decref(j);
	}
	fdl_buf_free(&b);
	return rc;
}

int fdl_version_check_live(fdl_repo *repo, const char *id, fdl_error *err)
{
	fdl_expiry x;
	int rc = fdl_version_expiry(&x, repo, id, err);
	if (rc || !x.expired)
		return rc;
	return fdl_fail(err, FDL_EEXPIRED, "version %s %s on %s%s%s%s; its catalog is gone (%s/%s)", id,
			!strcmp(x.reason, "withdrawn") ? "was withdrawn" : "left retention",
			x.when[0] ? x.when : "an unknown date", x.why[0] ? " (\"" : "", x.why, x.why[0] ? "\")" : "",
			repo->root, x.key);
}

/* ---- what a version folder may hold (keys.h) ---- */

/* The path version.json records under `field` ("catalog", "files"). */
static const char *recorded(const fdl_version *v, const char *field)
{
	return json_string_value(json_object_get(json_object_get(fdl_version_json(v), field), "path"));
}

bool fdl_version_removable(const fdl_version *v, const char *path)
{
	const char *cat = v ? fdl_version_catalog_path(v) : FDL_CATALOG_FILE;
	const char *files = v ? recorded(v, "files") : FDL_FILES_JSON;
	return (cat && !strcmp(path, cat)) || (files && !strcmp(path, files)) || fdl_is_format_catalog_path(path);
}

bool fdl_version_file_allowed(const fdl_version *v, const char *path)
{
	const char *fields[] = {"catalog", "dataset", "files"};
	for (size_t i = 0; v && i < 3; i++) {
		const char *p = recorded(v, fields[i]);
		if (p && !strcmp(p, path))
			return true;
	}
	return !strcmp(path, FDL_VERSION_JSON) || !strcmp(path, FDL_EXPIRED_JSON) || !strcmp(path, FDL_VERSION_SIG) ||
	       fdl_is_format_catalog_path(path);
}
