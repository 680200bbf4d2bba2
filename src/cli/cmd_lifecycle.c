/* fdl expire, fdl withdraw, fdl gc: print what was (or would be) done. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static void print_removals(const char *what, const fdl_version_removal *v, size_t n, bool dry_run)
{
	for (size_t i = 0; i < n; i++) {
		printf("%s %s", what, v[i].id);
		for (size_t k = 0; k < v[i].removed.count; k++)
			printf("%s %s", k ? "," : (dry_run ? ": would remove" : ": removed"), v[i].removed.strings[k]);
		printf("\n");
	}
}

static void print_list(const char *before, const fdl_strarray *a, const char *after)
{
	for (size_t i = 0; i < a->count; i++)
		printf("%s%s%s\n", before, a->strings[i], after);
}

int cmd_expire(int argc, char **argv)
{
	const char *pos[1];
	bool dry = false, json = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "dry-run", .short_name = 'n', .flag = &dry, .help = "only list what would expire"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl expire ROOT [--dry-run] [--json]",
			   "Apply fdl.json's retention (\"retention\": {\"days\": N, \"keep\": K}): every version older\n"
			   "than N days and beyond the newest K of its branch (never a branch or tag tip) gets\n"
			   "expired.json and loses its catalog, catalogs/ and files.json; version.json and\n"
			   "dataset.json stay. Idempotent.",
			   pos, 1, 1, &npos, &done);
	if (done)
		return rc;
	fdl_repo *repo = NULL;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	fdl_expire_report *r = NULL;
	rc = fdl_expire(&r, repo, dry, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	if (json) {
		char *text = NULL;
		rc = cli_print_json(fdl_expire_report_json(&text, r, &err), &text, &err);
	} else {
		print_removals("expired", r->expired, r->expired_count, dry);
	}
	fdl_expire_report_free(r);
	return rc;
}

int cmd_withdraw(int argc, char **argv)
{
	const char *pos[2], *reason = NULL;
	bool dry = false, json = false, vj = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "reason", .value = &reason, .help = "why (required): kept in expired.json"},
		{.name = "remove-version-json", .flag = &vj, .help = "also delete version.json (it carries the withdrawn data)"},
		{.name = "dry-run", .short_name = 'n', .flag = &dry, .help = "only list every version and file it would touch"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl withdraw ROOT VERSION --reason TEXT [--remove-version-json] [--dry-run]",
			   "Withdraw data published by mistake: VERSION gets expired.json with reason \"withdrawn\"\n"
			   "and loses its catalogs; the data files it added are deleted, and every other version\n"
			   "whose catalog references one of them is withdrawn with it. Idempotent; rerun it after\n"
			   "a crash to finish.",
			   pos, 2, 2, &npos, &done);
	if (done)
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
	if (json) {
		char *text = NULL;
		rc = cli_print_json(fdl_withdraw_report_json(&text, r, &err), &text, &err);
	} else {
		print_removals("withdrew", r->versions, r->version_count, dry);
		print_list(dry ? "data file would remove: " : "data file removed: ", &r->data_files, "");
	}
	fdl_withdraw_report_free(r);
	return rc;
}

/* "14d", "36h", "90m", "30s" or seconds. */
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
	bool done;
	cli_opt opts[] = {
		{.name = "grace", .value = &grace, .help = "keep files younger than this (default 14d; s, m, h, d)"},
		{.name = "dry-run", .short_name = 'n', .flag = &dry, .help = "only list what would be deleted"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl gc ROOT [--grace 14d] [--dry-run] [--json]",
			   "Delete data files that no live version's catalog references, and incomplete version\n"
			   "folders, once older than the grace period (so a writer's new, not yet committed\n"
			   "files survive). Never deletes a file a live version needs.",
			   pos, 1, 1, &npos, &done);
	if (done)
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
	if (json) {
		char *text = NULL;
		rc = cli_print_json(fdl_gc_report_json(&text, r, &err), &text, &err);
	} else {
		print_list(dry ? "would remove " : "removed ", &r->deleted, "");
		print_list("incomplete version ", &r->incomplete_versions, dry ? ": would remove" : ": removed");
	}
	fdl_gc_report_free(r);
	return rc;
}

int cmd_catalogs(int argc, char **argv)
{
	const char *pos[4];
	int npos;
	bool done;
	cli_opt opts[] = {{0}};
	int rc = cli_parse(argc, argv, opts, "fdl catalogs add ROOT VERSION FORMAT",
			   "Add versions/<id>/catalogs/<FORMAT>.duckdb to a version, for readers whose DuckDB\n"
			   "opens that DuckLake format. An existing file is never replaced. This DuckDB (1.5.5)\n"
			   "writes format 1.0 only; other formats are refused, saying so.",
			   pos, 4, 4, &npos, &done);
	if (done)
		return rc;
	if (strcmp(pos[0], "add")) {
		fprintf(stderr, "fdl: unknown catalogs command '%s' (only: add)\n", pos[0]);
		return CLI_EXIT_USAGE;
	}
	fdl_repo *repo = NULL;
	char id[FDL_ID_LEN + 1];
	if ((rc = cli_open_version(&repo, id, pos[1], pos[2])))
		return rc;
	fdl_error err = {0};
	rc = fdl_catalogs_add(repo, id, pos[3], &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	printf("Added versions/%s/catalogs/%s.duckdb\n", id, pos[3]);
	return 0;
}
