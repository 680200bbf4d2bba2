/* fdl gc: data files no live version references, incomplete version
 * folders, unnamed history packs and ended working catalogs, past a grace
 * period, removed. */
#include "lifecycle.h"
#include "derived.h"
#include "../layout/hindex.h"
#include "report.h"
#include "work.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- garbage collection ------------------------------------------------------ */

/* A name DuckLake gives the files it writes: ducklake-<uuid>.parquet, and
 * its delete files ducklake-<uuid>-delete.parquet (or .puffin). gc deletes
 * nothing else under the data folder: a README or a staged CSV someone put
 * there is not its to delete. */
static bool ducklake_name(const char *key)
{
	const char *base = strrchr(key, '/');
	base = base ? base + 1 : key;
	char id[FDL_ID_LEN + 1];
	if (strncmp(base, "ducklake-", 9) || strlen(base) < 9 + FDL_ID_LEN)
		return false;
	snprintf(id, sizeof id, "%.*s", FDL_ID_LEN, base + 9);
	const char *rest = base + 9 + FDL_ID_LEN;
	return fdl_id_is_valid(id) && (!strcmp(rest, ".parquet") || !strcmp(rest, "-delete.parquet") ||
				       !strcmp(rest, "-delete.puffin"));
}

typedef struct gc_run {
	fdl_repo *repo;
	int64_t now, grace;
	bool dry_run;
	fdl_gc_report *report;
	fdl_strlist deleted, incomplete, left_alone;
} gc_run;

/* Delete key (unless a dry run) and list it. */
static int gc_delete(gc_run *g, fdl_strlist *into, const char *key, fdl_error *err)
{
	int rc = into ? fdl_strlist_add(into, key, err) : 0;
	if (!rc && !g->dry_run)
		rc = del_owned(g->repo, fdl_strdup(key), err);
	return rc;
}

static bool past_grace(gc_run *g, const char *key, int *rc, fdl_error *err)
{
	int64_t when = g->now;
	*rc = fdl_store_modified(g->repo->store, key, &when, err);
	return !*rc && g->now - when >= g->grace;
}

/* Data files no live version references, DuckLake's by name, past the grace. */
static int gc_data(gc_run *g, const fdl_strlist *keep, fdl_error *err)
{
	fdl_strlist data = {0};
	int rc = fdl_store_list(g->repo->store, g->repo->data_dir, &data, err);
	size_t prefix = strlen(g->repo->data_dir) + 1;
	for (size_t i = 0; i < data.len && !rc; i++) {
		if (fdl_strlist_has_sorted(keep, data.items[i] + prefix))
			continue;
		if (!ducklake_name(data.items[i]))
			rc = fdl_strlist_add(&g->left_alone, data.items[i], err);
		else if (past_grace(g, data.items[i], &rc, err)) /* else perhaps a running writer's */
			rc = gc_delete(g, &g->deleted, data.items[i], err);
	}
	fdl_strlist_free(&data);
	return rc;
}

static fdl_gc_work *gc_work_add(gc_run *g, const fdl_workrec *w, fdl_gc_work_state state, fdl_error *err)
{
	fdl_gc_report *r = g->report;
	fdl_gc_work *o = fdl_report_grow((void **)&r->work, r->work_count, sizeof *r->work, err);
	if (!o)
		return NULL;
	r->work_count++;
	memcpy(o->id, w->id, sizeof o->id);
	o->state = state;
	const char *where = json_string_value(json_object_get(w->doc, "where"));
	const char *branch = json_string_value(json_object_get(w->doc, "branch"));
	o->where = where ? fdl_strdup(where) : NULL;
	o->branch = branch ? fdl_strdup(branch) : NULL;
	if (w->lease_end >= 0) {
		char iso[32];
		fdl_time_format_iso(iso, w->lease_end);
		o->lease_end = fdl_strdup(iso);
	}
	return o;
}

/* Working catalogs: a record whose lease runs keeps its folder whatever
 * the age of the files in it; one whose lease ended goes, record first;
 * a folder no record names (abandoned, or a checkout that failed) goes
 * file by file past the grace. */
static int gc_work(gc_run *g, fdl_error *err)
{
	fdl_workrecs recs;
	int rc = fdl_workrecs_list(&recs, g->repo, err);
	for (size_t i = 0; i < recs.len && !rc; i++) {
		const fdl_workrec *w = &recs.items[i];
		fdl_gc_work_state state = w->problem || (w->has_record && w->lease_end < 0) ? FDL_GC_WORK_UNREADABLE
					  : !w->has_record			       ? FDL_GC_WORK_ABANDONED
					  : w->lease_end <= g->now		       ? FDL_GC_WORK_ENDED
					  : w->lease_end - g->now < FDL_GC_WORK_WARN_DAYS * 86400 ? FDL_GC_WORK_EXPIRING
												  : FDL_GC_WORK_KEPT;
		fdl_gc_work *o = gc_work_add(g, w, state, err);
		fdl_strlist files = {0};
		if (!o)
			rc = FDL_ENOMEM;
		if (!rc && state == FDL_GC_WORK_ENDED && !g->dry_run)
			rc = del_owned(g->repo, fdl_workrec_key(w->id), err);
		for (size_t k = 0; k < w->staged.len && !rc; k++) {
			const char *key = w->staged.items[k];
			if (state == FDL_GC_WORK_ENDED || (state == FDL_GC_WORK_ABANDONED && past_grace(g, key, &rc, err)))
				rc = gc_delete(g, &files, key, err);
			else if (!rc && state != FDL_GC_WORK_ABANDONED)
				rc = fdl_strlist_add(&files, key, err);
		}
		if (o)
			fdl_strarray_take(&o->files, &files);
		fdl_strlist_free(&files);
	}
	fdl_workrecs_free(&recs);
	return rc;
}

/* History packs no index names (an interrupted or raced index writer). */
static int gc_packs(gc_run *g, fdl_error *err)
{
	fdl_strlist packs = {0};
	int rc = fdl_history_unnamed_packs(&packs, g->repo, err);
	for (size_t i = 0; i < packs.len && !rc; i++)
		if (past_grace(g, packs.items[i], &rc, err)) /* else perhaps a running writer's, about to be named */
			rc = gc_delete(g, &g->deleted, packs.items[i], err);
	fdl_strlist_free(&packs);
	return rc;
}

/* Incomplete version directories (no version.json) past the grace period. */
static int gc_incomplete(gc_run *g, vdirs *dirs, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < dirs->len && !rc; i++) {
		vdir *d = &dirs->items[i];
		if (fdl_vdir_has(d, FDL_VERSION_JSON) || expired(d)) /* a withdrawal's record stays */
			continue;
		bool old = true;
		for (size_t k = 0; k < d->files.len && old; k++) {
			char *key = fdl_version_key(d->id, d->files.items[k]);
			fdl_error e;
			int krc = 0;
			old = key && past_grace(g, key, &krc, &e);
			free(key);
		}
		if (!old)
			continue;
		if ((rc = fdl_strlist_add(&g->incomplete, d->id, err)))
			break;
		for (size_t k = 0; k < d->files.len && !rc && !g->dry_run; k++)
			rc = del_owned(g->repo, fdl_version_key(d->id, d->files.items[k]), err);
	}
	return rc;
}

/* Every file a live version's catalog references (sorted). */
static int live_files(fdl_strlist *keep, fdl_repo *repo, vdirs *dirs, fdl_error *err)
{
	fdl_duck *duck = NULL;
	int rc = fdl_duck_new_lean(&duck, FDL_DUCK_SQLITE_LAKE, err); /* catalogs only */
	for (size_t i = 0; i < dirs->len && !rc; i++) {
		vdir *d = &dirs->items[i];
		if (!d->v || expired(d))
			continue;
		if (!fdl_vdir_has(d, fdl_version_catalog_path(d->v)))
			rc = fdl_fail(err, FDL_EINVALID,
				      "version %s is live but its catalog is missing, so gc cannot tell which data files "
				      "it needs; fix the repository (fdl verify) first",
				      d->id);
		else
			rc = fdl__version_files(keep, repo, duck, dirs, d, false, err);
	}
	fdl_duck_free(duck);
	fdl_strlist_sort(keep);
	return rc;
}

int fdl_gc(fdl_gc_report **out, fdl_repo *repo, const fdl_gc_options *opts, fdl_error *err)
{
	if (opts && fdl_options_check(opts->version, FDL_GC_OPTIONS_VERSION, "fdl_gc", "fdl_gc_options", err))
		return FDL_EINVALID;
	int64_t grace_seconds = opts ? opts->grace_seconds : FDL_GC_GRACE_DEFAULT;
	int dry_run = opts ? opts->dry_run : 0;
	/* first, as git gc writes the commit-graph: every branch's history
	 * index brought up to its ref (written whole for a repository that has
	 * none); derived, so a branch it cannot index is left without one */
	/* before that, the first write: previews of gone versions a
	 * withdrawal or expiry cut short left (their rows) */
	if (!dry_run && fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_SWEEP}, err))
		return err->code;
	if (!dry_run)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_REINDEX}, NULL);
	gc_run g = {.repo = repo, .now = (int64_t)time(NULL), .grace = grace_seconds, .dry_run = dry_run,
		    .report = calloc(1, sizeof *g.report)};
	vdirs dirs = {0};
	fdl_strlist keep = {0};
	if (!g.report)
		return fdl_oom(err);
	/* views list only live versions (expire keeps them so): before any data goes */
	int rc = dry_run ? 0 : fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_REMOVAL}, err);
	if (!rc)
		rc = fdl_vdirs_list(&dirs, NULL, NULL, repo, err);
	if (!rc)
		rc = fdl_vdirs_read(&dirs, NULL, repo, err);
	/* the ref list written whole, as the history index is (derived: its
	 * failure costs readers of a static host only); no branch again */
	const fdl_strlist none = {0};
	if (!rc && !dry_run)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_REINDEX, .refs = &none, .dirs = &dirs}, NULL);
	if (!rc)
		rc = live_files(&keep, repo, &dirs, err);
	if (!rc)
		rc = gc_data(&g, &keep, err);
	if (!rc)
		rc = gc_work(&g, err);
	if (!rc)
		rc = gc_packs(&g, err);
	if (!rc)
		rc = gc_incomplete(&g, &dirs, err);
	if (!rc) {
		g.report->dry_run = dry_run;
		g.report->grace_seconds = grace_seconds;
		fdl_strarray_take(&g.report->deleted, &g.deleted);
		fdl_strarray_take(&g.report->incomplete_versions, &g.incomplete);
		fdl_strarray_take(&g.report->left_alone, &g.left_alone);
		*out = g.report;
	} else {
		fdl_gc_report_free(g.report);
	}
	fdl_strlist_free(&g.deleted);
	fdl_strlist_free(&g.incomplete);
	fdl_strlist_free(&g.left_alone);
	fdl_strlist_free(&keep);
	fdl_vdirs_free(&dirs);
	return rc;
}
