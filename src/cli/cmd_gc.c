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
		"period. Never a file a live version needs, and under the data folder\n"
		"only files named as DuckLake names its own (a README or a CSV put there\n"
		"is left alone, and listed).\n"
		"\n"
		"Working catalogs are roots, as Git's index is: the files a working\n"
		"catalog wrote and has not committed (in the repository's `work/<id>/`)\n"
		"are kept whatever their age while its record (`work/<id>.json`) is\n"
		"live. A record lives 90 days after the last command on it (`commit`,\n"
		"`describe`, a second `checkout` of a PostgreSQL catalog); once its lease\n"
		"ends gc removes it with the files it had not committed, and reports it\n"
		"as expiring in the 14 days before. `fdl checkout --abandon WORK` ends\n"
		"one at once. Files of a working catalog the repository no longer knows\n"
		"go once older than the grace period. First, as `git gc` writes the\n"
		"commit-graph, it brings every branch's history index up to date (writing\n"
		"it whole for a repository that has none, such as one another tool\n"
		"wrote).",
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

/* Each working catalog: kept (its uncommitted files listed apart from
 * the files of expired versions), expiring, or removed. */
static void print_work(const fdl_gc_report *r)
{
	for (size_t i = 0; i < r->work_count; i++) {
		const fdl_gc_work *w = &r->work[i];
		size_t n = w->files.count;
		printf("working catalog %s", w->id);
		if (w->where)
			printf(" (%s, branch %s)", w->where, w->branch ? w->branch : "?");
		switch (w->state) {
		case FDL_GC_WORK_KEPT:
		case FDL_GC_WORK_EXPIRING:
			printf(": %zu uncommitted file%s kept; lease until %s%s\n", n, n == 1 ? "" : "s",
			       w->lease_end ? w->lease_end : "?",
			       w->state == FDL_GC_WORK_EXPIRING ? " (soon: any fdl command on it renews it)" : "");
			break;
		case FDL_GC_WORK_ENDED:
			printf(": lease ended %s; %s with its %zu uncommitted file%s\n", w->lease_end ? w->lease_end : "?",
			       r->dry_run ? "would remove its record" : "record removed", n, n == 1 ? "" : "s");
			break;
		case FDL_GC_WORK_ABANDONED:
			printf(": no record (abandoned); %zu file%s past the grace %s\n", n, n == 1 ? "" : "s",
			       r->dry_run ? "would be removed" : "removed");
			break;
		case FDL_GC_WORK_UNREADABLE:
			printf(": its record cannot be read; %zu file%s kept\n", n, n == 1 ? "" : "s");
			break;
		}
		cli_print_list(w->state == FDL_GC_WORK_KEPT || w->state == FDL_GC_WORK_EXPIRING ||
					       w->state == FDL_GC_WORK_UNREADABLE
				       ? "  uncommitted, kept: "
				       : r->dry_run ? "  would remove " : "  removed ",
			       &w->files, "");
	}
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
	fdl_gc_options o = FDL_GC_OPTIONS_INIT;
	o.grace_seconds = g;
	o.dry_run = dry;
	rc = fdl_gc(&r, repo, &o, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	char *text = NULL;
	if (json) {
		rc = cli_print_json(fdl_gc_report_json(&text, r, &err), &text, &err);
	} else {
		size_t work_gone = 0;
		for (size_t i = 0; i < r->work_count; i++)
			work_gone += r->work[i].state == FDL_GC_WORK_ENDED || r->work[i].state == FDL_GC_WORK_ABANDONED;
		if (!r->deleted.count && !r->incomplete_versions.count && !work_gone)
			printf("Nothing %s: every data file is referenced by a live version or younger than the grace "
			       "period (%s), and no version is incomplete\n",
			       dry ? "would be removed" : "to remove", grace);
		cli_print_list(dry ? "would remove " : "removed ", &r->deleted, "");
		cli_print_list("incomplete version ", &r->incomplete_versions, dry ? ": would remove" : ": removed");
		print_work(r); /* what is kept, and why, even when nothing goes */
		cli_print_list("not a DuckLake file, left alone: ", &r->left_alone, "");
	}
	fdl_gc_report_free(r);
	return rc;
}
