/* The names of the dataset's pages (site.h): the repository's index.html,
 * site/site.json and each version's site/<id>/ files; their writes. */
#include "site.h"
#include "keys.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

char *fdl_site_key(const char *id, const char *name)
{
	return name ? fdl_asprintf(FDL_SITE_DIR "/%s/%s", id, name) : fdl_asprintf(FDL_SITE_DIR "/%s", id);
}

bool fdl_site_key_parse(const char *key, char id[FDL_ID_LEN + 1], const char **name)
{
	size_t p = strlen(FDL_SITE_DIR "/");
	if (strncmp(key, FDL_SITE_DIR "/", p) || strlen(key) < p + FDL_ID_LEN + 1 || key[p + FDL_ID_LEN] != '/')
		return false;
	char tmp[FDL_ID_LEN + 1];
	memcpy(tmp, key + p, FDL_ID_LEN);
	tmp[FDL_ID_LEN] = '\0';
	const char *rest = key + p + FDL_ID_LEN + 1;
	if (!fdl_id_is_valid(tmp) || (strcmp(rest, FDL_SITE_PAGE) && strcmp(rest, FDL_SITE_CROISSANT) &&
				      strcmp(rest, FDL_SITE_DATAPACKAGE)))
		return false;
	if (id)
		memcpy(id, tmp, FDL_ID_LEN + 1);
	if (name)
		*name = rest;
	return true;
}

bool fdl_site_key_is(const char *key)
{
	return !strcmp(key, FDL_SITE_HOME) || !strcmp(key, FDL_SITE_RECORD) || fdl_site_key_parse(key, NULL, NULL);
}

int fdl_site_enabled(bool *on, fdl_repo *repo, fdl_error *err)
{
	int64_t bytes = 0;
	int rc = fdl_store_head(repo->store, FDL_SITE_RECORD, &bytes, err);
	*on = rc == 0;
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		rc = 0;
	}
	return rc;
}

int fdl_site_enable(fdl_repo *repo, fdl_error *err)
{
	static const char text[] = "{\n  \"fdl_site\": 1\n}\n";
	int rc = fdl_store_put_if_absent(repo->store, FDL_SITE_RECORD, text, sizeof text - 1, err);
	if (rc == FDL_EEXISTS || rc == FDL_ECONFLICT) {
		fdl_error_clear(err);
		rc = 0;
	}
	return rc;
}

const char *fdl_site_public_url(const fdl_repo *repo)
{
	const char *u = json_string_value(json_object_get(repo->config, FDL_SITE_PUBLIC_URL));
	return u && *u ? u : NULL;
}

int fdl_site_url_check(char **out, const char *url, fdl_error *err)
{
	size_t n = strlen(url);
	const char *host = !strncmp(url, "https://", 8) ? url + 8 : !strncmp(url, "http://", 7) ? url + 7 : NULL;
	bool ok = host && *host && *host != '/' && n < 1024;
	for (const char *c = url; ok && *c; c++)
		ok = (unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f && !strchr("\"'<>\\`?#{}|^ ", *c);
	if (!ok)
		return fdl_fail(err, FDL_EINVALID,
				"%s must be an http:// or https:// address with a host and no query, fragment, quote or "
				"space; not '%s'",
				FDL_SITE_PUBLIC_URL, url);
	while (n && url[n - 1] == '/')
		n--;
	*out = fdl_asprintf("%.*s", (int)n, url);
	return *out ? 0 : fdl_oom(err);
}

int fdl_site_put(fdl_repo *repo, const char *key, const char *text, size_t len, fdl_error *err)
{
	return fdl_store_replace_if_changed(repo->store, key, text, len, NULL, err);
}

int fdl_site_remove(fdl_repo *repo, const char *id, fdl_error *err)
{
	const char *names[] = {FDL_SITE_PAGE, FDL_SITE_CROISSANT, FDL_SITE_DATAPACKAGE};
	int rc = 0;
	for (size_t i = 0; !rc && i < 3; i++)
		rc = fdl_store_del_owned(repo->store, fdl_site_key(id, names[i]), NULL, err);
	char *dir = rc ? NULL : fdl_site_key(id, NULL);
	if (!rc && fdl_store_can(repo->store, FDL_STORE_LOCAL))
		rc = dir ? fdl_store_prune(repo->store, dir, err) : fdl_oom(err);
	free(dir);
	return rc;
}

int fdl_site_list(fdl_strlist *ids, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist keys = {0};
	int rc = fdl_store_list(repo->store, FDL_SITE_DIR "/", &keys, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		rc = 0;
	}
	char id[FDL_ID_LEN + 1];
	const char *name;
	for (size_t i = 0; !rc && i < keys.len; i++)
		if (fdl_site_key_parse(keys.items[i], id, &name) && !strcmp(name, FDL_SITE_PAGE))
			rc = fdl_strlist_add(ids, id, err);
	fdl_strlist_free(&keys);
	return rc;
}
