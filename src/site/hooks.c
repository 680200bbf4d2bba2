/* The pages' files written (fdl_site_render, fdl_site_write) and kept
 * current after ref moves (the hooks src/ops/derived.c calls). */
#include "site_int.h"
#include "../layout/keys.h"
#include "../layout/site.h"

#include <stdlib.h>
#include <string.h>

/* HEAD's branch tip into `id`; *found false when it has none yet. */
static int head_tip(char id[FDL_ID_LEN + 1], bool *found, fdl_repo *repo, fdl_error *err)
{
	fdl_refs r = {0};
	int rc = fdl_refs_all(&r, repo, false, err);
	char *key = rc || !r.head ? NULL : fdl_ref_key(FDL_REF_BRANCH, r.head);
	const char *tip = key ? fdl_refs_get(&r, key) : NULL;
	*found = tip != NULL;
	if (tip)
		memcpy(id, tip, FDL_ID_LEN + 1);
	free(key);
	fdl_refs_free(&r);
	return rc;
}

int fdl_site_render(fdl_buf *out, fdl_repo *repo, const char *id, fdl_site_file what, const char *base,
		    fdl_error *err)
{
	char tip[FDL_ID_LEN + 1];
	bool found = true;
	int rc = what == FDL_SITE_FILE_HOME ? head_tip(tip, &found, repo, err) : 0;
	if (!rc && !found)
		return fdl_fail(err, FDL_ENOTFOUND, "%s has no version on HEAD's branch yet", repo->root);
	site_model m;
	if (!rc)
		rc = fdl__site_model_load(&m, repo, what == FDL_SITE_FILE_HOME ? tip : id, base,
					  what == FDL_SITE_FILE_HOME ? "" : FDL_SITE_UP, err);
	if (rc)
		return rc;
	switch (what) {
	case FDL_SITE_FILE_HOME:
	case FDL_SITE_FILE_PAGE:
		rc = fdl__site_html(out, &m, what == FDL_SITE_FILE_HOME, err);
		break;
	case FDL_SITE_FILE_CROISSANT:
		rc = fdl__site_croissant(out, &m, err);
		break;
	case FDL_SITE_FILE_DATAPACKAGE:
		rc = fdl__site_datapackage(out, &m, err);
		break;
	}
	fdl__site_model_free(&m);
	return rc;
}

static int write_one(fdl_repo *repo, const char *id, fdl_site_file what, const char *key, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = key ? fdl_site_render(&b, repo, id, what, NULL, err) : fdl_oom(err);
	if (rc == FDL_EEXPIRED) { /* no description of data that is gone */
		fdl_error_clear(err);
		rc = fdl_store_del(repo->store, key, err);
		if (rc == FDL_ENOTFOUND) {
			fdl_error_clear(err);
			rc = 0;
		}
	} else if (!rc) {
		rc = fdl_site_put(repo, key, b.data, b.len, err);
	}
	fdl_buf_free(&b);
	return rc;
}

int fdl_site_write_home(fdl_repo *repo, fdl_error *err)
{
	int rc = write_one(repo, NULL, FDL_SITE_FILE_HOME, FDL_SITE_HOME, err);
	if (rc == FDL_ENOTFOUND) { /* no version yet: nothing to show */
		fdl_error_clear(err);
		rc = 0;
	}
	return rc;
}

int fdl_site_write(fdl_repo *repo, const char *id, fdl_error *err)
{
	const fdl_site_file what[] = {FDL_SITE_FILE_CROISSANT, FDL_SITE_FILE_DATAPACKAGE, FDL_SITE_FILE_PAGE};
	const char *names[] = {FDL_SITE_CROISSANT, FDL_SITE_DATAPACKAGE, FDL_SITE_PAGE};
	int rc = fdl_id_is_valid(id) ? 0 : fdl_fail(err, FDL_EINVALID, "'%s' is not a version id", id);
	for (size_t i = 0; !rc && i < 3; i++) {
		char *key = fdl_site_key(id, names[i]);
		rc = write_one(repo, id, what[i], key, err);
		free(key);
	}
	return rc ? rc : fdl_site_write_home(repo, err);
}

int fdl_site_after_commit(fdl_repo *repo, const char *id, fdl_error *err)
{
	bool on = false;
	int rc = fdl_site_enabled(&on, repo, err);
	return rc || !on ? rc : fdl_site_write(repo, id, err);
}

int fdl_site_after_gone(fdl_repo *repo, const char *id, fdl_error *err)
{
	return fdl_site_after_commit(repo, id, err);
}

/* Delete the home when HEAD's tip is one of `ids`. */
static int home_unless_kept(fdl_repo *repo, const fdl_strlist *ids, fdl_error *err)
{
	char tip[FDL_ID_LEN + 1];
	bool found = false, going = false;
	int rc = head_tip(tip, &found, repo, err);
	for (size_t i = 0; !rc && found && i < ids->len; i++)
		going |= !strcmp(ids->items[i], tip);
	if (!rc && going && (rc = fdl_store_del(repo->store, FDL_SITE_HOME, err)) == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		rc = 0;
	}
	return rc;
}

int fdl_site_before_gone(fdl_repo *repo, const fdl_strlist *ids, fdl_error *err)
{
	bool on = false;
	int rc = fdl_site_enabled(&on, repo, err);
	for (size_t i = 0; !rc && on && i < ids->len; i++)
		rc = fdl_site_remove(repo, ids->items[i], err);
	return rc || !on ? rc : home_unless_kept(repo, ids, err);
}

int fdl_site_after_refs(fdl_repo *repo, fdl_error *err)
{
	bool on = false;
	fdl_strlist ids = {0};
	int rc = fdl_site_enabled(&on, repo, err);
	if (!rc && on)
		rc = fdl_site_list(&ids, repo, err);
	for (size_t i = 0; !rc && i < ids.len; i++) {
		fdl_version *v = NULL;
		rc = fdl_version_read(&v, repo, ids.items[i], err);
		fdl_version_free(v);
		if (rc == FDL_ENOTFOUND) { /* the version itself went: so do its pages */
			fdl_error_clear(err);
			rc = fdl_site_remove(repo, ids.items[i], err);
		} else if (!rc) {
			rc = fdl_site_write(repo, ids.items[i], err);
		}
	}
	fdl_strlist_free(&ids);
	return rc || !on ? rc : fdl_site_write_home(repo, err);
}
