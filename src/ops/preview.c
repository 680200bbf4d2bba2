/* Previews (docs/format.md "Previews (fdl)"): a version's tables' first
 * rows and column statistics, computed by DuckDB over the version as a
 * reader opens it, written beside versions/; at commit through the seam
 * (derived.c), for older versions by fdl preview. A table whose state a
 * preview already has is not computed again. */
#include "preview.h"
#include "../layout/preview.h"
#include "../util/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define ALIAS "fdl_pv"

/* A preview computed beside a commit (fdl__preview_start, _held). Held:
 * from what the commit holds before its version is written, its files
 * written only once the gate opens (the version written); the join drops
 * them when it never did. */
typedef enum gate { GATE_SHUT, GATE_OPEN, GATE_DROPPED } gate;

struct fdl_preview_job {
	fdl_repo *repo; /* its own handle: the caller goes on with its own */
	fdl_duck *share;
	char id[FDL_ID_LEN + 1];
	fdl_pool_side *side;
	fdl_error err;
	int rc;
	bool held; /* from what the freeze holds, not from the version (not written yet; id "" until then) */
	char *catalog; /* held: the frozen catalog's file (written once the freeze detaches it) */
	json_t *files, *states; /* held: files.json's tables; the tables' states (NULL: read on its thread) */
	char *alias; /* held: where the new catalog is attached in `share`, until the freeze detaches it */
	char parent[FDL_ID_LEN + 1]; /* held: the first parent ("" none) */
	fdl_strlist staged; /* held: new files read at `staging` (fdl_move_frozen) */
	char *staging;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	gate gate;     /* under mu */
	bool reading;  /* under mu: held, it may read `staged` files (fdl__preview_settling waits) */
	bool states_pending; /* under mu: held, it has yet to read `alias` (fdl__preview_detaching waits) */
	bool deferred; /* no thread could be started: run where the gate opens */
};

typedef struct pv_run {
	fdl_repo *repo;
	fdl_preview_job *job; /* beside a commit: where the writes wait (NULL: fdl preview) */
	fdl_version *v;
	const char *parent; /* the first parent (NULL: none) */
	char *catalog;
	fdl_duck *d;
	fdl_duck *share; /* the commit's database, beside a commit */
	bool lake;     /* attached through DuckLake in d (fdl preview) */
	fdl_duck *own; /* beside a commit, once a table needs DuckLake: a DuckDB of its own, attached through it */
	json_t *files; /* files.json's tables: how each reads from its data files (NULL: not known) */
	const fdl_strlist *staged; /* held: files read at `staging`, not in the data folder (NULL: none) */
	const char *staging;
	json_t *prior; /* the first parent's preview, once a table is computed (NULL: none) */
	bool prior_read;
	json_t *held; /* the table files computed, [[sha, file], ...]: written once the rest is */
} pv_run;

static void run_free(pv_run *r)
{
	fdl_duck_free(r->d);
	fdl_duck_free(r->own);
	free(r->catalog);
	json_decref(r->files);
	json_decref(r->prior);
	json_decref(r->held);
	fdl_version_free(r->v);
}

/* The version's files.json's tables, first parent and catalog, from the
 * repository (fdl preview; a branch moved without a commit). */
static int run_read(pv_run *r, const char *id, fdl_error *err)
{
	int rc = fdl_version_read(&r->v, r->repo, id, err);
	json_t *files = NULL;
	fdl_error ignore; /* without it, every table is read through DuckLake */
	if (!rc && !fdl_version_load_json(&files, r->repo, r->v, "files", &ignore)) {
		r->files = json_incref(json_object_get(files, "tables"));
		json_decref(files);
	}
	if (!rc)
		r->parent = fdl_version_parent(r->v, 0);
	return rc ? rc : fdl_version_fetch_catalog(&r->catalog, r->repo, r->v, err);
}

/* The same from what a commit's freeze holds before the version is
 * written (what the version's files will say): the frozen catalog's file,
 * files.json's tables, the base's id. */
static int run_given(pv_run *r, const fdl_preview_job *j, fdl_error *err)
{
	r->files = json_incref(j->files);
	r->parent = j->parent[0] ? j->parent : NULL;
	r->staged = j->staging ? &j->staged : NULL;
	r->staging = j->staging;
	return (r->catalog = strdup(j->catalog)) ? 0 : fdl_oom(err);
}

/* The version attached as a reader attaches it: checked, confined, read
 * only, through DuckLake; its files.json, which says how each table reads
 * from its data files. Beside a commit (held), a connection to the
 * commit's own database (`share`, DuckDB started) with nothing attached:
 * the tables' states are read from the freeze's catalog, a table read from
 * its data files needs no more, and one that needs DuckLake gets a DuckDB
 * of its own (lake_ready). */
static int run_open(pv_run *r, const char *id, fdl_error *err)
{
	bool held = r->job && r->job->held;
	int rc = held ? run_given(r, r->job, err) : run_read(r, id, err);
	if (!rc)
		rc = r->share ? fdl_duck_new_sharing(&r->d, r->share, err) : fdl_duck_new(&r->d, false, err);
	if (!rc)
		rc = fdl_duck_use_data(r->d, r->repo->data_url, r->repo->store, err);
	if (held) /* nothing attached here */
		return rc;
	if (!rc)
		rc = fdl_catalog_version_confined(NULL, r->d, NULL, r->catalog, r->repo->store, r->repo->data_dir, id,
						  err);
	if (!rc && !(rc = fdl_catalog_attach_lake(r->d, ALIAS, r->catalog, r->repo->data_url, err)))
		r->lake = true;
	const char *dirs[] = {r->repo->data_url, NULL};
	const char *paths[] = {r->catalog, NULL};
	if (!rc)
		rc = fdl_duck_confine(r->d, dirs, paths, err);
	return rc;
}

/* The held job no longer reads the freeze's catalog: it may be detached. */
static void states_read(fdl_preview_job *j)
{
	pthread_mutex_lock(&j->mu);
	j->states_pending = false;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

/* Until the held job's gate is open or dropped: whether it opened (the
 * version written). */
static bool gate_wait(fdl_preview_job *j)
{
	pthread_mutex_lock(&j->mu);
	j->reading = false; /* nothing read while it waits */
	pthread_cond_broadcast(&j->cv);
	if (j->gate == GATE_SHUT)
		fdl_duck_trace(j->share, "preview: waiting for its version to be written");
	while (j->gate == GATE_SHUT)
		pthread_cond_wait(&j->cv, &j->mu);
	bool open = j->gate == GATE_OPEN;
	pthread_mutex_unlock(&j->mu);
	return open;
}

/* Whether the held writes may go: at once for fdl preview; beside a
 * commit once its version is written (false: it never was, or the commit
 * gave up first: nothing is written). */
static bool gate_passed(fdl_preview_job *j)
{
	if (!j)
		return true;
	if (j->held)
		fdl_test_pause("preview-held"); /* tests: computed, its version not yet written */
	return gate_wait(j);
}

/* Where the catalog is attached through DuckLake (*lake): in d for fdl
 * preview; beside a commit, whose database has no DuckLake loaded, a
 * DuckDB of its own, opened for the first table that needs it (without
 * the confinement, as in the commit's: the catalog is the one it froze). */
static int lake_ready(fdl_duck **lake, pv_run *r, fdl_error *err)
{
	int rc = 0;
	/* held: the catalog's file is whole once the version is written */
	if (r->job && r->job->held && !r->lake && !r->own && !gate_wait(r->job))
		return fdl_fail(err, FDL_ENOTFOUND, "its version was never written");
	if (!r->lake && !r->own && !(rc = fdl_duck_new(&r->own, false, err))) {
		rc = fdl_duck_use_data(r->own, r->repo->data_url, r->repo->store, err);
		if (!rc)
			rc = fdl_catalog_attach_lake(r->own, ALIAS, r->catalog, r->repo->data_url, err);
		if (rc) {
			fdl_duck_free(r->own);
			r->own = NULL;
		}
	}
	*lake = r->lake ? r->d : r->own;
	return rc;
}

/* The table file's name: the sha256 of the format, whether it holds
 * statistics, and the table's state. */
static int state_sha(char sha[65], const json_t *t, bool stats, fdl_error *err)
{
	char *text = fdl_asprintf("fdl_preview %d\x1e%s\x1e%s\x1e%s\x1e%lld\x1e%s", FDL_PREVIEW_FORMAT,
				  stats ? "stats" : "rows", json_string_value(json_object_get(t, "schema")),
				  json_string_value(json_object_get(t, "name")),
				  (long long)json_integer_value(json_object_get(t, "table_id")),
				  json_string_value(json_object_get(t, "state")));
	int rc = text ? fdl_sha256_mem(sha, text, strlen(text), err) : fdl_oom(err);
	free(text);
	return rc;
}

/* The table file of `sha`, read into *out (NULL when it is not there). */
static int table_found(json_t **out, pv_run *r, const char *sha, fdl_error *err)
{
	int rc = fdl_preview_table_read(out, r->repo, sha, err);
	if (rc == FDL_ENOTFOUND)
		*out = NULL;
	return rc == FDL_ENOTFOUND ? 0 : rc;
}

/* File `path` (files.json's) as the version names it (the data folder),
 * and, into *at, where it is read: there, or held, where the freeze
 * found it, not yet published (else *at is NULL). */
static char *file_url(char **at, const pv_run *r, const char *path)
{
	bool staged = path && r->staged && fdl_strlist_has_sorted(r->staged, path);
	*at = staged ? fdl_asprintf("%s%s", r->staging, path) : NULL;
	return fdl_asprintf("%s%s", r->repo->data_url, path);
}

/* How table schema.name reads from its data files (files.json's entry,
 * with written columns and files), into *x and parts (4 a file, freed by
 * the caller); false when files.json does not say. */
static bool plain_of(fdl_preview_plain *x, char ***parts, pv_run *r, const char *schema, const char *name)
{
	char *key = fdl_asprintf("%s.%s", schema, name);
	const json_t *t = key && r->files ? json_object_get(r->files, key) : NULL;
	free(key);
	const json_t *files = json_object_get(t, "files");
	size_t n = json_array_size(files);
	if (!json_array_size(json_object_get(t, "columns")))
		return false;
	fdl_plain_file *f = calloc(2 * n + 1, sizeof *f), *named = f ? f + n : NULL; /* read at; named */
	*parts = calloc(4 * n + 1, sizeof **parts);
	*x = (fdl_preview_plain){t, f, n, NULL, NULL};
	bool ok = f && *parts, moved = false;
	for (size_t i = 0; ok && i < n; i++) {
		const json_t *e = json_array_get(files, i), *del = json_object_get(e, "deletes");
		char **p = *parts + 4 * i;
		named[i].data = p[0] = file_url(&p[1], r, json_string_value(json_object_get(e, "path")));
		if (del)
			named[i].deletes = p[2] = file_url(&p[3], r, json_string_value(json_object_get(del, "path")));
		f[i].data = p[1] ? p[1] : p[0];
		f[i].deletes = p[3] ? p[3] : p[2];
		moved |= p[1] || p[3];
		ok = p[0] && (!del || p[2]);
	}
	x->named = moved ? named : NULL;
	return ok;
}

static void parts_free(fdl_preview_plain *x, char **parts)
{
	for (size_t i = 0; parts && i < 4 * x->n; i++)
		free(parts[i]);
	free(parts);
	free((void *)x->files);
}

/* Table `t`'s file as the first parent's preview holds a copy of it
 * (NULL: none, or not read; one request, not one per table): a commit that
 * left the table's leading files as they were takes its first rows from
 * it. */
static const json_t *prior_of(pv_run *r, const json_t *t)
{
	fdl_error ignore;
	if (!r->prior_read && r->parent && fdl_preview_read(&r->prior, r->repo, r->parent, &ignore))
		r->prior = NULL;
	r->prior_read = true;
	size_t i;
	const json_t *e;
	json_array_foreach(json_object_get(r->prior, "tables"), i, e)
	{
		if (json_equal(json_object_get(e, "table_id"), json_object_get(t, "table_id")) &&
		    json_equal(json_object_get(e, "schema"), json_object_get(t, "schema")) &&
		    json_equal(json_object_get(e, "name"), json_object_get(t, "name")))
			return json_object_get(e, "file");
	}
	return NULL;
}

/* Table `t`'s file computed under `sha`, into *out, and held to be
 * written with the version's preview. */
static int table_compute(json_t **out, pv_run *r, const json_t *t, const char *sha, bool stats, fdl_error *err)
{
	json_t *doc = NULL;
	const char *schema = json_string_value(json_object_get(t, "schema")),
		   *name = json_string_value(json_object_get(t, "name"));
	fdl_preview_plain x = {0};
	char **parts = NULL;
	fdl_error why = {0};
	bool plain = plain_of(&x, &parts, r, schema, name);
	x.prior = plain ? prior_of(r, t) : NULL; /* only a plain reading takes them */
	int rc = plain ? fdl_catalog_preview_table(&doc, r->d, ALIAS, schema, name, &x, FDL_PREVIEW_ROWS, stats, &why)
			 : fdl_fail(&why, FDL_ENOTFOUND, FDL_FILES_JSON " does not say how it reads");
	parts_free(&x, parts);
	if (!rc)
		fdl_duck_trace(r->d, "preview: %s.%s read from its data files", schema, name);
	else {
		fdl_duck_trace(r->d, "preview: %s.%s through DuckLake (from its data files alone: %s)", schema, name,
			       why.message);
		fdl_duck *lake = NULL;
		rc = lake_ready(&lake, r, err);
		if (!rc)
			rc = fdl_catalog_preview_table(&doc, lake, ALIAS, schema, name, NULL, FDL_PREVIEW_ROWS, stats, err);
	}
	json_t *head = rc ? NULL
			  : json_pack("{s:i, s:s, s:s, s:O}", "fdl_preview", FDL_PREVIEW_FORMAT, "schema", schema, "name",
				      name, "table_id", json_object_get(t, "table_id"));
	if (!rc)
		rc = head && !json_object_update_missing(head, doc) ? 0 : fdl_oom(err);
	if (!rc && !r->held && !(r->held = json_array()))
		rc = fdl_oom(err);
	if (!rc && json_array_append_new(r->held, json_pack("[s, O]", sha, head)))
		rc = fdl_oom(err);
	json_decref(doc);
	if (rc) {
		json_decref(head);
		fdl_error_prefix(err, "table %s.%s", schema, name);
		return rc;
	}
	*out = head;
	return 0;
}

/* Table `t` (a state of fdl_catalog_preview_states): its file found (with
 * statistics first) or computed and written; its key, and a copy of the
 * file (so a page reads a version's preview in one request), into the
 * entry. */
static int table_entry(pv_run *r, json_t *t, const fdl_preview_options *o, fdl_preview_counts *n, fdl_error *err)
{
	int64_t bytes = json_integer_value(json_object_get(t, "bytes"));
	int64_t max = o && o->stats_max_bytes ? o->stats_max_bytes : FDL_PREVIEW_STATS_MAX;
	bool want = max < 0 || bytes <= max;
	char sha[65];
	json_t *file = NULL;
	int rc = 0;
	for (int stats = 1; stats >= !want && !file && !rc; stats--)
		if (!(rc = state_sha(sha, t, stats, err)))
			rc = table_found(&file, r, sha, err);
	if (!rc && file)
		n->reused++;
	else if (!rc && !(rc = state_sha(sha, t, want, err)) && !(rc = table_compute(&file, r, t, sha, want, err)))
		n->computed++;
	char *key = rc ? NULL : fdl_preview_table_key(sha);
	if (!rc && (!key || json_object_set_new(t, "key", json_string(key)) || json_object_set(t, "file", file)))
		rc = fdl_oom(err);
	free(key);
	json_decref(file);
	json_object_del(t, "state");
	json_object_del(t, "bytes");
	return rc;
}

/* The table files computed, then the version's preview (which names
 * them), once the gate lets them go. */
static int run_write(pv_run *r, const char *id, const json_t *doc, bool again, fdl_error *err)
{
	size_t i;
	json_t *e;
	json_array_foreach(r->held, i, e)
	{
		const json_t *file = json_array_get(e, 1);
		int rc = fdl_preview_table_write(r->repo, json_string_value(json_array_get(e, 0)), file, err);
		if (rc)
			return fdl_error_prefix(err, "table %s.%s", json_string_value(json_object_get(file, "schema")),
						json_string_value(json_object_get(file, "name")));
	}
	return fdl_preview_write(r->repo, id, doc, again, err);
}

/* Whether version `id` has its preview (n->already) with every table's
 * statistics, or o asks for none more: then nothing is to be done. *again:
 * it has one, without some table's statistics. */
static bool preview_done(bool *again, fdl_repo *repo, const char *id, const fdl_preview_options *o,
			 fdl_preview_counts *n)
{
	json_t *have = NULL;
	fdl_error e;
	*again = false;
	if (fdl_preview_load(&have, repo, id, &e))
		return false;
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(have, "tables"), i, t) *again |= !json_object_get(t, "stats");
	json_decref(have);
	n->already = !*again || !o || !o->stats_max_bytes;
	return n->already;
}

/* fdl__preview_make, in `share` when it is not NULL, beside the commit of
 * `job` when it is not NULL (held: from what the commit holds). */
static int make_in(fdl_repo *repo, const char *id, fdl_duck *share, fdl_preview_job *job, const fdl_preview_options *o,
		   fdl_preview_counts *n, fdl_error *err)
{
	json_t *tables = NULL;
	memset(n, 0, sizeof *n);
	bool again = false; /* a table lacks the statistics asked for now: the preview written again */
	bool held = job && job->held;
	if (!held && preview_done(&again, repo, id, o, n)) /* held: not written, so none */
		return 0;
	pv_run r = {.repo = repo, .share = share, .job = job};
	int rc = run_open(&r, id, err);
	if (!rc && held && job->states) { /* read as the job started (no thread) */
		tables = job->states;
		job->states = NULL;
	} else if (!rc && held)
		rc = fdl_catalog_preview_states(&tables, r.d, job->alias, true, err);
	else if (!rc)
		rc = fdl_catalog_preview_states(&tables, r.d, ALIAS, !r.lake, err);
	if (held) {
		states_read(job);
		fdl_test_pause("preview-reading"); /* tests: before its first read of a table, the commit going on */
	}
	size_t i;
	json_t *t;
	json_array_foreach(rc ? NULL : tables, i, t)
	{
		if ((rc = table_entry(&r, t, o, n, err)))
			break;
	}
	/* held: its version's id, once written (none: nothing of it) */
	bool go = !rc && gate_passed(job);
	if (!rc && !go)
		fdl_duck_trace(r.d, "preview: its version was never written: its preview is not either");
	const char *vid = held ? job->id : id;
	json_t *doc = !go ? NULL : json_pack("{s:i, s:s, s:O}", "fdl_preview", FDL_PREVIEW_FORMAT, "version", vid,
					     "tables", tables);
	if (go && !doc)
		rc = fdl_oom(err);
	if (go && !rc)
		rc = run_write(&r, vid, doc, again, err);
	if (rc)
		fdl_error_prefix(err, "the preview of version %s", vid[0] ? vid : "(never written)");
	json_decref(doc);
	json_decref(tables);
	run_free(&r);
	return rc;
}

int fdl__preview_make(fdl_repo *repo, const char *id, const fdl_preview_options *o, fdl_preview_counts *n,
		      fdl_error *err)
{
	return make_in(repo, id, NULL, NULL, o, n, err);
}

/* ---- beside a commit ------------------------------------------------------- */

/* This thread's CPU time so far, in ms, and its page faults (for FDL_TRACE). */
static double thread_cpu_ms(long *faults)
{
	struct timespec t;
	struct rusage u;
	*faults = getrusage(RUSAGE_THREAD, &u) ? 0 : u.ru_minflt + u.ru_majflt;
	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) ? 0 : (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void job_run(void *arg)
{
	fdl_preview_job *j = arg;
	fdl_preview_counts n;
	fdl_preview_options o = FDL_PREVIEW_OPTIONS_INIT;
	o.stats_max_bytes = FDL_PREVIEW_STATS_MAX;
	long f0, f1;
	if (j->held && j->states_pending)
		fdl_test_pause("preview-started"); /* tests: before it reads the freeze's catalog */
	double t0 = thread_cpu_ms(&f0);
	j->rc = make_in(j->repo, j->id, j->share, j, &o, &n, &j->err);
	pthread_mutex_lock(&j->mu);
	j->states_pending = false;
	j->reading = false;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	double t1 = thread_cpu_ms(&f1);
	fdl_duck_trace(j->share, "preview: %.1f ms of its thread's CPU, %ld page faults (%zu tables computed, %zu reused)",
		       t1 - t0, f1 - f0, n.computed, n.reused);
}

bool fdl__preview_wanted(fdl_repo *repo, const char *parent)
{
	const char *at = getenv("FDL_PREVIEW_AT_COMMIT");
	if (at && (!strcmp(at, "0") || !strcmp(at, "1")))
		return at[0] == '1';
	if (!parent || !parent[0])
		return false;
	char *key = fdl_preview_key(parent);
	int64_t bytes;
	fdl_error ignore;
	bool kept = key && !fdl_store_head(repo->store, key, &bytes, &ignore);
	free(key);
	return kept;
}

bool fdl__preview_wanted_for(fdl_repo *repo, const char *id)
{
	fdl_version *v = NULL;
	fdl_error ignore;
	const char *at = getenv("FDL_PREVIEW_AT_COMMIT");
	if (at && (!strcmp(at, "0") || !strcmp(at, "1")))
		return at[0] == '1';
	if (fdl_version_read(&v, repo, id, &ignore))
		return false;
	bool kept = fdl__preview_wanted(repo, fdl_version_parent(v, 0));
	fdl_version_free(v);
	return kept;
}

static void job_free(fdl_preview_job *j)
{
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	fdl_repo_free(j->repo);
	free(j->catalog);
	free(j->alias);
	free(j->staging);
	fdl_strlist_free(&j->staged);
	json_decref(j->files);
	json_decref(j->states);
	free(j);
}

/* A job for version `id`, its gate open, not started. */
static int job_new(fdl_preview_job **out, fdl_repo *repo, const char *id, fdl_duck *share, fdl_error *err)
{
	fdl_preview_job *j = *out = calloc(1, sizeof *j);
	if (!j)
		return fdl_oom(err);
	snprintf(j->id, sizeof j->id, "%s", id);
	j->share = share;
	j->gate = GATE_OPEN;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	int rc = fdl_repo_open(&j->repo, repo->root, err);
	if (rc) {
		job_free(j);
		*out = NULL;
	}
	return rc;
}

/* On a thread of its own; without one, here and now, or (gate shut) where
 * the gate opens, so that nothing waits for what cannot come. */
static void job_go(fdl_preview_job *j)
{
	if ((j->side = fdl_pool_side_start(job_run, j)))
		return;
	if (j->gate == GATE_SHUT) /* no thread: nothing else reads it */
		j->deferred = true;
	else
		job_run(j);
}

int fdl__preview_start(fdl_preview_job **out, fdl_repo *repo, const char *id, fdl_error *err)
{
	int rc = job_new(out, repo, id, NULL, err);
	if (!rc)
		job_go(*out);
	return rc;
}

int fdl__preview_start_held(fdl_preview_job **out, fdl_repo *repo, const fdl_move_frozen *f, fdl_error *err)
{
	int rc = job_new(out, repo, "", f->share, err);
	fdl_preview_job *j = *out;
	if (rc)
		return rc;
	j->held = true;
	j->gate = GATE_SHUT;
	snprintf(j->parent, sizeof j->parent, "%s", f->parent ? f->parent : "");
	j->catalog = strdup(f->catalog_file);
	j->files = f->tables ? json_deep_copy(f->tables) : NULL;
	if (!j->catalog || (f->tables && !j->files) || (f->staging && !(j->staging = strdup(f->staging))))
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && f->staging && f->staged && i < f->staged->len; i++)
		rc = fdl_strlist_add(&j->staged, f->staged->items[i], err);
	if (!rc && !(j->alias = strdup(f->alias)))
		rc = fdl_oom(err);
	j->reading = j->states_pending = true;
	/* on its thread, the states read before the freeze detaches the
	 * catalog (fdl__preview_detaching); without one, here and now */
	if (!rc && !(j->side = fdl_pool_side_start(job_run, j))) {
		rc = fdl_catalog_preview_states(&j->states, f->share, f->alias, true, err);
		j->states_pending = false;
		j->deferred = true;
	}
	if (rc) {
		job_free(j);
		*out = NULL;
	}
	return rc;
}

/* The gate from shut to `to` (nothing once it is open or dropped), the
 * version's id given when it opens. */
static void gate_set(fdl_preview_job *j, gate to, const char *id)
{
	pthread_mutex_lock(&j->mu);
	if (j->gate == GATE_SHUT) {
		if (id)
			snprintf(j->id, sizeof j->id, "%s", id);
		j->gate = to;
		pthread_cond_broadcast(&j->cv);
	}
	pthread_mutex_unlock(&j->mu);
}

void fdl__preview_release(fdl_preview_job *j, const char *id)
{
	if (!j)
		return;
	gate_set(j, GATE_OPEN, id);
	if (j->deferred) {
		j->deferred = false;
		job_run(j); /* no thread: here, now, as the version is written */
	}
}

void fdl__preview_detaching(fdl_preview_job *j)
{
	if (!j || !j->side)
		return;
	pthread_mutex_lock(&j->mu);
	if (j->states_pending)
		fdl_duck_trace(j->share, "freeze: waiting for the preview to read the tables' states before the detach");
	while (j->states_pending)
		pthread_cond_wait(&j->cv, &j->mu);
	pthread_mutex_unlock(&j->mu);
}

void fdl__preview_settling(fdl_preview_job *j)
{
	if (!j || !j->side) /* no thread: it ran where its gate opened, or never will */
		return;
	pthread_mutex_lock(&j->mu);
	if (j->reading)
		fdl_duck_trace(j->share, "commit: waiting for the preview's reads of the new files where the freeze "
					 "found them");
	while (j->reading)
		pthread_cond_wait(&j->cv, &j->mu);
	pthread_mutex_unlock(&j->mu);
}

int fdl__preview_join(fdl_preview_job *j, fdl_error *err)
{
	if (!j)
		return 0;
	gate_set(j, GATE_DROPPED, NULL); /* its version never written: nothing of it */
	fdl_pool_side_join(j->side);
	int rc = j->rc;
	if (rc)
		*err = j->err;
	job_free(j);
	return rc;
}
