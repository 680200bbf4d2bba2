/* fdl clone's copying: one key or a version's files into the copy,
 * checked against what the versions record, parents first, then the refs
 * and the copy's derived index. */
#include "clone.h"
#include "derived.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


void fdl__prog_add(clone_prog *p, int64_t files, int64_t bytes)
{
	if (!p || !p->cb)
		return;
	pthread_mutex_lock(&p->mu);
	p->files_done += files;
	p->bytes_done += bytes > 0 ? bytes : 0;
	p->cb("clone files", p->files_done, p->files_total, p->payload);
	p->cb("clone", p->bytes_done, p->bytes_total, p->payload);
	pthread_mutex_unlock(&p->mu);
}


/* Whether the copy may hold `key` from before this run: listed when the
 * clone started (or the copy could not be listed). A key it did not hold
 * needs no HEAD or GET of the copy: a bucket then costs one PUT a file. */
bool fdl__copy_may_have(const cloner *c, const char *key)
{
	return !c->dst_keys || fdl_strlist_has_sorted(c->dst_keys, key);
}


int fdl__copy_key(cloner *c, const char *key, int64_t bytes, const char *sha, const char *by, const char *local,
		    bool checked, bool optional, copied *out, fdl_error *err)
{
	copied none;
	out = out ? out : &none;
	memset(out, 0, sizeof *out);
	int64_t have = -1;
	fdl_error e;
	if (fdl__copy_may_have(c, key) && fdl_store_head(c->dst, key, &have, &e) == 0 && (bytes < 0 || have == bytes)) {
		/* a rerun: a file the format records a sha256 of is checked
		 * where that costs no request (a folder copy) */
		char *there = sha ? fdl_store_local_path(c->dst, key) : NULL;
		char hex[65];
		int64_t n;
		int rc = there ? fdl_sha256_file(hex, &n, there, err) : 0;
		if (!rc && there && strcmp(hex, sha))
			rc = fdl_fail(err, FDL_EEXISTS, "%s/%s exists with other content; remove it and rerun", c->dst->url,
				      key);
		free(there);
		c->skipped += !rc;
		return rc;
	}
	char *tmp = local ? NULL : fdl_asprintf("%s/copy-%d-%ld", c->tmpdir, c->worker, c->copied + c->skipped);
	if (!local && !tmp)
		return fdl_oom(err);
	int rc = local ? 0 : fdl_store_get_file(c->src_store, key, tmp, err);
	if (rc == FDL_ENOTFOUND && optional) {
		fdl_error_clear(err);
		unlink(tmp);
		free(tmp);
		return 0;
	}
	const char *from = local ? local : tmp;
	char hex[65];
	int64_t n = bytes;
	if (!rc && !(local && checked))
		rc = fdl_sha256_file(hex, &n, from, err);
	else if (sha)
		memcpy(hex, sha, 65);
	if (!rc && bytes >= 0 && n != bytes)
		rc = fdl_fail(err, FDL_EINVALID, "%s/%s is %lld bytes; expected %lld; not copied", c->src->root, key,
			      (long long)n, (long long)bytes);
	if (!rc && sha && strcmp(hex, sha))
		rc = fdl_fail(err, FDL_EINVALID, "%s/%s has sha256 %s; %s records %s; not copied (the file changed after "
			      "it was written)", c->src->root, key, hex, by ? by : FDL_VERSION_JSON, sha);
	if (!rc && !(local && checked))
		memcpy(out->got, hex, sizeof out->got);
	if (!rc) {
		rc = fdl_store_put_file_if_absent(c->dst, key, from, err);
		out->put = !rc;
		if (rc == FDL_EEXISTS) /* a half-done earlier run left another size: a file is never replaced */
			rc = fdl_fail(err, FDL_EEXISTS, "%s/%s exists with other content; remove it and rerun",
				      c->dst->url, key);
	}
	if (!rc)
		c->copied++;
	if (tmp)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* Put a small file's bytes (b, from the source) into the copy, create-only;
 * one already there must hold the same bytes. */
int fdl__put_small(cloner *c, const char *key, const fdl_buf *b, fdl_error *err)
{
	int rc = fdl_store_put_if_absent(c->dst, key, b->data, b->len, err);
	if (!rc)
		c->copied++;
	if (rc == FDL_EEXISTS) {
		fdl_buf have = {0};
		rc = fdl_store_get(c->dst, key, FDL_META_MAX_BYTES, &have, NULL, err);
		if (!rc && (have.len != b->len || memcmp(have.data, b->data, b->len)))
			rc = fdl_fail(err, FDL_EEXISTS, "%s/%s exists and differs from %s/%s; not a clone of it",
				      c->dst->url, key, c->src->root, key);
		if (!rc)
			c->skipped++;
		fdl_buf_free(&have);
	}
	return rc;
}

int fdl__copy_small(cloner *c, const char *key, bool optional, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_store_get(c->src_store, key, FDL_META_MAX_BYTES, &b, NULL, err);
	if (rc == FDL_ENOTFOUND && optional) {
		fdl_buf_free(&b);
		return 0;
	}
	if (!rc)
		rc = fdl__put_small(c, key, &b, err);
	fdl_buf_free(&b);
	return rc;
}


/* Where the plan puts a version file it fetched ahead (under the clone's
 * temporary folder, laid out by key), for copy_version to write once the
 * data is there and for reading the copy back without fetching it. */
char *fdl__staged_path(const cloner *c, const vdir *d, const char *name)
{
	return fdl_version_url(c->tmpdir, d->id, name);
}

/* The size and sha256 version.json records for one of the version's
 * files (-1 and NULL when it records none). */
void fdl__recorded(const vdir *d, const char *name, int64_t *bytes, const char **sha)
{
	const json_t *doc = d->v ? fdl_version_json(d->v) : NULL;
	const char *refs_k[] = {"catalog", "dataset", "files"};
	*bytes = -1;
	*sha = NULL;
	for (size_t k = 0; doc && k < 3; k++) {
		const json_t *o = json_object_get(doc, refs_k[k]);
		const char *path = json_string_value(json_object_get(o, "path"));
		if (path && !strcmp(path, name)) {
			*sha = json_string_value(json_object_get(o, "sha256"));
			*bytes = (int64_t)json_integer_value(json_object_get(o, "bytes"));
		}
	}
}

/* The copy has this version's version.json with the bytes the source's
 * history index records for it: no request for it. */
bool fdl__copy_has_version_json(cloner *c, const vdir *d)
{
	char *key = fdl_version_key(d->id, FDL_VERSION_JSON);
	fdl_buf have = {0};
	char hex[65];
	fdl_error e;
	bool there = key && d->sha256[0] && fdl__copy_may_have(c, key) &&
		     !fdl_store_get(c->dst, key, FDL_META_MAX_BYTES, &have, NULL, &e) &&
		     !fdl_sha256_mem(hex, have.data, have.len, &e) && !strcmp(hex, d->sha256);
	fdl_buf_free(&have);
	free(key);
	return there;
}

typedef struct by_seq {
	int64_t seq;
	size_t i;
} by_seq;

static int cmp_seq(const void *a, const void *b)
{
	const by_seq *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : x->i < y->i ? -1 : x->i > y->i;
}

/* The order the versions pool takes versions in (by seq: a parent before
 * its children), a published flag each, and each version's index by id. */
int fdl__parents_first(size_t **order, atomic_bool **published, fdl_strmap *index_of, const vdirs *dirs,
			 fdl_error *err)
{
	by_seq *s = calloc(dirs->len + 1, sizeof *s);
	*order = calloc(dirs->len + 1, sizeof **order);
	*published = calloc(dirs->len + 1, sizeof **published);
	int rc = s && *order && *published ? 0 : fdl_oom(err);
	for (size_t i = 0; i < dirs->len && !rc; i++) {
		const vdir *d = &dirs->items[i];
		s[i] = (by_seq){d->v ? fdl_version_seq(d->v) : -1, i};
		atomic_init(&(*published)[i], false);
		rc = fdl_strmap_put(index_of, d->id, (int64_t)i, err);
	}
	if (!rc) {
		qsort(s, dirs->len, sizeof *s, cmp_seq);
		for (size_t i = 0; i < dirs->len; i++)
			(*order)[i] = s[i].i;
	}
	free(s);
	return rc;
}

/* A version's files, version.json last; `catalog`: its catalog, fetched
 * and checked by the plan (NULL: not fetched). Sizes version.json records
 * need no HEAD at the source. */
/* Wait until version i's first parent has its version.json in the copy
 * (or is not copied by this clone); an error when the pool failed. */
static int wait_parent(pool *p, size_t i, fdl_error *err)
{
	const vdir *d = &p->dirs->items[i];
	const char *parent = d->v ? fdl_version_parent(d->v, 0) : NULL;
	int64_t j = -1;
	if (!p->threaded || !parent || !fdl_strmap_get(p->index_of, parent, &j))
		return 0;
	pthread_mutex_lock(&p->mu);
	while (!atomic_load(&p->published[j]) && !atomic_load(&p->failed))
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return atomic_load(&p->failed) ? fdl_fail(err, FDL_ERROR, "stopped: another transfer failed") : 0;
}

static void mark_published(pool *p, size_t i)
{
	if (!p->threaded) {
		atomic_store(&p->published[i], true);
		return;
	}
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->published[i], true);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int fdl__copy_version(cloner *c, pool *p, size_t at, fdl_error *err)
{
	const vdir *d = &p->dirs->items[at];
	const char *catalog = p->catalogs[at];
	int rc = 0;
	for (size_t i = 0; i < d->files.len && !rc; i++) {
		const char *name = d->files.items[i];
		if (!strcmp(name, FDL_VERSION_JSON) || fdl__gone_with_expiry(d, name))
			continue;
		const char *sha;
		int64_t bytes;
		fdl__recorded(d, name, &bytes, &sha);
		bool is_catalog = d->v && !strcmp(name, fdl_version_catalog_path(d->v));
		char *key = fdl_version_key(d->id, name), *staged = is_catalog ? NULL : fdl__staged_path(c, d, name);
		struct stat st;
		const char *local = is_catalog ? catalog : staged && stat(staged, &st) == 0 ? staged : NULL;
		if (!key || (!is_catalog && !staged))
			rc = fdl_oom(err);
		else
			rc = fdl__copy_key(c, key, bytes, sha, NULL, local, is_catalog, true, NULL, err);
		free(key);
		free(staged);
		if (!rc)
			fdl__prog_add(c->prog, 1, bytes);
	}
	if (!rc && fdl_vdir_has(d, FDL_EXPIRED_JSON))
		rc = fdl__mirror_expiry(c, d, err);
	if (!rc && fdl_vdir_has(d, FDL_VERSION_JSON)) {
		char *key = fdl_version_key(d->id, FDL_VERSION_JSON);
		fdl_buf b = {0};
		bool there = fdl__copy_has_version_json(c, d);
		char *staged = fdl__staged_path(c, d, FDL_VERSION_JSON);
		int fd = staged ? open(staged, O_RDONLY | O_CLOEXEC) : -1;
		if (!key || !staged)
			rc = fdl_oom(err);
		else if (!there && fd >= 0) /* fetched by the plan (fdl_fd_read closes fd) */
			rc = fdl_fd_read(&b, fd, staged, FDL_META_MAX_BYTES, err), fd = -1;
		else if (!there) /* written once the parent's is */
			rc = fdl_store_get(c->src_store, key, FDL_META_MAX_BYTES, &b, NULL, err);
		if (fd >= 0)
			close(fd);
		free(staged);
		if (!rc)
			rc = wait_parent(p, at, err);
		if (!rc && there)
			c->skipped++;
		else if (!rc)
			rc = fdl__put_small(c, key, &b, err);
		fdl_buf_free(&b);
		free(key);
		if (!rc)
			fdl__prog_add(c->prog, 1, 0);
	}
	if (!rc)
		mark_published(p, at);
	return rc;
}

/* The version the copy's ref `key` names now ("" when it has none). */
static void copy_ref_value(char id[FDL_ID_LEN + 1], cloner *c, const char *key)
{
	fdl_buf b = {0};
	fdl_error e;
	id[0] = '\0';
	if (fdl_store_get(c->dst, key, 4096, &b, NULL, &e) == 0 && b.len >= FDL_ID_LEN) {
		memcpy(id, b.data, FDL_ID_LEN);
		id[FDL_ID_LEN] = '\0';
		if (!fdl_id_is_valid(id))
			id[0] = '\0';
	}
	fdl_buf_free(&b);
}

/* Does `id`'s first-parent chain, as the plan holds it, reach `old`? */
static bool descends(vdirs *dirs, const char *id, const char *old)
{
	for (size_t steps = 0; id && steps <= dirs->len; steps++) {
		if (!strcmp(id, old))
			return true;
		vdir *d = fdl_vdirs_find(dirs, id);
		id = d && d->v && fdl_version_parent_count(d->v) ? fdl_version_parent(d->v, 0) : NULL;
	}
	return false;
}

/* Before anything is copied: a ref of the copy at a version the source
 * does not have means the copy is another repository (or holds a history
 * the source no longer has); refused unless `force`. */
int fdl__check_copy_refs(cloner *c, vdirs *dirs, const planned_refs *refs, bool force, fdl_error *err)
{
	for (size_t i = 0; i < refs->keys.len; i++) {
		char have[FDL_ID_LEN + 1];
		copy_ref_value(have, c, refs->keys.items[i]);
		if (!have[0] || !strcmp(have, refs->ids[i]) || fdl_vdirs_find(dirs, have) || force)
			continue;
		return fdl_fail(err, FDL_ECONFLICT,
				"%s: %s is at version %s, which %s does not have: the copy holds another repository "
				"(or a history the source no longer has); nothing was copied. Clone into an empty "
				"folder, or give --force to make the copy follow the source",
				c->dst->url, refs->keys.items[i], have, c->src->root);
	}
	return 0;
}

/* A ref: set the copy's to the planned value (compare-and-swap on what
 * the copy has), saying so in `moved` when that is not a descendant of
 * where the copy's was (the source moved it back: fdl branch --force). */
int fdl__copy_ref(cloner *c, vdirs *dirs, const char *key, const char *id, fdl_strlist *moved, fdl_error *err)
{
	fdl_buf have = {0};
	char etag[FDL_ETAG_MAX], line[FDL_ID_LEN + 2], old[FDL_ID_LEN + 1];
	snprintf(line, sizeof line, "%s\n", id);
	size_t len = strlen(line);
	int got = fdl_store_get(c->dst, key, 4096, &have, etag, NULL);
	int rc = 0;
	if (got != 0 || have.len != len || memcmp(have.data, line, len)) {
		copy_ref_value(old, c, key);
		rc = fdl_store_put_if_match(c->dst, key, line, len, got == 0 ? etag : NULL, err);
		char *msg = !rc && old[0] && !descends(dirs, id, old)
				    ? fdl_asprintf("%s moved from %s to %s, which does not descend from it (the source "
						   "moved it so)",
						   key, old, id)
				    : NULL;
		if (msg)
			rc = fdl_strlist_add(moved, msg, err);
		free(msg);
	}
	fdl_buf_free(&have);
	return rc;
}

/* The copy's history index and ref list, made from the copy itself once
 * its refs are there (derived: a failure costs its readers speed, or a
 * static host's readers a branch, only), its version.json files read from
 * this run's checked copies of them where it has them (the same bytes the
 * copy holds) rather than fetched back. */
void fdl__index_copy(cloner *c, const fdl_strlist *refs, const vdirs *dirs)
{
	fdl_repo *dst = NULL;
	fdl_store *read = NULL;
	fdl_error e;
	if (fdl_store_overlay_open(&read, c->dst, c->tmpdir, &e))
		return;
	if (fdl_repo_from_store(&dst, read, &e)) {
		fdl_store_free(read);
		return;
	}
	fdl_ref_moved(dst, &(fdl_ref_move){.what = FDL_MOVE_REINDEX, .refs = refs, .dirs = dirs}, NULL);
	fdl_repo_free(dst);
}
