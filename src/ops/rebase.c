/*
 * fdl rebase: a working catalog moved onto a later version of its branch,
 * the snapshots it made since its base replayed on top (the plan and the
 * replay are the catalog layer's: catalog/rebase.c, catalog/replay.c); and
 * fdl commit --rebase, which rebases after a lost race and commits again.
 *
 * Order of writes: the rebased catalog, the description and the record are
 * made in a fresh folder beside WORK, which gets WORK's other files as hard
 * links; the two folders are then swapped in one step (renameat2
 * RENAME_EXCHANGE) and the old one removed. Killed at any point, WORK is
 * as it was or fully rebased; what a killed rebase left beside it is
 * removed by the next one. A delete file written again goes to the
 * working catalog's data path (its own folder, work/<id>/) under a new
 * name, referenced by nothing until the swap; the one it replaces is
 * removed after it. The rebased catalog keeps WORK's id, so its folder and
 * the repository's record of it (renewed with the new base) stay its own,
 * and records the new base's files by their place in the data folder
 * behind the trigger that keeps DuckLake off them, as checkout does.
 */
#include "../catalog/catalog.h"
#include "../layout/dataset.h"
#include "work.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* What a rebase works with, from the record read under WORK's lock to the
 * folder it builds. */
typedef struct rebase_job {
	fdl_work w;
	fdl_repo *repo;
	char target[FDL_ID_LEN + 1];
	char *sibling;   /* where the rebased folder is built */
	fdl_work seed;   /* the new catalog: sibling/ducklake.sqlite, based on target */
	bool regenerate; /* dataset.yml written again from the target's description */
	fdl_strlist replaced; /* the working catalog's delete files written again (relative to its data path) */
} rebase_job;

static void crash_point(void *payload)
{
	fdl_store_before_write(payload);
}

/* ---- where to ---------------------------------------------------------------------- */

static int target_of(rebase_job *j, const fdl_rebase_options *opts, fdl_error *err)
{
	if (opts && opts->onto)
		return fdl_ref_resolve(j->target, j->repo, opts->onto, err);
	char *key = NULL;
	bool exists = false;
	int rc = fdl_ref_branch_key(&key, j->w.branch, err);
	if (!rc)
		rc = fdl_ref_read(j->repo, key, j->target, &exists, NULL, err);
	if (!rc && !exists)
		rc = fdl_fail(err, FDL_ENOTFOUND, "branch %s has no version to rebase onto", j->w.branch);
	free(key);
	return rc;
}

/* The target must descend from the base: its first parents lead there. */
static int descends(fdl_repo *repo, const char *tip, const char *base, fdl_error *err)
{
	if (!base[0])
		return 0; /* checked out from an empty branch: every version follows it */
	fdl_version *b = NULL;
	int rc = fdl_version_read(&b, repo, base, err);
	int64_t seq = rc ? 0 : fdl_version_seq(b);
	fdl_version_free(b);
	char id[FDL_ID_LEN + 1];
	snprintf(id, sizeof id, "%s", tip);
	while (!rc && strcmp(id, base)) {
		fdl_version *v = NULL;
		if ((rc = fdl_version_read(&v, repo, id, err)))
			break;
		const char *parent = fdl_version_parent(v, 0);
		if (fdl_version_seq(v) <= seq || !parent)
			rc = fdl_fail(err, FDL_EINVALID,
				      "version %s does not descend from %s, the working catalog's base: rebase onto a "
				      "later version of its history, or check out again",
				      tip, base);
		else
			snprintf(id, sizeof id, "%s", parent);
		fdl_version_free(v);
	}
	return rc;
}

/* What killed rebases left beside WORK (".<name>.fdl-rebase-*"): under
 * WORK's lock, no other rebase of it runs. */
static void sweep(const char *work)
{
	const char *slash = strrchr(work, '/');
	char *parent = slash && slash != work ? strndup(work, (size_t)(slash - work)) : fdl_strdup("/");
	char *prefix = fdl_asprintf(".%s.fdl-rebase-", slash ? slash + 1 : work);
	DIR *d = parent && prefix ? opendir(parent) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			char *p = fdl_asprintf("%s/%s", parent, e->d_name);
			if (p)
				fdl_rm_rf(p);
			free(p);
		}
	if (d)
		closedir(d);
	free(parent);
	free(prefix);
}

/* ---- the description --------------------------------------------------------------- */

/* The part of version id's dataset.json a publisher writes (NULL: none). */
static int user_part(json_t **out, fdl_repo *repo, const char *id, fdl_error *err)
{
	*out = NULL;
	if (!id[0])
		return 0;
	fdl_version *v = NULL;
	json_t *ds = NULL;
	int rc = fdl_version_read(&v, repo, id, err);
	if (!rc)
		rc = fdl_version_load_json(&ds, repo, v, "dataset", err);
	if (rc == FDL_ENOTFOUND && v) { /* older than dataset.json */
		fdl_error_clear(err);
		rc = 0;
	}
	if (!rc && ds && !(*out = fdl_dataset_user_part(ds)))
		rc = fdl_oom(err);
	json_decref(ds);
	fdl_version_free(v);
	return rc;
}

/* A dataset.yml as checkout wrote it (or none at all) is the base's
 * description carried along: written again from the target's. One edited
 * here goes along as it is, unless the target's description changed too:
 * a conflict (*conflict). */
static int description_plan(rebase_job *j, bool *conflict, fdl_error *err)
{
	const char *tops[] = {"dataset.yml", "dataset.yaml", FDL_DATASET_JSON};
	bool any = false, edited = false;
	for (size_t i = 0; i < 3; i++) {
		char *p = fdl_asprintf("%s/%s", j->w.dir, tops[i]);
		fdl_buf b = {0};
		fdl_error e;
		if (!p)
			return fdl_oom(err);
		if (fdl_file_read(&b, p, 64u << 20, &e) == 0) {
			char hex[65] = "";
			any = true;
			edited = edited || i > 0 || fdl_sha256_mem(hex, b.data, b.len, &e) != 0 ||
				 strcmp(hex, j->w.description_sha256) != 0;
		}
		fdl_buf_free(&b);
		free(p);
	}
	j->regenerate = !any || !edited;
	*conflict = false;
	if (j->regenerate)
		return 0;
	json_t *mine = NULL, *theirs = NULL;
	int rc = user_part(&mine, j->repo, j->w.base, err);
	if (!rc)
		rc = user_part(&theirs, j->repo, j->target, err);
	*conflict = !rc && !json_equal(mine, theirs) && (mine || theirs);
	json_decref(mine);
	json_decref(theirs);
	return rc;
}

/* ---- the conflicts ----------------------------------------------------------------- */

static int report_conflicts(fdl_rebase_report *r, const json_t *list, bool description, fdl_error *err)
{
	size_t n = json_array_size(list) + (description ? 1 : 0);
	if (!(r->conflicts = calloc(n ? n : 1, sizeof *r->conflicts)))
		return fdl_oom(err);
	for (size_t i = 0; i < n; i++) {
		const json_t *c = json_array_get(list, i);
		fdl_rebase_conflict *o = &r->conflicts[r->conflict_count++];
		const char *t = c ? json_string_value(json_object_get(c, "table")) : NULL;
		o->table = t ? fdl_strdup(t) : NULL;
		o->kind = fdl_strdup(c ? json_string_value(json_object_get(c, "kind")) : "description");
		o->detail = fdl_strdup(c ? json_string_value(json_object_get(c, "detail"))
					 : "dataset.yml edited here, and the description changed on the tip");
		if (!o->kind || !o->detail || (t && !o->table))
			return fdl_oom(err);
	}
	return 0;
}

/* FDL_ECONFLICT with every conflict named, and what to do. */
static int conflict_message(const rebase_job *j, const fdl_rebase_report *r, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_buf_printf(&b, err, "cannot rebase %s onto %s: %zu conflict%s with what the tip changed since %s:",
				j->w.dir, j->target, r->conflict_count, r->conflict_count == 1 ? "" : "s",
				j->w.base[0] ? j->w.base : "the empty branch");
	for (size_t i = 0; !rc && i < r->conflict_count; i++)
		rc = fdl_buf_printf(&b, err, "\n  %s%s%s (%s)", r->conflicts[i].table ? r->conflicts[i].table : "",
				    r->conflicts[i].table ? ": " : "", r->conflicts[i].detail, r->conflicts[i].kind);
	if (!rc)
		rc = fdl_buf_puts(&b,
				  "\nNothing in the working catalog changed. Check out the branch again (fdl checkout) "
				  "and redo these changes there, or commit this catalog to another branch.",
				  err);
	if (!rc)
		fdl_fail(err, FDL_ECONFLICT, "%s", b.data);
	fdl_buf_free(&b);
	return rc ? rc : FDL_ECONFLICT;
}

/* ---- building the rebased catalog ------------------------------------------------- */

/* Attach what the plan compares: the working catalog, the new one (already
 * a copy of the target), and the base version's frozen catalog. */
static int attach_all(rebase_job *j, fdl_duck *d, bool *base, fdl_error *err)
{
	int rc = fdl_catalog_attach_raw(d, "fdl_old", j->w.catalog, FDL_CAT_SQLITE, true, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(d, "fdl_new", j->seed.catalog, FDL_CAT_SQLITE, false, err);
	*base = false;
	if (rc || !j->w.base[0])
		return rc;
	fdl_version *v = NULL;
	char *path = NULL;
	rc = fdl_version_read(&v, j->repo, j->w.base, err);
	if (!rc)
		rc = fdl_version_fetch_catalog(&path, j->repo, v, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(d, "fdl_base", path, FDL_CAT_DUCKDB, true, err);
	*base = !rc;
	fdl_version_free(v);
	free(path);
	return rc;
}

/* The new catalog in the sibling folder, seeded with the target and the
 * working catalog's snapshots replayed on it; FDL_ECONFLICT with the
 * conflicts in r. */
static int build(rebase_job *j, fdl_rebase_report *r, fdl_error *err)
{
	fdl_duck *d = NULL;
	bool base = false;
	fdl_rebase_plan p = {.work = "fdl_old", .onto = "fdl_new", .data_path = j->w.data_path,
			     .base = j->w.base[0] ? j->w.base_snapshot : 0, .before_write = crash_point,
			     .payload = j->repo->store};
	/* metadata only: the catalogs' rows are replayed, no data is read */
	int rc = fdl_duck_new_lean(&d, FDL_DUCK_SQLITE_LAKE, err);
	if (!rc)
		rc = fdl_duck_use_store(d, j->repo->store, err);
	if (!rc)
		rc = fdl_checkout_seed(d, j->repo, &j->seed, err);
	if (!rc)
		rc = attach_all(j, d, &base, err);
	if (!rc)
		rc = fdl_catalog_rebase_plan(&p, d, base ? "fdl_base" : NULL, err);
	if (base)
		fdl_catalog_detach(d, "fdl_base", NULL);
	bool described = false;
	if (!rc)
		rc = description_plan(j, &described, err);
	if (!rc && (json_array_size(p.conflicts) || described))
		rc = report_conflicts(r, p.conflicts, described, err) ? FDL_ENOMEM : FDL_ECONFLICT;
	if (!rc)
		rc = fdl_catalog_rebase_apply(&p, d, err);
	if (rc == FDL_ECONFLICT && !r->conflict_count && report_conflicts(r, p.conflicts, false, err))
		rc = FDL_ENOMEM;
	/* a session that wrote to WORK meanwhile would lose that write */
	fdl_catalog_info now;
	if (!rc && !(rc = fdl_catalog_info_read(d, "fdl_old", &now, err)) && now.last_snapshot != p.last)
		rc = fdl_fail(err, FDL_ECONFLICT, "%s changed while it was rebased (snapshot %lld was written); close "
			      "the DuckDB sessions writing to it and rebase again", j->w.dir, (long long)now.last_snapshot);
	if (!rc) {
		r->snapshots = p.last - p.base;
		r->delete_files = p.delete_files;
		j->replaced = p.replaced;
		memset(&p.replaced, 0, sizeof p.replaced);
	}
	fdl_rebase_plan_free(&p);
	fdl_duck_free(d);
	return rc;
}

/* The rest of the folder, the description and the record, then the swap. */
static int swap_in(rebase_job *j, fdl_error *err)
{
	const char *skip[] = {FDL_WORK_CATALOG, FDL_WORK_CATALOG "-wal", FDL_WORK_CATALOG "-shm",
			      FDL_WORK_CATALOG "-journal", FDL_WORK_FILE, j->regenerate ? "dataset.yml" : NULL, NULL};
	crash_point(j->repo->store);
	/* the trigger that keeps DuckLake off the published files, now that no
	 * DuckDB holds the new catalog */
	int rc = j->w.id[0] ? fdl_catalog_keep_published_sqlite(j->seed.catalog, err) : 0;
	if (!rc)
		rc = fdl_dir_link_tree(j->w.dir, j->sibling, skip, err);
	if (!rc && j->regenerate) {
		rc = fdl_checkout_description(&j->seed, j->repo, err);
		memcpy(j->w.description_sha256, j->seed.description_sha256, sizeof j->w.description_sha256);
		memcpy(j->w.description_from, j->seed.description_from, sizeof j->w.description_from);
	}
	if (!rc) {
		char *dir = j->w.dir;
		memcpy(j->w.base, j->target, sizeof j->w.base);
		j->w.base_snapshot = j->seed.base_snapshot;
		j->w.dir = j->sibling;
		rc = fdl_work_save(&j->w, err);
		j->w.dir = dir;
	}
	if (!rc) {
		crash_point(j->repo->store);
		rc = fdl_dir_exchange(j->sibling, j->w.dir, err);
	}
	if (!rc) { /* the sibling now holds the old folder */
		crash_point(j->repo->store);
		fdl_rm_rf(j->sibling);
	}
	return rc;
}

static void job_free(rebase_job *j)
{
	fdl_work_free(&j->w);
	fdl_work_free(&j->seed);
	fdl_repo_free(j->repo);
	free(j->sibling);
	fdl_strlist_free(&j->replaced);
}

/* Once swapped in, the delete files the rebase wrote again are referenced
 * by nothing: in the working catalog's own folder (work/<id>/), which gc
 * keeps while its record lives, they go now. (A working catalog from before
 * fdl kept records writes into the data folder: gc finds them there.) */
static int drop_replaced(rebase_job *j, fdl_error *err)
{
	if (!j->w.id[0] || !j->replaced.len)
		return 0;
	char *dir = fdl_workrec_staging(j->w.id);
	fdl_strlist keys = {0};
	int rc = dir ? 0 : fdl_oom(err);
	for (size_t i = 0; i < j->replaced.len && !rc; i++) {
		char *key = fdl_asprintf("%s/%s", dir, j->replaced.items[i]);
		rc = key ? fdl_strlist_add(&keys, key, err) : fdl_oom(err);
		free(key);
	}
	fdl_strlist_sort(&keys);
	if (!rc)
		rc = fdl_store_del_many(j->repo->store, (const char *const *)keys.items, keys.len, err);
	if (rc)
		fdl_error_prefix(err, "%s is rebased, but the delete files it replaced could not be removed from %s/%s",
				 j->w.dir, j->repo->root, dir);
	fdl_strlist_free(&keys);
	free(dir);
	return rc;
}

/* Open the repository and fill the report's ends; FDL_ENOCHANGE when WORK is
 * already based on the target. */
static int prepare(rebase_job *j, fdl_rebase_report *r, const fdl_rebase_options *opts, fdl_error *err)
{
	if (j->w.pending[0])
		return fdl_fail(err, FDL_EINVALID, "a commit of %s was interrupted after publishing version %s: run fdl "
				"commit %s first, then rebase", j->w.dir, j->w.pending, j->w.dir);
	int rc = fdl_repo_open(&j->repo, j->w.repository, err);
	if (!rc)
		rc = target_of(j, opts, err);
	if (!rc) {
		memcpy(r->from, j->w.base, sizeof r->from);
		memcpy(r->onto, j->target, sizeof r->onto);
	}
	if (!rc && !strcmp(j->target, j->w.base))
		return FDL_ENOCHANGE;
	if (!rc)
		rc = descends(j->repo, j->target, j->w.base, err);
	if (!rc) {
		crash_point(j->repo->store);
		rc = fdl_checkout_sibling(&j->sibling, j->w.dir, "rebase", err);
	}
	if (!rc) {
		j->seed.base_snapshot = -1;
		memcpy(j->seed.base, j->target, sizeof j->seed.base);
		j->seed.dir = fdl_strdup(j->sibling);
		j->seed.catalog = fdl_asprintf("%s/%s", j->sibling, FDL_WORK_CATALOG);
		j->seed.data_path = fdl_strdup(j->w.data_path);
		memcpy(j->seed.id, j->w.id, sizeof j->seed.id); /* the same folder work/<id>/, the same record */
		if (!j->seed.dir || !j->seed.catalog || !j->seed.data_path)
			rc = fdl_oom(err);
	}
	return rc;
}

int fdl_rebase(fdl_rebase_report **out, const char *work, const fdl_rebase_options *opts, fdl_error *err)
{
	*out = NULL;
	if (opts && fdl_options_check(opts->version, FDL_REBASE_OPTIONS_VERSION, "fdl_rebase", "fdl_rebase_options", err))
		return FDL_EINVALID;
	rebase_job j = {0};
	fdl_lockfile lock = {.fd = -1};
	fdl_workrec_seen seen = {0};
	char from[FDL_ID_LEN + 1] = "";
	fdl_rebase_report *r = calloc(1, sizeof *r);
	if (!r)
		return fdl_oom(err);
	int rc = fdl_work_load(&j.w, work, err);
	if (!rc && j.w.postgres)
		rc = fdl_fail(err, FDL_EINVALID,
			      "%s is a PostgreSQL working catalog, which needs no rebase: its writers share the one "
			      "catalog, and DuckLake orders their transactions itself (appends to one table go "
			      "through, conflicting changes fail in DuckDB). When fdl commit reports that another "
			      "commit of it won, run fdl commit again: it freezes the catalog, which already holds "
			      "both changes.",
			      work);
	if (!rc)
		rc = fdl_work_lock(&lock, &j.w, work, "fdl rebase", err);
	if (!rc)
		sweep(j.w.dir);
	if (!rc)
		rc = prepare(&j, r, opts, err);
	/* the repository's record of WORK: gone when the publisher abandoned
	 * it; renewed at the end, with the new base when the rebase is done */
	if ((!rc || rc == FDL_ENOCHANGE) && j.repo) {
		fdl_error rerr;
		int rrc = fdl_work_record_read(&seen, j.repo, &j.w, &rerr);
		if (rrc) {
			rc = rrc;
			*err = rerr;
		}
	}
	if (rc == FDL_ENOCHANGE) { /* already there: nothing to do */
		rc = 0;
		goto out;
	}
	memcpy(from, j.w.base, sizeof from);
	if (!rc)
		rc = build(&j, r, err);
	if (rc == FDL_ECONFLICT && r->conflict_count)
		rc = conflict_message(&j, r, err);
	if (!rc)
		rc = swap_in(&j, err);
	bool swapped = !rc;
	if (!rc)
		rc = drop_replaced(&j, err);
	if (rc && !swapped && j.sibling)
		fdl_rm_rf(j.sibling); /* only what this rebase made; WORK is as it was */
	if (!swapped)
		memcpy(j.w.base, from, sizeof from);
out:
	if (seen.doc) { /* j.w.base is the target once swapped in */
		fdl_error rerr;
		int rrc = fdl_work_record_touch(j.repo, &j.w, &seen, &rerr);
		if (rrc && !rc) {
			rc = rrc;
			*err = rerr;
			fdl_error_prefix(err, "%s is rebased onto %s, but refreshing the repository's record of it failed",
					 j.w.dir, j.target);
		}
	}
	fdl_workrec_seen_free(&seen);
	fdl_lockfile_release(&lock);
	job_free(&j);
	if (!rc || (rc == FDL_ECONFLICT && r->conflict_count))
		*out = r;
	else
		fdl_rebase_report_free(r);
	return rc;
}

int fdl_commit_rebase(char out_id[FDL_ID_LEN + 1], int *rebases, const char *work, const fdl_commit_options *opts,
		      int tries, fdl_error *err)
{
	bool postgres = !strncmp(work, FDL_PG_PREFIX, strlen(FDL_PG_PREFIX));
	if (rebases)
		*rebases = 0;
	for (int i = 1;; i++) {
		int rc = fdl_commit(out_id, work, opts, err);
		if (rc != FDL_ECONFLICT || i >= tries)
			return rc;
		if (postgres) /* the record moved with the winner: commit again */
			continue;
		fdl_rebase_report *r = NULL;
		fdl_error lost = *err;
		rc = fdl_rebase(&r, work, NULL, err);
		if (!rc && rebases && strcmp(r->from, r->onto))
			(*rebases)++;
		fdl_rebase_report_free(r);
		if (rc == FDL_ECONFLICT)
			fdl_error_prefix(err, "%s; then rebasing", lost.message);
		if (rc)
			return rc;
	}
}
