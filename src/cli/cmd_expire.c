/* fdl expire: apply fdl.json's retention to old versions.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

const cli_doc doc_expire = {
	.usage = "fdl expire ROOT [--dry-run] [--json]",
	.summary = "apply fdl.json's retention to old versions",
	.text = "Applies `fdl.json`'s retention, `\"retention\": {\"days\": N, \"keep\": K}`\n"
		"(`null` is forever): a version older than N days and beyond the newest K of\n"
		"its branch, and not the tip of a branch or tag, gets `expired.json` and\n"
		"loses its catalog, `catalogs/` and `files.json`; `version.json` and\n"
		"`dataset.json` stay, so `fdl log` still shows it, and readers refuse it\n"
		"with the date. Idempotent. The refs are read, and versions expired, under\n"
		"the lock tags and branches are created under (`refs.lock`): a ref created\n"
		"meanwhile is waited for and protects its version.",
	.examples = "fdl expire /srv/population --dry-run\n",
	.min = 1,
	.max = 1,
};

int cmd_expire(int argc, char **argv)
{
	const char *pos[1];
	bool dry = false, json = false;
	int npos;
	cli_opt opts[] = {
		{.name = "dry-run", .short_name = 'n', .flag = &dry, .help = "only list what would expire"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_expire, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_repo *repo = NULL;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	fdl_expire_report *r = NULL;
	fdl_expire_options o = FDL_EXPIRE_OPTIONS_INIT;
	o.dry_run = dry;
	rc = fdl_expire(&r, repo, &o, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	char *text = NULL;
	if (json)
		rc = cli_print_json(fdl_expire_report_json(&text, r, &err), &text, &err);
	else if (!r->expired_count)
		printf("Nothing %s: no version is past fdl.json's retention (see fdl config ROOT retention.days)\n",
		       dry ? "would expire" : "to expire");
	else
		cli_print_removals("expired", r->expired, r->expired_count, dry);
	fdl_expire_report_free(r);
	return rc;
}
