/* fdl gc: delete data files no live version needs.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

const cli_doc doc_gc = {
	.usage = "fdl gc ROOT [--grace 14d] [--dry-run] [--json]",
	.summary = "delete data files no live version needs",
	.text = "Deletes data files that no live version's catalog references (live or\n"
		"historical rows), incomplete version folders and history packs no index\n"
		"names (left by an interrupted writer), once older than the grace\n"
		"period, so a writer's not yet committed files survive. Never a file a live\n"
		"version needs. First, as `git gc` writes the commit-graph, it brings every\n"
		"branch's history index up to date (writing it whole for a repository\n"
		"that has none, such as one another tool wrote).",
	.examples = "fdl gc /srv/population --grace 7d --dry-run\n",
	.min = 1,
	.max = 1,
};

/* "14d", "36h", "90m", "30s" or seconds; -1 when it is none of them. */
static long long duration(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (end == s || v < 0)
		return -1;
	long long mult = !*end ? 1 : !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600
			 : !strcmp(end, "d") ? 86400 : -1;
	return mult < 0 ? -1 : v * mult;
}

int cmd_gc(int argc, char **argv)
{
	const char *pos[1], *grace = "14d";
	bool dry = false, json = false;
	int npos;
	cli_opt opts[] = {
		{.name = "grace", .value = &grace, .arg = "AGE", .help = "keep files younger than this (default 14d; s, m, h, d)"},
		{.name = "dry-run", .short_name = 'n', .flag = &dry, .help = "only list what would be deleted"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_gc, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	long long g = duration(grace);
	if (g < 0) {
		fprintf(stderr, "fdl: --grace '%s': expected a number with s, m, h or d\n", grace);
		return CLI_EXIT_USAGE;
	}
	fdl_repo *repo = NULL;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	fdl_gc_report *r = NULL;
	rc = fdl_gc(&r, repo, g, dry, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	char *text = NULL;
	if (json) {
		rc = cli_print_json(fdl_gc_report_json(&text, r, &err), &text, &err);
	} else if (!r->deleted.count && !r->incomplete_versions.count) {
		printf("Nothing %s: every data file is referenced by a live version or younger than the grace "
		       "period (%s), and no version is incomplete\n",
		       dry ? "would be removed" : "to remove", grace);
	} else {
		cli_print_list(dry ? "would remove " : "removed ", &r->deleted, "");
		cli_print_list("incomplete version ", &r->incomplete_versions, dry ? ": would remove" : ": removed");
	}
	fdl_gc_report_free(r);
	return rc;
}
