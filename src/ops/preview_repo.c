/* The previews of a repository as a whole (docs/format.md "Previews
 * (fdl)"): removed with their versions (the seam's GOING, REMOVAL and
 * SWEEP), checked by fdl verify, filled in for older versions by fdl
 * preview. One version's preview is preview.c's. */
#include "preview.h"
#include "card.h"
#include "../layout/preview.h"
#include "../layout/walk.h"

#include <stdlib.h>
#include <string.h>

/* Every live version of the repository (sorted). */
static int live_versions(fdl_strlist *out, fdl_repo *repo, fdl_error *err)
{
	vdirs dirs = {0};
	int rc = fdl_vdirs_list(&dirs, NULL, NULL, repo, err);
	for (size_t i = 0; i < dirs.len && !rc; i++)
		if (fdl_vdir_has(&dirs.items[i], FDL_VERSION_JSON) && !fdl_vdir_has(&dirs.items[i], FDL_EXPIRED_JSON))
			rc = fdl_strlist_add(out, dirs.items[i].id, err);
	fdl_vdirs_free(&dirs);
	fdl_strlist_sort(out);
	return rc;
}

int fdl__preview_sweep(fdl_repo *repo, bool *held, fdl_error *err)
{
	fdl_strlist live = {0}, keys = {0};
	int rc = fdl_store_list(repo->store, FDL_PREVIEW_DIR, &keys, err);
	bool none = rc == FDL_ENOTFOUND || (!rc && !keys.len);
	fdl_strlist_free(&keys);
	*held = !none;
	if (none) { /* nothing to sweep: no version listed, no card */
		fdl_error_clear(err);
		return 0;
	}
	if (!rc)
		rc = live_versions(&live, repo, err);
	if (!rc)
		rc = fdl_preview_sweep(repo, &live, NULL, err);
	fdl_strlist_free(&live);
	return rc;
}

int fdl__preview_drop(fdl_repo *repo, const fdl_strlist *going, fdl_error *err)
{
	fdl_strlist live = {0}, left = {0};
	int rc = live_versions(&live, repo, err);
	for (size_t i = 0; i < live.len && !rc; i++) {
		bool goes = false;
		for (size_t k = 0; k < going->len && !goes; k++)
			goes = !strcmp(going->items[k], live.items[i]);
		if (!goes)
			rc = fdl_strlist_add(&left, live.items[i], err);
	}
	if (!rc) /* live is sorted: so is what is left of it */
		rc = fdl_preview_sweep(repo, &left, NULL, err);
	fdl_strlist_free(&live);
	fdl_strlist_free(&left);
	return rc;
}

/* One preview: its version live, its files as the format says. */
static int check_one(fdl_strlist *problems, fdl_strlist *warnings, fdl_strlist *named, fdl_repo *repo,
		     const fdl_strlist *live, const char *id, fdl_error *err)
{
	char *key = fdl_preview_key(id);
	json_t *doc = NULL;
	fdl_error e;
	int rc = key ? 0 : fdl_oom(err);
	if (!rc && !fdl_strlist_has_sorted(live, id)) /* a withdrawal or expiry cut short before its sweep */
		rc = fdl_finding_add(warnings, key, "version %s is gone (withdrawn, expired or never whole), yet its "
				     "preview holds its first rows: run the withdrawal or expiry again, or fdl gc, "
				     "which deletes it", id);
	else if (!rc && fdl_preview_load(&doc, repo, id, &e))
		rc = fdl_finding_add(problems, key, "cannot be read: %s (fdl preview writes it again once it is "
				     "deleted)", e.message);
	size_t i;
	json_t *t;
	json_array_foreach(rc ? NULL : json_object_get(doc, "tables"), i, t)
	{
		if ((rc = fdl_strlist_add(named, json_string_value(json_object_get(t, "key")), err)))
			break;
	}
	json_decref(doc);
	free(key);
	return rc;
}

int fdl__preview_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist live = {0}, ids = {0}, named = {0}, keys = {0};
	int rc = live_versions(&live, repo, err);
	if (!rc)
		rc = fdl_preview_list(&ids, repo, err);
	for (size_t i = 0; i < ids.len && !rc; i++)
		rc = check_one(problems, warnings, &named, repo, &live, ids.items[i], err);
	fdl_strlist_sort(&named);
	if (!rc && !(rc = fdl_store_list(repo->store, FDL_PREVIEW_TABLES_DIR, &keys, err)))
		fdl_strlist_sort(&keys);
	if (rc == FDL_ENOTFOUND)
		rc = 0;
	for (size_t i = 0; i < keys.len && !rc; i++)
		if (!fdl_strlist_has_sorted(&named, keys.items[i]))
			rc = fdl_finding_add(warnings, keys.items[i], "no preview names it (fdl gc deletes it)");
	fdl_strlist_free(&live);
	fdl_strlist_free(&ids);
	fdl_strlist_free(&named);
	fdl_strlist_free(&keys);
	return rc;
}

int fdl_preview_fill(fdl_repo *repo, const char *const *versions, size_t n, const fdl_preview_options *o,
		     fdl_error *err)
{
	fdl_preview_options defaults = FDL_PREVIEW_OPTIONS_INIT;
	int rc = o ? fdl_options_check(o->version, FDL_PREVIEW_OPTIONS_VERSION, "fdl_preview_fill",
				       "fdl_preview_options", err)
		   : 0;
	if (rc)
		return rc;
	o = o ? o : &defaults;
	fdl_strlist ids = {0};
	for (size_t i = 0; i < n && !rc; i++) {
		char id[FDL_ID_LEN + 1];
		if (!(rc = fdl_ref_resolve(id, repo, versions[i], err)) && !(rc = fdl_version_check_live(repo, id, err)))
			rc = fdl_strlist_add(&ids, id, err);
	}
	if (!rc && !n)
		rc = live_versions(&ids, repo, err);
	for (size_t i = 0; i < ids.len && !rc; i++) {
		fdl_preview_counts c;
		if (!(rc = fdl__preview_make(repo, ids.items[i], o, &c, err)) && o && o->done)
			o->done(ids.items[i], c.computed, c.reused, c.already, o->payload);
	}
	if (!rc) /* HEAD's tip may have got its preview */
		rc = fdl__card_refresh(repo, err);
	fdl_strlist_free(&ids);
	return rc;
}
