/* Previews copied by fdl clone (docs/format.md "Previews (fdl)"): the
 * source's previews of the versions the copy holds, each file checked as a
 * reader checks it, through the seam's CLONED move as the Iceberg views
 * are made (derived: best effort). */
#include "preview.h"
#include "card.h"
#include "../layout/preview.h"

#include <stdlib.h>
#include <string.h>

/* One table file into the copy unless there (named by its state: the
 * same name, the same bytes), checked as a reader checks it. */
static int copy_table(fdl_repo *src, fdl_repo *dst, const char *key, fdl_error *err)
{
	int64_t bytes;
	fdl_buf b = {0};
	json_t *doc = NULL;
	int rc = fdl_store_head(dst->store, key, &bytes, err);
	if (rc != FDL_ENOTFOUND)
		return rc;
	fdl_error_clear(err);
	rc = fdl_store_get(src->store, key, FDL_PREVIEW_MAX_BYTES, &b, NULL, err);
	if (!rc)
		rc = fdl_preview_table_parse(&doc, b.data, b.len, key, err);
	if (!rc && (rc = fdl_store_put_if_absent(dst->store, key, b.data, b.len, err)) == FDL_ECONFLICT)
		rc = 0; /* another copy put the same state's file */
	json_decref(doc);
	fdl_buf_free(&b);
	return rc;
}

/* Version `id`'s preview into the copy (its table files first), checked;
 * *found false when the source has none. */
static int copy_one(bool *found, fdl_repo *src, fdl_repo *dst, const char *id, fdl_error *err)
{
	char *key = fdl_preview_key(id);
	fdl_buf b = {0};
	json_t *doc = NULL;
	int rc = key ? fdl_store_get(src->store, key, FDL_PREVIEW_MAX_BYTES, &b, NULL, err) : fdl_oom(err);
	*found = rc != FDL_ENOTFOUND;
	if (!rc)
		rc = fdl_preview_parse(&doc, b.data, b.len, key, id, err);
	size_t i;
	json_t *t;
	json_array_foreach(rc ? NULL : json_object_get(doc, "tables"), i, t)
	{
		if ((rc = copy_table(src, dst, json_string_value(json_object_get(t, "key")), err)))
			break;
	}
	if (!rc)
		rc = fdl_store_replace_if_changed(dst->store, key, b.data, b.len, NULL, err);
	json_decref(doc);
	fdl_buf_free(&b);
	free(key);
	return rc == FDL_ENOTFOUND ? 0 : rc;
}

/* The live versions whose previews a clone copies: every one a listing
 * of the source's previews/ names; from a source that cannot be listed
 * (a static host), each of `live` once one of `tips` has a preview (a
 * repository keeps previews from its first one on: a tip without one
 * means none to copy, at the cost of one request per tip). */
static int copy_candidates(fdl_strlist *out, fdl_repo *src, fdl_repo *dst, const fdl_strlist *live,
			   const fdl_strlist *tips, fdl_error *err)
{
	if (fdl_store_can(src->store, FDL_STORE_LIST)) {
		fdl_strlist have = {0};
		int rc = fdl_preview_list(&have, src, err);
		for (size_t i = 0; i < have.len && !rc; i++)
			if (fdl_strlist_has_sorted(live, have.items[i]))
				rc = fdl_strlist_add(out, have.items[i], err);
		fdl_strlist_free(&have);
		return rc;
	}
	bool kept = false;
	int rc = 0;
	size_t t = 0;
	for (; tips && t < tips->len && !kept && !rc; t++)
		if (fdl_strlist_has_sorted(live, tips->items[t]))
			rc = copy_one(&kept, src, dst, tips->items[t], err);
	for (size_t i = 0; kept && i < live->len && !rc; i++)
		if (strcmp(live->items[i], tips->items[t - 1])) /* that one is copied */
			rc = fdl_strlist_add(out, live->items[i], err);
	return rc;
}

int fdl__preview_clone(fdl_repo *src, const char *dst_root, const fdl_strlist *live, const fdl_strlist *tips,
		       fdl_error *err)
{
	fdl_repo *dst = NULL;
	fdl_strlist ids = {0};
	int rc = fdl_repo_open(&dst, dst_root, err);
	if (!rc)
		rc = copy_candidates(&ids, src, dst, live, tips, err);
	for (size_t i = 0; i < ids.len && !rc; i++) {
		bool found;
		rc = copy_one(&found, src, dst, ids.items[i], err);
	}
	bool held = false;
	if (!rc) /* the copy's previews of versions it no longer has live */
		rc = fdl__preview_sweep(dst, &held, err);
	if (!rc && held) /* the copy's own card: its HEAD, its tip (never the source's bytes) */
		rc = fdl__card_refresh(dst, err);
	fdl_strlist_free(&ids);
	fdl_repo_free(dst);
	return rc;
}

