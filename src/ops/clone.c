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
#include "clone.h"
#include "derived.h"
#include "report.h"
#include "../util/pool.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A worker stopped with an error: the first one is the clone's (a worker
 * told "another transfer failed" by wait_parent comes after it), and no
 * one waits any more for a parent or a data file that will not come. */
static int pool_failed(pool *p, int rc, const fdl_error *e)
{
	pthread_mutex_lock(&p->mu);
	if (!p->rc) {
		p->rc = rc;
		p->err = *e;
	}
	atomic_store(&p->failed, true);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return rc;
}

/* A worker's cloner: on one thread the clone's own, with its stores; else
 * its own stores (its own connections, kept alive) and findings. */
typedef struct pool_worker {
	cloner c; /* first: the pool's state points at it */
	fdl_verify_report found;
} pool_worker;

static int worker_init(void *ctx, size_t index, void **state, fdl_error *err)
{
	pool *p = ctx;
	if (!p->threaded) {
		*state = p->c;
		return 0;
	}
	pool_worker *w = calloc(1, sizeof *w);
	if (!w)
		return pool_failed(p, fdl_oom(err), err);
	w->c = (cloner){.src = p->c->src, .tmpdir = p->c->tmpdir, .worker = (int)index + 1, .probe = p->c->probe,
			.prog = p->c->prog, .live = p->c->live, .dst_keys = p->c->dst_keys, .found = &w->found,
			.pool = p};
	*state = w;
	int rc = fdl_layout_store_open(&w->c.src_store, p->c->src->root, err);
	if (!rc)
		rc = fdl_store_open(&w->c.dst, p->dst_url, err);
	return rc ? pool_failed(p, rc, err) : 0;
}

static void worker_fini(void *ctx, size_t index, void *state)
{
	pool *p = ctx;
	pool_worker *w = state;
	(void)index;
	if (!w || &w->c == p->c)
		return;
	pthread_mutex_lock(&p->mu);
	p->c->copied += w->c.copied;
	p->c->skipped += w->c.skipped;
	p->c->unmirrored += w->c.unmirrored;
	pthread_mutex_unlock(&p->mu);
	fdl_store_free(w->c.src_store);
	fdl_store_free(w->c.dst);
	fdl_duck_free(w->c.duck);
	fdl_verify_report_free_fields(&w->found);
	free(w);
}

/* The plan's pool: each job is one worker's loop (prepare_loop), which
 * takes data files and versions until none is left; its findings join
 * the clone's when it ends. */
static int prepare_job(void *ctx, void *state, size_t job, fdl_error *err)
{
	pool *p = ctx;
	cloner *c = state;
	(void)job;
	int rc = fdl__prepare_loop(c, p, err);
	if (!rc && c != p->c) {
		pthread_mutex_lock(&p->mu);
		rc = fdl__plan_merge(p->c, c, err);
		pthread_mutex_unlock(&p->mu);
		fdl_verify_report_free_fields(c->found);
		memset(c->found, 0, sizeof *c->found);
	}
	return rc ? pool_failed(p, rc, err) : 0;
}

/* The versions pool: job k copies the k-th version by seq, parents first. */
static int version_job(void *ctx, void *state, size_t job, fdl_error *err)
{
	pool *p = ctx;
	int rc = fdl__copy_version(state, p, p->order[job], err);
	return rc ? pool_failed(p, rc, err) : 0;
}

/* Run a pool on `jobs` threads of the one worker pool (1: on this one,
 * with the clone's own stores); the first error is the clone's. */
static int pool_go(pool *p, int jobs, bool plan, fdl_error *err)
{
	size_t threads = jobs > 1 && p->n > 1 ? ((size_t)jobs < p->n ? (size_t)jobs : p->n) : 1;
	p->threaded = threads > 1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	atomic_init(&p->next, 0);
	atomic_init(&p->failed, false);
	fdl_pool_task t = {.jobs = plan ? threads : p->n, .threads = threads, .ctx = p, .init = worker_init,
			   .job = plan ? prepare_job : version_job, .fini = worker_fini};
	int rc = fdl_pool_run(&t, err);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	if (p->rc) {
		*err = p->err;
		rc = p->rc;
	}
	return rc;
}

/* The copy's store, listed (its keys kept in *existing for copy_may_have),
 * and the clone's temporary folder: resume only what a clone leaves, a
 * repository or just its HEAD. */
static int open_copy(cloner *c, fdl_strlist *existing, const char *dst_url, fdl_error *err)
{
	int rc = fdl_store_open(&c->dst, dst_url, err);
	bool listed = !rc && fdl_store_list(c->dst, "", existing, NULL) == 0;
	if (listed) {
		fdl_strlist_sort(existing);
		c->dst_keys = existing;
	}
	if (listed && existing->len && !(existing->len == 1 && !strcmp(existing->items[0], FDL_HEAD_KEY))) {
		int64_t sz;
		fdl_error e;
		if (fdl_store_head(c->dst, FDL_CONFIG_FILE, &sz, &e) != 0)
			rc = fdl_fail(err, FDL_EEXISTS, "%s is not empty and is not a clone in progress", dst_url);
	}
	if (!rc) {
		fdl_tempdir_sweep(); /* what killed clones left behind, here and in a folder copy */
		char *root = fdl_store_can(c->dst, FDL_STORE_LOCAL) ? fdl_strdup(c->dst->url) : NULL;
		if (root)
			fdl_tmpfile_sweep(root);
		free(root);
		rc = fdl_tempdir(&c->tmpdir, "clone", err);
	}
	return rc;
}

/* The source's fdl.json into the copy. A copy made before the source ran
 * `fdl config` holds an older one: it follows the source (replaced only if
 * unchanged since read) where both lay the repository out alike, and is
 * refused as not a clone where they do not. */
static int copy_config(cloner *c, fdl_error *err)
{
	fdl_buf src = {0}, have = {0};
	char etag[FDL_ETAG_MAX] = "";
	json_t *a = NULL, *b = NULL;
	int rc = fdl_store_get(c->src_store, FDL_CONFIG_FILE, FDL_META_MAX_BYTES, &src, NULL, err);
	if (!rc && (rc = fdl_store_put_if_absent(c->dst, FDL_CONFIG_FILE, src.data, src.len, err)) == 0)
		c->copied++;
	if (rc == FDL_EEXISTS)
		rc = fdl_store_get(c->dst, FDL_CONFIG_FILE, FDL_META_MAX_BYTES, &have, etag, err);
	else
		goto done;
	if (!rc && have.len == src.len && !memcmp(have.data, src.data, src.len)) {
		c->skipped++;
		goto done;
	}
	if (!rc)
		rc = fdl_json_parse(&a, src.data, src.len, FDL_CONFIG_FILE, err);
	if (!rc)
		rc = fdl_json_parse(&b, have.data, have.len, FDL_CONFIG_FILE, err);
	if (!rc && !fdl_config_same_layout(a, b))
		rc = fdl_fail(err, FDL_EEXISTS, "%s/%s lays the repository out otherwise than %s/%s (fdl, data_dir); "
			      "not a clone of it", c->dst->url, FDL_CONFIG_FILE, c->src->root, FDL_CONFIG_FILE);
	if (!rc && (rc = fdl_store_put_if_match(c->dst, FDL_CONFIG_FILE, src.data, src.len, etag, err)) == 0)
		c->copied++;
done:
	json_decref(a);
	json_decref(b);
	fdl_buf_free(&src);
	fdl_buf_free(&have);
	return rc;
}

/* HEAD before fdl.json: a folder is a repository once fdl.json is there;
 * a copy of one branch (`only`) names it. */
static int copy_head(cloner *c, const char *only, fdl_error *err)
{
	char *head = only ? fdl_head_content(only) : NULL;
	int rc = only && !head ? fdl_oom(err) : 0;
	if (!rc && head)
		rc = fdl__put_small(c, FDL_HEAD_KEY, &(fdl_buf){.data = head, .len = strlen(head)}, err);
	else if (!rc)
		rc = fdl__copy_small(c, FDL_HEAD_KEY, false, err);
	free(head);
	if (!rc)
		rc = copy_config(c, err);
	return rc;
}

/* The plan and the data: probes, catalogs fetched, listed and checked, and
 * each data file copied as soon as a catalog names it, in one pool
 * (between folders on every core: there DuckDB is the cost); then what
 * fdl verify says of the source, as an error (a source it rejects gets no
 * ref), and the progress line's totals. */
static int run_plan(cloner *c, vdirs *dirs, char **catalogs, fdl_strmap *files, int jobs, const char *dst_url,
		    fdl_error *err)
{
	fdl_verify_report found = {0};
	c->found = &found;
	pool pp = {.c = c, .dst_url = dst_url, .dirs = dirs, .catalogs = catalogs, .planned = files, .n = dirs->len};
	c->pool = &pp;
	int rc = pool_go(&pp, jobs, true, err);
	for (size_t i = 0; i < pp.dlen; i++)
		free(pp.dfiles[i].key);
	free(pp.dfiles);
	fdl_duck_free(c->duck);
	c->duck = NULL;
	c->pool = NULL;
	if (!rc)
		rc = fdl__plan_verdict(&found, dirs, c->src->root, err);
	fdl_verify_report_free_fields(&found);
	c->found = NULL;
	if (!rc)
		fdl__plan_totals(c->prog, dirs);
	return rc;
}

/* Each version's files, its version.json last, after its parent's. */
static int run_versions(cloner *c, vdirs *dirs, char **catalogs, int jobs, const char *dst_url, fdl_error *err)
{
	size_t *order = NULL;
	atomic_bool *published = NULL;
	fdl_strmap index_of = {0};
	int rc = fdl__parents_first(&order, &published, &index_of, dirs, err);
	pool vp = {.c = c, .dst_url = dst_url, .dirs = dirs, .catalogs = catalogs, .order = order,
		   .published = published, .index_of = &index_of, .n = dirs->len};
	if (!rc)
		rc = pool_go(&vp, jobs, false, err);
	free(order);
	free(published);
	fdl_strmap_free(&index_of);
	return rc;
}

static int make_report(fdl_clone_report **out, const cloner *c, const vdirs *dirs, fdl_strlist *moved,
		       fdl_error *err)
{
	fdl_clone_report *r = calloc(1, sizeof *r);
	if (!r || !(r->from = fdl_strdup(c->src->root)) || !(r->to = fdl_strdup(c->dst->url))) {
		fdl_clone_report_free(r);
		return fdl_oom(err);
	}
	r->versions = (int64_t)dirs->len;
	r->copied = c->copied;
	r->already_there = c->skipped;
	r->removed = c->unmirrored;
	r->moved.strings = moved->items;
	r->moved.count = moved->len;
	*moved = (fdl_strlist){0};
	*out = r;
	return 0;
}

int fdl_clone(fdl_clone_report **out, const char *src_url, const char *dst_url, const fdl_clone_options *opts,
	      fdl_error *err)
{
	if (opts && fdl_options_check(opts->version, FDL_CLONE_OPTIONS_VERSION, "fdl_clone", "fdl_clone_options", err))
		return FDL_EINVALID;
	cloner c = {0};
	vdirs dirs = {0};
	fdl_strlist existing = {0}, moved = {0};
	planned_refs refs = {0};
	fdl_strmap files = {0};
	const char *only = opts && opts->branch && *opts->branch ? opts->branch : NULL;
	clone_prog prog = {.cb = opts ? opts->progress : NULL, .payload = opts ? opts->progress_payload : NULL};
	pthread_mutex_init(&prog.mu, NULL);
	c.prog = &prog;
	int rc = fdl_repo_open(&c.src, src_url, err);
	if (!rc)
		c.src_store = c.src->store;
	if (!rc)
		rc = open_copy(&c, &existing, dst_url, err);
	/* the refs first, with their values: the versions found after them
	 * hold every version they name */
	if (!rc)
		rc = fdl__refs_to_copy(&refs, &c, only, err);
	if (!rc)
		rc = copy_head(&c, only, err);
	if (!rc)
		rc = fdl__versions_of(&dirs, &refs, &c, err);
	if (!rc)
		rc = fdl__check_copy_refs(&c, &dirs, &refs, opts && opts->force, err);
	char **catalogs = rc ? NULL : calloc(dirs.len + 1, sizeof *catalogs);
	if (!rc && !catalogs)
		rc = fdl_oom(err);
	/* the pool: 8 transfers at once from a host or bucket, or to a
	 * bucket; a folder-to-folder copy gains nothing from threads (but its
	 * plan runs on every core, at most 8) */
	int jobs = opts && opts->jobs > 0 ? opts->jobs
		   : rc || (fdl_store_can(c.src->store, FDL_STORE_LOCAL) && fdl_store_can(c.dst, FDL_STORE_LOCAL)) ? 1
														 : 8;
	int prep_jobs = opts && opts->jobs > 0 ? opts->jobs : jobs > 1 ? jobs : (int)fdl_pool_threads(8, NULL);
	if (!rc)
		rc = run_plan(&c, &dirs, catalogs, &files, prep_jobs, dst_url, err);
	c.live = &files;
	if (!rc)
		rc = fdl__mirror_going(&c, &dirs, err);
	if (!rc)
		rc = run_versions(&c, &dirs, catalogs, jobs, dst_url, err);
	for (size_t i = 0; catalogs && i < dirs.len; i++)
		free(catalogs[i]);
	free(catalogs);
	fdl_strmap_free(&files);
	for (size_t i = 0; i < refs.keys.len && !rc; i++) /* sorted */
		rc = fdl__copy_ref(&c, &dirs, refs.keys.items[i], refs.ids[i], &moved, err);
	if (!rc)
		fdl__index_copy(&c, &refs.keys, &dirs);
	if (!rc)
		fdl__clone_derived(&c, &dirs, &refs);
	if (!rc)
		rc = make_report(out, &c, &dirs, &moved, err);
	if (c.tmpdir) {
		fdl_rm_rf(c.tmpdir);
		free(c.tmpdir);
	}
	fdl_vdirs_free(&dirs);
	fdl__planned_refs_free(&refs);
	fdl_strlist_free(&moved);
	fdl_strlist_free(&existing);
	fdl_repo_free(c.src);
	fdl_store_free(c.dst);
	pthread_mutex_destroy(&prog.mu);
	return rc;
}
