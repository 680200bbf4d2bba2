/* fdl withdraw: a version's data taken away, with every version that
 * references it; refused while a live version still returns its rows, and
 * the statements (or --clean) that publish one without them. */
#include "lifecycle.h"
#include "derived.h"
#include "report.h"
#include "work.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>


/* Did a withdrawal of `id` already mark d (expired.json written, perhaps
 * with deletions left to do)? */
static bool withdrawn_with(fdl_repo *repo, const vdir *d, const char *id)
{
	if (!expired(d))
		return false;
	char *key = fdl_version_key(d->id, FDL_EXPIRED_JSON);
	fdl_buf b = {0};
	bool yes = false;
	json_t *j = NULL;
	const char *reason, *when;
	fdl_error e;
	/* read as every expired.json is (fdl_expired_parse): a withdrawal's
	 * record names the version it was withdrawn with */
	if (key && fdl_store_get(repo->store, key, 1 << 24, &b, NULL, NULL) == 0 &&
	    !fdl_json_parse(&j, b.data, b.len, key, &e) && !fdl_expired_parse(&reason, &when, j, key, &e) &&
	    !strcmp(reason, "withdrawn")) {
		const char *w = json_string_value(json_object_get(j, "withdrawn_with"));
		yes = w && !strcmp(w, id);
	}
	json_decref(j);
	fdl_buf_free(&b);
	free(key);
	return yes;
}

/* What a withdrawal works from: the versions, which of them it takes
 * (`hit`), and the data files the named versions added. */
typedef struct wd_plan {
	fdl_repo *repo;
	vdirs dirs;
	fdl_duck *duck;
	const char *const *ids;
	size_t n;
	fdl_strlist files; /* sorted, unique */
	bool *hit;         /* per dirs.items[i] */
} wd_plan;

/* The data files version `id` added: from its catalog, or from the record
 * of an earlier (interrupted) withdrawal. */
static int wd_added(wd_plan *w, const vdir *target, fdl_strlist *files, fdl_error *err)
{
	const char *id = target->id;
	if (!expired(target)) {
		if (!target->v)
			return fdl_fail(err, FDL_EINVALID, "version %s has no readable " FDL_VERSION_JSON, id);
		/* the files it references and its parent does not: those with the
		 * snapshots it added, and those a merge in it wrote (which begin
		 * where the rows they took began) */
		const char *parent = fdl_version_parent(target->v, 0);
		const vdir *pd = parent ? fdl_vdirs_find(&w->dirs, parent) : NULL;
		if (!pd || !pd->v || expired(pd) || !fdl_vdir_has(pd, fdl_version_catalog_path(pd->v)))
			return fdl__version_files(files, w->repo, w->duck, &w->dirs, target, true, err);
		fdl_strlist mine = {0}, theirs = {0};
		int rc = fdl__version_files(&mine, w->repo, w->duck, &w->dirs, target, false, err);
		if (!rc)
			rc = fdl__version_files(&theirs, w->repo, w->duck, &w->dirs, pd, false, err);
		fdl_strlist_sort(&theirs);
		for (size_t i = 0; i < mine.len && !rc; i++)
			if (!fdl_strlist_has_sorted(&theirs, mine.items[i]))
				rc = fdl_strlist_add(files, mine.items[i], err);
		fdl_strlist_free(&mine);
		fdl_strlist_free(&theirs);
		return rc;
	}
	char *key = fdl_version_key(id, FDL_EXPIRED_JSON);
	fdl_buf b = {0};
	json_t *j = NULL;
	int rc = key ? fdl_store_get(w->repo->store, key, 1 << 24, &b, NULL, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_json_parse(&j, b.data, b.len, key, err);
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(j, "data_files"), i, f) rc = rc ? rc : fdl_strlist_add(files, json_string_value(f), err);
	if (!rc && !json_is_array(json_object_get(j, "data_files")))
		rc = fdl_fail(err, FDL_EINVALID, "version %s already left retention; its catalog is gone, so fdl cannot "
			      "tell which data files it added", id);
	json_decref(j);
	fdl_buf_free(&b);
	free(key);
	return rc;
}

/* Mark the versions the withdrawal takes: the named ones, those an
 * interrupted run of it already marked, and every live version whose
 * catalog references one of the files. */
static int wd_hits(wd_plan *w, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < w->dirs.len && !rc; i++) {
		vdir *d = &w->dirs.items[i];
		bool hit = false;
		for (size_t k = 0; k < w->n && !hit; k++)
			hit = !strcmp(d->id, w->ids[k]) || withdrawn_with(w->repo, d, w->ids[k]);
		if (!hit && d->v && !expired(d) && fdl_vdir_has(d, fdl_version_catalog_path(d->v))) {
			fdl_strlist refs = {0};
			rc = fdl__version_files(&refs, w->repo, w->duck, &w->dirs, d, false, err);
			for (size_t k = 0; k < refs.len && !hit; k++)
				hit = fdl_strlist_has_sorted(&w->files, refs.items[k]);
			fdl_strlist_free(&refs);
		}
		w->hit[i] = hit;
	}
	return rc;
}

static bool wd_is_hit(const wd_plan *w, const char *id)
{
	for (size_t i = 0; i < w->dirs.len; i++)
		if (!strcmp(w->dirs.items[i].id, id))
			return w->hit[i];
	return false;
}

/* Every branch and tag that names a version the withdrawal takes. */
static int wd_refs(wd_plan *w, fdl_strlist *out, fdl_error *err)
{
	fdl_refs refs;
	int rc = fdl_refs_all(&refs, w->repo, true, err);
	for (size_t i = 0; i < refs.names.len && !rc; i++)
		if (wd_is_hit(w, refs.ids[i]))
			rc = fdl_strlist_add(out, refs.names.items[i], err);
	fdl_refs_free(&refs);
	return rc;
}

static int by_seq(const void *a, const void *b, void *arg)
{
	const vdirs *dirs = arg;
	const vdir *x = &dirs->items[*(const size_t *)a], *y = &dirs->items[*(const size_t *)b];
	int64_t sx = x->v ? fdl_version_seq(x->v) : 0, sy = y->v ? fdl_version_seq(y->v) : 0;
	return sx < sy ? -1 : sx > sy;
}

/* Whether d descends from `id` (any parent, any distance): versions taken
 * by seq, each after its first parent. */
static int wd_descendants(const wd_plan *w, const char *id, bool *desc, fdl_error *err)
{
	size_t n = w->dirs.len;
	size_t *order = calloc(n ? n : 1, sizeof *order);
	if (!order)
		return fdl_oom(err);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, by_seq, (void *)&w->dirs); /* unreadable ones first */
	for (size_t o = 0; o < n; o++) {
		const vdir *d = &w->dirs.items[order[o]];
		desc[order[o]] = false;
		for (size_t p = 0; d->v && p < fdl_version_parent_count(d->v) && !desc[order[o]]; p++) {
			const char *parent = fdl_version_parent(d->v, p);
			const vdir *pd = fdl_vdirs_find((vdirs *)&w->dirs, parent);
			desc[order[o]] = !strcmp(parent, id) || (pd && desc[pd - w->dirs.items]);
		}
	}
	free(order);
	return 0;
}
/* Version d attached through DuckLake as `alias`, its catalog checked. */
static int wd_attach(wd_plan *w, const vdir *d, const char *alias, fdl_error *err)
{
	char *local = NULL;
	int rc = fdl_version_fetch_catalog(&local, w->repo, d->v, err);
	if (!rc) /* its rows are read: what it names is checked first */
		rc = fdl_catalog_version_confined(NULL, w->duck, NULL, local, w->repo->store, w->repo->data_dir,
						  fdl_version_id(d->v), err);
	if (!rc)
		rc = fdl_catalog_attach_lake(w->duck, alias, local, w->repo->data_url, err);
	free(local);
	return rc;
}

static bool has_catalog(const vdir *d)
{
	return d && d->v && !expired(d) && fdl_vdir_has(d, fdl_version_catalog_path(d->v));
}

/* The aliases the k-th named version and its parent are attached as, in
 * fdl's DuckDB and in the statements given to the publisher. */
static void wd_aliases(char v[32], char p[32], size_t k, size_t n)
{
	unsigned i = (unsigned)(k % 1000) + 1;
	if (n > 1) {
		snprintf(v, 32, "fdl_withdrawn_%u", i);
		snprintf(p, 32, "fdl_parent_%u", i);
	} else {
		snprintf(v, 32, "fdl_withdrawn");
		snprintf(p, 32, "fdl_parent");
	}
}

/* The k-th named version, if live, its first parent if that has a catalog,
 * both attached (*wv says so), and the tables it added rows to (`counts`,
 * may be NULL: how many to each). *v NULL: nothing to do. */
static int wd_open(wd_plan *w, size_t k, const vdir **v, fdl_wd_version *wv, char va[32], char pa[32],
		   fdl_strlist *tables, fdl_strmap *counts, fdl_error *err)
{
	wd_aliases(va, pa, k, w->n);
	*v = fdl_vdirs_find(&w->dirs, w->ids[k]);
	memset(wv, 0, sizeof *wv);
	if (!has_catalog(*v)) {
		*v = NULL;
		return 0;
	}
	const char *parent = fdl_version_parent((*v)->v, 0);
	const vdir *pd = parent ? fdl_vdirs_find(&w->dirs, parent) : NULL;
	int rc = wd_attach(w, *v, va, err);
	if (!rc && has_catalog(pd) && !(rc = wd_attach(w, pd, pa, err)))
		wv->p = pa;
	wv->v = va;
	wv->from = fdl_vdirs_added_from(&w->dirs, *v);
	wv->to = fdl_version_snapshot_id((*v)->v);
	if (!rc)
		rc = fdl_catalog_new_row_tables(tables, counts, w->duck, wv, err);
	return rc;
}

static void wd_close(wd_plan *w, const fdl_wd_version *wv)
{
	if (wv->v)
		fdl_catalog_detach(w->duck, wv->v, NULL);
	if (wv->p)
		fdl_catalog_detach(w->duck, wv->p, NULL);
}

/* Honest withdrawal: every live version that descends from a named one and
 * that the withdrawal does not take, asked whether it still returns rows
 * the named one added; the statements that delete those rows in a working
 * catalog, and how many each table has. */
static int wd_left(wd_plan *w, fdl_withdraw_report *report, fdl_buf *cleanup, fdl_error *err)
{
	bool *desc = calloc(w->dirs.len ? w->dirs.len : 1, sizeof *desc);
	int rc = desc ? 0 : fdl_oom(err);
	for (size_t k = 0; k < w->n && !rc; k++) {
		const vdir *v = NULL;
		fdl_wd_version wv;
		fdl_strlist tables = {0};
		fdl_strmap counts = {0};
		char va[32], pa[32];
		rc = wd_open(w, k, &v, &wv, va, pa, &tables, &counts, err);
		if (!rc && v)
			rc = wd_descendants(w, v->id, desc, err);
		for (size_t i = 0; i < w->dirs.len && !rc && v && tables.len; i++) {
			const vdir *l = &w->dirs.items[i];
			if (!desc[i] || w->hit[i] || !has_catalog(l))
				continue;
			if ((rc = wd_attach(w, l, "fdl_live", err)))
				break;
			for (size_t t = 0; t < tables.len && !rc; t++) {
				int64_t n = 0;
				rc = fdl_catalog_rows_left(&n, w->duck, &wv, "fdl_live", tables.items[t], err);
				if (!rc && n > 0)
					rc = fdl_withdraw_left_add(report, l->id, v->id, tables.items[t], n, err);
			}
			fdl_catalog_detach(w->duck, "fdl_live", NULL);
		}
		for (size_t t = 0; t < tables.len && !rc; t++) {
			int64_t n = 0;
			fdl_strmap_get(&counts, tables.items[t], &n);
			rc = fdl_catalog_clean_sql(cleanup, w->duck, &wv, "lake", tables.items[t], false, err);
			if (!rc)
				rc = fdl_withdraw_added_add(report, v->id, tables.items[t], n, err);
		}
		wd_close(w, &wv);
		fdl_strlist_free(&tables);
		fdl_strmap_free(&counts);
	}
	free(desc);
	return rc;
}

/* The publisher's way to a version without the rows, before withdrawing. */
static int wd_cleanup_text(char **out, const wd_plan *w, const char *sql, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_buf_printf(&b, err,
				"-- In a working catalog of the branch (fdl checkout %s WORK --ref BRANCH), with, beside "
				"its ATTACH as lake,\n",
				w->repo->root);
	for (size_t k = 0; k < w->n && !rc; k++) {
		char va[32], pa[32];
		wd_aliases(va, pa, k, w->n);
		const vdir *v = fdl_vdirs_find((vdirs *)&w->dirs, w->ids[k]);
		const char *parent = v && v->v ? fdl_version_parent(v->v, 0) : NULL;
		rc = fdl_buf_printf(&b, err, "-- the SQL of: fdl attach %s %s --as %s\n", w->repo->root, w->ids[k], va);
		if (!rc && parent)
			rc = fdl_buf_printf(&b, err, "--         and fdl attach %s %s --as %s\n", w->repo->root, parent, pa);
	}
	if (!rc)
		rc = fdl_buf_puts(&b, sql, err);
	if (!rc)
		rc = fdl_buf_printf(&b, err,
				    "CALL ducklake_expire_snapshots('lake', older_than => now());\n"
				    "-- (or all of it at once: fdl withdraw %s VERSION... --reason TEXT --clean WORK), then "
				    "fdl commit WORK, then withdraw again.\n",
				    w->repo->root);
	if (rc) {
		fdl_buf_free(&b);
		return rc;
	}
	*out = fdl_buf_detach(&b);
	return 0;
}

/* Why the withdrawal must not go ahead (NULL: it may). */
static char *wd_refusal(const fdl_withdraw_report *r, int force)
{
	if (r->left_count) {
		const fdl_withdraw_left *l = &r->left[0];
		return fdl_asprintf("live version %s still returns %lld row%s of %s that version %s added (a CHECKPOINT or "
				    "ducklake_merge_adjacent_files copied them into another data file)%s: withdrawing %s "
				    "alone would leave them published. Withdraw %s with it; where that is a branch tip, "
				    "publish a version without the rows first (the statements below, or --clean WORK) so "
				    "the branch moves past it",
				    l->id, (long long)l->rows, l->rows == 1 ? "" : "s", l->table, l->from,
				    r->left_count > 1 ? ", and so do the others listed" : "", l->from,
				    r->left_count > 1 ? "those versions" : "that version");
	}
	if (r->refs.count && !force)
		return fdl_asprintf("%s names a version this would withdraw%s: it would point at data no one can read. "
				    "Publish a version without the rows first (the statements below, or --clean WORK) so "
				    "the branch moves past it, delete a tag (fdl tag ROOT --delete NAME), or withdraw "
				    "anyway with --force",
				    r->refs.strings[0], r->refs.count > 1 ? ", and so do the other refs listed" : "");
	return NULL;
}

/* The versions the withdrawal takes, through the seam before anything
 * of theirs is written: no crash leaves their rows in a preview. */
static int wd_going(const wd_plan *w, fdl_error *err)
{
	fdl_strlist ids = {0};
	int rc = 0;
	for (size_t i = 0; i < w->dirs.len && !rc; i++)
		if (w->hit[i])
			rc = fdl_strlist_add(&ids, w->dirs.items[i].id, err);
	if (!rc)
		rc = fdl_ref_moved(w->repo, &(fdl_ref_move){.what = FDL_MOVE_GOING, .ids = &ids}, err);
	fdl_strlist_free(&ids);
	return rc;
}

/* Carry out a withdrawal planned in w: the previews and pages of the
 * versions it takes, then expired.json on each (version.json last), then
 * the data files, then version.json of the named versions when asked. */
static int wd_apply(wd_plan *w, fdl_withdraw_report *report, const fdl_withdraw_options *o, fdl_error *err)
{
	json_t *data = fdl__strlist_json(&w->files);
	int rc = data ? 0 : fdl_oom(err);
	if (!rc && !o->dry_run) /* their previews and pages go before their expired.json */
		rc = wd_going(w, err);
	for (size_t i = 0; i < w->dirs.len && !rc; i++) {
		vdir *d = &w->dirs.items[i];
		if (!w->hit[i])
			continue;
		fdl_strlist removed = {0};
		bool named = false;
		for (size_t k = 0; k < w->n; k++)
			named |= !strcmp(d->id, w->ids[k]);
		rc = fdl__catalog_files(&removed, d, err);
		if (!rc && !o->dry_run) {
			/* version.json goes last, after everything else of the withdrawal */
			json_t *extra = json_pack("{s:O, s:s}", "data_files", data, "withdrawn_with", w->ids[0]);
			rc = extra ? fdl__expire_one(w->repo, d, "withdrawn", o->reason, extra, &removed,
						!(named && o->remove_version_json), err)
				   : fdl_oom(err);
			json_decref(extra);
		}
		if (!rc && named && o->remove_version_json && fdl_vdir_has(d, FDL_VERSION_JSON))
			rc = fdl_strlist_add(&removed, FDL_VERSION_JSON, err);
		if (!rc)
			rc = fdl_removals_add(&report->versions, &report->version_count, d->id, &removed, err);
		fdl_strlist_free(&removed);
	}
	json_decref(data);
	if (!rc && !o->dry_run) /* no view leads to the data, before it goes */
		rc = fdl_ref_moved(w->repo, &(fdl_ref_move){.what = FDL_MOVE_REMOVAL}, err);
	for (size_t i = 0; i < w->files.len && !rc && !o->dry_run; i++)
		rc = del_owned(w->repo, fdl_asprintf("%s/%s", w->repo->data_dir, w->files.items[i]), err);
	/* the history index holds a copy of every version.json: it goes
	 * before and after the file itself (a commit in between may have
	 * written it again) */
	if (!rc && !o->dry_run && o->remove_version_json) {
		const fdl_ref_move drop = {.what = FDL_MOVE_DROP_HISTORY};
		rc = fdl_ref_moved(w->repo, &drop, err);
		for (size_t k = 0; k < w->n && !rc; k++)
			rc = del_owned(w->repo, fdl_version_key(w->ids[k], FDL_VERSION_JSON), err);
		if (!rc)
			rc = fdl_ref_moved(w->repo, &drop, err);
	}
	return rc;
}

/* Read the versions, the named ones' data files, which versions go. */
static int wd_prepare(wd_plan *w, fdl_error *err)
{
	int rc = fdl_vdirs_list(&w->dirs, NULL, NULL, w->repo, err);
	if (!rc)
		rc = fdl_vdirs_read(&w->dirs, NULL, w->repo, err);
	if (!rc)
		rc = fdl_duck_new(&w->duck, true, err);
	if (!rc)
		rc = fdl_duck_use_data(w->duck, w->repo->data_url, w->repo->store, err);
	fdl_strlist files = {0};
	for (size_t k = 0; k < w->n && !rc; k++) {
		const vdir *target = fdl_vdirs_find(&w->dirs, w->ids[k]);
		rc = target ? wd_added(w, target, &files, err)
			    : fdl_fail(err, FDL_ENOTFOUND, "version %s not found in %s", w->ids[k], w->repo->root);
	}
	fdl_strlist_sort(&files);
	for (size_t i = 0; i < files.len && !rc; i++)
		if (i == 0 || strcmp(files.items[i], files.items[i - 1]))
			rc = fdl_strlist_add(&w->files, files.items[i], err);
	fdl_strlist_free(&files);
	if (!rc && !(w->hit = calloc(w->dirs.len ? w->dirs.len : 1, sizeof *w->hit)))
		rc = fdl_oom(err);
	if (!rc)
		rc = wd_hits(w, err);
	return rc;
}

int fdl_withdraw(fdl_withdraw_report **out, fdl_repo *repo, const char *const *ids, size_t n,
		 const fdl_withdraw_options *o, fdl_error *err)
{
	if (o && fdl_options_check(o->version, FDL_WITHDRAW_OPTIONS_VERSION, "fdl_withdraw", "fdl_withdraw_options", err))
		return FDL_EINVALID;
	if (!o || !o->reason || !*o->reason)
		return fdl_fail(err, FDL_EINVALID, "a withdrawal needs a reason (--reason TEXT)");
	if (!n)
		return fdl_fail(err, FDL_EINVALID, "a withdrawal needs a version");
	fdl_withdraw_report *report = calloc(1, sizeof *report);
	if (!report)
		return fdl_oom(err);
	report->dry_run = o->dry_run;
	snprintf(report->withdrawn, sizeof report->withdrawn, "%s", ids[0]);
	wd_plan w = {.repo = repo, .ids = ids, .n = n};
	fdl_strlist refs = {0};
	fdl_buf sql = {0};
	int rc = wd_prepare(&w, err);
	if (!rc)
		rc = wd_refs(&w, &refs, err);
	if (!rc)
		fdl_strarray_take(&report->refs, &refs);
	/* before anything is deleted: who else still returns the rows */
	if (!rc)
		rc = wd_left(&w, report, &sql, err);
	if (!rc && sql.len)
		rc = wd_cleanup_text(&report->cleanup, &w, sql.data, err);
	if (!rc)
		report->refused = wd_refusal(report, o->force);
	/* a refused withdrawal writes nothing: its plan is reported as a dry run's */
	fdl_withdraw_options as_run = *o;
	as_run.dry_run = o->dry_run || report->refused;
	if (!rc)
		rc = wd_apply(&w, report, &as_run, err);
	if (!rc)
		fdl_strarray_take(&report->data_files, &w.files);
	bool refused = !rc && report->refused && !o->dry_run;
	if (refused) {
		report->dry_run = 1;
		rc = fdl_fail(err, FDL_EINVALID, "refused: %s", report->refused);
	}
	fdl_duck_free(w.duck);
	fdl_buf_free(&sql);
	fdl_strlist_free(&refs);
	fdl_strlist_free(&w.files);
	free(w.hit);
	fdl_vdirs_free(&w.dirs);
	if (rc && !refused)
		fdl_withdraw_report_free(report);
	else
		*out = report;
	return rc;
}

/* Whether version `id` is `base` or one of its ancestors (first parents). */
static bool wd_holds(const vdirs *dirs, const char *base, const char *id)
{
	for (size_t hops = 0; base && *base && hops <= dirs->len; hops++) {
		if (!strcmp(base, id))
			return true;
		const vdir *d = fdl_vdirs_find((vdirs *)dirs, base);
		base = d && d->v ? fdl_version_parent(d->v, 0) : NULL;
	}
	return false;
}

int fdl_withdraw_clean_rows(fdl_withdraw_report **out, fdl_repo *repo, const char *const *ids, size_t n,
			    const char *work, const fdl_withdraw_options *o, fdl_error *err)
{
	*out = NULL;
	if (o && fdl_options_check(o->version, FDL_WITHDRAW_OPTIONS_VERSION, "fdl_withdraw_clean_rows",
				   "fdl_withdraw_options", err))
		return FDL_EINVALID;
	if (!n)
		return fdl_fail(err, FDL_EINVALID, "a clean-up needs a version");
	bool dry = o && o->dry_run;
	fdl_work wk;
	int rc = fdl_work_load(&wk, work, err);
	if (rc)
		return rc;
	fdl_withdraw_report *report = calloc(1, sizeof *report);
	wd_plan w = {.repo = repo, .ids = ids, .n = n};
	fdl_buf sql = {0};
	if (!report)
		rc = fdl_oom(err);
	else {
		report->dry_run = dry;
		snprintf(report->withdrawn, sizeof report->withdrawn, "%s", ids[0]);
	}
	if (!rc && strcmp(wk.repository, repo->root))
		rc = fdl_fail(err, FDL_EINVALID, "%s is a working catalog of %s, not of %s", work, wk.repository,
			      repo->root);
	if (!rc)
		rc = fdl_vdirs_list(&w.dirs, NULL, NULL, repo, err);
	if (!rc)
		rc = fdl_vdirs_read(&w.dirs, NULL, repo, err);
	/* row ids and snapshot ids name the same rows along one history only */
	for (size_t k = 0; k < n && !rc; k++)
		if (!fdl_vdirs_find(&w.dirs, ids[k]))
			rc = fdl_fail(err, FDL_ENOTFOUND, "version %s not found in %s", ids[k], repo->root);
		else if (!wd_holds(&w.dirs, wk.base, ids[k]))
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s (branch %s, from version %s) does not descend from version %s: it holds none "
				      "of the rows that version added; check out the branch that does",
				      work, wk.branch ? wk.branch : "?", wk.base[0] ? wk.base : "(none)", ids[k]);
	if (!rc)
		rc = fdl_duck_new(&w.duck, true, err);
	if (!rc)
		rc = fdl_duck_use_store(w.duck, repo->store, err);
	if (!rc)
		rc = fdl_catalog_attach_work(w.duck, "lake", wk.catalog, wk.postgres ? FDL_CAT_POSTGRES : FDL_CAT_SQLITE,
					     wk.data_path, err);
	for (size_t k = 0; k < n && !rc; k++) {
		const vdir *v = NULL;
		fdl_wd_version wv;
		fdl_strlist tables = {0};
		char va[32], pa[32];
		rc = wd_open(&w, k, &v, &wv, va, pa, &tables, NULL, err);
		if (!rc && !v)
			rc = fdl_fail(err, FDL_EEXPIRED, "version %s is not live any more: its rows are not known", ids[k]);
		for (size_t t = 0; t < tables.len && !rc; t++) {
			int64_t rows = 0;
			rc = fdl_catalog_clean_count(&rows, w.duck, &wv, "lake", tables.items[t], err);
			if (!rc)
				rc = fdl_withdraw_added_add(report, v->id, tables.items[t], rows, err);
			if (!rc)
				rc = fdl_catalog_clean_sql(&sql, w.duck, &wv, "lake", tables.items[t], true, err);
			if (!rc && !dry)
				rc = fdl_catalog_clean(w.duck, &wv, "lake", tables.items[t], err);
		}
		wd_close(&w, &wv);
		fdl_strlist_free(&tables);
	}
	/* the snapshots before, which still hold the rows, go from the catalog
	 * (their published files stay: fdl keeps DuckLake off them) */
	if (!rc && !dry)
		rc = fdl_catalog_expire_before_latest(w.duck, "lake", err);
	if (!rc && sql.len && !(report->cleanup = fdl_buf_detach(&sql)))
		rc = fdl_oom(err);
	if (rc)
		fdl_error_prefix(err, "cleaning the working catalog %s", work);
	fdl_buf_free(&sql);
	fdl_duck_free(w.duck);
	fdl_vdirs_free(&w.dirs);
	fdl_work_free(&wk);
	if (rc)
		fdl_withdraw_report_free(report);
	else
		*out = report;
	return rc;
}

int fdl_withdraw_clean(fdl_repo *repo, const char *const *ids, size_t n, const char *work, fdl_error *err)
{
	fdl_withdraw_report *r = NULL;
	int rc = fdl_withdraw_clean_rows(&r, repo, ids, n, work, NULL, err);
	fdl_withdraw_report_free(r);
	return rc;
}
