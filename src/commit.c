/*
 * fdl commit: freeze the working catalog's latest snapshot into a version.
 *
 * Order of writes (the invariant readers rely on): the catalog, dataset.json
 * and files.json first, each create-only; version.json last; then the
 * branch moves by compare-and-swap from the base version. A commit that
 * fails at any point leaves at most an incomplete version directory that no
 * ref points at (readers ignore it), and the working catalog untouched.
 */
#include "freeze.h"
#include "inputs.h"
#include "layout/hindex.h"

#include <stdlib.h>
#include <string.h>

/* With no new snapshot, a version is worth writing only for a new
 * description: 0 when the dataset.json differs from the base's,
 * FDL_ENOCHANGE when it is the same. */
static int description_changed(fdl_repo *repo, const fdl_work *w, const frozen *fz, fdl_error *err)
{
	fdl_version *base = NULL;
	char *local = NULL;
	json_t *was = NULL;
	int rc = fdl_version_read(&base, repo, w->base, err);
	const json_t *ref = rc ? NULL : json_object_get(fdl_version_json(base), "dataset");
	if (!rc && ref) {
		rc = fdl_version_fetch_checked(&local, repo, base, json_string_value(json_object_get(ref, "path")),
					       (int64_t)json_integer_value(json_object_get(ref, "bytes")),
					       json_string_value(json_object_get(ref, "sha256")), err);
		if (!rc && !(was = json_load_file(local, JSON_REJECT_DUPLICATES, NULL)))
			rc = fdl_fail(err, FDL_EINVALID, "the base version's dataset.json (%s) is not JSON", local);
	}
	if (!rc && was && json_equal(was, fz->dataset_json))
		rc = fdl_fail(err, FDL_ENOCHANGE,
			      "nothing to commit: the working catalog's latest snapshot (%lld) is the one version %s "
			      "froze, and the description is unchanged",
			      (long long)fz->info.last_snapshot, w->base);
	json_decref(was);
	free(local);
	fdl_version_free(base);
	return rc;
}

/* Put doc as version file `name`, serialised here (or `made`: serialised
 * already, by freeze), and fill its reference for version.json. */
static int put_json(fdl_repo *repo, const char *id, const char *name, const json_t *doc, const char *made,
		    size_t made_len, json_t *ref_out, bool compact, fdl_error *err)
{
	char *owned = NULL, *key = fdl_version_key(id, name);
	size_t len = made_len;
	char hex[65];
	int rc = !key ? fdl_fail(err, FDL_ERROR, "out of memory")
		 : made ? 0
			: fdl_json_dump_as(&owned, &len, doc, compact, err);
	const char *text = made ? made : owned;
	if (!rc)
		rc = fdl_sha256_mem(hex, text, len, err);
	if (!rc)
		rc = fdl_store_put_if_absent(repo->store, key, text, len, err);
	if (!rc && ref_out) {
		json_object_set_new(ref_out, "path", json_string(name));
		json_object_set_new(ref_out, "bytes", json_integer((json_int_t)len));
		json_object_set_new(ref_out, "sha256", json_string(hex));
	}
	free(owned);
	free(key);
	return rc;
}

static int build_and_write(char id[FDL_ID_LEN + 1], fdl_repo *repo, const fdl_work *w, frozen *fz,
			   const fdl_commit_options *opts, const json_t *inputs, fdl_error *err)
{
	int64_t seq = 1;
	if (w->base[0]) {
		fdl_version *parent;
		int rc = fdl_version_read(&parent, repo, w->base, err);
		if (rc)
			return fdl_error_prefix(err, "reading the base version");
		seq = fdl_version_seq(parent) + 1;
		fdl_version_free(parent);
	}
	char now[32], cat_sha[65];
	int64_t cat_bytes = 0;
	int rc = fdl_time_now_iso(now, err);
	if (!rc)
		rc = fdl_uuid7_next(&repo->ids, id, err);
	if (!rc)
		rc = fdl_sha256_file(cat_sha, &cat_bytes, fz->catalog_file, err);
	if (rc)
		return rc;

	json_t *dataset = json_incref(fz->dataset_json);
	json_t *dataset_ref = json_object(), *files_ref = json_object();
	json_t *author = json_pack("{s:s}", "name", opts->author_name);
	if (author && opts->author_email && *opts->author_email)
		json_object_set_new(author, "email", json_string(opts->author_email));
	json_t *parents = json_array();
	if (parents && w->base[0])
		json_array_append_new(parents, json_string(w->base));
	if (!dataset || !dataset_ref || !files_ref || !author || !parents) {
		rc = fdl_fail(err, FDL_ERROR, "out of memory");
		goto out;
	}
	char *cat_key = fdl_version_key(id, "ducklake.duckdb");
	rc = cat_key ? fdl_store_put_file_if_absent(repo->store, cat_key, fz->catalog_file, err)
		     : fdl_fail(err, FDL_ERROR, "out of memory");
	free(cat_key);
	if (!rc)
		rc = put_json(repo, id, "dataset.json", dataset, NULL, 0, dataset_ref, false, err);
	if (!rc)
		rc = put_json(repo, id, "files.json", fz->files_json, fz->files_text, fz->files_len, files_ref, true, err);
	if (rc)
		goto out;
	json_t *v = json_pack("{s:s, s:s, s:I, s:O, s:s, s:O, s:s,"
			      " s:{s:s, s:s, s:I, s:s}, s:O,"
			      " s:{s:s, s:I, s:[I, I]}, s:O}",
			      "fdl", FDL_SPEC_VERSION, "id", id, "seq", (json_int_t)seq, "parents", parents,
			      "created_at", now, "author", author, "message", opts->message,
			      "catalog", "path", "ducklake.duckdb", "storage", fz->info.storage, "bytes",
			      (json_int_t)cat_bytes, "sha256", cat_sha, "dataset", dataset_ref,
			      "ducklake", "format", fz->info.format, "snapshot_id",
			      (json_int_t)fz->info.last_snapshot, "snapshots", (json_int_t)fz->info.first_snapshot,
			      (json_int_t)fz->info.last_snapshot, "files", files_ref);
	if (!v) {
		rc = fdl_fail(err, FDL_ERROR, "out of memory building version.json");
		goto out;
	}
	if (fz->changes)
		json_object_set(v, "changes", fz->changes);
	if (json_array_size(inputs))
		json_object_set(v, "inputs", (json_t *)inputs);
	/* Read our own version.json back through the reader's checks: a
	 * writer never publishes what its readers would refuse. */
	char *text = NULL;
	size_t len = 0;
	rc = fdl_json_dump(&text, &len, v, err);
	fdl_version *check = NULL;
	if (!rc)
		rc = fdl_version_parse(&check, text, len, id, "the new version.json", err);
	fdl_version_free(check);
	char *key = fdl_version_key(id, "version.json");
	if (!rc)
		rc = key ? fdl_store_put_if_absent(repo->store, key, text, len, err)
			 : fdl_fail(err, FDL_ERROR, "out of memory");
	free(key);
	free(text);
	json_decref(v);
out:
	json_decref(dataset);
	json_decref(dataset_ref);
	json_decref(files_ref);
	json_decref(author);
	json_decref(parents);
	return rc;
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
	return fdl_fail(err, FDL_ECONFLICT, "%s moved: it is now at %s, but this working catalog is based on %s; %s. %s",
			key, exists ? now_id : "(deleted)", w->base[0] ? w->base : "(no version)", what,
			w->postgres ? "Another commit of this shared catalog won; run fdl commit again."
				    : "Check out the branch again (fdl checkout), redo the change, and commit.");
}

/* One commit of a working folder at a time: WORK/fdl-work.lock, held for
 * the whole commit, so a second commit can never write back an older
 * record over the first one's. (A PostgreSQL catalog's record is updated
 * by compare-and-swap instead: no folder to lock.) */
static int lock_work(fdl_lockfile *lk, fdl_work *w, const char *work, fdl_error *err)
{
	if (w->postgres)
		return 0;
	char *path = fdl_asprintf("%s/fdl-work.lock", w->dir);
	char *what = fdl_asprintf("the working catalog %s", w->dir);
	int rc = path && what ? fdl_lockfile_take(lk, path, what, "fdl commit", err)
			      : fdl_fail(err, FDL_ERROR, "out of memory");
	free(path);
	free(what);
	if (rc)
		return rc;
	/* read the record again, now that no other commit can change it */
	fdl_work_free(w);
	if ((rc = fdl_work_load(w, work, err)))
		fdl_lockfile_release(lk);
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
	if ((rc = lock_work(&wlock, &w, work, err))) {
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
	/* Inputs first: a bad --input fails before any work, whatever the catalog. */
	if (!(inputs = json_array())) {
		rc = fdl_fail(err, FDL_ERROR, "out of memory");
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
	if (fz.same_snapshot && (rc = description_changed(repo, &w, &fz, err))) {
		if (rc == FDL_ENOCHANGE && recovered) {
			/* nothing after it: the interrupted commit is the whole job,
			 * its history index included */
			fdl_error ierr;
			fdl_history_update(repo, w.branch, FDL_HISTORY_WALK_MAX, &ierr);
			memcpy(out_id, w.base, FDL_ID_LEN + 1);
			rc = 0;
		}
		goto out;
	}
	/* The freeze took a while: if the branch moved meanwhile, stop before
	 * writing a version that could only lose the compare-and-swap. */
	char again[FDL_ID_LEN + 1] = "";
	bool still = false;
	if ((rc = fdl_ref_read(repo, key, again, &still, NULL, err)))
		goto out;
	if (still != exists || (still && strcmp(again, tip) != 0)) {
		rc = conflict(repo, key, &w, NULL, false, err);
		goto out;
	}
	if ((rc = build_and_write(id, repo, &w, &fz, opts, inputs, err)))
		goto out;
	memcpy(w.pending, id, sizeof w.pending);
	if ((rc = fdl_work_save(&w, err)))
		goto out;
	rc = fdl_ref_update(repo, key, id, exists ? etag : NULL, err);
	if (rc) {
		fdl_error ignore;
		w.pending[0] = '\0';
		fdl_work_save(&w, &ignore);
	}
	if (rc == FDL_ECONFLICT) {
		rc = conflict(repo, key, &w, id, true, err);
		goto out;
	}
	if (rc)
		goto out;
	/* the history index follows the ref (docs/format.md): derived, so a
	 * failure here costs readers speed, never the version; before the
	 * record, so a commit killed in it recovers as one killed before */
	fdl_error ierr;
	fdl_history_update(repo, w.branch, FDL_HISTORY_WALK_MAX, &ierr);
	memcpy(w.base, id, sizeof w.base);
	w.base_snapshot = fz.info.last_snapshot;
	w.pending[0] = '\0';
	if ((rc = fdl_work_save(&w, err))) {
		fdl_error_prefix(err, "version %s is published on %s, but recording it in the working catalog failed",
				 id, key);
		goto out;
	}
	memcpy(out_id, id, FDL_ID_LEN + 1);
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
