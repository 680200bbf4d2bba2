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
#include "iceberg.h"
#include "../layout/hindex.h"

#include <stdlib.h>
#include <string.h>

/* With no new snapshot, a version is worth writing only for a new
 * description: 0 when the dataset.json differs from the base's,
 * FDL_ENOCHANGE when it is the same. */
static int description_changed(const fdl_work *w, const frozen *fz, fdl_error *err)
{
	if (fz->base_dataset && json_equal(fz->base_dataset, fz->dataset_json))
		return fdl_fail(err, FDL_ENOCHANGE,
				"nothing to commit: the working catalog's latest snapshot (%lld) is the one version %s "
				"froze, and the description is unchanged",
				(long long)fz->info.last_snapshot, w->base);
	return 0;
}

/* Write the frozen catalog as a new version whose parent is the base. */
static int write_version(char id[FDL_ID_LEN + 1], fdl_repo *repo, const frozen *fz, const fdl_commit_options *opts,
			 const json_t *inputs, fdl_error *err)
{
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
			     .inputs = json_array_size(inputs) ? inputs : NULL};
	return fdl_version_write(id, repo, &n, err);
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

int fdl_commit(char out_id[FDL_ID_LEN + 1], const char *work, const fdl_commit_options *opts, fdl_error *err)
{
	if (!opts || !opts->message || !*opts->message)
		return fdl_fail(err, FDL_EINVALID, "a commit needs a message (-m MESSAGE)");
	if (!opts->author_name || !*opts->author_name)
		return fdl_fail(err, FDL_EINVALID, "a commit needs an author name (--author NAME)");
	fdl_work w;
	fdl_lockfile wlock = {.fd = -1};
	int rc = fdl_work_load(&w, work, err);
	if (rc)
		return rc;
	if ((rc = fdl_work_lock(&wlock, &w, work, "fdl commit", err))) {
		fdl_work_free(&w);
		return rc;
	}
	fdl_repo *repo = NULL;
	char *key = NULL, *tmpdir = NULL;
	frozen fz = {0};
	json_t *inputs = NULL;
	char id[FDL_ID_LEN + 1] = "", tip[FDL_ID_LEN + 1] = "", etag[FDL_ETAG_MAX] = "";
	bool exists = false;
	if ((rc = fdl_repo_open(&repo, w.repository, err)))
		goto out;
	repo->store->progress = opts->progress;
	repo->store->progress_payload = opts->progress_payload;
	if ((rc = fdl_ref_branch_key(&key, w.branch, err)))
		goto out;
	/* Fail early, before any work, when the branch already moved or
	 * another writer holds its lock: a blocked commit writes nothing. */
	if ((rc = fdl_ref_read(repo, key, tip, &exists, etag, err)))
		goto out;
	if ((rc = fdl_store_lock_check(repo->store, key, err))) {
		if (rc == FDL_ECONFLICT)
			rc = conflict(repo, key, &w, NULL, true, err);
		goto out;
	}
	bool recovered = false;
	if (w.pending[0]) {
		/* an earlier commit died after publishing, before recording it */
		if (exists && !strcmp(tip, w.pending)) {
			fdl_version *pv = NULL;
			if ((rc = fdl_version_read(&pv, repo, w.pending, err)))
				goto out;
			memcpy(w.base, w.pending, sizeof w.base);
			w.base_snapshot = fdl_version_snapshot_id(pv);
			fdl_version_free(pv);
			recovered = true;
		}
		w.pending[0] = '\0';
		if ((rc = fdl_work_save(&w, err)))
			goto out;
	}
	if (exists != (w.base[0] != '\0') || (exists && strcmp(tip, w.base) != 0)) {
		rc = conflict(repo, key, &w, NULL, false, err);
		goto out;
	}
	if (!exists && (rc = fdl_ref_name_free(repo, w.branch, true, err))) /* a tag took the name meanwhile */
		goto out;
	/* Inputs first: a bad --input fails before any work, whatever the catalog. */
	if (!(inputs = json_array())) {
		rc = fdl_oom(err);
		goto out;
	}
	for (size_t i = 0; i < opts->input_count; i++) {
		json_t *in = NULL;
		if ((rc = fdl_input_record(&in, opts->inputs[i], err)))
			goto out;
		json_array_append_new(inputs, in);
	}
	fdl_tempdir_sweep(); /* what killed commits left behind */
	if ((rc = fdl_tempdir(&tmpdir, "commit", err)))
		goto out;
	if (opts->compact && (rc = compact_work(&w, repo, err)))
		goto out;
	if ((rc = fdl_freeze(&fz, repo, &w, tmpdir, err))) {
		/* DuckDB and SQLite say "disk I/O error" for a full disk: say
		 * which one is full, as any other write fdl makes does */
		const char *full = fdl_no_space(tmpdir) ? tmpdir : !w.postgres && fdl_no_space(w.dir) ? w.dir : NULL;
		if (full && rc != FDL_EIO)
			rc = fdl_error_prefix(err, "no space left on the device of %s (%s)", full,
					      full == tmpdir ? "TMPDIR" : "the working catalog");
		if (full)
			rc = err->code = FDL_EIO;
		goto out;
	}
	if (fz.untouched && !fz.described) {
		rc = fdl_fail(err, FDL_ENOCHANGE,
			      "nothing to commit: the working catalog is as checkout made it (empty, no snapshot "
			      "since) and %s holds no description (dataset.yml)",
			      w.dir);
		goto out;
	}
	if (fz.same_snapshot && (rc = description_changed(&w, &fz, err))) {
		if (rc == FDL_ENOCHANGE && recovered) {
			/* nothing after it: the interrupted commit is the whole job,
			 * its history index included */
			fdl_error ierr;
			fdl_history_update(repo, w.branch, FDL_HISTORY_WALK_MAX, &ierr);
			fdl_iceberg_after_commit(repo, w.branch, w.base, &ierr);
			fdl_reflist_note(repo, (const char *const *)&key, 1, &ierr);
			memcpy(out_id, w.base, FDL_ID_LEN + 1);
			rc = 0;
		}
		goto out;
	}
	/* each new data file read once, here, for files.json's sha256 */
	if ((rc = fdl_data_hashes_add(&fz, repo, err)))
		goto out;
	/* The freeze and hashing took a while: if the branch moved meanwhile, stop before
	 * writing a version that could only lose the compare-and-swap. */
	char again[FDL_ID_LEN + 1] = "";
	bool still = false;
	fdl_store_test_barrier("commit"); /* racing tests order the writers here */
	if ((rc = fdl_ref_read(repo, key, again, &still, NULL, err)))
		goto out;
	if (still != exists || (still && strcmp(again, tip) != 0)) {
		rc = conflict(repo, key, &w, NULL, false, err);
		goto out;
	}
	if ((rc = write_version(id, repo, &fz, opts, inputs, err)))
		goto out;
	memcpy(w.pending, id, sizeof w.pending);
	if ((rc = fdl_work_save(&w, err)))
		goto out;
	/* a new branch is created under the refs lock, its name checked again */
	fdl_store_lock lock = {.file.fd = -1};
	bool guarded = exists || (!(rc = fdl_refs_lock(&lock, repo, "fdl commit", err)) &&
				  !(rc = fdl_ref_name_free(repo, w.branch, true, err)));
	if (guarded)
		rc = fdl_ref_update(repo, key, id, exists ? etag : NULL, err);
	fdl_store_lock_release(&lock);
	if (rc && !guarded)
		fdl_error_prefix(err, "version %s was not published (its files stay unreferenced)", id);
	if (rc) {
		fdl_error ignore;
		w.pending[0] = '\0';
		fdl_work_save(&w, &ignore);
	}
	if (rc == FDL_ECONFLICT && guarded) {
		rc = conflict(repo, key, &w, id, true, err);
		goto out;
	}
	if (rc)
		goto out;
	/* the history index and the ref list follow the ref (docs/format.md):
	 * derived, so a failure here costs readers speed, never the version;
	 * before the record, so a commit killed in it recovers as one killed
	 * before */
	fdl_error ierr;
	fdl_history_update(repo, w.branch, FDL_HISTORY_WALK_MAX, &ierr);
	fdl_iceberg_after_commit(repo, w.branch, id, &ierr); /* derived too: verify names a view that is missing */
	fdl_reflist_note(repo, (const char *const *)&key, 1, &ierr);
	memcpy(w.base, id, sizeof w.base);
	w.base_snapshot = fz.info.last_snapshot;
	if (strcmp(fz.desc_sha256, w.names_sha256)) { /* edited since: they name what this version has */
		memcpy(w.names_sha256, fz.desc_sha256, sizeof w.names_sha256);
		memcpy(w.names_at, id, sizeof w.names_at);
	}
	w.pending[0] = '\0';
	if ((rc = fdl_work_save(&w, err))) {
		fdl_error_prefix(err, "version %s is published on %s, but recording it in the working catalog failed",
				 id, key);
		goto out;
	}
	memcpy(out_id, id, FDL_ID_LEN + 1);
	for (size_t i = 0; opts->warning && i < fz.warnings.len; i++)
		opts->warning(fz.warnings.items[i], opts->warning_payload);
out:
	if (tmpdir) {
		fdl_rm_rf(tmpdir);
		free(tmpdir);
	}
	fdl_frozen_free(&fz);
	json_decref(inputs);
	free(key);
	fdl_repo_free(repo);
	fdl_work_free(&w);
	fdl_lockfile_release(&wlock);
	return rc;
}
