/*
 * The steps expire.c and withdraw.c share (gc.c is the third room of a
 * version's life after it is written): expired.json written, the files
 * fdl_version_removable names deleted, the data files a catalog
 * references. The format (docs/format.md) allows exactly these
 * changes to a version: add expired.json and delete the catalog (and
 * files.json, catalogs/), and on withdrawal also version.json when it
 * carries the withdrawn data. Every step is idempotent and ordered so that
 * a crash at any point leaves a repository that verifies and a rerun that
 * completes: expired.json first (readers refuse from then on, and it
 * records what is being removed), then the deletions.
 */
#include "lifecycle.h"
#include "derived.h"
#include "report.h"
#include "work.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The files expire/withdraw remove from a version, as they exist. */
int fdl__catalog_files(fdl_strlist *list, const vdir *d, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < d->files.len && !rc; i++)
		if (fdl_version_removable(d->v, d->files.items[i]))
			rc = fdl_strlist_add(list, d->files.items[i], err);
	return rc;
}

json_t *fdl__strlist_json(const fdl_strlist *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->len; i++)
		json_array_append_new(a, json_string(l->items[i]));
	return a;
}

/* Add expired.json (unless there) and delete what it lists. */
int fdl__expire_one(fdl_repo *repo, const vdir *d, const char *reason, const char *message, const json_t *extra,
		      const fdl_strlist *removed, bool list_gone, fdl_error *err)
{
	char now[32];
	int rc = fdl_time_now_iso(now, err);
	char *key = fdl_version_key(d->id, FDL_EXPIRED_JSON);
	json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "reason", reason, "expired_at", now, "message", message,
				"removed", fdl__strlist_json(removed));
	if (doc && extra)
		json_object_update(doc, (json_t *)extra);
	char *text = NULL;
	size_t len = 0;
	if (!rc && (!key || !doc))
		rc = fdl_oom(err);
	if (!rc && !expired(d)) {
		rc = fdl_json_dump(&text, &len, doc, err);
		if (!rc)
			rc = fdl_store_put_if_absent(repo->store, key, text, len, err);
		if (rc == FDL_EEXISTS) /* a concurrent or earlier run wrote it */
			rc = 0;
	}
	/* the ref list says so to readers that cannot list (derived: its
	 * failure costs them the mark only), with the date expired.json has;
	 * not (`list_gone` false) of a version whose version.json goes too: no
	 * reader lists it, and nothing under history/ keeps its id */
	fdl_expiry x;
	fdl_error ierr;
	if (!rc && list_gone && !fdl_version_expiry(&x, repo, d->id, &ierr) && x.expired)
		fdl_ref_moved(repo,
			      &(fdl_ref_move){.what = FDL_MOVE_GONE,
					      .id = d->id,
					      .reason = x.reason[0] ? x.reason : reason,
					      .when = x.when},
			      NULL);
	for (size_t i = 0; i < removed->len && !rc; i++)
		rc = del_owned(repo, fdl_version_key(d->id, removed->items[i]), err);
	/* this machine's read cache forgets the catalog at once (other
	 * machines' caches are documented in docs/decisions.md) */
	if (!rc && d->v) {
		char *obj = fdl_cache_path("objects", fdl_version_catalog_sha256(d->v));
		fdl_cache_forget(obj);
		free(obj);
	}
	free(text);
	free(key);
	json_decref(doc);
	return rc;
}



/* The files version d's catalog references, or only those it added. */
int fdl__version_files(fdl_strlist *out, fdl_repo *repo, fdl_duck *duck, vdirs *dirs, const vdir *d,
			 bool added_only, fdl_error *err)
{
	const fdl_version *v = d->v;
	char *local = NULL;
	int rc = fdl_version_fetch_catalog(&local, repo, v, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(duck, "fdl_life", local, FDL_CAT_DUCKDB, true, err);
	if (!rc) {
		int64_t first = added_only ? fdl_vdirs_added_from(dirs, d) : -1;
		rc = fdl_catalog_all_files(out, duck, "fdl_life", first, err);
		fdl_catalog_detach(duck, "fdl_life", NULL);
	}
	free(local);
	return rc;
}

