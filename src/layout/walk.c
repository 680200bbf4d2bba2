/* The walk over versions/: every version folder, which files it holds,
 * and its version.json where it has one. */
#include "keys.h"
#include "walk.h"

#include <stdlib.h>
#include <string.h>

vdir *fdl_vdirs_find(vdirs *d, const char *id)
{
	for (size_t i = 0; id && i < d->len; i++)
		if (!strcmp(d->items[i].id, id))
			return &d->items[i];
	return NULL;
}

bool fdl_vdir_has(const vdir *d, const char *name)
{
	for (size_t i = 0; name && i < d->files.len; i++)
		if (!strcmp(d->files.items[i], name))
			return true;
	return false;
}

int fdl_vdirs_list(vdirs *out, fdl_strlist *strays, fdl_strlist *specials, fdl_repo *repo, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	fdl_strlist keys = {0};
	int rc = fdl_store_list_all(repo->store, FDL_VERSIONS_DIR, &keys, specials, err);
	fdl_strlist_sort(&keys);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		char id[FDL_ID_LEN + 1];
		const char *rest = NULL;
		if (!fdl_version_key_parse(keys.items[i], id, &rest) || !*rest) {
			if (strays)
				rc = fdl_strlist_add(strays, keys.items[i], err);
			continue;
		}
		vdir *d = fdl_vdirs_find(out, id);
		if (!d) {
			vdir *p = realloc(out->items, (out->len + 1) * sizeof *p);
			if (!p) {
				rc = fdl_oom(err);
				break;
			}
			out->items = p;
			d = &p[out->len++];
			memset(d, 0, sizeof *d);
			memcpy(d->id, id, sizeof id);
		}
		rc = fdl_strlist_add(&d->files, rest, err);
	}
	fdl_strlist_free(&keys);
	if (rc)
		fdl_vdirs_free(out);
	return rc;
}

int fdl_vdirs_read(vdirs *d, fdl_finding_list *problems, fdl_repo *repo, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < d->len && !rc; i++) {
		vdir *v = &d->items[i];
		if (!fdl_vdir_has(v, "version.json"))
			continue;
		char *key = fdl_version_key(v->id, "version.json");
		fdl_buf b = {0};
		fdl_error e;
		if (!key)
			rc = fdl_oom(err);
		else if (fdl_store_get(repo->store, key, FDL_META_MAX_BYTES, &b, NULL, &e) ||
			 fdl_version_parse(&v->v, b.data, b.len, v->id, key, &e)) {
			if (problems && fdl_finding_list_add(problems, key, "%s", e.message))
				rc = fdl_oom(err);
		}
		fdl_buf_free(&b);
		free(key);
	}
	return rc;
}

void fdl_vdirs_free(vdirs *d)
{
	for (size_t i = 0; i < d->len; i++) {
		fdl_strlist_free(&d->items[i].files);
		fdl_version_free(d->items[i].v);
	}
	free(d->items);
	memset(d, 0, sizeof *d);
}

int64_t fdl_vdirs_added_from(vdirs *dirs, const vdir *d)
{
	vdir *p = fdl_vdirs_find(dirs, fdl_version_parent(d->v, 0));
	return fdl_version_added_from(d->v, p ? p->v : NULL);
}
