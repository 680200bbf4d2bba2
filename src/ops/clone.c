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
#include "iceberg.h"
#include "report.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int pool_item(cloner *c, pool *p, size_t k, fdl_error *err)
{
	switch (p->kind) {
	case POOL_PREPARE:
		return prepare_version(c, &p->dirs->items[k], &p->catalogs[k], err);
	default:
		return copy_version(c, p, p->order[k], err);
	}
}

void pool_lock(pool *p)
{
	if (p->threaded)
		pthread_mutex_lock(&p->mu);
}

void pool_unlock(pool *p)
{
	if (p->threaded)
		pthread_mutex_unlock(&p->mu);
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
