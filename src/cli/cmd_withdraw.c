/* fdl withdraw: withdraw versions published by mistake.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <string.h>

#define MAX_VERSIONS 16

const cli_doc doc_withdraw = {
	.usage = "fdl withdraw ROOT VERSION... --reason TEXT [--force] [--clean WORK] [--remove-version-json] [--dry-run] "
		 "[--json]",
	.summary = "withdraw versions published by mistake",
	.text = "For data published by mistake: each VERSION gets `expired.json` with\n"
		"`\"reason\": \"withdrawn\"` (recording the data files), its catalogs go, the\n"
		"data files it added are deleted, and every other version whose catalog\n"
		"references one of them is withdrawn with it. `--remove-version-json` also\n"
		"deletes each VERSION's `version.json` when it carries the withdrawn data (a\n"
		"message, an input URL). Idempotent: rerun it after a crash to finish.\n"
		"\n"
		"It first says what it will take, and refuses (exit 5, nothing written)\n"
		"when that is more than meant: when a branch tip or a tagged version would\n"
		"be withdrawn (unless `--force`), and, whatever the options, when a live\n"
		"version that would stay still returns rows a VERSION added (a CHECKPOINT\n"
		"or `ducklake_merge_adjacent_files` copied them into another data file):\n"
		"withdraw that version too, or publish a version without the rows first.\n"
		"`--dry-run` and the refusal list every version it would withdraw, the\n"
		"branches and tags among them, the data files it would delete, the live\n"
		"versions still returning the rows, how many rows each VERSION added to\n"
		"each table, and the DuckDB statements that delete those rows in a\n"
		"working catalog. `--clean WORK` runs them in the working catalog WORK\n"
		"(checked out on a branch that holds the VERSIONs) and says how many rows\n"
		"of each table it deleted (`--dry-run`: would delete, WORK unchanged): the\n"
		"rows the VERSIONs added are deleted, the tables' files rewritten without\n"
		"them, older snapshots expired; then `fdl commit WORK` publishes a version\n"
		"without them, the branch moves past the VERSIONs, and the withdrawal\n"
		"leaves it readable. Rows are known by where they are (DuckLake's row\n"
		"ids, which follow a row through merges), never by value: a row equal to\n"
		"one of them that another version added stays.",
	.examples = "fdl withdraw /srv/population main:8 --reason \"personal data in a column\" --dry-run\n"
		    "fdl checkout /srv/population fix --ref main\n"
		    "fdl withdraw /srv/population main:8 --reason \"personal data in a column\" --clean fix --dry-run\n"
		    "fdl withdraw /srv/population main:8 --reason \"personal data in a column\" --clean fix\n"
		    "fdl commit fix -m \"Remove the rows published by mistake in July\"\n"
		    "fdl withdraw /srv/population main:8 --reason \"personal data in a column\"\n",
	.min = 2,
	.max = 1 + MAX_VERSIONS,
};

static void print_report(const fdl_withdraw_report *r)
{
	bool dry = r->dry_run;
	cli_print_removals(dry ? "would withdraw" : "withdrew", r->versions, r->version_count, dry);
	cli_print_list(dry ? "data file would remove: " : "data file removed: ", &r->data_files, "");
	cli_print_list(dry ? "would name a withdrawn version: " : "names a withdrawn version: ", &r->refs, "");
	for (size_t i = 0; i < r->left_count; i++)
		printf("still returns %lld row%s of %s that %s added: live version %s\n", (long long)r->left[i].rows,
		       r->left[i].rows == 1 ? "" : "s", r->left[i].table, r->left[i].from, r->left[i].id);
	if (r->refused && dry)
		printf("would be refused: %s\n", r->refused);
	if (r->cleanup && (r->refused || dry)) {
		for (size_t i = 0; i < r->added_count; i++)
			printf("added %lld row%s to %s: %s (the statements below delete them)\n", (long long)r->added[i].rows,
			       r->added[i].rows == 1 ? "" : "s", r->added[i].table, r->added[i].from);
		printf("%s", r->cleanup);
	}
}

/* --clean WORK: the rows deleted (or, with --dry-run, those it would
 * delete), per table. */
static int clean(fdl_repo *repo, const char *const *ids, size_t n, const char *work, bool dry, bool json)
{
	fdl_withdraw_report *r = NULL;
	fdl_withdraw_options o = FDL_WITHDRAW_OPTIONS_INIT;
	o.dry_run = dry;
	fdl_error err = {0};
	if (fdl_withdraw_clean_rows(&r, repo, ids, n, work, &o, &err))
		return cli_fail(&err);
	int rc = 0;
	char *text = NULL;
	if (json)
		rc = cli_print_json(fdl_withdraw_report_json(&text, r, &err), &text, &err);
	else {
		for (size_t i = 0; i < r->added_count; i++)
			printf("%s %lld row%s of %s that %s added\n", dry ? "would delete" : "deleted",
			       (long long)r->added[i].rows, r->added[i].rows == 1 ? "" : "s", r->added[i].table,
			       r->added[i].from);
	}
	if (!rc && !dry)
		fprintf(stderr, "%s no longer holds the rows; publish it (fdl commit %s -m MESSAGE), then withdraw again\n",
			work, work);
	fdl_withdraw_report_free(r);
	return rc;
}

int cmd_withdraw(int argc, char **argv)
{
	const char *pos[1 + MAX_VERSIONS], *reason = NULL, *clean_work = NULL;
	bool dry = false, json = false, vj = false, force = false;
	int npos;
	cli_opt opts[] = {
		{.name = "reason", .value = &reason, .arg = "TEXT", .help = "why (required): kept in expired.json"},
		{.name = "force", .flag = &force, .help = "withdraw a branch tip or a tagged version too"},
		{.name = "clean", .value = &clean_work, .arg = "WORK", .help = "delete the VERSIONs' rows in the working catalog WORK instead"},
		{.name = "remove-version-json", .flag = &vj, .help = "also delete version.json (it carries the withdrawn data)"},
		{.name = "dry-run", .short_name = 'n', .flag = &dry, .help = "only list every version and file it would touch"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_withdraw, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_repo *repo = NULL;
	char ids[MAX_VERSIONS][FDL_ID_LEN + 1];
	const char *idp[MAX_VERSIONS];
	if ((rc = cli_open_version(&repo, ids[0], pos[0], pos[1])))
		return rc;
	fdl_error err = {0};
	for (int i = 2; i < npos && !rc; i++)
		if (fdl_ref_resolve(ids[i - 1], repo, pos[i], &err))
			rc = cli_fail(&err);
	for (int i = 1; i < npos; i++)
		idp[i - 1] = ids[i - 1];
	if (!rc && clean_work) {
		rc = clean(repo, idp, (size_t)npos - 1, clean_work, dry, json);
		fdl_repo_free(repo);
		return rc;
	}
	fdl_withdraw_report *r = NULL;
	fdl_withdraw_options o = FDL_WITHDRAW_OPTIONS_INIT;
	o.reason = reason;
	o.remove_version_json = vj;
	o.dry_run = dry;
	o.force = force;
	int wrc = rc ? 0 : fdl_withdraw(&r, repo, idp, (size_t)npos - 1, &o, &err);
	fdl_repo_free(repo);
	if (rc)
		return rc;
	if (!r)
		return cli_fail(&err);
	char *text = NULL;
	if (json)
		rc = cli_print_json(fdl_withdraw_report_json(&text, r, &err), &text, &err);
	else
		print_report(r);
	fdl_withdraw_report_free(r);
	return wrc ? cli_fail(&err) : rc;
}
