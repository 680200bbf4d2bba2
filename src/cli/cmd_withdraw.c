/* fdl withdraw: withdraw a version published by mistake.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

const cli_doc doc_withdraw = {
	.usage = "fdl withdraw ROOT VERSION --reason TEXT [--remove-version-json] [--dry-run] [--json]",
	.summary = "withdraw a version published by mistake",
	.text = "For data published by mistake: VERSION gets `expired.json` with\n"
		"`\"reason\": \"withdrawn\"` (recording the data files), its catalogs go, the\n"
		"data files it added are deleted, and every other version whose catalog\n"
		"references one of them is withdrawn with it. `--remove-version-json` also\n"
		"deletes VERSION's `version.json` when it carries the withdrawn data (a\n"
		"message, an input URL). Idempotent: rerun it after a crash to finish.",
	.examples = "fdl withdraw /srv/population 019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c --reason \"personal data in a column\" --dry-run\n",
	.min = 2,
	.max = 2,
};

int cmd_withdraw(int argc, char **argv)
{
	const char *pos[2], *reason = NULL;
	bool dry = false, json = false, vj = false;
	int npos;
	cli_opt opts[] = {
		{.name = "reason", .value = &reason, .arg = "TEXT", .help = "why (required): kept in expired.json"},
		{.name = "remove-version-json", .flag = &vj, .help = "also delete version.json (it carries the withdrawn data)"},
		{.name = "dry-run", .short_name = 'n', .flag = &dry, .help = "only list every version and file it would touch"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_withdraw, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_repo *repo = NULL;
	char id[FDL_ID_LEN + 1];
	if ((rc = cli_open_version(&repo, id, pos[0], pos[1])))
		return rc;
	fdl_error err = {0};
	fdl_withdraw_report *r = NULL;
	rc = fdl_withdraw(&r, repo, id, reason, vj, dry, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	char *text = NULL;
	if (json) {
		rc = cli_print_json(fdl_withdraw_report_json(&text, r, &err), &text, &err);
	} else {
		cli_print_removals("withdrew", r->versions, r->version_count, dry);
		cli_print_list(dry ? "data file would remove: " : "data file removed: ", &r->data_files, "");
	}
	fdl_withdraw_report_free(r);
	return rc;
}
