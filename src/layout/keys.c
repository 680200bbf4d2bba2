/* The repository's key space: builders, parsers and one classifier for
 * every name fdl gives a file (keys.h). */
#include "keys.h"
#include "iceberg.h"
#include "card.h"
#include "preview.h"
#include "site.h"

#include <string.h>

const char *fdl_ref_short(const char *key, fdl_ref_kind *kind)
{
	fdl_ref_kind k = fdl_ref_kind_of(key);
	if (kind)
		*kind = k;
	return k == FDL_REF_BRANCH ? key + strlen(FDL_REFS_HEADS) : k == FDL_REF_TAG ? key + strlen(FDL_REFS_TAGS) : key;
}

fdl_ref_kind fdl_ref_kind_of(const char *key)
{
	if (!strncmp(key, FDL_REFS_HEADS, strlen(FDL_REFS_HEADS)))
		return FDL_REF_BRANCH;
	if (!strncmp(key, FDL_REFS_TAGS, strlen(FDL_REFS_TAGS)))
		return FDL_REF_TAG;
	return FDL_REF_NONE;
}

char *fdl_ref_key(fdl_ref_kind kind, const char *name)
{
	return fdl_asprintf("%s%s", kind == FDL_REF_TAG ? FDL_REFS_TAGS : FDL_REFS_HEADS, name);
}

char *fdl_version_dir_key(const char *id) { return fdl_asprintf(FDL_VERSIONS_DIR "/%s", id); }

char *fdl_version_url(const char *root, const char *id, const char *name)
{
	return fdl_asprintf("%s/" FDL_VERSIONS_DIR "/%s/%s", root, id, name);
}

bool fdl_version_key_parse(const char *key, char id[FDL_ID_LEN + 1], const char **rest)
{
	size_t p = strlen(FDL_VERSIONS_DIR "/");
	if (strncmp(key, FDL_VERSIONS_DIR "/", p) || strlen(key) < p + FDL_ID_LEN)
		return false;
	char tmp[FDL_ID_LEN + 1];
	memcpy(tmp, key + p, FDL_ID_LEN);
	tmp[FDL_ID_LEN] = '\0';
	const char *after = key + p + FDL_ID_LEN;
	if (!fdl_id_is_valid(tmp) || (*after && *after != '/'))
		return false;
	if (id)
		memcpy(id, tmp, FDL_ID_LEN + 1);
	if (rest)
		*rest = *after ? after + 1 : after;
	return true;
}

char *fdl_format_catalog_path(const char *format)
{
	return fdl_asprintf(FDL_FORMAT_CATALOGS_DIR "/%s.duckdb", format);
}

bool fdl_is_format_catalog_path(const char *path)
{
	size_t d = strlen(FDL_FORMAT_CATALOGS_DIR "/"), n = strlen(path), ext = strlen(".duckdb");
	return !strncmp(path, FDL_FORMAT_CATALOGS_DIR "/", d) && n > d + ext && !strcmp(path + n - ext, ".duckdb") &&
	       !strchr(path + d, '/') && !strstr(path, "..");
}

static bool has_prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* Keys under history/, iceberg/ and previews/: packs, manifests, delete
 * files and a table's preview are named by what they hold; pointers (and
 * a version's preview, deleted with it, and the landing card) move. */
static fdl_key_class derived_class(const char *key)
{
	char sha[65], id[FDL_ID_LEN + 1];
	if (fdl_preview_table_key_parse(key, sha))
		return FDL_KEY_IMMUTABLE;
	if (has_prefix(key, FDL_PREVIEW_DIR "/"))
		return fdl_preview_key_parse(key, id) || !strcmp(key, FDL_CARD_KEY) ? FDL_KEY_MOVING : FDL_KEY_OTHER;
	if (has_prefix(key, FDL_HISTORY_DIR "/packs/"))
		return FDL_KEY_IMMUTABLE;
	if (has_prefix(key, FDL_ICEBERG_DIR "/") && (strstr(key, "/manifests/") || strstr(key, "/deletes/")))
		return FDL_KEY_IMMUTABLE;
	return FDL_KEY_MOVING;
}

fdl_key_class fdl_key_classify(const fdl_repo *repo, const char *key)
{
	return fdl_key_classify_in(repo ? repo->data_dir : NULL, key);
}

fdl_key_class fdl_key_classify_in(const char *data_dir, const char *key)
{
	char id[FDL_ID_LEN + 1];
	const char *rest;
	if (strstr(key, ".lock"))
		return FDL_KEY_LOCK;
	if (strstr(key, ".tmp-")) /* a write on its way (fdl_atomic_write's temporary file) */
		return FDL_KEY_TEMPORARY;
	if (!strcmp(key, FDL_CONFIG_FILE) || !strcmp(key, "HEAD") || has_prefix(key, FDL_REFS_DIR "/"))
		return FDL_KEY_MOVING;
	if (fdl_version_key_parse(key, id, &rest))
		return *rest && strcmp(rest, FDL_EXPIRED_JSON) ? FDL_KEY_IMMUTABLE : FDL_KEY_MOVING;
	if (has_prefix(key, FDL_HISTORY_DIR "/") || has_prefix(key, FDL_ICEBERG_DIR "/") ||
	    has_prefix(key, FDL_PREVIEW_DIR "/"))
		return derived_class(key);
	if (has_prefix(key, FDL_WORK_AREA "/"))
		return FDL_KEY_TEMPORARY;
	if (fdl_site_key_is(key)) /* derived pages, written again when a version goes */
		return FDL_KEY_MOVING;
	size_t dl = data_dir ? strlen(data_dir) : 0;
	if (dl && !strncmp(key, data_dir, dl) && key[dl] == '/')
		return FDL_KEY_DATA;
	return FDL_KEY_OTHER;
}

char *fdl_head_content(const char *branch)
{
	return fdl_asprintf("ref: " FDL_REFS_HEADS "%s\n", branch);
}

/* ---- added with the key-space cleanup (issue 37) ---- */

const char *fdl_ref_dir(fdl_ref_kind kind)
{
	return kind == FDL_REF_TAG ? FDL_REFS_DIR "/tags" : FDL_REFS_DIR "/heads";
}

const char *fdl_ref_spec_name(const char *spec, size_t *len)
{
	if (!spec || !*spec || !strcmp(spec, "HEAD") || !strcmp(spec, "@") || fdl_id_is_valid(spec))
		return NULL;
	/* the name ends at ":SEQ" or at a ~N/^N suffix (main:3~1, main~2) */
	size_t n = strcspn(spec, "~^");
	const char *colon = NULL;
	for (const char *p = spec; p < spec + n; p++)
		if (*p == ':')
			colon = p;
	if (colon)
		n = (size_t)(colon - spec);
	if (n == 0 || (n == 4 && !strncmp(spec, "HEAD", 4)) || (n == 1 && spec[0] == '@'))
		return NULL;
	size_t skip = (size_t)(fdl_ref_short(spec, NULL) - spec);
	if (skip < n) { /* "refs/heads/" alone is a name, if a poor one */
		spec += skip;
		n -= skip;
	}
	*len = n;
	return spec;
}
