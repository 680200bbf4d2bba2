/* fdl clone's plan: which refs and versions to copy, each version's catalog
 * fetched, listed and checked as fdl verify checks it, and the data files
 * it names queued for the pool as they are found. */
#include "clone.h"
#include "../layout/hindex.h"
#include "report.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* The pool's lock, when it runs on threads (the plan's queue, the clone's
 * first error and counters). */
void fdl__pool_lock(pool *p)
{
	if (p->threaded)
		pthread_mutex_lock(&p->mu);
}

void fdl__pool_unlock(pool *p)
{
	if (p->threaded)
		pthread_mutex_unlock(&p->mu);
}

void fdl__planned_refs_free(planned_refs *r)
{
	fdl_strlist_free(&r->keys);
	free(r->ids);
	memset(r, 0, sizeof *r);
}

int fdl__refs_to_copy(planned_refs *out, cloner *c, const char *only, fdl_error *err)
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
	fdl_ref_kind kind;
	const char *name = fdl_ref_short(key, &kind), *branch = kind == FDL_REF_BRANCH ? name : NULL;
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
		char *src = fdl_version_url(c->src->root, d->id, FDL_VERSION_JSON);
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
int fdl__versions_of(vdirs *out, const planned_refs *refs, cloner *c, fdl_error *err)
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


/* Fetch a version's files (but its catalog, fetched for the plan) into the
 * staging folder while DuckDB lists the catalogs, skipping those the copy
 * already has (a rerun). Checked when they are written, in copy_version. */
static int stage_version(cloner *c, const vdir *d, fdl_error *err)
{
	const char *cat = d->v ? fdl_version_catalog_path(d->v) : NULL;
	int rc = 0;
	for (size_t i = 0; i < d->files.len && !rc; i++) {
		const char *name = d->files.items[i];
		if ((cat && !strcmp(name, cat)) || fdl__gone_with_expiry(d, name))
			continue;
		int64_t bytes, have = -1;
		const char *sha;
		fdl__recorded(d, name, &bytes, &sha);
		char *key = fdl_version_key(d->id, name), *path = fdl__staged_path(c, d, name);
		char *slash = path ? strrchr(path, '/') : NULL;
		fdl_error e;
		if (!key || !path) {
			rc = fdl_oom(err);
		} else if (!strcmp(name, FDL_VERSION_JSON) ? fdl__copy_has_version_json(c, d) || access(path, F_OK) == 0
							   : fdl__copy_may_have(c, key) && fdl_store_head(c->dst, key, &have, &e) == 0 &&
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
	char *key = fdl_version_key(d->id, FDL_VERSION_JSON), *path = fdl__staged_path(c, d, FDL_VERSION_JSON);
	fdl_buf b = {0};
	fdl_error e;
	int rc = key && path ? 0 : fdl_oom(err);
	bool from_copy = !rc && fdl__copy_may_have(c, key) && fdl_store_get(c->dst, key, FDL_META_MAX_BYTES, &b, NULL, &e) == 0;
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
	char *staged = fdl__staged_path(c, d, path), *key = fdl_version_key(d->id, path);
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
	if (!c->duck) /* one thread: the pool is the parallelism */
		rc = fdl_duck_new_lean(&c->duck, FDL_DUCK_SQLITE_LAKE, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(c->duck, "fdl_clone", catalog, FDL_CAT_DUCKDB, true, err);
	if (rc)
		return rc;
	fdl_strlist list = {0};
	fdl_strmap sizes = {0};
	fdl_error e;
	char *files_local = files_json_local(c, d, &e);
	json_t *claims = data_claims(d, files_local);
	rc = fdl_catalog_all_files_sized(&list, &sizes, NULL, c->duck, "fdl_clone", -1, err);
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
int fdl__plan_verdict(fdl_verify_report *found, vdirs *dirs, const char *src, fdl_error *err)
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
int fdl__plan_merge(cloner *into, cloner *from, fdl_error *err)
{
	int rc = 0;
	if (from->found && from->found->problem_count)
		for (size_t i = 0; i < from->found->problem_count && !rc; i++)
			rc = fdl_findings_add(&into->found->problems, &into->found->problem_count,
					      from->found->problems[i].where, from->found->problems[i].what, err);
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

void fdl__plan_totals(clone_prog *p, const vdirs *dirs)
{
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < dirs->len; i++) {
		const vdir *d = &dirs->items[i];
		for (size_t k = 0; k < d->files.len; k++) {
			const char *name = d->files.items[k], *sha;
			int64_t bytes;
			if (fdl__gone_with_expiry(d, name)) /* not copied, as copy_version skips it */
				continue;
			fdl__recorded(d, name, &bytes, &sha);
			p->files_total++;
			p->bytes_total += bytes > 0 ? bytes : 0;
		}
	}
	pthread_mutex_unlock(&p->mu);
}


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
	char *by = fdl_version_key(f->claim_by, FDL_FILES_JSON);
	int rc = fdl_fail(err, FDL_EINVALID, "%s/%s has sha256 %s; %s records %s (the file changed after it was "
			  "written); not copied", root, f->key, f->got, by ? by : FDL_FILES_JSON, f->claim);
	free(by);
	return rc;
}

/* Under the pool's lock: version `by` records `claim` (may be NULL) for
 * file j. */
static int add_claim(pool *p, size_t j, const char *claim, const char *by, const char *root, bool *drop,
		     fdl_error *err)
{
	planned_file *f = &p->dfiles[j];
	if (!claim)
		return 0;
	if (f->claim[0] && !strcmp(f->claim, claim))
		return 0;
	if (f->claim[0]) {
		char *first = fdl_version_key(f->claim_by, FDL_FILES_JSON), *second = fdl_version_key(by, FDL_FILES_JSON);
		int rc = first && second ? fdl_fail(err, FDL_EINVALID, "%s and %s record different sha256 of %s/%s; the "
						    "source does not verify, so no ref was copied", first, second, root, f->key)
					 : fdl_oom(err);
		free(first);
		free(second);
		return rc;
	}
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
	fdl__pool_lock(p);
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
	fdl__pool_unlock(p);
	fdl_error e;
	if (drop)
		fdl_store_del(c->dst, drop, &e);
	free(drop);
	return rc;
}

/* The plan's pool: each thread takes a data file the plan has found (so
 * transfers start with the first catalog), else the next version to
 * prepare, until neither is left and no thread is still preparing. */
int fdl__prepare_loop(cloner *c, pool *p, fdl_error *err)
{
	int rc = 0;
	while (!rc) {
		bool data = false, prep = false;
		const char *key = NULL;
		int64_t size = -1;
		size_t k = 0, j = 0;
		char claim[65] = "", by[FDL_ID_LEN + 40] = "";
		fdl__pool_lock(p);
		for (;;) {
			if (atomic_load(&p->failed))
				break;
			if (p->dnext < p->dlen) {
				j = p->dnext++;
				key = p->dfiles[j].key;
				size = p->dfiles[j].size;
				memcpy(claim, p->dfiles[j].claim, sizeof claim);
				char *files = fdl_version_key(p->dfiles[j].claim_by, FDL_FILES_JSON);
				snprintf(by, sizeof by, "%s", files ? files : "");
				free(files);
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
		fdl__pool_unlock(p);
		if (data) {
			copied got;
			rc = fdl__copy_key(c, key, size > 0 ? size : -1, claim[0] ? claim : NULL, by, NULL, false, true, &got,
				      err);
			bool drop = false;
			fdl__pool_lock(p); /* a claim that came during the copy */
			memcpy(p->dfiles[j].got, got.got, sizeof got.got);
			p->dfiles[j].put = got.put;
			if (!rc)
				rc = check_claim(p, j, c->src->root, &drop, err);
			fdl__pool_unlock(p);
			fdl_error e;
			if (drop)
				fdl_store_del(c->dst, key, &e);
			if (!rc)
				fdl__prog_add(c->prog, 1, size);
		} else if (prep) {
			rc = prepare_version(c, &p->dirs->items[k], &p->catalogs[k], err);
			fdl__pool_lock(p);
			p->preparing--;
			if (p->threaded)
				pthread_cond_broadcast(&p->cv);
			fdl__pool_unlock(p);
		} else {
			break;
		}
	}
	return rc;
}
