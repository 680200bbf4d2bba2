/* fdl diff: schema (and row) differences between two versions.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* The text form of the rows: totals per table, then the rows shown. */
typedef struct text_rows {
	int64_t limit, added, removed, shown_added, shown_removed;
	bool any;
} text_rows;

/* `fdl diff --json`: the diff's object, with the rows streamed into it. */
static int diff_json(fdl_repo *repo, const char *a, const char *b, const fdl_diff_rows_options *rows, fdl_error *err)
{
	fdl_diff *d = NULL;
	char *text = NULL;
	int rc = fdl_diff_versions(&d, repo, a, b, err);
	if (!rc && rows)
		rc = fdl_diff_rows_json(stdout, repo, d, rows, err);
	else if (!rc && !(rc = fdl_diff_json(&text, d, err)))
		fputs(text, stdout);
	fdl_free(text);
	fdl_diff_free(d);
	return rc;
}

static void more_note(const text_rows *t)
{
	if (!t->any)
		return;
	int64_t hidden = (t->added - t->shown_added) + (t->removed - t->shown_removed);
	if (hidden > 0)
		printf("  ... %lld more rows (--limit N, or --limit all)\n", (long long)hidden);
}

static int text_table(const char *table, int64_t added, int64_t removed, void *payload)
{
	text_rows *t = payload;
	more_note(t);
	*t = (text_rows){t->limit, added, removed, 0, 0, true};
	printf("rows of %s: +%lld -%lld\n", table, (long long)added, (long long)removed);
	return ferror(stdout) ? FDL_EIO : 0;
}

static int text_row(const char *table, int added, const char *row, void *payload)
{
	(void)table;
	text_rows *t = payload;
	if (added)
		t->shown_added++;
	else
		t->shown_removed++;
	printf("  %c %s\n", added ? '+' : '-', row);
	return ferror(stdout) ? FDL_EIO : 0;
}

const cli_doc doc_diff = {
	.usage = "fdl diff ROOT REF-A REF-B [--rows [TABLE]] [--limit N] [--json]",
	.summary = "schema (and row) differences between two versions",
	.text = "The schema changes from version A to version B (same kinds as `changes`),\n"
		"computed from the two frozen catalogs, and what the description changed\n"
		"(`dataset.json`: licenses, title, a table's or a column's description, ...,\n"
		"each added, removed or changed). With `--rows`, per table (or of\n"
		"TABLE) the number of rows added and removed, computed by DuckDB over the\n"
		"columns both versions have (`EXCEPT ALL`), and the first N of each in\n"
		"`ORDER BY ALL` order, like `git log -n` (default 100; `--limit all`).\n"
		"`--json` streams one document with the totals and the rows.",
	.examples = "fdl diff /srv/population main:1 main --rows population --limit 20\n",
	.min = 3,
	.max = 4,
};

int cmd_diff(int argc, char **argv)
{
	const char *pos[4], *limit_s = NULL;
	bool json = false, rows = false;
	int npos;
	cli_opt opts[] = {
		{.name = "rows", .flag = &rows, .help = "also the rows added and removed (of TABLE, or of every table)"},
		{.name = "limit", .short_name = 'n', .value = &limit_s, .arg = "N", .help = "rows shown per table and side (default 100, or all)"},
		{.name = "json", .flag = &json, .help = "print JSON (streamed)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_diff, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (npos == 4 && !rows) {
		fprintf(stderr, "fdl: TABLE goes with --rows\n");
		return CLI_EXIT_USAGE;
	}
	long long limit = 100;
	if (limit_s && (rc = cli_count(&limit, "--limit", limit_s, CLI_COUNT_OR_ALL)))
		return rc;
	fdl_repo *repo;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	text_rows t = {limit, 0, 0, 0, 0, false};
	fdl_diff_rows_options ro = {.version = FDL_DIFF_ROWS_OPTIONS_VERSION, .table = npos == 4 ? pos[3] : NULL,
				    .limit = limit, .on_table = text_table, .on_row = text_row, .payload = &t};
	if (json) {
		rc = diff_json(repo, pos[1], pos[2], rows ? &ro : NULL, &err);
	} else {
		fdl_diff *d = NULL;
		rc = fdl_diff_versions(&d, repo, pos[1], pos[2], &err);
		if (!rc) {
			printf("from %s\nto   %s\n", d->from, d->to);
			if (d->change_count == 0)
				printf("no schema changes\n");
			for (size_t i = 0; i < d->change_count; i++)
				cli_print_change(stdout, &d->changes[i], "  ");
			if (d->desc_change_count)
				printf("description changes\n");
			for (size_t i = 0; i < d->desc_change_count; i++)
				cli_print_desc_change(stdout, &d->desc_changes[i], "  ");
			fflush(stdout);
		}
		fdl_diff_free(d);
		if (!rc && rows)
			rc = fdl_diff_rows(repo, pos[1], pos[2], &ro, &err);
		if (!rc)
			more_note(&t);
	}
	fdl_repo_free(repo);
	return rc ? cli_fail(&err) : 0;
}
