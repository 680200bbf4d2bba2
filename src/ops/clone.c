/*
 * fdl clone: copy a repository between stores, resumable, checking every
 * byte it copies against what the versions record. The plan and the data
 * first: each live catalog fetched once, listed and checked as fdl verify
 * checks it, each data file it references copied (once) as soon as a
 * catalog names it; then each version's files. Order: HEAD and
 * fdl.json (an empty repository), data files, each version's files with
 * version.json last, refs last of all: an interrupted clone is always a valid
 * repository (some versions complete, others incomplete and ignored), and
 * a rerun skips what is already there and finishes.
 *
 * A folder source is listed whole. A static HTTP source cannot be listed:
 * what HEAD's branch reaches is cloned.
 */
#include "../catalog/catalog.h"
#include "iceberg.h"
#include "../layout/hindex.h"
#include "../layout/layout.h"
#include "../layout/walk.h"
#include "report.h"
#include "verify.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The whole clone's progress, shared by the pool's threads: files and
 * bytes done of what the plan counted, told to the caller as "clone files"
 * then "clone" (bytes), one call at a time. */
typedef struct clone_prog {
	fdl_progress_cb cb;
	void *payload;
	pthread_mutex_t mu;
	int64_t files_done, files_total, bytes_done, bytes_total;
} clone_prog;

static void prog_add(clone_prog *p, int64_t files, int64_t bytes)
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

typedef struct cloner {
	fdl_repo *src;
	fdl_store *src_store; /* src's, or a worker's own (each has its connections) */
	fdl_store *dst;
	char *tmpdir;
	int worker;
	bool probe; /* a source that cannot be listed: ask for expired.json and signatures */
	clone_prog *prog;
	const fdl_strmap *live; /* every data file a live catalog references (the plan) */
	const fdl_strlist *dst_keys; /* the copy's keys when the clone started, sorted (NULL: unknown) */
	long copied, skipped, unmirrored;
	/* the plan, this thread's part: what fdl verify says of its catalogs
	 * (merged into the clone's when the pool ends) */
	fdl_verify_report *found;
	fdl_duck *duck; /* NULL until its first catalog */
	struct pool *pool; /* the plan's pool, which takes each new data file */
} cloner;

/* Whether the copy may hold `key` from before this run: listed when the
 * clone started (or the copy could not be listed). A key it did not hold
 * needs no HEAD or GET of the copy: a bucket then costs one PUT a file. */
static bool copy_may_have(const cloner *c, const char *key)
{
	return !c->dst_keys || fdl_strlist_has_sorted(c->dst_keys, key);
}

/* Copy one key unless dst has it with the same size; check bytes and, when
 * given, sha256 (recorded in `by`, NULL: version.json) on the copy before
 * it is published. `local`: the source's bytes are already here (a catalog
 * fetched for the plan, and checked then: `checked`, so not hashed again).
 * `optional`: a key the source does not have is skipped (withdrawn data,
 * the catalog of an expired version). `got` (may be NULL) receives the
 * sha256 of the bytes copied ("" when none were), *put whether this call
 * wrote the key. */
typedef struct copied {
	char got[65];
	bool put;
} copied;

static int copy_key(cloner *c, const char *key, int64_t bytes, const char *sha, const char *by, const char *local,
		    bool checked, bool optional, copied *out, fdl_error *err)
{
	copied none;
	out = out ? out : &none;
	memset(out, 0, sizeof *out);
	int64_t have = -1;
	fdl_error e;
	if (copy_may_have(c, key) && fdl_store_head(c->dst, key, &have, &e) == 0 && (bytes < 0 || have == bytes)) {
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
static int put_small(cloner *c, const char *key, const fdl_buf *b, fdl_error *err)
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

static int copy_small(cloner *c, const char *key, bool optional, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_store_get(c->src_store, key, FDL_META_MAX_BYTES, &b, NULL, err);
	if (rc == FDL_ENOTFOUND && optional) {
		fdl_buf_free(&b);
		return 0;
	}
	if (!rc)
		rc = put_small(c, key, &b, err);
	fdl_buf_free(&b);
	return rc;
}

/* The refs to copy and their values, read before the versions are found:
 * a version a ref names was published before the ref moved to it, so the
 * plan holds every version these values name, and the copy's refs get
 * these values, never newer ones a commit made during the clone (which the
 * plan would lack). `only`: that branch alone (SRC@BRANCH, --branch); else
 * every branch and tag, listed, or named by the source's ref list
 * (history/refs.json, a static host), or HEAD's branch when it has none. */
typedef struct planned_refs {
	fdl_strlist keys;
	char (*ids)[FDL_ID_LEN + 1];
	bool listed; /* the source can be listed: every version directory is copied */
} planned_refs;

static void planned_refs_free(planned_refs *r)
{
	fdl_strlist_free(&r->keys);
	free(r->ids);
	memset(r, 0, sizeof *r);
}

static int refs_to_copy(planned_refs *out, cloner *c, const char *only, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	if (only) {
		char *key = NULL;
		bool exists = false;
		int rc = fdl_ref_branch_key(&key, only, err);
		if (!rc && !(out->ids = calloc(1, sizeof *out->ids)))
			rc = fdl_oom(err);
		if (!rc)
			rc = fdl_ref_read(c->src, key, out->ids[0], &exists, NULL, err);
		if (!rc && !exists) {
			char meant[300];
			fdl_ref_suggest(meant, sizeof meant, c->src, only);
			rc = fdl_fail(err, FDL_ENOTFOUND, "no branch '%s' in %s%s: SRC@BRANCH and --branch name a branch",
				      only, c->src->root, meant);
		}
		if (!rc)
			rc = fdl_strlist_add(&out->keys, key, err);
		free(key);
		return rc;
	}
	fdl_refs all;
	int rc = fdl_refs_all(&all, c->src, true, err);
	if (rc)
		return rc;
	out->listed = all.listed;
	out->keys = all.names;
	out->ids = all.ids;
	all.names = (fdl_strlist){0};
	all.ids = NULL;
	fdl_refs_free(&all);
	return 0;
}

/* Append `tip`'s first-parent chain to `out` as far as it holds versions
 * already (another ref's chain), through the source's history index where
 * it has one. */
static int add_chain(vdirs *out, fdl_strmap *seen, cloner *c, const char *key, const char *tip, fdl_error *err)
{
	fdl_hist h = {0};
	char gap[FDL_ID_LEN + 1] = "";
	const char *branch = !strncmp(key, "refs/heads/", 11) ? key + 11 : NULL;
	int rc = fdl_history_read(&h, c->src, branch, tip, -1, true, err);
	if (rc == FDL_ENOTFOUND) /* the chain reaches a version withdrawn with its version.json? */
		rc = fdl_history_withdrawn_end(gap, c->src, &h, tip, err);
	vdir *grown = rc ? NULL : realloc(out->items, (out->len + h.len + 1) * sizeof *out->items);
	if (!rc && !grown)
		rc = fdl_oom(err);
	if (!rc)
		out->items = grown;
	for (size_t i = 0; !rc && i < h.len; i++) {
		if (fdl_strmap_get(seen, h.items[i].id, &(int64_t){0}))
			break; /* the rest is another ref's chain, already there */
		vdir *d = &out->items[out->len];
		memset(d, 0, sizeof *d);
		memcpy(d->id, h.items[i].id, sizeof d->id);
		memcpy(d->sha256, h.items[i].sha256, sizeof d->sha256);
		if (!(rc = fdl_strmap_put(seen, d->id, (int64_t)out->len, err)))
			out->len++;
		char *src = fdl_asprintf("%s/versions/%s/" FDL_VERSION_JSON, c->src->root, d->id);
		rc = rc ? rc : src ? fdl_version_from_json(&d->v, h.items[i].doc, d->id, src, err) : fdl_oom(err);
		free(src);
		/* files we can name without listing; expired.json and a
		 * signature are asked for with the plan (prepare_version) */
		if (!rc)
			rc = fdl_strlist_add(&d->files, FDL_VERSION_JSON, err);
		const char *refs_k[] = {"catalog", "dataset", "files"};
		for (size_t k = 0; !rc && d->v && k < 3; k++) {
			const char *path = json_string_value(json_object_get(json_object_get(fdl_version_json(d->v), refs_k[k]), "path"));
			if (path)
				rc = fdl_strlist_add(&d->files, path, err);
		}
	}
	if (!rc && gap[0] && !fdl_strmap_get(seen, gap, &(int64_t){0})) { /* its expired.json, for the copy to follow (mirror_expiry) */
		vdir *d = &out->items[out->len];
		memset(d, 0, sizeof *d);
		memcpy(d->id, gap, sizeof d->id);
		if (!(rc = fdl_strmap_put(seen, d->id, (int64_t)out->len, err)))
			out->len++;
		if (!rc)
			rc = fdl_strlist_add(&d->files, FDL_EXPIRED_JSON, err);
	}
	fdl_hist_free(&h);
	return rc;
}

/* The versions to copy: every directory (a listable source, every ref
 * wanted) or what the planned refs reach. */
static int versions_of(vdirs *out, const planned_refs *refs, cloner *c, fdl_error *err)
{
	if (refs->listed) /* each version.json is read by the plan's pool (read_listed) */
		return fdl_vdirs_list(out, NULL, NULL, c->src, err);
	memset(out, 0, sizeof *out);
	c->probe = true;
	fdl_strmap seen = {0};
	int rc = 0;
	for (size_t i = 0; !rc && i < refs->keys.len; i++)
		if (!fdl_strmap_get(&seen, refs->ids[i], &(int64_t){0}))
			rc = add_chain(out, &seen, c, refs->keys.items[i], refs->ids[i], err);
	fdl_strmap_free(&seen);
	return rc;
}

/* An expired version of a source that cannot be listed: is its
 * version.json still there, or was it withdrawn with it (this machine's
 * read cache may still hold a copy)? Asked of the source itself. */
static int still_has_version_json(cloner *c, vdir *d, fdl_error *err)
{
	char *key = fdl_version_key(d->id, FDL_VERSION_JSON);
	int64_t sz;
	fdl_error e;
	int rc = key ? fdl_store_head(c->src_store, key, &sz, &e) : fdl_oom(err);
	free(key);
	if (rc == FDL_ENOTFOUND) {
		for (size_t i = 0; i < d->files.len; i++)
			if (!strcmp(d->files.items[i], FDL_VERSION_JSON)) {
				free(d->files.items[i]);
				d->files.items[i] = d->files.items[--d->files.len];
				break;
			}
		return 0;
	}
	if (rc && key)
		rc = fdl_fail(err, e.code, "%s", e.message);
	return rc;
}

/* The first step of the plan for one version, on a pool thread: on a
 * source that cannot be listed, whether it has expired.json and a
 * signature; then its catalog fetched and checked once (kept in *catalog
 * for the listing and its own copy; NULL when expired or withdrawn). */
/* On a source that cannot be listed: add `name` to the version's files if
 * the source has it (one HEAD). */
static int probe(cloner *c, vdir *d, const char *name, fdl_error *err)
{
	char *fk = fdl_version_key(d->id, name);
	int64_t sz;
	fdl_error e;
	int rc = 0;
	if (!fk)
		rc = fdl_oom(err);
	else if (!fdl_vdir_has(d, name) && fdl_store_head(c->src_store, fk, &sz, &e) == 0)
		rc = fdl_strlist_add(&d->files, name, err);
	free(fk);
	return rc;
}

/* Where the plan puts a version file it fetched ahead (under the clone's
 * temporary folder, laid out by key), for copy_version to write once the
 * data is there and for reading the copy back without fetching it. */
static char *staged_path(const cloner *c, const vdir *d, const char *name)
{
	return fdl_asprintf("%s/versions/%s/%s", c->tmpdir, d->id, name);
}

/* A file an expiry deletes, of a version the source has expired: not
 * copied (and not asked for). */
static bool removable(const vdir *d, const char *name);
static bool gone_with_expiry(const vdir *d, const char *name)
{
	return fdl_vdir_has(d, FDL_EXPIRED_JSON) && removable(d, name);
}

/* The size and sha256 version.json records for one of the version's
 * files (-1 and NULL when it records none). */
static void recorded(const vdir *d, const char *name, int64_t *bytes, const char **sha)
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
static bool copy_has_version_json(cloner *c, const vdir *d)
{
	char *key = fdl_version_key(d->id, FDL_VERSION_JSON);
	fdl_buf have = {0};
	char hex[65];
	fdl_error e;
	bool there = key && d->sha256[0] && copy_may_have(c, key) &&
		     !fdl_store_get(c->dst, key, FDL_META_MAX_BYTES, &have, NULL, &e) &&
		     !fdl_sha256_mem(hex, have.data, have.len, &e) && !strcmp(hex, d->sha256);
	fdl_buf_free(&have);
	free(key);
	return there;
}

/* Fetch a version's files (but its catalog, fetched for the plan) into the
 * staging folder while DuckDB lists the catalogs, skipping those the copy
 * already has (a rerun). Checked when they are written, in copy_version. */
static int stage_version(cloner *c, const vdir *d, fdl_error *err)
{
	const char *cat = d->v ? fdl_version_catalog_path(d->v) : NULL;
	int rc = 0;
	for (size_t i = 0; i < d->files.len && !rc; i++) {
		const char *name = d->files.items[i];
		if ((cat && !strcmp(name, cat)) || gone_with_expiry(d, name))
			continue;
		int64_t bytes, have = -1;
		const char *sha;
		recorded(d, name, &bytes, &sha);
		char *key = fdl_version_key(d->id, name), *path = staged_path(c, d, name);
		char *slash = path ? strrchr(path, '/') : NULL;
		fdl_error e;
		if (!key || !path) {
			rc = fdl_oom(err);
		} else if (!strcmp(name, FDL_VERSION_JSON) ? copy_has_version_json(c, d) || access(path, F_OK) == 0
							   : copy_may_have(c, key) && fdl_store_head(c->dst, key, &have, &e) == 0 &&
								     (bytes < 0 || have == bytes)) {
			/* in the copy already, or staged by read_listed */
		} else {
			*slash = '\0';
			rc = fdl_mkdir_p(path, err);
			*slash = '/';
			if (!rc)
				rc = fdl_store_get_file(c->src_store, key, path, err);
			if (rc == FDL_ENOTFOUND) { /* gone since it was listed: copy_version says so */
				fdl_error_clear(err);
				rc = 0;
			}
		}
		free(key);
		free(path);
	}
	return rc;
}

/* A listed version's version.json, on a pool thread: from the copy when it
 * has one (a rerun: version files never change), else from the source,
 * kept in the staging folder for copy_version. One that does not parse
 * leaves d->v NULL, as fdl verify of the copy will say. */
static int read_listed(cloner *c, vdir *d, fdl_error *err)
{
	char *key = fdl_version_key(d->id, FDL_VERSION_JSON), *path = staged_path(c, d, FDL_VERSION_JSON);
	fdl_buf b = {0};
	fdl_error e;
	int rc = key && path ? 0 : fdl_oom(err);
	bool from_copy = !rc && copy_may_have(c, key) && fdl_store_get(c->dst, key, FDL_META_MAX_BYTES, &b, NULL, &e) == 0;
	if (!rc && !from_copy) {
		rc = fdl_store_get(c->src_store, key, FDL_META_MAX_BYTES, &b, NULL, err);
		char *slash = rc ? NULL : strrchr(path, '/');
		if (slash) {
			*slash = '\0';
			rc = fdl_mkdir_p(path, err);
			*slash = '/';
		}
		if (!rc)
			rc = fdl_file_write_atomic(path, b.data, b.len, err);
	}
	if (!rc && (rc = fdl_version_parse(&d->v, b.data, b.len, d->id, key, err)))
		rc = fdl_error_prefix(err, "the source does not verify, so no ref was copied");
	if (!rc)
		rc = fdl_sha256_mem(d->sha256, b.data, b.len, err);
	fdl_buf_free(&b);
	free(key);
	free(path);
	return rc;
}

static int plan_catalog(cloner *c, const vdir *d, const char *catalog, fdl_error *err);
static int plan_data(struct pool *p, cloner *c, const fdl_strlist *paths, const fdl_strmap *sizes,
		     const json_t *claims, const char *by, fdl_error *err);

static int prepare_version(cloner *c, vdir *d, char **catalog, fdl_error *err)
{
	int rc = c->probe ? probe(c, d, FDL_VERSION_SIG, err) : 0;
	if (!rc && !c->probe && !d->v && fdl_vdir_has(d, FDL_VERSION_JSON))
		rc = read_listed(c, d, err);
	const fdl_version *v = d->v;
	/* Has the source expired the version (listed, or asked below)? A
	 * catalog the source itself just served says no, as far as a clone
	 * can tell (an expiry under way, expired.json written and the catalog
	 * not yet deleted, is learnt by the next clone); one from the copy or
	 * this machine's cache says nothing, so expired.json is asked for. */
	bool served = false;
	if (!rc && v && !fdl_vdir_has(d, FDL_EXPIRED_JSON)) {
		fdl_repo copy = *c->src;
		copy.store = c->dst;
		copy.root = c->dst->url;
		fdl_error e;
		if (fdl_store_can(c->dst, FDL_STORE_LOCAL) && /* a rerun: the catalog the copy already holds, checked */
		    fdl_version_fetch_catalog(catalog, &copy, v, &e) == 0) {
			/* from the copy */
		} else {
			*catalog = NULL;
			char *cached = fdl_cache_path("objects", fdl_version_catalog_sha256(v));
			struct stat st;
			bool hit = cached && stat(cached, &st) == 0;
			free(cached);
			fdl_repo mine = *c->src; /* the same repository through this thread's store */
			mine.store = c->src_store;
			rc = fdl_version_fetch_catalog(catalog, &mine, v, err);
			served = !rc && !hit;
			if (rc == FDL_ENOTFOUND) { /* expired or withdrawn: no catalog, no data to bring */
				fdl_error_clear(err);
				rc = 0;
			}
		}
	}
	if (!rc && c->probe && !served && !fdl_vdir_has(d, FDL_EXPIRED_JSON)) {
		rc = probe(c, d, FDL_EXPIRED_JSON, err);
		if (!rc && fdl_vdir_has(d, FDL_EXPIRED_JSON)) {
			free(*catalog); /* expired since: its data is not planned */
			*catalog = NULL;
			rc = still_has_version_json(c, d, err);
		}
	}
	if (!rc)
		rc = stage_version(c, d, err);
	if (!rc && *catalog)
		rc = plan_catalog(c, d, *catalog, err);
	return rc;
}

/* The local bytes of version d's files.json for the check: staged by the
 * plan, or in the copy already (a rerun); NULL when it records none. */
static char *files_json_local(cloner *c, const vdir *d, fdl_error *err)
{
	const char *path = json_string_value(json_object_get(json_object_get(fdl_version_json(d->v), "files"), "path"));
	if (!path)
		return NULL;
	char *staged = staged_path(c, d, path), *key = fdl_version_key(d->id, path);
	struct stat st;
	if (staged && key && stat(staged, &st) != 0) {
		char *slash = strrchr(staged, '/');
		*slash = '\0';
		int rc = fdl_mkdir_p(staged, err);
		*slash = '/';
		if (rc || fdl_store_get_file(c->dst, key, staged, err)) {
			free(staged);
			staged = NULL; /* not there: copy_version says so */
		}
	}
	free(key);
	return staged;
}

/* The sha256 of the data files that version d's files.json records (fdl's
 * field; NULL when it records none), from its local copy, whose bytes must
 * be the ones version.json records: a files.json that is not is left for
 * copy_version to refuse, its hashes unused. */
static json_t *data_claims(const vdir *d, const char *files_local)
{
	const json_t *ref = json_object_get(fdl_version_json(d->v), "files");
	const char *sha = json_string_value(json_object_get(ref, "sha256"));
	fdl_buf b = {0};
	json_t *doc = NULL;
	char hex[65];
	fdl_error e;
	if (files_local && sha && !fdl_file_read(&b, files_local, FDL_META_MAX_BYTES, &e) &&
	    !fdl_sha256_mem(hex, b.data, b.len, &e) && !strcmp(hex, sha))
		fdl_json_parse(&doc, b.data, b.len, files_local, &e);
	fdl_buf_free(&b);
	json_t *claims = json_incref(json_object_get(doc, FDL_FILES_SHA256));
	json_decref(doc);
	return json_is_object(claims) ? claims : (json_decref(claims), NULL);
}

/* The rest of the plan for a version with a live catalog (fetched and
 * checked): every data and delete file it references, with the size it
 * records and the sha256 its files.json records, and what fdl verify checks
 * of it (its snapshot, files.json), on the bytes fetched for the copy: the
 * copy is never read back. One DuckDB attach a catalog, on the pool thread
 * that fetched it. */
static int plan_catalog(cloner *c, const vdir *d, const char *catalog, fdl_error *err)
{
	int rc = 0;
	if (!c->duck && !(rc = fdl_duck_new(&c->duck, true, err)))
		rc = fdl_duck_threads(c->duck, 1, err); /* the pool is the parallelism */
	if (!rc)
		rc = fdl_catalog_attach_raw(c->duck, "fdl_clone", catalog, FDL_CAT_DUCKDB, true, err);
	if (rc)
		return rc;
	fdl_strlist list = {0};
	fdl_strmap sizes = {0};
	fdl_error e;
	char *files_local = files_json_local(c, d, &e);
	json_t *claims = data_claims(d, files_local);
	rc = fdl_catalog_all_files_sized(&list, &sizes, c->duck, "fdl_clone", -1, err);
	if (!rc) /* each data file new to the clone is copied at once */
		rc = plan_data(c->pool, c, &list, &sizes, claims, d->id, err);
	json_decref(claims);
	fdl_strmap_free(&sizes);
	if (!rc)
		rc = fdl_verify_catalog_attached(c->found, c->duck, "fdl_clone", d, files_local, err);
	free(files_local);
	fdl_catalog_detach(c->duck, "fdl_clone", NULL);
	fdl_strlist_free(&list);
	return rc;
}

/* What fdl verify says of each version's place in the history, once every
 * version.json is read, added to what the plan found; then the first
 * problem, as an error. */
static int plan_verdict(fdl_verify_report *found, vdirs *dirs, const char *src, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < dirs->len && !rc; i++)
		if (dirs->items[i].v)
			rc = fdl_verify_shape(found, dirs, &dirs->items[i], err);
	if (!rc && found->problem_count)
		rc = fdl_fail(err, FDL_EINVALID,
			      "the source does not verify, so no ref was copied: %s: %s%s (fdl verify %s --all lists "
			      "them)",
			      found->problems[0].where, found->problems[0].what,
			      found->problem_count > 1 ? ", and more" : "", src);
	return rc;
}

/* Move a worker's findings into the clone's (under the pool's lock). */
static int plan_merge(cloner *into, cloner *from, fdl_error *err)
{
	int rc = 0;
	if (from->found && from->found->problem_count)
		for (size_t i = 0; i < from->found->problem_count && !rc; i++)
			rc = fdl_findings_add(&into->found->problems, &into->found->problem_count,
					      from->found->problems[i].where, from->found->problems[i].what, err);
	return rc;
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
static int parents_first(size_t **order, atomic_bool **published, fdl_strmap *index_of, const vdirs *dirs,
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

/* What the progress line counts to: every planned data file with the size
 * its catalog records (added as the plan finds them), every version file
 * with the size version.json records (version.json itself and the probes'
 * finds count as files). */
static void prog_plan(clone_prog *p, int64_t files, int64_t bytes)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->files_total += files;
	p->bytes_total += bytes > 0 ? bytes : 0;
	pthread_mutex_unlock(&p->mu);
}

static void plan_totals(clone_prog *p, const vdirs *dirs)
{
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < dirs->len; i++) {
		const vdir *d = &dirs->items[i];
		for (size_t k = 0; k < d->files.len; k++) {
			const char *name = d->files.items[k], *sha;
			int64_t bytes;
			if (gone_with_expiry(d, name)) /* not copied, as copy_version skips it */
				continue;
			recorded(d, name, &bytes, &sha);
			p->files_total++;
			p->bytes_total += bytes > 0 ? bytes : 0;
		}
	}
	pthread_mutex_unlock(&p->mu);
}

struct pool;
static int copy_version(cloner *c, struct pool *p, size_t i, fdl_error *err);
struct pool;
static void mark_published(struct pool *p, size_t i);

/* A bounded pool of transfers: `jobs` threads, each with its own source
 * and destination store (its own connections, kept alive), taking the next
 * item until none is left or one fails. Items are versions to plan and the
 * data files the plan finds (POOL_PREPARE), or versions to copy
 * (POOL_VERSIONS). Memory is bounded by the pool: one file in flight a
 * thread, streamed to a temporary file. */
typedef enum { POOL_PREPARE, POOL_VERSIONS } pool_kind;

typedef struct pool {
	cloner *c;
	const char *dst_url;
	pool_kind kind;
	vdirs *dirs; /* POOL_PREPARE, POOL_VERSIONS */
	char **catalogs;
	/* POOL_VERSIONS: the versions by seq, parents first; whether each
	 * one's version.json is in the copy; a version's index by id. A
	 * version.json is written only once its first parent's is, so the copy
	 * verifies at every moment with versions copied at once. */
	const size_t *order;
	atomic_bool *published;
	const fdl_strmap *index_of;
	size_t n;
	atomic_size_t next;
	/* POOL_PREPARE: the data files the plan has found (planned: path ->
	 * index in dfiles, every one once), queued as found and copied by the
	 * same threads, first come; workers inside prepare_version; all under mu */
	fdl_strmap *planned;
	struct planned_file *dfiles;
	size_t dlen, dcap, dnext, preparing;
	atomic_bool failed;
	bool threaded;
	pthread_mutex_t mu; /* the first error, the counters, progress */
	pthread_cond_t cv;  /* a version.json published, or a failure */
	int rc;
	fdl_error err;
} pool;

typedef struct pool_worker {
	pool *p;
	int index;
	pthread_t thread;
} pool_worker;

static int pool_item(cloner *c, pool *p, size_t k, fdl_error *err)
{
	switch (p->kind) {
	case POOL_PREPARE:
		return prepare_version(c, &p->dirs->items[k], &p->catalogs[k], err);
	default:
		return copy_version(c, p, p->order[k], err);
	}
}

static void pool_lock(pool *p)
{
	if (p->threaded)
		pthread_mutex_lock(&p->mu);
}

static void pool_unlock(pool *p)
{
	if (p->threaded)
		pthread_mutex_unlock(&p->mu);
}

/* A data file the plan found: its size and sha256 as the catalogs and
 * files.json record them (claim: "" until a files.json records one, and
 * the version whose it is), and what its copy hashed (got) and wrote. */
typedef struct planned_file {
	char *key;
	int64_t size;
	char claim[65], claim_by[FDL_ID_LEN + 1];
	char got[65];
	bool put;
} planned_file;

/* Under the pool's lock: the bytes copied for file j must be those its
 * claim names. A claim that arrives after the copy (a version without
 * one planned the file first) is checked against what was copied, and a
 * copy this run wrote with other bytes is removed (*drop) so that no rerun
 * takes it as done. */
static int check_claim(pool *p, size_t j, const char *root, bool *drop, fdl_error *err)
{
	planned_file *f = &p->dfiles[j];
	if (!f->got[0] || !f->claim[0] || !strcmp(f->got, f->claim))
		return 0;
	*drop = f->put;
	return fdl_fail(err, FDL_EINVALID, "%s/%s has sha256 %s; versions/%s/" FDL_FILES_JSON " records %s (the file "
			"changed after it was written); not copied", root, f->key, f->got, f->claim_by, f->claim);
}

/* Under the pool's lock: version `by` records `claim` (may be NULL) for
 * file j. */
static int add_claim(pool *p, size_t j, const char *claim, const char *by, const char *root, bool *drop,
		     fdl_error *err)
{
	planned_file *f = &p->dfiles[j];
	if (!claim)
		return 0;
	if (f->claim[0])
		return strcmp(f->claim, claim)
			       ? fdl_fail(err, FDL_EINVALID, "versions/%s/" FDL_FILES_JSON " and versions/%s/" FDL_FILES_JSON
					  " record different sha256 of %s/%s; the source does not verify, so no ref was "
					  "copied", f->claim_by, by, root, f->key)
			       : 0;
	snprintf(f->claim, sizeof f->claim, "%s", claim);
	snprintf(f->claim_by, sizeof f->claim_by, "%s", by);
	return check_claim(p, j, root, drop, err);
}

static int plan_grow(pool *p, fdl_error *err)
{
	if (p->dlen < p->dcap)
		return 0;
	size_t cap = p->dcap ? p->dcap * 2 : 256;
	planned_file *grown = realloc(p->dfiles, cap * sizeof *grown);
	if (!grown)
		return fdl_oom(err);
	p->dfiles = grown;
	p->dcap = cap;
	return 0;
}

/* Each file a catalog references, queued once, with the sha256 its
 * version's files.json records (`claims`, path -> hex; NULL: none). */
static int plan_data(pool *p, cloner *c, const fdl_strlist *paths, const fdl_strmap *sizes, const json_t *claims,
		     const char *by, fdl_error *err)
{
	int rc = 0;
	char *drop = NULL;
	pool_lock(p);
	for (size_t i = 0; i < paths->len && !rc; i++) {
		const char *path = paths->items[i];
		const char *claim = json_string_value(json_object_get(claims, path));
		int64_t size = -1, had;
		bool dropped = false;
		fdl_strmap_get(sizes, path, &size);
		if (fdl_strmap_get(p->planned, path, &had)) {
			rc = add_claim(p, (size_t)had, claim, by, c->src->root, &dropped, err);
			if (dropped)
				drop = fdl_strdup(p->dfiles[had].key);
			continue;
		}
		char *key = fdl_asprintf("%s/%s", p->c->src->data_dir, path);
		if (!key || (rc = plan_grow(p, err)) || (rc = fdl_strmap_put(p->planned, path, (int64_t)p->dlen, err))) {
			free(key);
			rc = rc ? rc : fdl_oom(err);
			break;
		}
		p->dfiles[p->dlen] = (planned_file){.key = key, .size = size};
		rc = add_claim(p, p->dlen++, claim, by, c->src->root, &dropped, err);
		prog_plan(p->c->prog, 1, size);
	}
	if (p->threaded)
		pthread_cond_broadcast(&p->cv);
	pool_unlock(p);
	fdl_error e;
	if (drop)
		fdl_store_del(c->dst, drop, &e);
	free(drop);
	return rc;
}

/* The plan's pool: each thread takes a data file the plan has found (so
 * transfers start with the first catalog), else the next version to
 * prepare, until neither is left and no thread is still preparing. */
static int prepare_loop(cloner *c, pool *p, fdl_error *err)
{
	int rc = 0;
	while (!rc) {
		bool data = false, prep = false;
		const char *key = NULL;
		int64_t size = -1;
		size_t k = 0, j = 0;
		char claim[65] = "", by[FDL_ID_LEN + 40] = "";
		pool_lock(p);
		for (;;) {
			if (atomic_load(&p->failed))
				break;
			if (p->dnext < p->dlen) {
				j = p->dnext++;
				key = p->dfiles[j].key;
				size = p->dfiles[j].size;
				memcpy(claim, p->dfiles[j].claim, sizeof claim);
				snprintf(by, sizeof by, "versions/%s/" FDL_FILES_JSON, p->dfiles[j].claim_by);
				data = true;
				break;
			}
			if (p->next < p->n) {
				k = p->next++;
				p->preparing++;
				prep = true;
				break;
			}
			if (!p->preparing || !p->threaded)
				break;
			pthread_cond_wait(&p->cv, &p->mu);
		}
		pool_unlock(p);
		if (data) {
			copied got;
			rc = copy_key(c, key, size > 0 ? size : -1, claim[0] ? claim : NULL, by, NULL, false, true, &got,
				      err);
			bool drop = false;
			pool_lock(p); /* a claim that came during the copy */
			memcpy(p->dfiles[j].got, got.got, sizeof got.got);
			p->dfiles[j].put = got.put;
			if (!rc)
				rc = check_claim(p, j, c->src->root, &drop, err);
			pool_unlock(p);
			fdl_error e;
			if (drop)
				fdl_store_del(c->dst, key, &e);
			if (!rc)
				prog_add(c->prog, 1, size);
		} else if (prep) {
			rc = prepare_version(c, &p->dirs->items[k], &p->catalogs[k], err);
			pool_lock(p);
			p->preparing--;
			if (p->threaded)
				pthread_cond_broadcast(&p->cv);
			pool_unlock(p);
		} else {
			break;
		}
	}
	return rc;
}

static void *pool_run(void *arg)
{
	pool_worker *w = arg;
	pool *p = w->p;
	fdl_verify_report found = {0};
	cloner c = {.src = p->c->src, .tmpdir = p->c->tmpdir, .worker = w->index, .probe = p->c->probe,
		    .prog = p->c->prog, .live = p->c->live, .dst_keys = p->c->dst_keys, .found = &found, .pool = p};
	fdl_error e;
	int rc = fdl_layout_store_open(&c.src_store, p->c->src->root, &e);
	if (!rc)
		rc = fdl_store_open(&c.dst, p->dst_url, &e);
	if (!rc && p->kind == POOL_PREPARE)
		rc = prepare_loop(&c, p, &e);
	for (size_t k; !rc && p->kind != POOL_PREPARE && !atomic_load(&p->failed) && (k = atomic_fetch_add(&p->next, 1)) < p->n;)
		rc = pool_item(&c, p, k, &e);
	pthread_mutex_lock(&p->mu);
	if (rc && !p->rc) {
		p->rc = rc;
		p->err = e;
	}
	p->c->copied += c.copied;
	p->c->skipped += c.skipped;
	p->c->unmirrored += c.unmirrored;
	fdl_error me;
	if (!rc && p->kind == POOL_PREPARE && plan_merge(p->c, &c, &me) && !p->rc) {
		p->rc = rc = me.code;
		p->err = me;
	}
	if (rc) {
		atomic_store(&p->failed, true);
		pthread_cond_broadcast(&p->cv); /* no one waits for a parent that will not come */
	}
	pthread_mutex_unlock(&p->mu);
	fdl_store_free(c.src_store);
	fdl_store_free(c.dst);
	fdl_duck_free(c.duck);
	fdl_verify_report_free_fields(&found);
	return NULL;
}

/* Run the pool's items on `jobs` threads (1: on this one, with c's own
 * stores). */
static int pool_go(pool *p, int jobs, fdl_error *err)
{
	if (jobs <= 1 || p->n <= 1) {
		int rc = 0;
		if (p->kind == POOL_PREPARE)
			return prepare_loop(p->c, p, err);
		for (size_t k = 0; k < p->n && !rc; k++)
			rc = pool_item(p->c, p, k, err);
		return rc;
	}
	if ((size_t)jobs > p->n)
		jobs = (int)p->n;
	pool_worker *w = calloc((size_t)jobs, sizeof *w);
	if (!w)
		return fdl_oom(err);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->threaded = true;
	atomic_init(&p->next, 0);
	atomic_init(&p->failed, false);
	int started = 0;
	for (int i = 0; i < jobs; i++) {
		w[i] = (pool_worker){p, i + 1, 0};
		if (pthread_create(&w[i].thread, NULL, pool_run, &w[i]) != 0)
			break; /* fewer threads; those started take every item */
		started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(w);
	if (!started)
		return fdl_fail(err, FDL_ERROR, "cannot start a transfer thread");
	if (p->rc)
		*err = p->err;
	return p->rc;
}

/* A name expired.json's `removed` may list: the files an expiry deletes
 * (the catalog, files.json, catalogs/<format>.duckdb), nothing else. */
static bool removable(const vdir *d, const char *name)
{
	const json_t *doc = d->v ? fdl_version_json(d->v) : NULL;
	const char *cat = doc ? fdl_version_catalog_path(d->v) : "ducklake.duckdb";
	const char *files = doc ? json_string_value(json_object_get(json_object_get(doc, "files"), "path")) : FDL_FILES_JSON;
	size_t n = strlen(name);
	return (cat && !strcmp(name, cat)) || (files && !strcmp(name, files)) ||
	       (!strncmp(name, "catalogs/", 9) && n > 16 && !strcmp(name + n - 7, ".duckdb") && !strchr(name + 9, '/') &&
		!strstr(name, ".."));
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
static int mirror_expiry(cloner *c, const vdir *d, fdl_error *err)
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
		if (!rc && name && removable(d, name))
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
				rc = fdl_history_drop(copy, err);
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

static int copy_version(cloner *c, pool *p, size_t at, fdl_error *err)
{
	const vdir *d = &p->dirs->items[at];
	const char *catalog = p->catalogs[at];
	int rc = 0;
	for (size_t i = 0; i < d->files.len && !rc; i++) {
		const char *name = d->files.items[i];
		if (!strcmp(name, FDL_VERSION_JSON) || gone_with_expiry(d, name))
			continue;
		const char *sha;
		int64_t bytes;
		recorded(d, name, &bytes, &sha);
		bool is_catalog = d->v && !strcmp(name, fdl_version_catalog_path(d->v));
		char *key = fdl_version_key(d->id, name), *staged = is_catalog ? NULL : staged_path(c, d, name);
		struct stat st;
		const char *local = is_catalog ? catalog : staged && stat(staged, &st) == 0 ? staged : NULL;
		if (!key || (!is_catalog && !staged))
			rc = fdl_oom(err);
		else
			rc = copy_key(c, key, bytes, sha, NULL, local, is_catalog, true, NULL, err);
		free(key);
		free(staged);
		if (!rc)
			prog_add(c->prog, 1, bytes);
	}
	if (!rc && fdl_vdir_has(d, FDL_EXPIRED_JSON))
		rc = mirror_expiry(c, d, err);
	if (!rc && fdl_vdir_has(d, FDL_VERSION_JSON)) {
		char *key = fdl_version_key(d->id, FDL_VERSION_JSON);
		fdl_buf b = {0};
		bool there = copy_has_version_json(c, d);
		char *staged = staged_path(c, d, FDL_VERSION_JSON);
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
			rc = put_small(c, key, &b, err);
		fdl_buf_free(&b);
		free(key);
		if (!rc)
			prog_add(c->prog, 1, 0);
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
static int check_copy_refs(cloner *c, vdirs *dirs, const planned_refs *refs, bool force, fdl_error *err)
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
static int copy_ref(cloner *c, vdirs *dirs, const char *key, const char *id, fdl_strlist *moved, fdl_error *err)
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
static void index_copy(cloner *c, const fdl_strlist *refs, const vdirs *dirs)
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
	for (size_t i = 0; i < refs->len; i++)
		if (!strncmp(refs->items[i], "refs/heads/", 11) && !strstr(refs->items[i], ".lock"))
			fdl_history_update(dst, refs->items[i] + 11, -1, &e);
	fdl_reflist_rebuild(dst, dirs, &e);
	fdl_repo_free(dst);
}

int fdl_clone(fdl_clone_report **out, const char *src_url, const char *dst_url, const fdl_clone_options *opts,
	      fdl_error *err)
{
	cloner c = {0};
	vdirs dirs = {0};
	fdl_strlist existing = {0}, moved = {0};
	planned_refs refs = {0};
	const char *only = opts && opts->branch && *opts->branch ? opts->branch : NULL;
	int rc = fdl_repo_open(&c.src, src_url, err);
	if (!rc)
		c.src_store = c.src->store;
	if (!rc)
		rc = fdl_store_open(&c.dst, dst_url, err);
	clone_prog prog = {.cb = opts ? opts->progress : NULL, .payload = opts ? opts->progress_payload : NULL};
	pthread_mutex_init(&prog.mu, NULL);
	c.prog = &prog;
	/* resume only what a clone leaves: a repository, or just its HEAD */
	bool listed = !rc && fdl_store_list(c.dst, "", &existing, NULL) == 0;
	if (listed) {
		fdl_strlist_sort(&existing);
		c.dst_keys = &existing;
	}
	if (listed && existing.len && !(existing.len == 1 && !strcmp(existing.items[0], "HEAD"))) {
		int64_t sz;
		fdl_error e;
		if (fdl_store_head(c.dst, FDL_CONFIG_FILE, &sz, &e) != 0)
			rc = fdl_fail(err, FDL_EEXISTS, "%s is not empty and is not a clone in progress", dst_url);
	}
	if (!rc) {
		fdl_tempdir_sweep(); /* what killed clones left behind, here and in a folder copy */
		char *root = fdl_store_can(c.dst, FDL_STORE_LOCAL) ? fdl_strdup(c.dst->url) : NULL;
		if (root)
			fdl_tmpfile_sweep(root);
		free(root);
		rc = fdl_tempdir(&c.tmpdir, "clone", err);
	}
	/* the refs first, with their values: the versions found after them
	 * hold every version they name */
	if (!rc)
		rc = refs_to_copy(&refs, &c, only, err);
	/* HEAD before fdl.json: a folder is a repository once fdl.json is
	 * there; a copy of one branch names it */
	char *head = only && !rc ? fdl_asprintf("ref: refs/heads/%s\n", only) : NULL;
	if (only && !rc && !head)
		rc = fdl_oom(err);
	if (!rc && head)
		rc = put_small(&c, "HEAD", &(fdl_buf){.data = head, .len = strlen(head)}, err);
	else if (!rc)
		rc = copy_small(&c, "HEAD", false, err);
	free(head);
	if (!rc)
		rc = copy_small(&c, FDL_CONFIG_FILE, false, err);
	if (!rc)
		rc = versions_of(&dirs, &refs, &c, err);
	if (!rc)
		rc = check_copy_refs(&c, &dirs, &refs, opts && opts->force, err);
	char **catalogs = rc ? NULL : calloc(dirs.len + 1, sizeof *catalogs);
	fdl_strmap files = {0};
	if (!rc && !catalogs)
		rc = fdl_oom(err);
	/* the pool: 8 transfers at once from a host or bucket, or to a
	 * bucket; a folder-to-folder copy gains nothing from threads */
	int jobs = opts && opts->jobs > 0 ? opts->jobs : rc || (fdl_store_can(c.src->store, FDL_STORE_LOCAL) && fdl_store_can(c.dst, FDL_STORE_LOCAL)) ? 1 : 8;
	/* the plan and the data: probes, catalogs fetched, listed and checked,
	 * and each data file copied as soon as a catalog names it, in one pool
	 * (between folders on every core: there DuckDB is the cost) */
	fdl_verify_report found = {0};
	c.found = &found;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int prep_jobs = opts && opts->jobs > 0 ? opts->jobs : jobs > 1 ? jobs : cores > 8 ? 8 : cores > 1 ? (int)cores : 1;
	pool pp = {.c = &c, .dst_url = dst_url, .kind = POOL_PREPARE, .dirs = &dirs, .catalogs = catalogs,
		   .planned = &files, .n = dirs.len};
	c.pool = &pp;
	if (!rc)
		rc = pool_go(&pp, prep_jobs, err);
	for (size_t i = 0; i < pp.dlen; i++)
		free(pp.dfiles[i].key);
	free(pp.dfiles);
	fdl_duck_free(c.duck);
	c.duck = NULL;
	if (!rc) /* a source fdl verify rejects gets no ref */
		rc = plan_verdict(&found, &dirs, c.src->root, err);
	fdl_verify_report_free_fields(&found);
	if (!rc)
		plan_totals(&prog, &dirs);
	c.live = &files;
	size_t *order = NULL;
	atomic_bool *published = NULL;
	fdl_strmap index_of = {0};
	if (!rc)
		rc = parents_first(&order, &published, &index_of, &dirs, err);
	pool vp = {.c = &c, .dst_url = dst_url, .kind = POOL_VERSIONS, .dirs = &dirs, .catalogs = catalogs,
		   .order = order, .published = published, .index_of = &index_of, .n = dirs.len};
	if (!rc) /* each version's files, its version.json last, after its parent's */
		rc = pool_go(&vp, jobs, err);
	free(order);
	free(published);
	fdl_strmap_free(&index_of);
	for (size_t i = 0; catalogs && i < dirs.len; i++)
		free(catalogs[i]);
	free(catalogs);
	fdl_strmap_free(&files);
	for (size_t i = 0; i < refs.keys.len && !rc; i++) /* sorted */
		rc = copy_ref(&c, &dirs, refs.keys.items[i], refs.ids[i], &moved, err);
	if (!rc)
		index_copy(&c, &refs.keys, &dirs);
	fdl_error ierr; /* derived, as the index: the copy's own views when the source has views */
	if (!rc)
		fdl_iceberg_after_clone(c.src, c.dst->url, &ierr);
	if (!rc) {
		fdl_clone_report *r = calloc(1, sizeof *r);
		if (r && (r->from = fdl_strdup(c.src->root)) && (r->to = fdl_strdup(c.dst->url))) {
			r->versions = (int64_t)dirs.len;
			r->copied = c.copied;
			r->already_there = c.skipped;
			r->removed = c.unmirrored;
			r->moved.strings = moved.items;
			r->moved.count = moved.len;
			moved = (fdl_strlist){0};
			*out = r;
		} else {
			fdl_clone_report_free(r);
			rc = fdl_oom(err);
		}
	}
	if (c.tmpdir) {
		fdl_rm_rf(c.tmpdir);
		free(c.tmpdir);
	}
	fdl_vdirs_free(&dirs);
	planned_refs_free(&refs);
	fdl_strlist_free(&moved);
	fdl_strlist_free(&existing);
	fdl_repo_free(c.src);
	fdl_store_free(c.dst);
	pthread_mutex_destroy(&prog.mu);
	return rc;
}
