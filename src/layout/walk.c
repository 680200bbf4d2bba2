/* The walk over versions/: every version folder, which files it holds,
 * and its version.json where it has one. */
#include "keys.h"
#include "walk.h"
#include "../util/strmap.h"

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

/* ---- a store that cannot be listed: the walk from the refs --------------------- */

/* Add `name` to d's files when the store has versions/<id>/<name> (a HEAD);
 * an error other than "not there" is the walk's. */
static int add_if_there(vdir *d, fdl_repo *repo, const char *name, fdl_error *err)
{
	char *key = fdl_version_key(d->id, name);
	int64_t bytes;
	fdl_error e;
	int rc = key ? fdl_store_head(repo->store, key, &bytes, &e) : fdl_oom(err);
	if (rc == 0)
		rc = fdl_strlist_add(&d->files, name, err);
	else if (rc == FDL_ENOTFOUND)
		rc = 0;
	else if (key)
		*err = e;
	free(key);
	return rc;
}

/* One version of the walk: its version.json (read from the store, never
 * the read cache: verify checks what the store holds) and the files it
 * can be said to hold. *found false when the store has neither
 * version.json nor expired.json. */
static int walk_one(vdir *d, bool *found, fdl_finding_list *problems, fdl_repo *repo, fdl_error *err)
{
	char *key = fdl_version_key(d->id, FDL_VERSION_JSON);
	char etag[FDL_ETAG_MAX]; /* asked for, so the store answers itself */
	fdl_buf b = {0};
	fdl_error e;
	*found = true;
	int rc = key ? 0 : fdl_oom(err), got = rc ? rc : fdl_store_get(repo->store, key, FDL_META_MAX_BYTES, &b, etag, &e);
	if (!rc && got == 0) {
		rc = fdl_strlist_add(&d->files, FDL_VERSION_JSON, err);
		if (!rc && fdl_version_parse(&d->v, b.data, b.len, d->id, key, &e) &&
		    fdl_finding_list_add(problems, key, "%s", e.message))
			rc = fdl_oom(err);
	} else if (!rc && got != FDL_ENOTFOUND) {
		rc = fdl_fail(err, e.code, "%s", e.message); /* a host that refuses (401) or fails: no walk */
	}
	if (!rc)
		rc = add_if_there(d, repo, FDL_EXPIRED_JSON, err);
	bool expired = fdl_vdir_has(d, FDL_EXPIRED_JSON);
	if (!rc && d->v)
		rc = add_if_there(d, repo, FDL_VERSION_SIG, err);
	const char *fields[] = {"catalog", "dataset", "files"};
	for (size_t i = 0; !rc && d->v && i < 3; i++) {
		const char *path = json_string_value(json_object_get(json_object_get(fdl_version_json(d->v), fields[i]), "path"));
		if (!path || fdl_vdir_has(d, path))
			continue;
		/* a live version's files are read by the checks, which say when one is
		 * missing; an expired one's may be gone, as its expiry allows */
		rc = expired ? add_if_there(d, repo, path, err) : fdl_strlist_add(&d->files, path, err);
	}
	*found = got == 0 || expired;
	fdl_buf_free(&b);
	free(key);
	return rc;
}

int fdl_vdirs_walk(vdirs *out, fdl_finding_list *problems, fdl_repo *repo, const char (*tips)[FDL_ID_LEN + 1],
		   size_t ntips, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	fdl_strlist todo = {0};
	fdl_strmap seen = {0};
	int rc = 0;
	for (size_t i = 0; i < ntips && !rc; i++)
		rc = fdl_strlist_add(&todo, tips[i], err);
	/* todo grows as parents are found; seen (every id taken) keeps a
	 * broken history's cycle from looping */
	for (size_t k = 0; k < todo.len && !rc; k++) {
		const char *id = todo.items[k];
		if (strlen(id) != FDL_ID_LEN || fdl_strmap_get(&seen, id, &(int64_t){0}))
			continue;
		if ((rc = fdl_strmap_put(&seen, id, 1, err)))
			break;
		vdir d = {0};
		bool found = false;
		memcpy(d.id, id, FDL_ID_LEN + 1);
		rc = walk_one(&d, &found, problems, repo, err);
		vdir *grown = !rc && found ? realloc(out->items, (out->len + 1) * sizeof *grown) : NULL;
		if (!rc && found && !grown)
			rc = fdl_oom(err);
		if (grown) {
			out->items = grown;
			out->items[out->len++] = d;
		} else {
			fdl_strlist_free(&d.files);
			fdl_version_free(d.v);
		}
		const char *parent;
		for (size_t p = 0; !rc && grown && d.v && (parent = fdl_version_parent(d.v, p)); p++)
			rc = fdl_strlist_add(&todo, parent, err);
	}
	fdl_strlist_free(&todo);
	fdl_strmap_free(&seen);
	if (rc)
		fdl_vdirs_free(out);
	return rc;
}
