/* fdl clone's mirroring of expiry: what the source expired or withdrew
 * since the copy was made is removed from the copy too. */
#include "clone.h"
#include "derived.h"
#include "../layout/preview.h"
#include "../layout/site.h"

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

/* Whether the copy held a key under `prefix` when the clone started. */
static bool copy_had(const cloner *c, const char *prefix)
{
	size_t n = strlen(prefix);
	for (size_t i = 0; c->dst_keys && i < c->dst_keys->len; i++)
		if (!strncmp(c->dst_keys->items[i], prefix, n))
			return true;
	return false;
}

int fdl__mirror_going(cloner *c, const vdirs *dirs, fdl_error *err)
{
	if (!copy_had(c, FDL_PREVIEW_DIR "/") && !copy_had(c, FDL_SITE_DIR "/"))
		return 0;
	fdl_strlist ids = {0};
	fdl_repo *copy = NULL;
	int rc = 0;
	for (size_t i = 0; i < dirs->len && !rc; i++)
		if (fdl_vdir_has(&dirs->items[i], FDL_EXPIRED_JSON))
			rc = fdl_strlist_add(&ids, dirs->items[i].id, err);
	if (!rc && ids.len && !(rc = fdl_repo_open(&copy, c->dst->url, err)))
		rc = fdl_ref_moved(copy, &(fdl_ref_move){.what = FDL_MOVE_GOING, .ids = &ids}, err);
	fdl_repo_free(copy);
	fdl_strlist_free(&ids);
	return rc;
}

void fdl__clone_derived(cloner *c, const vdirs *dirs, const planned_refs *refs)
{
	fdl_strlist live = {0}, tips = {0};
	fdl_error e;
	int rc = 0;
	for (size_t i = 0; i < dirs->len && !rc; i++) {
		const vdir *d = &dirs->items[i];
		if (fdl_vdir_has(d, FDL_VERSION_JSON) && !fdl_vdir_has(d, FDL_EXPIRED_JSON))
			rc = fdl_strlist_add(&live, d->id, &e);
	}
	for (size_t i = 0; i < refs->keys.len && !rc; i++)
		rc = fdl_strlist_add(&tips, refs->ids[i], &e);
	fdl_strlist_sort(&live);
	fdl_strlist_sort(&tips);
	if (!rc) /* the copy's own views when the source has views; its previews */
		fdl_ref_moved(c->src, &(fdl_ref_move){.what = FDL_MOVE_CLONED, .dst_root = c->dst->url, .ids = &live,
						      .tips = &tips},
			      NULL);
	fdl_strlist_free(&live);
	fdl_strlist_free(&tips);
}
