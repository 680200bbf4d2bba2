/* fdl verify of a store that cannot be listed (a static HTTP host, fdl
 * serve): the versions found by walking from the refs, as fdl clone plans
 * a copy from such a host, with the history index of each branch and the
 * ref list, and one warning saying what a walk cannot see
 * (docs/decisions.md, "fdl verify URL of a host that lists nothing"). The
 * checks of each version are verify.c's. */
#include "report.h"
#include "verify.h"
#include "../layout/hindex.h"
#include "../layout/iceberg.h"
#include "../layout/keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int found(fdl_verify_report *out, fdl_finding_list *problems, fdl_finding_list *warnings, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; problems && i < problems->len && !rc; i++)
		rc = fdl_findings_add(&out->problems, &out->problem_count, problems->items[i].where,
				      problems->items[i].what, err);
	for (size_t i = 0; warnings && i < warnings->len && !rc; i++)
		rc = fdl_findings_add(&out->warnings, &out->warning_count, warnings->items[i].where,
				      warnings->items[i].what, err);
	if (problems)
		fdl_finding_list_free(problems);
	if (warnings)
		fdl_finding_list_free(warnings);
	return rc;
}

/* Each ref's version found; HEAD's branch readable; the history index of
 * each branch, and the ref list against the refs it names. */
static int check_named(fdl_finding_list *problems, fdl_finding_list *warnings, vdirs *dirs, const fdl_refs *refs,
		       fdl_repo *repo, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < refs->names.len && !rc; i++) {
		vdir *d = fdl_vdirs_find(dirs, refs->ids[i]);
		if (d && d->v)
			d->named = true;
		else
			rc = fdl_finding_list_add(problems, refs->names.items[i],
						  "points at %s, which is not a readable version", refs->ids[i]);
	}
	char *head = NULL;
	fdl_error e;
	if (!rc && fdl_repo_head_branch(&head, repo, &e))
		rc = fdl_finding_list_add(problems, FDL_HEAD_KEY, "%s", e.message);
	free(head);
	if (rc)
		return fdl_oom(err);
	return fdl_history_check_named(problems, warnings, repo, &refs->names, err); /* and the ref list */
}

static int not_listed(fdl_verify_report *out, const fdl_refs *refs, size_t versions, fdl_error *err)
{
	char what[1024];
	size_t n = refs->names.len;
	snprintf(what, sizeof what,
		 "not listed: the host serves no listing of its files, so verify walked from %s (%zu ref%s) "
		 "through every parent and checked the %zu version%s they reach; it cannot see a version no ref "
		 "reaches (an orphan), a stray file or one a version may not hold, " FDL_FORMAT_CATALOGS_DIR
		 "/ in a version, a pack of the history index (" FDL_HISTORY_DIR "/) no branch's index names, nor "
		 "the Iceberg views (" FDL_ICEBERG_DIR "/): fdl verify of the folder or bucket it serves, or of a "
		 "clone, checks those",
		 refs->from_list ? "the refs its ref list names" : "HEAD's branch (it has no ref list)", n,
		 n == 1 ? "" : "s", versions, versions == 1 ? "" : "s");
	return fdl_findings_add(&out->warnings, &out->warning_count, FDL_VERSIONS_DIR "/", what, err);
}

int fdl_verify_walk(fdl_verify_report *out, vdirs *dirs, fdl_repo *repo, fdl_error *err)
{
	fdl_refs refs;
	int rc = fdl_refs_all(&refs, repo, true, err);
	if (rc)
		return rc;
	fdl_finding_list unreadable = {0}, problems = {0}, warnings = {0};
	rc = fdl_vdirs_walk(dirs, &unreadable, repo, refs.ids, refs.names.len, err);
	for (size_t i = 0; i < dirs->len; i++)
		dirs->items[i].reachable = true; /* every version a walk finds */
	if (!rc)
		rc = found(out, &unreadable, NULL, err);
	if (!rc)
		rc = check_named(&problems, &warnings, dirs, &refs, repo, err);
	int frc = found(out, &problems, &warnings, err);
	if (!rc)
		rc = frc;
	if (!rc)
		rc = not_listed(out, &refs, dirs->len, err);
	fdl_finding_list_free(&unreadable);
	fdl_refs_free(&refs);
	return rc;
}
