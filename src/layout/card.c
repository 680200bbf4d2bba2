/* The landing card's file (card.h, docs/format.md "The landing card
 * (fdl)"): its name, its checks on every read, its writes. */
#include "card.h"
#include "preview.h"

#include <stdlib.h>
#include <string.h>

int fdl_card_parse(json_t **out, const char *data, size_t len, const char *src, fdl_error *err)
{
	json_t *doc = NULL;
	int64_t f = 0;
	const char *head = NULL, *tip = NULL, *vid = NULL;
	const json_t *v = NULL;
	int rc = fdl_json_parse(&doc, data, len, src, err);
	if (!rc && !json_is_object(doc))
		rc = fdl_fail(err, FDL_EINVALID, "%s: the landing card must be a JSON object", src);
	if (!rc && !(rc = fdl_json_get_int(&f, NULL, doc, "fdl_card", true, src, "fdl_card", err)) &&
	    f != FDL_CARD_FORMAT)
		rc = fdl_fail(err, FDL_EINVALID, "%s: field 'fdl_card' is %lld, this fdl reads %d", src, (long long)f,
			      FDL_CARD_FORMAT);
	if (!rc)
		rc = fdl_json_get_string(&head, doc, "head", true, src, "head", err);
	if (!rc)
		rc = fdl_json_get_string(&tip, doc, "tip", true, src, "tip", err);
	if (!rc && !fdl_id_is_valid(tip))
		rc = fdl_fail(err, FDL_EINVALID, "%s: field 'tip' is not a version id", src);
	if (!rc)
		rc = fdl_json_get_typed(&v, doc, "version", JSON_OBJECT, true, src, "version", err);
	if (!rc && (fdl_json_get_string(&vid, v, "id", true, src, "version.id", err) || strcmp(vid, tip)))
		rc = fdl_fail(err, FDL_EINVALID, "%s: field 'version' is not the record of the tip %s", src, tip);
	if (rc) {
		json_decref(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

int fdl_card_read(json_t **out, fdl_repo *repo, fdl_error *err)
{
	fdl_buf b = {0};
	char *src = fdl_asprintf("%s/%s", repo->root, FDL_CARD_KEY);
	int rc = src ? fdl_store_get(repo->store, FDL_CARD_KEY, FDL_PREVIEW_MAX_BYTES, &b, NULL, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_card_parse(out, b.data, b.len, src, err);
	fdl_buf_free(&b);
	free(src);
	return rc;
}

int fdl_card_write(fdl_repo *repo, const json_t *doc, fdl_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = fdl_json_dump_as(&text, &len, doc, true, err);
	if (!rc)
		rc = fdl_store_replace_if_changed(repo->store, FDL_CARD_KEY, text, len, NULL, err);
	free(text);
	return rc;
}

int fdl_card_delete(fdl_repo *repo, fdl_error *err)
{
	int rc = fdl_store_del(repo->store, FDL_CARD_KEY, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		rc = 0;
	}
	return rc;
}
