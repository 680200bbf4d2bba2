/* fdl clone's mirroring of expiry: what the source expired or withdrew
 * since the copy was made is removed from the copy too. */
#include "clone.h"
#include "derived.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file an expiry deletes, of a version the source has expired: not
 * copied (and not asked for). */
bool fdl__gone_with_expiry(const vdir *d, const char *name)
{
	return fdl_vdir_has(d, FDL_EXPIRED_JSON) && fdl_version_removable(d->v, name);
}

/* A data file's path as expired.json records it: relative, inside the data
 * folder, no step up. */
static bool data_path_ok(const char *p)
{
	if (!p || !*p || *p == '/' || strstr(p, "//") || strchr(p, '\\'))
		return false;
	for (const char *s = p; s; s = strchr(s, '/')) {
		s += *s == '/';
		if (!strncmp(s, "..", 2) && (s[2] == '/' || !s[2]))
			return false;
		if (!strncmp(s, ".", 1) && (s[1] == '/' || !s[1]))
			return false;
	}
	return true;
}

static int del_copy(cloner *c, char *key, fdl_error *err)
{
	bool deleted = false;
	int rc = fdl_store_del_owned(c->dst, key, &deleted, err);
	c->unmirrored += deleted;
	return rc;
}

/* The source expired or withdrew this version since the copy was made (a
 * mirror must not keep withdrawn data): with expired.json now in the copy
 * (its bytes the source's), delete from the copy what it lists, as the
 * source did: the version's catalog files, the data files of a withdrawal
 * that no live catalog references, and version.json when the source no
 * longer has it (the copy's history index first, as fdl withdraw does). */
int fdl__mirror_expiry(cloner *c, const vdir *d, fdl_error *err)
{
	char *key = fdl_version_key(d->id, FDL_EXPIRED_JSON);
	fdl_buf b = {0};
	json_t *j = NULL;
	int rc = key ? fdl_store_get(c->dst, key, FDL_META_MAX_BYTES, &b, NULL, err)
		     : fdl_oom(err);
	if (!rc)
		rc = fdl_json_parse(&j, b.data, b.len, key, err);
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(j, "removed"), i, f) {
		const char *name = json_string_value(f);
		/* a name expired.json's `removed` may list: what an expiry deletes */
		if (!rc && name && fdl_version_removable(d->v, name))
			rc = del_copy(c, fdl_version_key(d->id, name), err);
	}
	json_array_foreach(json_object_get(j, "data_files"), i, f) {
		const char *path = json_string_value(f);
		int64_t sz;
		if (!rc && data_path_ok(path) && !fdl_strmap_get(c->live, path, &sz))
			rc = del_copy(c, fdl_asprintf("%s/%s", c->src->data_dir, path), err);
	}
	if (!rc && !fdl_vdir_has(d, FDL_VERSION_JSON)) { /* withdrawn with it */
		fdl_repo *copy = NULL;
		int64_t sz;
		fdl_error e;
		char *vkey = fdl_version_key(d->id, FDL_VERSION_JSON);
		if (vkey && fdl_store_head(c->dst, vkey, &sz, &e) == 0) {
			rc = fdl_repo_open(&copy, c->dst->url, err);
			if (!rc)
				rc = fdl_ref_moved(copy, &(fdl_ref_move){.what = FDL_MOVE_DROP_HISTORY}, err);
			if (!rc)
				rc = del_copy(c, vkey, err), vkey = NULL;
			fdl_repo_free(copy);
		}
		free(vkey);
	}
	json_decref(j);
	fdl_buf_free(&b);
	free(key);
	return rc;
}
