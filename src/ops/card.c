/* The landing card (src/layout/card.h) kept current: written from HEAD's
 * branch, its tip's files and preview after each ref move, deleted before
 * its tip goes, checked by fdl verify. */
#include "card.h"
#include "../layout/card.h"
#include "../layout/keys.h"
#include "../layout/preview.h"

#include <stdlib.h>
#include <string.h>

/* HEAD's branch (caller frees; NULL: none) and its tip as refs/ holds it
 * (*found false: unborn). */
static int head_tip(char **branch, char tip[FDL_ID_LEN + 1], bool *found, fdl_repo *repo, fdl_error *err)
{
	fdl_refs r = {0};
	int rc = fdl_refs_all(&r, repo, true, err);
	char *key = rc || !r.head ? NULL : fdl_ref_key(FDL_REF_BRANCH, r.head);
	const char *id = key ? fdl_refs_get(&r, key) : NULL;
	*found = id != NULL;
	*branch = id ? fdl_strdup(r.head) : NULL;
	if (id)
		memcpy(tip, id, FDL_ID_LEN + 1);
	if (!rc && id && !*branch)
		rc = fdl_oom(err);
	free(key);
	fdl_refs_free(&r);
	return rc;
}

/* Version v's file recorded under `field` into the card (checked against
 * its sha256); files.json only when small enough to travel with it. */
static int add_file(json_t *card, fdl_repo *repo, const fdl_version *v, const char *field, fdl_error *err)
{
	json_t *doc = NULL;
	int rc = fdl_version_load_json(&doc, repo, v, field, err);
	if (!rc && doc && !strcmp(field, "files")) {
		char *text = NULL;
		size_t len = 0;
		rc = fdl_json_dump_as(&text, &len, doc, true, err);
		free(text);
		if (!rc && len > FDL_CARD_FILES_MAX) {
			json_decref(doc);
			doc = NULL;
		}
	}
	if (!rc && doc)
		rc = json_object_set_new(card, field, doc) ? fdl_oom(err) : 0;
	else
		json_decref(doc);
	return rc;
}

/* The card of `branch` at `tip` (a live version); FDL_ENOTFOUND when the
 * tip has no preview (a repository that keeps none pays nothing). */
static int card_make(json_t **out, fdl_repo *repo, const char *branch, const char *tip, fdl_error *err)
{
	fdl_version *v = NULL;
	json_t *pv = NULL, *card = NULL;
	int rc = fdl_preview_read(&pv, repo, tip, err);
	if (!rc)
		rc = fdl_version_read(&v, repo, tip, err);
	if (!rc && !(card = json_pack("{s:i, s:s, s:s, s:s, s:O}", "fdl_card", FDL_CARD_FORMAT, "head", branch, "tip",
				      tip, "data_dir", repo->data_dir, "version", (json_t *)fdl_version_json(v))))
		rc = fdl_oom(err);
	if (!rc)
		rc = add_file(card, repo, v, "dataset", err);
	if (!rc)
		rc = add_file(card, repo, v, "files", err);
	if (!rc && json_object_set(card, "preview", pv))
		rc = fdl_oom(err);
	json_decref(pv);
	fdl_version_free(v);
	if (rc)
		json_decref(card);
	else
		*out = card;
	return rc;
}

/* No card: deleted when there is one (nothing written when there is none). */
static int card_none(fdl_repo *repo, fdl_error *err)
{
	int64_t bytes;
	fdl_error e;
	if (fdl_store_head(repo->store, FDL_CARD_KEY, &bytes, &e) == FDL_ENOTFOUND)
		return 0;
	return fdl_card_delete(repo, err);
}

int fdl__card_refresh(fdl_repo *repo, fdl_error *err)
{
	char *branch = NULL, tip[FDL_ID_LEN + 1];
	bool found = false;
	json_t *card = NULL;
	fdl_error e;
	int rc = head_tip(&branch, tip, &found, repo, err);
	if (!rc && (!found || fdl_version_check_live(repo, tip, &e))) /* unborn, or its tip gone: no card */
		rc = card_none(repo, err);
	else if (!rc && !(rc = card_make(&card, repo, branch, tip, err)))
		rc = fdl_card_write(repo, card, err);
	else if (rc) { /* no preview of the tip, or it cannot be made: no card (an older one would be stale) */
		fdl_error_clear(err);
		rc = card_none(repo, err);
	}
	json_decref(card);
	free(branch);
	return rc;
}

int fdl__card_drop(fdl_repo *repo, const fdl_strlist *going, fdl_error *err)
{
	json_t *card = NULL;
	fdl_error e;
	int rc = fdl_card_read(&card, repo, &e);
	if (rc == FDL_ENOTFOUND)
		return 0;
	const char *tip = rc ? NULL : json_string_value(json_object_get(card, "tip"));
	bool goes = !tip; /* a card that cannot be read may hold anything */
	for (size_t i = 0; tip && i < going->len && !goes; i++)
		goes = !strcmp(going->items[i], tip);
	json_decref(card);
	return goes ? fdl_card_delete(repo, err) : 0;
}

int fdl__card_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, fdl_error *err)
{
	json_t *card = NULL;
	fdl_error e;
	char *branch = NULL, tip[FDL_ID_LEN + 1];
	bool found = false;
	int rc = fdl_card_read(&card, repo, &e);
	if (rc == FDL_ENOTFOUND)
		return 0;
	if (rc)
		return fdl_finding_add(problems, FDL_CARD_KEY, "cannot be read: %s (a commit on HEAD's branch, fdl "
				       "preview or fdl gc writes it again once it is deleted)", e.message);
	const char *head = json_string_value(json_object_get(card, "head"));
	const char *at = json_string_value(json_object_get(card, "tip"));
	rc = head_tip(&branch, tip, &found, repo, err);
	if (!rc && fdl_version_check_live(repo, at, &e))
		rc = fdl_finding_add(warnings, FDL_CARD_KEY, "it shows version %s, which is gone, yet it holds its "
				     "first rows: run the withdrawal or expiry again, or fdl gc, which deletes it", at);
	else if (!rc && (!found || strcmp(head, branch) || strcmp(at, tip)))
		rc = fdl_finding_add(warnings, FDL_CARD_KEY, "it shows %s at %s, not HEAD's tip (readers read the "
				     "tip's own files; the next commit on HEAD's branch, fdl preview or fdl gc writes it "
				     "again)", head, at);
	free(branch);
	json_decref(card);
	return rc;
}
