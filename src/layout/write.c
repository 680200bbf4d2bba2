/* Writing a new version folder, the one place that does: the catalog,
 * dataset.json and files.json first, each create-only; version.json last,
 * built here and read back through the reader's own checks. */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

/* Put a document (text already serialised) as version file `name`, and
 * fill its reference for version.json: {path, bytes, sha256}. */
static int put_doc(fdl_repo *repo, const char *id, const char *name, const char *text, size_t len, json_t *ref,
		   fdl_error *err)
{
	char *key = fdl_version_key(id, name);
	char hex[65];
	int rc = key ? fdl_sha256_mem(hex, text, len, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_store_put_if_absent(repo->store, key, text, len, err);
	if (!rc && (json_object_set_new(ref, "path", json_string(name)) ||
		    json_object_set_new(ref, "bytes", json_integer((json_int_t)len)) ||
		    json_object_set_new(ref, "sha256", json_string(hex))))
		rc = fdl_oom(err);
	free(key);
	return rc;
}

/* version.json's document for version `id` of n. */
static json_t *version_doc(const fdl_version_new *n, const char *id, const char *now, int64_t cat_bytes,
			   const char *cat_sha, json_t *dataset_ref, json_t *files_ref)
{
	json_t *author = json_pack("{s:s}", "name", n->author_name);
	if (author && n->author_email && *n->author_email)
		json_object_set_new(author, "email", json_string(n->author_email));
	json_t *parents = json_array();
	if (parents && n->parent)
		json_array_append_new(parents, json_string(fdl_version_id(n->parent)));
	int64_t seq = n->parent ? fdl_version_seq(n->parent) + 1 : 1;
	json_t *v = !author || !parents
			    ? NULL
			    : json_pack("{s:s, s:s, s:I, s:O, s:s, s:O, s:s,"
					" s:{s:s, s:s, s:I, s:s}, s:O,"
					" s:{s:s, s:I, s:[I, I]}, s:O}",
					"fdl", FDL_SPEC_VERSION, "id", id, "seq", (json_int_t)seq, "parents", parents,
					"created_at", now, "author", author, "message", n->message, "catalog", "path",
					FDL_CATALOG_FILE, "storage", n->catalog_storage, "bytes", (json_int_t)cat_bytes,
					"sha256", cat_sha, "dataset", dataset_ref, "ducklake", "format", n->ducklake_format,
					"snapshot_id", (json_int_t)n->last_snapshot, "snapshots",
					(json_int_t)n->first_snapshot, (json_int_t)n->last_snapshot, "files", files_ref);
	if (v && n->changes)
		json_object_set(v, "changes", (json_t *)n->changes);
	if (v && n->inputs)
		json_object_set(v, "inputs", (json_t *)n->inputs);
	json_decref(author);
	json_decref(parents);
	return v;
}

int fdl_version_draw(fdl_version_new *n, fdl_repo *repo, fdl_error *err)
{
	int rc = fdl_time_now_iso(n->created_at, err);
	return rc ? rc : fdl_uuid7_next(&repo->ids, n->id, err);
}

int fdl_version_write(fdl_repo *repo, const fdl_version_new *n, fdl_error *err)
{
	char cat_sha[65];
	int64_t cat_bytes = 0;
	const char *id = n->id;
	if (!fdl_id_is_uuid7(id)) /* drawn, never left empty */
		return fdl_fail(err, FDL_EINVALID, "fdl_version_write: the new version's id '%s' was not drawn", id);
	int rc = fdl_sha256_file(cat_sha, &cat_bytes, n->catalog_file, err);
	if (rc)
		return rc;
	json_t *dataset_ref = json_object(), *files_ref = json_object(), *v = NULL;
	char *cat_key = fdl_version_key(id, FDL_CATALOG_FILE), *dataset = NULL, *text = NULL;
	size_t dataset_len = 0, len = 0;
	if (!dataset_ref || !files_ref || !cat_key)
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_store_put_file_if_absent(repo->store, cat_key, n->catalog_file, err);
	if (!rc)
		rc = fdl_json_dump_as(&dataset, &dataset_len, n->dataset, false, err);
	if (!rc)
		rc = put_doc(repo, id, FDL_DATASET_JSON, dataset, dataset_len, dataset_ref, err);
	if (!rc)
		rc = put_doc(repo, id, FDL_FILES_JSON, n->files_text, n->files_len, files_ref, err);
	if (!rc && !(v = version_doc(n, id, n->created_at, cat_bytes, cat_sha, dataset_ref, files_ref)))
		rc = fdl_fail(err, FDL_ENOMEM, "out of memory building " FDL_VERSION_JSON);
	/* Read our own version.json back through the reader's checks: a
	 * writer never publishes what its readers would refuse. */
	if (!rc)
		rc = fdl_json_dump(&text, &len, v, err);
	fdl_version *check = NULL;
	if (!rc)
		rc = fdl_version_parse(&check, text, len, id, "the new " FDL_VERSION_JSON, err);
	fdl_version_free(check);
	char *key = rc ? NULL : fdl_version_key(id, FDL_VERSION_JSON);
	if (!rc)
		rc = key ? fdl_store_put_if_absent(repo->store, key, text, len, err)
			 : fdl_oom(err);
	free(key);
	free(text);
	free(dataset);
	free(cat_key);
	json_decref(v);
	json_decref(dataset_ref);
	json_decref(files_ref);
	return rc;
}
