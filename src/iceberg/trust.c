/* What a view built on its parent's reuses, checked first: the parent's
 * view is the repository's files like any other, and one planted there
 * (self-consistent, every name its sha256) must not lead a reader's time
 * travel to a file outside the repository (iceberg_int.h,
 * fdl_ice_tree_confined). */
#include "iceberg_int.h"

#include <stdlib.h>
#include <string.h>

/* The key of `uri` under the view's location, relative and clean (NULL:
 * not one). Caller frees. */
static char *key_of(const ice_run *r, const char *uri)
{
	size_t n = strlen(r->location);
	if (!uri || strncmp(uri, r->location, n) || uri[n] != '/' ||
	    fdl_path_check_relative(uri + n + 1, "a view's file", NULL))
		return NULL;
	return fdl_strdup(uri + n + 1);
}

static bool under(const char *key, const char *dir)
{
	size_t n = strlen(dir);
	return key && !strncmp(key, dir, n) && key[n] == '/';
}

/* One manifest's entries: a data file under the data folder (added to
 * `data`, relative to it), a delete file in the view's tree; *outside when
 * one is anything else. */
static int manifest_confined(bool *outside, ice_run *r, const char *path, const char *tree, fdl_strlist *data,
			     fdl_error *err)
{
	fdl_ice_read *e = NULL;
	size_t n = 0;
	const char *dd = r->repo->data_dir;
	int rc = fdl_catalog_iceberg_manifest(&e, &n, r->duck, path, err);
	for (size_t k = 0; k < n && !rc && !*outside; k++) {
		char *key = key_of(r, e[k].path);
		if (e[k].content == 0 && under(key, dd))
			rc = fdl_strlist_add(data, key + strlen(dd) + 1, err);
		else
			*outside = e[k].content == 0 || !under(key, tree);
		free(key);
	}
	fdl_ice_reads_free(e, n);
	return rc;
}

/* The manifests of the manifest list `uri`, each checked once a run;
 * *outside when the list or one of them leads elsewhere. */
static int list_confined(bool *outside, ice_run *r, const char *uri, const char *tree, const char *manifests,
			 fdl_strlist *data, fdl_error *err)
{
	char *lkey = key_of(r, uri);
	char *lpath = under(lkey, manifests) ? fdl_asprintf("%s/%s", r->repo->root, lkey) : NULL;
	fdl_strlist list = {0};
	*outside = !lpath;
	int rc = lpath ? fdl_catalog_iceberg_list(&list, r->duck, lpath, err) : 0;
	for (size_t k = 0; k < list.len && !rc && !*outside; k++) {
		char *mkey = key_of(r, list.items[k]);
		char *mpath = under(mkey, manifests) ? fdl_asprintf("%s/%s", r->repo->root, mkey) : NULL;
		int64_t was;
		*outside = !mpath;
		if (mpath && !fdl_strmap_get(&r->confined, mkey, &was))
			rc = manifest_confined(outside, r, mpath, tree, data, err);
		if (!rc && !*outside)
			rc = fdl_strmap_put(&r->confined, mkey, 1, err);
		free(mkey);
		free(mpath);
	}
	fdl_strlist_free(&list);
	free(lkey);
	free(lpath);
	return rc;
}

int fdl_ice_tree_confined(bool *confined, ice_run *r, const json_t *doc, fdl_error *err)
{
	char *tree = fdl_asprintf(FDL_ICEBERG_DIR "/%s", r->lid);
	char *manifests = fdl_iceberg_manifests_dir(r->lid);
	fdl_strlist data = {0};
	bool outside = false;
	int rc = tree && manifests ? 0 : fdl_oom(err);
	if (!rc && !r->avro && !(rc = fdl_duck_load(r->duck, "avro", err)))
		r->avro = true;
	size_t i;
	json_t *x;
	json_array_foreach(rc ? NULL : json_object_get(doc, "snapshots"), i, x)
	{
		rc = list_confined(&outside, r, json_string_value(json_object_get(x, "manifest-list")), tree, manifests,
				   &data, err);
		if (rc || outside)
			break;
	}
	if (!rc && !outside)
		rc = fdl_store_files_confined(r->repo->store, r->repo->data_dir, &data, err);
	fdl_strlist_free(&data);
	free(tree);
	free(manifests);
	*confined = !rc && !outside;
	if (rc && rc != FDL_ENOMEM) { /* a tree it cannot read, it cannot vouch for: built from the history */
		fdl_error_clear(err);
		rc = 0;
	}
	return rc;
}
