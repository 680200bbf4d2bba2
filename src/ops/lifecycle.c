/*
 * The life of a version after it is written: retention (expire), withdrawal
 * and garbage collection of data files. The format (docs/format.md) allows exactly these
 * changes to a version: add expired.json and delete the catalog (and
 * files.json, catalogs/), and on withdrawal also version.json when it
 * carries the withdrawn data. Every step is idempotent and ordered so that
 * a crash at any point leaves a repository that verifies and a rerun that
 * completes: expired.json first (readers refuse from then on, and it
 * records what is being removed), then the deletions.
 */
#include "../catalog/catalog.h"
#include "iceberg.h"
#include "../layout/hindex.h"
#include "../layout/layout.h"
#include "../layout/walk.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t parse_time(const char *iso)
{
	struct tm tm = {0};
	if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
		return -1;
	return (int64_t)timegm(&tm);
}

/* Delete a key; one already gone is fine (a rerun after a crash). Frees key. */
static int del_owned(fdl_repo *repo, char *key, fdl_error *err)
{
	return fdl_store_del_owned(repo->store, key, NULL, err);
}

static bool expired(const vdir *d)
{
	return fdl_vdir_has(d, FDL_EXPIRED_JSON);
}

/* The files expire/withdraw remove from a version, as they exist. */
static int catalog_files(fdl_strlist *list, const vdir *d, fdl_error *err)
{
	int rc = 0;
	const char *cat = d->v ? fdl_version_catalog_path(d->v) : "ducklake.duckdb";
	const char *files = d->v ? json_string_value(json_object_get(json_object_get(fdl_version_json(d->v), "files"), "path"))
				 : FDL_FILES_JSON;
	for (size_t i = 0; i < d->files.len; i++) {
		const char *f = d->files.items[i];
		if (!rc && (!strcmp(f, cat) || (files && !strcmp(f, files)) || !strncmp(f, "catalogs/", 9)))
			rc = fdl_strlist_add(list, f, err);
	}
	return rc;
}

static json_t *strlist_json(const fdl_strlist *l)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->len; i++)
		json_array_append_new(a, json_string(l->items[i]));
	return a;
}

/* Add expired.json (unless there) and delete what it lists. */
static int expire_one(fdl_repo *repo, const vdir *d, const char *reason, const char *message, const json_t *extra,
		      const fdl_strlist *removed, bool list_gone, fdl_error *err)
{
	char now[32];
	int rc = fdl_time_now_iso(now, err);
	char *key = fdl_version_key(d->id, FDL_EXPIRED_JSON);
	json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "reason", reason, "expired_at", now, "message", message,
				"removed", strlist_json(removed));
	if (doc && extra)
		json_object_update(doc, (json_t *)extra);
	char *text = NULL;
	size_t len = 0;
	if (!rc && (!key || !doc))
		rc = fdl_oom(err);
	if (!rc && !expired(d)) {
		rc = fdl_json_dump(&text, &len, doc, err);
		if (!rc)
			rc = fdl_store_put_if_absent(repo->store, key, text, len, err);
		if (rc == FDL_EEXISTS) /* a concurrent or earlier run wrote it */
			rc = 0;
	}
	/* the ref list says so to readers that cannot list (derived: its
	 * failure costs them the mark only), with the date expired.json has;
	 * not (`list_gone` false) of a version whose version.json goes too: no
	 * reader lists it, and nothing under history/ keeps its id */
	fdl_expiry x;
	fdl_error ierr;
	if (!rc && list_gone && !fdl_version_expiry(&x, repo, d->id, &ierr) && x.expired)
		fdl_reflist_note_gone(repo, d->id, x.reason[0] ? x.reason : reason, x.when, &ierr);
	for (size_t i = 0; i < removed->len && !rc; i++)
		rc = del_owned(repo, fdl_version_key(d->id, removed->items[i]), err);
	/* this machine's read cache forgets the catalog at once (other
	 * machines' caches are documented in docs/decisions.md) */
	if (!rc && d->v) {
		char *obj = fdl_cache_path("objects", fdl_version_catalog_sha256(d->v));
		fdl_cache_forget(obj);
		free(obj);
	}
	free(text);
	free(key);
	json_decref(doc);
	return rc;
}

/* ---- retention ------------------------------------------------------------ */

typedef struct protect {
	fdl_strlist ids;
} protect;

static bool protected_id(const protect *p, const char *id)
{
	for (size_t i = 0; i < p->ids.len; i++)
		if (!strcmp(p->ids.items[i], id))
			return true;
	return false;
}

/* Tips of every branch and tag, and the newest `keep` of every branch. */
static int protected_versions(protect *p, fdl_repo *repo, vdirs *dirs, int64_t keep, fdl_error *err)
{
	fdl_strlist refs = {0};
	int rc = fdl_store_list(repo->store, "refs", &refs, err);
	for (size_t i = 0; i < refs.len && !rc; i++) {
		char id[FDL_ID_LEN + 1];
		bool exists = false;
		fdl_error e;
		if (strstr(refs.items[i], ".lock") || fdl_ref_read(repo, refs.items[i], id, &exists, NULL, &e) || !exists)
			continue;
		bool branch = !strncmp(refs.items[i], "refs/heads/", 11);
		int64_t n = 0;
		const char *cur = id;
		char buf[FDL_ID_LEN + 1];
		for (size_t steps = 0; cur && steps <= dirs->len && !rc; steps++, n++) {
			if (n > 0 && (!branch || keep < 0 || n >= keep))
				break;
			rc = fdl_strlist_add(&p->ids, cur, err);
			vdir *d = fdl_vdirs_find(dirs, cur);
			const char *parent = d && d->v ? fdl_version_parent(d->v, 0) : NULL;
			if (parent) {
				memcpy(buf, parent, sizeof buf);
				cur = buf;
			} else
				cur = NULL;
		}
	}
	fdl_strlist_free(&refs);
	return rc;
}

int fdl_expire(fdl_expire_report **out, fdl_repo *repo, int dry_run, fdl_error *err)
{
	int64_t days = -1, keep = -1;
	if (fdl_repo_retention(&days, &keep, repo, err))
		return err->code;
	vdirs dirs;
	protect p = {0};
	fdl_expire_report *report = calloc(1, sizeof *report);
	if (!report)
		return fdl_oom(err);
	report->dry_run = dry_run;
	int rc = fdl_vdirs_list(&dirs, NULL, NULL, repo, err);
	if (!rc)
		rc = fdl_vdirs_read(&dirs, NULL, repo, err);
	/* the refs are read, and the versions they leave unprotected expired,
	 * under the lock refs are created under: a tag racing this expiry
	 * either lands before the refs are read, and protects its version, or
	 * after the expiry, and is refused on an expired version */
	fdl_store_lock lock = {.file.fd = -1};
	if (!rc && !dry_run)
		fdl_test_pause("expire-listed");
	if (!rc && !dry_run && (days >= 0 || keep >= 0))
		rc = fdl_refs_lock(&lock, repo, "fdl expire", err);
	if (!rc)
		rc = protected_versions(&p, repo, &dirs, keep, err);
	if (!rc && !dry_run)
		fdl_test_pause("expire-checked");
	int64_t now = (int64_t)time(NULL);
	for (size_t i = 0; i < dirs.len && !rc && (days >= 0 || keep >= 0); i++) {
		vdir *d = &dirs.items[i];
		if (!d->v || protected_id(&p, d->id))
			continue;
		int64_t created = parse_time(fdl_version_created_at(d->v));
		if (days >= 0 && (created < 0 || now - created < days * 86400))
			continue;
		fdl_strlist removed = {0};
		if ((rc = catalog_files(&removed, d, err)))
			break;
		if (expired(d) && removed.len == 0)
			continue; /* done already */
		char msg[160];
		snprintf(msg, sizeof msg, "retention: %s%s%s", days >= 0 ? "older than the days kept" : "",
			 days >= 0 && keep >= 0 ? " and " : "", keep >= 0 ? "beyond the newest versions kept" : "");
		if (!dry_run)
			rc = expire_one(repo, d, "retention", msg, NULL, &removed, true, err);
		if (!rc)
			rc = fdl_removals_add(&report->expired, &report->expired_count, d->id, &removed, err);
		fdl_strlist_free(&removed);
	}
	if (!rc && !dry_run && report->expired_count) /* views list no expired version */
		rc = fdl_iceberg_after_removal(repo, err);
	fdl_store_lock_release(&lock);
	if (rc)
		fdl_expire_report_free(report);
	else
		*out = report;
	fdl_strlist_free(&p.ids);
	fdl_vdirs_free(&dirs);
	return rc;
}

/* ---- withdrawal ------------------------------------------------------------ */


/* The files version d's catalog references, or only those it added. */
static int version_files(fdl_strlist *out, fdl_repo *repo, fdl_duck *duck, vdirs *dirs, const vdir *d,
			 bool added_only, fdl_error *err)
{
	const fdl_version *v = d->v;
	char *local = NULL;
	int rc = fdl_version_fetch_catalog(&local, repo, v, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(duck, "fdl_life", local, FDL_CAT_DUCKDB, true, err);
	if (!rc) {
		int64_t first = added_only ? fdl_vdirs_added_from(dirs, d) : -1;
		rc = fdl_catalog_all_files(out, duck, "fdl_life", first, err);
		fdl_catalog_detach(duck, "fdl_life", NULL);
	}
	free(local);
	return rc;
}

/* Did a withdrawal of `id` already mark d (expired.json written, perhaps
 * with deletions left to do)? */
static bool withdrawn_with(fdl_repo *repo, const vdir *d, const char *id)
{
	if (!expired(d))
		return false;
	char *key = fdl_version_key(d->id, FDL_EXPIRED_JSON);
	fdl_buf b = {0};
	bool yes = false;
	if (key && fdl_store_get(repo->store, key, 1 << 24, &b, NULL, NULL) == 0) {
		json_t *j = json_loadb(b.data, b.len, 0, NULL);
		const char *w = json_string_value(json_object_get(j, "withdrawn_with"));
		yes = w && !strcmp(w, id);
		json_decref(j);
	}
	fdl_buf_free(&b);
	free(key);
	return yes;
}

int fdl_withdraw(fdl_withdraw_report **out, fdl_repo *repo, const char *id, const char *reason,
		 int remove_version_json, int dry_run, fdl_error *err)
{
	if (!reason || !*reason)
		return fdl_fail(err, FDL_EINVALID, "a withdrawal needs a reason (--reason TEXT)");
	fdl_withdraw_report *report = calloc(1, sizeof *report);
	if (!report)
		return fdl_oom(err);
	report->dry_run = dry_run;
	snprintf(report->withdrawn, sizeof report->withdrawn, "%s", id);
	vdirs dirs;
	fdl_duck *duck = NULL;
	fdl_strlist files = {0};
	json_t *data = NULL;
	int rc = fdl_vdirs_list(&dirs, NULL, NULL, repo, err);
	if (!rc)
		rc = fdl_vdirs_read(&dirs, NULL, repo, err);
	vdir *target = rc ? NULL : fdl_vdirs_find(&dirs, id);
	if (!rc && !target)
		rc = fdl_fail(err, FDL_ENOTFOUND, "version %s not found in %s", id, repo->root);
	if (!rc)
		rc = fdl_duck_new(&duck, true, err);
	/* the data the version added: from its catalog, or from the record of
	 * an earlier (interrupted) withdrawal */
	if (!rc && expired(target)) {
		char *key = fdl_version_key(id, FDL_EXPIRED_JSON);
		fdl_buf b = {0};
		json_t *j = NULL;
		rc = fdl_store_get(repo->store, key, 1 << 24, &b, NULL, err);
		if (!rc)
			rc = fdl_json_parse(&j, b.data, b.len, key, err);
		size_t i;
		const json_t *f;
		json_array_foreach(json_object_get(j, "data_files"), i, f) rc = rc ? rc : fdl_strlist_add(&files, json_string_value(f), err);
		if (!rc && !json_is_array(json_object_get(j, "data_files")))
			rc = fdl_fail(err, FDL_EINVALID, "version %s already left retention; its catalog is gone, so fdl cannot "
				      "tell which data files it added", id);
		json_decref(j);
		fdl_buf_free(&b);
		free(key);
	} else if (!rc && !target->v) {
		rc = fdl_fail(err, FDL_EINVALID, "version %s has no readable " FDL_VERSION_JSON, id);
	} else if (!rc) {
		rc = version_files(&files, repo, duck, &dirs, target, true, err);
	}
	fdl_strlist uniq = {0};
	fdl_strlist_sort(&files);
	for (size_t i = 0; i < files.len && !rc; i++)
		if (i == 0 || strcmp(files.items[i], files.items[i - 1]))
			rc = fdl_strlist_add(&uniq, files.items[i], err);
	data = strlist_json(&uniq);
	/* every live version whose catalog references one of those files, and
	 * those an interrupted run of this withdrawal already marked */
	for (size_t i = 0; i < dirs.len && !rc; i++) {
		vdir *d = &dirs.items[i];
		bool hit = d == target || withdrawn_with(repo, d, id);
		if (!hit && d->v && !expired(d) && fdl_vdir_has(d, fdl_version_catalog_path(d->v))) {
			fdl_strlist refs = {0};
			rc = version_files(&refs, repo, duck, &dirs, d, false, err);
			for (size_t k = 0; k < refs.len && !hit; k++)
				hit = fdl_strlist_has_sorted(&uniq, refs.items[k]);
			fdl_strlist_free(&refs);
		}
		if (!hit)
			continue;
		fdl_strlist removed = {0};
		if (!rc)
			rc = catalog_files(&removed, d, err);
		if (!rc && !dry_run) {
			/* version.json goes last, after everything else of the withdrawal */
			json_t *extra = json_pack("{s:O, s:s}", "data_files", data, "withdrawn_with", id);
			rc = extra ? expire_one(repo, d, "withdrawn", reason, extra, &removed,
						!(d == target && remove_version_json), err)
				   : fdl_oom(err);
			json_decref(extra);
		}
		if (!rc && d == target && remove_version_json && fdl_vdir_has(d, FDL_VERSION_JSON))
			rc = fdl_strlist_add(&removed, FDL_VERSION_JSON, err);
		if (!rc)
			rc = fdl_removals_add(&report->versions, &report->version_count, d->id, &removed, err);
		fdl_strlist_free(&removed);
	}
	fdl_duck_free(duck);
	if (!rc && !dry_run) /* no view leads to the data, before it goes */
		rc = fdl_iceberg_after_removal(repo, err);
	for (size_t i = 0; i < uniq.len && !rc && !dry_run; i++)
		rc = del_owned(repo, fdl_asprintf("%s/%s", repo->data_dir, uniq.items[i]), err);
	/* the history index holds a copy of every version.json: it goes
	 * before and after the file itself (a commit in between may have
	 * written it again) */
	if (!rc && !dry_run && remove_version_json)
		rc = fdl_history_drop(repo, err);
	if (!rc && !dry_run && remove_version_json)
		rc = del_owned(repo, fdl_version_key(id, FDL_VERSION_JSON), err);
	if (!rc && !dry_run && remove_version_json)
		rc = fdl_history_drop(repo, err);
	json_decref(data);
	fdl_strarray_take(&report->data_files, &uniq);
	if (rc)
		fdl_withdraw_report_free(report);
	else
		*out = report;
	fdl_strlist_free(&files);
	fdl_vdirs_free(&dirs);
	return rc;
}

/* ---- garbage collection ------------------------------------------------------ */

int fdl_gc(fdl_gc_report **out, fdl_repo *repo, int64_t grace_seconds, int dry_run, fdl_error *err)
{
	vdirs dirs;
	fdl_duck *duck = NULL;
	fdl_strlist keep = {0}, data = {0}, deleted = {0}, incomplete = {0};
	/* first, as git gc writes the commit-graph: every branch's history
	 * index brought up to its ref (written whole for a repository that has
	 * none); derived, so a branch it cannot index is left without one */
	fdl_strlist heads = {0};
	fdl_error ierr;
	if (!dry_run && !fdl_store_list(repo->store, "refs/heads", &heads, &ierr))
		for (size_t i = 0; i < heads.len; i++)
			if (!strstr(heads.items[i], ".lock"))
				fdl_history_update(repo, heads.items[i] + 11, -1, &ierr);
	fdl_strlist_free(&heads);
	/* views list only live versions (expire keeps them so): before any data goes */
	int rc = dry_run ? 0 : fdl_iceberg_after_removal(repo, err);
	if (!rc)
		rc = fdl_vdirs_list(&dirs, NULL, NULL, repo, err);
	if (!rc)
		rc = fdl_vdirs_read(&dirs, NULL, repo, err);
	/* the ref list written whole, as the history index is (derived: its
	 * failure costs readers of a static host only) */
	if (!rc && !dry_run)
		fdl_reflist_rebuild(repo, &dirs, &ierr);
	if (!rc)
		rc = fdl_duck_new(&duck, true, err);
	for (size_t i = 0; i < dirs.len && !rc; i++) {
		vdir *d = &dirs.items[i];
		if (!d->v || expired(d))
			continue;
		if (!fdl_vdir_has(d, fdl_version_catalog_path(d->v)))
			rc = fdl_fail(err, FDL_EINVALID,
				      "version %s is live but its catalog is missing, so gc cannot tell which data files "
				      "it needs; fix the repository (fdl verify) first",
				      d->id);
		else
			rc = version_files(&keep, repo, duck, &dirs, d, false, err);
	}
	fdl_duck_free(duck);
	fdl_strlist_sort(&keep);
	int64_t now = (int64_t)time(NULL);
	if (!rc)
		rc = fdl_store_list(repo->store, repo->data_dir, &data, err);
	size_t prefix = strlen(repo->data_dir) + 1;
	for (size_t i = 0; i < data.len && !rc; i++) {
		const char *rel = data.items[i] + prefix;
		int64_t when = 0;
		if (fdl_strlist_has_sorted(&keep, rel))
			continue;
		if ((rc = fdl_store_modified(repo->store, data.items[i], &when, err)))
			break;
		if (now - when < grace_seconds)
			continue; /* perhaps a running writer's new file */
		if ((rc = fdl_strlist_add(&deleted, data.items[i], err)))
			break;
		if (!dry_run)
			rc = del_owned(repo, fdl_strdup(data.items[i]), err);
	}
	/* history packs no index names (an interrupted or raced index writer) */
	fdl_strlist packs = {0};
	if (!rc)
		rc = fdl_history_unnamed_packs(&packs, repo, err);
	for (size_t i = 0; i < packs.len && !rc; i++) {
		int64_t when = now;
		if ((rc = fdl_store_modified(repo->store, packs.items[i], &when, err)))
			break;
		if (now - when < grace_seconds)
			continue; /* perhaps a running writer's, about to be named */
		if ((rc = fdl_strlist_add(&deleted, packs.items[i], err)))
			break;
		if (!dry_run)
			rc = del_owned(repo, fdl_strdup(packs.items[i]), err);
	}
	fdl_strlist_free(&packs);
	/* incomplete version directories (no version.json) past the grace period */
	for (size_t i = 0; i < dirs.len && !rc; i++) {
		vdir *d = &dirs.items[i];
		if (fdl_vdir_has(d, FDL_VERSION_JSON) || expired(d)) /* a withdrawal's record stays */
			continue;
		bool old = true;
		for (size_t k = 0; k < d->files.len && old; k++) {
			char *key = fdl_version_key(d->id, d->files.items[k]);
			int64_t when = now;
			fdl_error e;
			old = key && !fdl_store_modified(repo->store, key, &when, &e) && now - when >= grace_seconds;
			free(key);
		}
		if (!old)
			continue;
		if ((rc = fdl_strlist_add(&incomplete, d->id, err)))
			break;
		for (size_t k = 0; k < d->files.len && !rc && !dry_run; k++)
			rc = del_owned(repo, fdl_version_key(d->id, d->files.items[k]), err);
	}
	fdl_gc_report *report = rc ? NULL : calloc(1, sizeof *report);
	if (!rc && !report)
		rc = fdl_oom(err);
	if (!rc) {
		report->dry_run = dry_run;
		report->grace_seconds = grace_seconds;
		fdl_strarray_take(&report->deleted, &deleted);
		fdl_strarray_take(&report->incomplete_versions, &incomplete);
		*out = report;
	}
	fdl_strlist_free(&deleted);
	fdl_strlist_free(&incomplete);
	fdl_strlist_free(&keep);
	fdl_strlist_free(&data);
	fdl_vdirs_free(&dirs);
	return rc;
}
