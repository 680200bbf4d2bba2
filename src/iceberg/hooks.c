/* Iceberg views following the repository (docs/format.md "Iceberg views"):
 * written after a commit, rebuilt after versions or files went, written
 * for a clone's own place, the catalog kept with the refs, and a location
 * enabled. Each a no-op on a repository without iceberg/views.json. */
#include "iceberg_int.h"
#include "../layout/keys.h"
#include "../util/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every view of views.json for version `id`, and the catalog's branch. */
static int after_commit_views(fdl_repo *repo, const json_t *views, const char *branch, const char *id,
			      fdl_duck *share, fdl_error *err)
{
	ice_opts o = {.share = share};
	int rc = 0;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(views, "views"), i, v)
	{
		const char *location = json_string_value(json_object_get(v, "location"));
		rc = fdl_ice_write_for(NULL, repo, id, location, &o, err);
		if (!rc && fdl_iceberg_view_has_catalog(v))
			rc = fdl_ice_catalog_sync_branch(repo, location, branch, err);
		if (rc)
			break;
	}
	return rc;
}

int fdl_iceberg_after_commit(fdl_repo *repo, const char *branch, const char *id, fdl_error *err)
{
	json_t *views = NULL;
	int rc = fdl_iceberg_views_read(&views, repo, err);
	if (!rc)
		rc = after_commit_views(repo, views, branch, id, NULL, err);
	json_decref(views);
	return rc;
}

struct fdl_iceberg_job {
	fdl_repo *repo; /* its own handle: the caller goes on with its own */
	json_t *views;
	fdl_duck *share;
	char *branch;
	char id[FDL_ID_LEN + 1];
	fdl_pool_side *side;
	fdl_error err;
	int rc;
};

static void job_run(void *arg)
{
	fdl_iceberg_job *j = arg;
	j->rc = after_commit_views(j->repo, j->views, j->branch, j->id, j->share, &j->err);
}

static void job_free(fdl_iceberg_job *j)
{
	fdl_repo_free(j->repo);
	json_decref(j->views);
	free(j->branch);
	free(j);
}

int fdl_iceberg_after_commit_start(fdl_iceberg_job **out, fdl_repo *repo, const char *branch, const char *id,
				   fdl_duck *share, fdl_error *err)
{
	*out = NULL;
	json_t *views = NULL;
	int rc = fdl_iceberg_views_read(&views, repo, err);
	if (rc || !json_array_size(json_object_get(views, "views"))) {
		json_decref(views);
		return rc;
	}
	fdl_iceberg_job *j = calloc(1, sizeof *j);
	if (!j) {
		json_decref(views);
		return fdl_oom(err);
	}
	j->views = views;
	j->share = share;
	snprintf(j->id, sizeof j->id, "%s", id);
	if (!(j->branch = fdl_strdup(branch)))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_repo_open(&j->repo, repo->root, err);
	if (!rc && !(j->side = fdl_pool_side_start(job_run, j)))
		job_run(j); /* no thread: here, now */
	if (rc)
		job_free(j);
	else
		*out = j;
	return rc;
}

int fdl_iceberg_after_commit_join(fdl_iceberg_job *j, fdl_error *err)
{
	if (!j)
		return 0;
	fdl_pool_side_join(j->side);
	int rc = j->rc;
	if (rc)
		*err = j->err;
	job_free(j);
	return rc;
}

/* ---- after versions or files went ------------------------------------- */

/* Every branch tip and tag target that is live. */
static int live_tips(fdl_strlist *out, fdl_repo *repo, fdl_error *err)
{
	fdl_refs refs;
	int rc = fdl_refs_all(&refs, repo, true, err);
	for (size_t i = 0; i < refs.names.len && !rc; i++) {
		const char *id = refs.ids[i];
		fdl_error e;
		if (!fdl_strlist_has_sorted(out, id) && fdl_version_check_live(repo, id, &e) == 0) {
			rc = fdl_strlist_add(out, id, err);
			fdl_strlist_sort(out);
		}
	}
	fdl_refs_free(&refs);
	return rc;
}

/* The views of every live branch tip and tag target for `location`, built
 * from their histories as they now are, and nothing else under
 * iceberg/<lid>/: a view of another version (written again on demand) and
 * every file no rebuilt view uses go. */
static int rebuild_location(fdl_repo *repo, const char *location, bool catalog, fdl_error *err)
{
	fdl_strmap keep = {0};
	fdl_strlist tips = {0}, keys = {0};
	char lid[FDL_ICEBERG_LID_LEN + 1];
	ice_opts o = {.known = &keep, .whole = true};
	int rc = fdl_iceberg_location_id(lid, location, err);
	if (!rc)
		rc = live_tips(&tips, repo, err);
	for (size_t i = 0; i < tips.len && !rc; i++)
		rc = fdl_ice_write_for(NULL, repo, tips.items[i], location, &o, err);
	if (!rc && catalog) /* of the refs as they are now: it keeps what it leads to */
		rc = fdl_ice_catalog_sync(NULL, repo, location, &keep, err);
	char *dir = rc ? NULL : fdl_asprintf(FDL_ICEBERG_DIR "/%s", lid);
	if (!rc)
		rc = dir ? fdl_store_list(repo->store, dir, &keys, err) : fdl_oom(err);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		int64_t seen;
		if (!fdl_strmap_get(&keep, keys.items[i], &seen))
			rc = fdl_store_del_owned(repo->store, fdl_strdup(keys.items[i]), NULL, err);
	}
	if (!rc)
		rc = fdl_store_prune(repo->store, dir, err);
	free(dir);
	fdl_strlist_free(&tips);
	fdl_strlist_free(&keys);
	fdl_strmap_free(&keep);
	return rc;
}

int fdl_iceberg_after_removal(fdl_repo *repo, fdl_error *err)
{
	json_t *views = NULL;
	int rc = fdl_iceberg_views_read(&views, repo, err);
	size_t i;
	json_t *v;
	json_array_foreach(rc ? NULL : json_object_get(views, "views"), i, v)
	{
		if ((rc = rebuild_location(repo, json_string_value(json_object_get(v, "location")),
					   fdl_iceberg_view_has_catalog(v), err)))
			break;
	}
	json_decref(views);
	return rc;
}

int fdl_iceberg_after_clone(fdl_repo *src, const char *dst_root, fdl_error *err)
{
	json_t *views = NULL;
	fdl_repo *dst = NULL;
	char *location = NULL;
	int rc = fdl_iceberg_views_read(&views, src, err);
	if (rc || !json_array_size(json_object_get(views, "views"))) {
		json_decref(views);
		return rc;
	}
	bool catalog = false; /* the copy has a catalog when the source has one */
	size_t i;
	const json_t *v;
	json_array_foreach(json_object_get(views, "views"), i, v) catalog = catalog || fdl_iceberg_view_has_catalog(v);
	rc = fdl_repo_open(&dst, dst_root, err);
	if (!rc)
		rc = fdl_iceberg_own_location(&location, dst, err);
	if (!rc)
		rc = fdl_iceberg_views_add(dst, location, catalog, err);
	if (!rc)
		rc = rebuild_location(dst, location, catalog, err);
	free(location);
	fdl_repo_free(dst);
	json_decref(views);
	return rc;
}

int fdl_iceberg_after_refs(fdl_repo *repo, fdl_error *err)
{
	json_t *views = NULL;
	fdl_refs refs = {0};
	int rc = fdl_iceberg_views_read(&views, repo, err);
	if (!rc && json_array_size(json_object_get(views, "views")))
		rc = fdl_refs_all(&refs, repo, true, err);
	size_t i;
	json_t *v;
	json_array_foreach(rc ? NULL : json_object_get(views, "views"), i, v)
	{
		const char *location = json_string_value(json_object_get(v, "location"));
		char lid[FDL_ICEBERG_LID_LEN + 1];
		rc = fdl_iceberg_location_id(lid, location, err);
		for (size_t k = 0; k < refs.names.len && !rc; k++) {
			if (fdl_ref_kind_of(refs.names.items[k]) != FDL_REF_BRANCH)
				continue;
			const char *tip = refs.ids[k];
			char *dir = fdl_iceberg_view_dir(lid, tip);
			char *key = dir ? fdl_asprintf("%s/" FDL_ICEBERG_VIEW_JSON, dir) : NULL;
			int64_t size;
			fdl_error e;
			if (key && fdl_store_head(repo->store, key, &size, &e) == 0) /* a tip with a view: its tags */
				rc = fdl_ice_write_for(NULL, repo, tip, location, NULL, err);
			free(dir);
			free(key);
		}
		if (!rc && fdl_iceberg_view_has_catalog(v)) /* a namespace per ref */
			rc = fdl_ice_catalog_sync(NULL, repo, location, NULL, err);
		if (rc)
			break;
	}
	fdl_refs_free(&refs);
	json_decref(views);
	return rc;
}

int fdl_iceberg_enable(fdl_repo *repo, const char *location, fdl_error *err)
{
	char *loc = NULL;
	fdl_strlist tips = {0};
	int rc = location ? fdl_iceberg_location_check(&loc, location, err) : fdl_iceberg_own_location(&loc, repo, err);
	if (!rc)
		rc = fdl_iceberg_views_add(repo, loc, false, err);
	if (!rc)
		rc = live_tips(&tips, repo, err);
	for (size_t i = 0; i < tips.len && !rc; i++)
		rc = fdl_ice_write_for(NULL, repo, tips.items[i], loc, NULL, err);
	fdl_strlist_free(&tips);
	free(loc);
	return rc;
}
