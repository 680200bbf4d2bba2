/* fdl expire: fdl.json's retention applied; which versions it protects
 * (ref tips, a branch's newest, working catalogs' bases) and which go. */
#include "lifecycle.h"
#include "derived.h"
#include "report.h"
#include "work.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	fdl_refs refs;
	int rc = fdl_refs_all(&refs, repo, true, err);
	for (size_t i = 0; i < refs.names.len && !rc; i++) {
		const char *id = refs.ids[i];
		bool branch = fdl_ref_kind_of(refs.names.items[i]) == FDL_REF_BRANCH;
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
	fdl_refs_free(&refs);
	return rc;
}

/* The version each working catalog the repository knows is based on: its
 * data files are in that catalog, and its next commit reads it. */
static int protect_work_bases(protect *p, fdl_repo *repo, fdl_error *err)
{
	fdl_workrecs recs;
	int rc = fdl_workrecs_list(&recs, repo, err);
	int64_t now = (int64_t)time(NULL);
	for (size_t i = 0; i < recs.len && !rc; i++) {
		const fdl_workrec *w = &recs.items[i];
		const char *base = json_string_value(json_object_get(w->doc, "base"));
		if (w->has_record && base && fdl_id_is_valid(base) && (w->lease_end < 0 || w->lease_end > now))
			rc = fdl_strlist_add(&p->ids, base, err);
	}
	fdl_workrecs_free(&recs);
	return rc;
}

/* The versions retention takes: not protected, older than the days kept
 * when fdl.json says a number of days, and not done already (one a run
 * cut short left files of is not done). */
static int expiring(fdl_strlist *out, vdirs *dirs, const protect *p, int64_t days, fdl_error *err)
{
	int64_t now = (int64_t)time(NULL);
	int rc = 0;
	for (size_t i = 0; i < dirs->len && !rc; i++) {
		vdir *d = &dirs->items[i];
		if (!d->v || protected_id(p, d->id))
			continue;
		int64_t created = fdl_time_parse_iso(fdl_version_created_at(d->v));
		if (days >= 0 && (created < 0 || now - created < days * 86400))
			continue;
		fdl_strlist removed = {0};
		rc = fdl__catalog_files(&removed, d, err);
		if (!rc && !(expired(d) && removed.len == 0)) /* not done already */
			rc = fdl_strlist_add(out, d->id, err);
		fdl_strlist_free(&removed);
	}
	return rc;
}

/* Retention applied to each version it takes; their previews and pages
 * go first, before any expired.json: no crash leaves an expired version's
 * rows in one. */
static int expire_each(fdl_expire_report *report, fdl_repo *repo, vdirs *dirs, const protect *p, int64_t days,
		       int64_t keep, fdl_error *err)
{
	fdl_strlist going = {0};
	int rc = expiring(&going, dirs, p, days, err);
	if (!rc && !report->dry_run && going.len)
		rc = fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_GOING, .ids = &going}, err);
	char msg[160];
	snprintf(msg, sizeof msg, "retention: %s%s%s", days >= 0 ? "older than the days kept" : "",
		 days >= 0 && keep >= 0 ? " and " : "", keep >= 0 ? "beyond the newest versions kept" : "");
	for (size_t i = 0; i < going.len && !rc; i++) {
		vdir *d = fdl_vdirs_find(dirs, going.items[i]);
		fdl_strlist removed = {0};
		rc = fdl__catalog_files(&removed, d, err);
		if (!rc && !report->dry_run)
			rc = fdl__expire_one(repo, d, "retention", msg, NULL, &removed, true, err);
		if (!rc)
			rc = fdl_removals_add(&report->expired, &report->expired_count, d->id, &removed, err);
		fdl_strlist_free(&removed);
	}
	fdl_strlist_free(&going);
	return rc;
}

int fdl_expire(fdl_expire_report **out, fdl_repo *repo, const fdl_expire_options *opts, fdl_error *err)
{
	if (opts && fdl_options_check(opts->version, FDL_EXPIRE_OPTIONS_VERSION, "fdl_expire", "fdl_expire_options", err))
		return FDL_EINVALID;
	int dry_run = opts ? opts->dry_run : 0;
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
	if (!rc)
		rc = protect_work_bases(&p, repo, err);
	if (!rc && !dry_run)
		fdl_test_pause("expire-checked");
	if (!rc && (days >= 0 || keep >= 0))
		rc = expire_each(report, repo, &dirs, &p, days, keep, err);
	if (!rc && !dry_run && report->expired_count) /* views list no expired version */
		rc = fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_REMOVAL}, err);
	else if (!rc && !dry_run && (days >= 0 || keep >= 0)) /* a run cut short before its removal */
		rc = fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_SWEEP}, err);
	fdl_store_lock_release(&lock);
	if (rc)
		fdl_expire_report_free(report);
	else
		*out = report;
	fdl_strlist_free(&p.ids);
	fdl_vdirs_free(&dirs);
	return rc;
}

