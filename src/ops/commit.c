/*
 * fdl commit: freeze the working catalog's latest snapshot into a version.
 *
 * Order of writes (the invariant readers rely on): the catalog, dataset.json
 * and files.json first, each create-only; version.json last; then the
 * branch moves by compare-and-swap from the base version. A commit that
 * fails at any point leaves at most an incomplete version directory that no
 * ref points at (readers ignore it), and the working catalog untouched.
 */
#include "hashes.h"
#include "inputs.h"
#include "derived.h"

#include <stdlib.h>
#include <string.h>

/* With no new snapshot, a version is worth writing only for a new
 * description: 0 when the dataset.json differs from the base's,
 * FDL_ENOCHANGE when it is the same. */
static int description_changed(const fdl_work *w, const frozen *fz, fdl_error *err)
{
	if (fdl_frozen_unchanged(fz))
		return fdl_fail(err, FDL_ENOCHANGE,
				"nothing to commit: the working catalog's latest snapshot (%lld) is the one version %s "
				"froze, and the description is unchanged",
				(long long)fz->info.last_snapshot, w->base);
	return 0;
}

/* The compare-and-swap failed, or the branch is locked. When the branch
 * still names our base, the lock (or a writer mid-update) was the cause:
 * keep that message (`failed`: err holds it), which says who holds it. */
static int conflict(fdl_repo *repo, const char *key, const fdl_work *w, const char *ours, bool failed,
		    fdl_error *err)
{
	char now_id[FDL_ID_LEN + 1] = "";
	bool exists = false;
	fdl_error ignore;
	fdl_ref_read(repo, key, now_id, &exists, NULL, &ignore);
	char what[160];
	if (ours)
		snprintf(what, sizeof what, "version %s was not published (its files stay unreferenced)", ours);
	else
		snprintf(what, sizeof what, "nothing was written");
	bool moved = exists != (w->base[0] != '\0') || (exists && strcmp(now_id, w->base) != 0);
	if (!moved && failed)
		return fdl_error_prefix(err, "%s", what);
	return fdl_fail(err, FDL_ECONFLICT, "%s moved: it is now at %s, but this working catalog is based on %s; %s. %s%s%s",
			key, exists ? now_id : "(deleted)", w->base[0] ? w->base : "(no version)", what,
			w->postgres ? "Another commit of this shared catalog won; run fdl commit again." : "Run fdl rebase ",
			w->postgres ? "" : w->dir,
			w->postgres ? "" : " to replay its changes on the new tip, then commit again (or commit with --rebase).");
}

/* fdl commit --compact: DuckLake merges the working catalog's small data
 * files into a new snapshot of it, which the freeze then takes. Its own
 * DuckDB: DuckLake and the scanner load before anything else. */
static int compact_work(const fdl_work *w, fdl_repo *repo, fdl_error *err)
{
	const char *exts[] = {w->postgres ? "postgres_scanner" : "sqlite_scanner", "ducklake", NULL};
	fdl_duck *d = NULL;
	int64_t merged = 0;
	int rc = fdl_duck_new_loading(&d, exts, err);
	if (!rc)
		rc = fdl_duck_use_data(d, w->data_path, repo->store, err);
	if (!rc)
		rc = fdl_catalog_compact(d, w->postgres ? FDL_CAT_POSTGRES : FDL_CAT_SQLITE, w->catalog, w->data_path,
					 &merged, err);
	fdl_duck_trace(d, "compact: %lld data files merged", (long long)merged);
	fdl_duck_free(d);
	return rc;
}

/* The version's data files still in the working catalog's own folder
 * (work/<id>/) go into the data folder before any file of the version is
 * written: a hard link on a folder, a server-side copy on a bucket (one
 * write each). Each must be there with the size the catalog records; one
 * already published (a commit interrupted after this) is left as it is. */
static int publish_staged(fdl_repo *repo, const fdl_work *w, const frozen *fz, fdl_error *err)
{
	size_t n = fz->staged.len;
	if (!n)
		return 0;
	char *dir = fdl_workrec_staging(w->id);
	const char **from = calloc(n, sizeof *from), **to = calloc(n, sizeof *to);
	int64_t *at = calloc(n, sizeof *at);
	int rc = dir && from && to && at ? 0 : fdl_oom(err);
	for (size_t i = 0; i < n && !rc; i++) {
		from[i] = fdl_asprintf("%s/%s", dir, fz->staged.items[i]);
		to[i] = fdl_asprintf("%s/%s", repo->data_dir, fz->staged.items[i]);
		if (!from[i] || !to[i])
			rc = fdl_oom(err);
	}
	if (!rc)
		rc = fdl_store_head_many(repo->store, from, n, at, err);
	for (size_t i = 0; i < n && !rc; i++) {
		const char *path = fz->staged.items[i];
		int64_t want = -1, there = FDL_HEAD_ABSENT;
		fdl_strmap_get(&fz->staged_sizes, path, &want);
		if (at[i] == FDL_HEAD_NOT_FILE)
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s/%s is a symlink or not a regular file; fdl follows no symlink inside a repository",
				      repo->root, from[i]);
		else if (want >= 0 && at[i] >= 0 && at[i] != want)
			rc = fdl_fail(err, FDL_EINVALID, "%s/%s is %lld bytes; the catalog records %lld", repo->root,
				      from[i], (long long)at[i], (long long)want);
		else if (at[i] >= 0)
			rc = fdl_store_copy_if_absent(repo->store, from[i], to[i], err);
		/* gone from the folder, or there already: published before (a
		 * commit interrupted after this), if the data folder has it whole */
		if ((at[i] == FDL_HEAD_ABSENT || rc == FDL_EEXISTS) &&
		    !(rc = fdl_store_head_many(repo->store, &to[i], 1, &there, err))) {
			if (there == FDL_HEAD_ABSENT)
				rc = fdl_fail(err, FDL_EINVALID,
					      "the working catalog references %s, which is neither in its own folder (%s/%s) "
					      "nor in the repository's data folder",
					      path, repo->root, from[i]);
			else if (want >= 0 && there != want)
				rc = fdl_fail(err, FDL_EINVALID, "%s/%s exists with %lld bytes; the catalog records %lld",
					      repo->root, to[i], (long long)there, (long long)want);
		}
	}
	/* durable before any file of the version names them */
	if (!rc)
		rc = fdl_store_sync(repo->store, to, n, err);
	for (size_t i = 0; i < n && from && to; i++) {
		free((char *)from[i]);
		free((char *)to[i]);
	}
	free(from);
	free(to);
	free(at);
	free(dir);
	return rc;
}

/* After the version is published: the working catalog records the files it
 * published by their place in the data folder (so DuckLake leaves them
 * alone), then their copies in its own folder go: those it just published,
 * and, with `sweep` (after a commit was killed in here), any other copy
 * there that it no longer records as its own and that the data folder
 * holds. A file the data folder does not hold is a writer's, not yet in
 * the catalog, and stays. The rows recorded relative are those the freeze
 * listed as staged: a table with none of them is not updated. */
static int settle_staged(fdl_repo *repo, const fdl_work *w, frozen *fz, bool sweep, fdl_error *err)
{
	if (!w->id[0])
		return 0;
	/* what started beside the freeze may be reading the copies here */
	if (fz->staged.len || sweep)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_SETTLING, .job = &fz->derived}, NULL);
	const char *tables = w->postgres ? "fdl_work." FDL_PG_SCHEMA : "fdl_work";
	char *data = NULL, *dir = fdl_workrec_staging(w->id);
	fdl_strlist listed = {0}, own = {0}, gone = {0}, kept = {0};
	int rc = dir ? fdl_work_data_location(&data, repo, err) : fdl_oom(err);
	/* an Iceberg table fdl add --iceberg read still names these: they stay */
	if (!rc)
		rc = fdl_work_iceberg_kept(&kept, w, err);
	bool attached = true; /* the freeze left it attached read-only */
	if (!rc && fz->staged.len) {
		rc = fdl_catalog_detach(fz->duck, "fdl_work", err);
		attached = false;
		/* SQLite's own engine, once DuckDB's copy has let go of the file */
		if (!rc && !w->postgres)
			rc = fdl_catalog_paths_absolute_sqlite(w->catalog, data, fz->info.last_snapshot,
							       fz->staged_kinds[0], fz->staged_kinds[1], err);
		else if (!rc && !(rc = fdl_catalog_attach_raw(fz->duck, "fdl_work", w->catalog, FDL_CAT_POSTGRES, false,
							       err)))
			rc = fdl_catalog_paths_absolute(fz->duck, tables, data, fz->info.last_snapshot,
							fz->staged_kinds[0], fz->staged_kinds[1], err);
		attached = !rc && w->postgres;
	}
	if (!rc && sweep) /* a commit killed in here left copies: look for them */
		rc = fdl_store_list(repo->store, dir, &listed, err);
	if (!rc && listed.len && !attached)
		rc = fdl_catalog_attach_raw(fz->duck, "fdl_work", w->catalog,
					    w->postgres ? FDL_CAT_POSTGRES : FDL_CAT_SQLITE, true, err);
	for (size_t i = 0; i < fz->staged.len && !rc && !sweep; i++) {
		if (fdl_strlist_has_sorted(&kept, fz->staged.items[i]))
			continue;
		char *key = fdl_asprintf("%s/%s", dir, fz->staged.items[i]);
		rc = key ? fdl_strlist_add(&gone, key, err) : fdl_oom(err);
		free(key);
	}
	if (!rc && listed.len)
		rc = fdl_catalog_staged_files(&own, NULL, NULL, fz->duck, tables, INT64_MAX, err);
	fdl_strlist_sort(&own);
	size_t skip = strlen(dir ? dir : "") + 1;
	for (size_t i = 0; i < listed.len && !rc; i++) {
		const char *rel = listed.items[i] + skip;
		char *twin = NULL;
		int64_t size = FDL_HEAD_ABSENT;
		if (fdl_strlist_has_sorted(&own, rel) || fdl_strlist_has_sorted(&kept, rel))
			continue;
		if (!fdl_strlist_has_sorted(&fz->staged, rel)) {
			twin = fdl_asprintf("%s/%s", repo->data_dir, rel);
			const char *k = twin;
			rc = twin ? fdl_store_head_many(repo->store, &k, 1, &size, err) : fdl_oom(err);
		}
		if (!rc && (fdl_strlist_has_sorted(&fz->staged, rel) || size >= 0))
			rc = fdl_strlist_add(&gone, listed.items[i], err);
		free(twin);
	}
	fdl_strlist_sort(&gone);
	if (!rc && gone.len)
		rc = fdl_store_del_many(repo->store, (const char *const *)gone.items, gone.len, err);
	fdl_strlist_free(&listed);
	fdl_strlist_free(&own);
	fdl_strlist_free(&gone);
	fdl_strlist_free(&kept);
	free(dir);
	free(data);
	return rc;
}

/* Once version `id` is published: its files settled in the working
 * catalog, and the repository's record of it renewed with its new base. */
static int settled(fdl_repo *repo, const fdl_work *w, frozen *fz, bool sweep, fdl_workrec_seen *seen,
		   const char *key, const char *id, fdl_error *err)
{
	int rc = settle_staged(repo, w, fz, sweep, err);
	if (rc)
		return fdl_error_prefix(err, "version %s is published on %s, but the working catalog could not be moved "
					     "onto its published files (the next commit does it)",
					id, key);
	if ((rc = fdl_work_record_touch(repo, w, seen, err)))
		fdl_error_prefix(err, "version %s is published on %s, but refreshing the repository's record of this "
				      "working catalog failed",
				 id, key);
	return rc;
}

/* One commit's state, from the working catalog's lock to the cleanup:
 * fdl_commit runs its steps in order, each a function below. */
typedef struct commit_job {
	fdl_work w;
	fdl_repo *repo;
	char *key, *tmpdir;
	frozen fz;
	fdl_workrec_seen seen;
	json_t *inputs;
	char id[FDL_ID_LEN + 1], tip[FDL_ID_LEN + 1], etag[FDL_ETAG_MAX];
	bool exists, recovered;
} commit_job;

/* Write the frozen catalog as a new version whose parent is the base,
 * under an id drawn now (its data published, its catalog frozen); what
 * derives from it alone, its preview, started beside the freeze's last
 * write (the seam's FROZEN) and writes its own files once the version is
 * written, under that id. */
static int write_version(commit_job *c, const fdl_commit_options *opts, fdl_error *err)
{
	const frozen *fz = &c->fz;
	fdl_version_new n = {.parent = fz->base,
			     .message = opts->message,
			     .author_name = opts->author_name,
			     .author_email = opts->author_email,
			     .catalog_file = fz->catalog_file,
			     .catalog_storage = fz->info.storage,
			     .ducklake_format = fz->info.format,
			     .first_snapshot = fz->info.first_snapshot,
			     .last_snapshot = fz->info.last_snapshot,
			     .dataset = fz->dataset_json,
			     .files_text = fz->files_text,
			     .files_len = fz->files_len,
			     .changes = fz->changes,
			     .inputs = json_array_size(c->inputs) ? c->inputs : NULL};
	int rc = fdl_version_draw(&n, c->repo, err);
	if (rc)
		return rc;
	fdl_test_pause("commit-frozen"); /* tests: the preview computed before any file of the version is written */
	if ((rc = fdl_version_write(c->repo, &n, err)))
		return rc;
	memcpy(c->id, n.id, sizeof c->id);
	fdl_duck_trace(fz->duck, "commit: version %s written", c->id);
	/* the preview's files may go: beside the ref's move and what follows it */
	fdl_ref_moved(c->repo, &(fdl_ref_move){.what = FDL_MOVE_WRITTEN, .id = c->id, .job = &c->fz.derived}, NULL);
	return 0;
}

/* Open the repository, read the branch and fail early, before any work,
 * when it already moved or another writer holds its lock: a blocked commit
 * writes nothing. An earlier commit that died after publishing, before
 * recording it, is recovered here. */
static int commit_preflight(commit_job *c, const fdl_commit_options *opts, fdl_error *err)
{
	fdl_work *w = &c->w;
	int rc;
	if ((rc = fdl_repo_open(&c->repo, w->repository, err)))
		return rc;
	c->repo->store->progress = opts->progress;
	c->repo->store->progress_payload = opts->progress_payload;
	if ((rc = fdl_ref_branch_key(&c->key, w->branch, err)))
		return rc;
	/* the repository's record of this working catalog: gone when the
	 * publisher abandoned it; refreshed at the end, whatever the outcome */
	if ((rc = fdl_work_record_read(&c->seen, c->repo, w, err)))
		return rc;
	if ((rc = fdl_ref_read(c->repo, c->key, c->tip, &c->exists, c->etag, err)))
		return rc;
	if ((rc = fdl_store_lock_check(c->repo->store, c->key, err)))
		return rc == FDL_ECONFLICT ? conflict(c->repo, c->key, w, NULL, true, err) : rc;
	if (w->pending[0]) {
		/* an earlier commit died after publishing, before recording it */
		if (c->exists && !strcmp(c->tip, w->pending)) {
			fdl_version *pv = NULL;
			if ((rc = fdl_version_read(&pv, c->repo, w->pending, err)))
				return rc;
			memcpy(w->base, w->pending, sizeof w->base);
			w->base_snapshot = fdl_version_snapshot_id(pv);
			fdl_version_free(pv);
			c->recovered = true;
		}
		w->pending[0] = '\0';
		if ((rc = fdl_work_save(w, err)))
			return rc;
	}
	if (c->exists != (w->base[0] != '\0') || (c->exists && strcmp(c->tip, w->base) != 0))
		return conflict(c->repo, c->key, w, NULL, false, err);
	if (!c->exists && (rc = fdl_ref_name_free(c->repo, w->branch, true, err))) /* a tag took the name meanwhile */
		return rc;
	return 0;
}

/* Inputs first: a bad --input fails before any work, whatever the catalog. */
static int commit_inputs(commit_job *c, const fdl_commit_options *opts, fdl_error *err)
{
	if (!(c->inputs = json_array()))
		return fdl_oom(err);
	for (size_t i = 0; i < opts->input_count; i++) {
		json_t *in = NULL;
		int rc = fdl_input_record(&in, opts->inputs[i], err);
		if (rc)
			return rc;
		json_array_append_new(c->inputs, in);
	}
	return 0;
}

/* Freeze the working catalog into the commit's temporary folder. */
static int commit_freeze(commit_job *c, const fdl_commit_options *opts, fdl_error *err)
{
	fdl_work *w = &c->w;
	int rc;
	/* a SQLite working catalog keeps its trigger (stage.c), added back if
	 * someone dropped it, before DuckDB opens the file */
	if (w->id[0] && !w->postgres && (rc = fdl_catalog_keep_published_sqlite(w->catalog, err)))
		return rc;
	fdl_tempdir_sweep(); /* what killed commits left behind */
	if ((rc = fdl_tempdir(&c->tmpdir, "commit", err)))
		return rc;
	if (opts->compact && (rc = compact_work(w, c->repo, err)))
		return rc;
	if ((rc = fdl_freeze(&c->fz, c->repo, w, c->tmpdir, true, err))) {
		/* DuckDB and SQLite say "disk I/O error" for a full disk: say
		 * which one is full, as any other write fdl makes does */
		const char *tmpdir = c->tmpdir;
		const char *full = fdl_no_space(tmpdir) ? tmpdir : !w->postgres && fdl_no_space(w->dir) ? w->dir : NULL;
		if (full && rc != FDL_EIO)
			rc = fdl_error_prefix(err, "no space left on the device of %s (%s)", full,
					      full == tmpdir ? "TMPDIR" : "the working catalog");
		if (full)
			rc = err->code = FDL_EIO;
		return rc;
	}
	if (c->fz.untouched && !c->fz.described)
		return fdl_fail(err, FDL_ENOCHANGE,
				"nothing to commit: the working catalog is as checkout made it (empty, no snapshot "
				"since) and %s holds no description (dataset.yml)",
				w->dir);
	return 0;
}

/* The same snapshot as the base and no new description: nothing to commit
 * (FDL_ENOCHANGE), unless an interrupted commit was recovered, which is
 * then the whole job: 0 with *done set, out_id its version. 0 with *done
 * unset: there is something to publish. */
static int commit_unchanged(bool *done, commit_job *c, char out_id[FDL_ID_LEN + 1], fdl_error *err)
{
	fdl_work *w = &c->w;
	*done = false;
	int rc = c->fz.same_snapshot ? description_changed(w, &c->fz, err) : 0;
	if (rc != FDL_ENOCHANGE)
		return rc;
	if (c->recovered) {
		/* nothing after it: the interrupted commit is the whole job,
		 * its history index and its working catalog's files included */
		fdl_ref_moved(c->repo, &(fdl_ref_move){.what = FDL_MOVE_TIP, .key = c->key, .id = w->base}, NULL);
		if (!(rc = settled(c->repo, w, &c->fz, true, &c->seen, c->key, w->base, err)))
			memcpy(out_id, w->base, FDL_ID_LEN + 1);
		*done = !rc;
		return rc;
	}
	/* the files of the base still in the working catalog's folder (a
	 * commit cut short after publishing) are settled now */
	fdl_error ignore;
	settle_staged(c->repo, w, &c->fz, true, &ignore);
	return rc;
}

/* Look at the branch once more, write the version and move the branch to
 * it (compare-and-swap). The freeze hashed the new data files, each read
 * once (where it is: not yet published, in the working catalog's own
 * folder). */
static int commit_publish(commit_job *c, const fdl_commit_options *opts, fdl_error *err)
{
	fdl_work *w = &c->w;
	int rc;
	/* The freeze and hashing took a while: if the branch moved meanwhile, stop before
	 * writing a version that could only lose the compare-and-swap. */
	char again[FDL_ID_LEN + 1] = "";
	bool still = false;
	fdl_test_pause("commit"); /* racing tests order the writers here */
	if ((rc = fdl_ref_read(c->repo, c->key, again, &still, NULL, err)))
		return rc;
	if (still != c->exists || (still && strcmp(again, c->tip) != 0))
		return conflict(c->repo, c->key, w, NULL, false, err);
	if ((rc = publish_staged(c->repo, w, &c->fz, err)))
		return rc;
	if ((rc = write_version(c, opts, err)))
		return rc;
	memcpy(w->pending, c->id, sizeof w->pending);
	if ((rc = fdl_work_save(w, err)))
		return rc;
	/* a new branch is created under the refs lock, its name checked again */
	fdl_store_lock lock = {.file.fd = -1};
	bool guarded = c->exists || (!(rc = fdl_refs_lock(&lock, c->repo, "fdl commit", err)) &&
				     !(rc = fdl_ref_name_free(c->repo, w->branch, true, err)));
	if (guarded)
		rc = fdl_ref_update(c->repo, c->key, c->id, c->exists ? c->etag : NULL, err);
	fdl_store_lock_release(&lock);
	if (rc && !guarded)
		fdl_error_prefix(err, "version %s was not published (its files stay unreferenced)", c->id);
	if (rc) {
		fdl_error ignore;
		w->pending[0] = '\0';
		fdl_work_save(w, &ignore);
	}
	if (rc == FDL_ECONFLICT && guarded)
		return conflict(c->repo, c->key, w, c->id, true, err);
	return rc;
}

/* After the branch moved: what derives from it, then the working catalog's
 * own record. */
static int commit_record(commit_job *c, char out_id[FDL_ID_LEN + 1], const fdl_commit_options *opts,
			 fdl_error *err)
{
	fdl_work *w = &c->w;
	const char *id = c->id;
	int rc;
	/* what derives from the ref follows it (docs/format.md): a failure
	 * there costs readers speed, never the version; before the record, so
	 * a commit killed in it recovers as one killed before. The Iceberg
	 * views are written beside what follows, which does not read them. */
	fdl_ref_moved(c->repo,
		      &(fdl_ref_move){.what = FDL_MOVE_TIP, .key = c->key, .id = id, .share = c->fz.duck,
				      .job = &c->fz.derived},
		      NULL);
	/* then the working catalog's files and the repository's record, still
	 * with `pending` saved: a commit killed in them recovers the same way */
	memcpy(w->base, id, sizeof w->base);
	w->base_snapshot = c->fz.info.last_snapshot;
	if (strcmp(c->fz.desc_sha256, w->names_sha256)) { /* edited since: they name what this version has */
		memcpy(w->names_sha256, c->fz.desc_sha256, sizeof w->names_sha256);
		memcpy(w->names_at, id, sizeof w->names_at);
	}
	rc = settled(c->repo, w, &c->fz, c->recovered, &c->seen, c->key, id, err);
	fdl_ref_moved_join(c->fz.derived);
	c->fz.derived = NULL;
	if (rc)
		return rc;
	w->pending[0] = '\0';
	if ((rc = fdl_work_save(w, err))) {
		fdl_error_prefix(err, "version %s is published on %s, but recording it in the working catalog failed",
				 id, c->key);
		return rc;
	}
	/* the next commit's copy of this version's sha256 map: derived, so a
	 * failure only makes that commit read files.json instead */
	fdl_error ierr;
	fdl_work_hashes_save(w, &c->fz.hashes_text, &ierr);
	memcpy(out_id, id, FDL_ID_LEN + 1);
	for (size_t i = 0; opts->warning && i < c->fz.warnings.len; i++)
		opts->warning(c->fz.warnings.items[i], opts->warning_payload);
	return 0;
}

static void commit_job_free(commit_job *c)
{
	/* a version written that no ref took: its preview all the same; one
	 * never written (a failure in its writes): none */
	fdl_ref_moved_join(c->fz.derived);
	c->fz.derived = NULL;
	/* a commit that did not publish renews the record's lease all the same */
	if (c->seen.doc) {
		fdl_error ignore;
		fdl_work_record_touch(c->repo, &c->w, &c->seen, &ignore);
	}
	fdl_workrec_seen_free(&c->seen);
	if (c->tmpdir) {
		fdl_rm_rf(c->tmpdir);
		free(c->tmpdir);
	}
	fdl_frozen_free(&c->fz);
	json_decref(c->inputs);
	free(c->key);
	fdl_repo_free(c->repo);
	fdl_work_free(&c->w);
}

int fdl_commit(char out_id[FDL_ID_LEN + 1], const char *work, const fdl_commit_options *opts, fdl_error *err)
{
	if (opts && fdl_options_check(opts->version, FDL_COMMIT_OPTIONS_VERSION, "fdl_commit", "fdl_commit_options", err))
		return FDL_EINVALID;
	if (!opts || !opts->message || !*opts->message)
		return fdl_fail(err, FDL_EINVALID, "a commit needs a message (-m MESSAGE)");
	if (!opts->author_name || !*opts->author_name)
		return fdl_fail(err, FDL_EINVALID, "a commit needs an author name (--author NAME)");
	commit_job c = {0};
	fdl_lockfile wlock = {.fd = -1};
	int rc = fdl_work_load(&c.w, work, err);
	if (rc)
		return rc;
	if ((rc = fdl_work_lock(&wlock, &c.w, work, "fdl commit", err))) {
		fdl_work_free(&c.w);
		return rc;
	}
	bool done = false;
	if (!(rc = commit_preflight(&c, opts, err)) && !(rc = commit_inputs(&c, opts, err)) &&
	    !(rc = commit_freeze(&c, opts, err)) && !(rc = commit_unchanged(&done, &c, out_id, err)) && !done &&
	    !(rc = commit_publish(&c, opts, err)))
		rc = commit_record(&c, out_id, opts, err);
	commit_job_free(&c);
	fdl_lockfile_release(&wlock);
	return rc;
}
