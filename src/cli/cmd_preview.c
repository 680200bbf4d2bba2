/* fdl preview: write the previews (first rows and column statistics) that
 * versions lack. Parses its arguments, calls libfdl and prints what it says. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define MAX_VERSIONS 64

const cli_doc doc_preview = {
	.usage = "fdl preview ROOT [VERSION...] [--stats-max BYTES|all]",
	.summary = "compute the first rows and column statistics a page shows at once",
	.text = "Writes the preview of each VERSION (default: every live version) that has\n"
		"none: for each of its tables, the first 20 rows and the column statistics\n"
		"over every row (nulls, distinct values, min and max, a histogram for\n"
		"numbers and times, the most frequent values and the lengths of text),\n"
		"every value as DuckDB prints it, computed by DuckDB where the data is. The\n"
		"repository's page (`fdl serve`) shows them at once, before any query.\n"
		"Previews live in the repository's `previews/` folder, outside `versions/`;\n"
		"each table's is a file named by the table's state, so a table that did not\n"
		"change between versions is computed once (docs/format.md, \"Previews\").\n"
		"\n"
		"Previews are opt-in: run this command once and the repository keeps them\n"
		"(each commit whose parent has a preview writes its own; a repository that\n"
		"never ran it pays nothing at commit). It also fills versions published\n"
		"before, or whose preview was deleted. A table whose\n"
		"files hold more than `--stats-max` bytes (32 MiB at commit, no bound\n"
		"here by default: `all`) gets its first rows and row count, not its statistics.\n"
		"`fdl expire`, `fdl withdraw` and `fdl gc` delete the previews of the\n"
		"versions that go.\n"
		"\n"
		"Exit codes: 3 a VERSION names nothing, 7 it is expired or withdrawn, 10 DuckDB\n"
		"failed on a table (the message names it).",
	.examples = "fdl preview /srv/population\n"
		    "fdl preview /srv/population main v2025\n",
	.min = 1,
	.max = 1 + MAX_VERSIONS,
};

static void done(const char *id, size_t computed, size_t reused, int already, void *payload)
{
	(void)payload;
	if (already)
		printf("%s: has its preview\n", id);
	else
		printf("%s: preview written (%zu table%s computed, %zu reused)\n", id, computed, computed == 1 ? "" : "s",
		       reused);
}

int cmd_preview(int argc, char **argv)
{
	const char *pos[1 + MAX_VERSIONS], *max = NULL;
	int npos;
	cli_opt opts[] = {
		{.name = "stats-max", .value = &max, .arg = "BYTES|all",
		 .help = "statistics only for tables whose files hold at most BYTES (default all)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_preview, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_preview_options o = FDL_PREVIEW_OPTIONS_INIT;
	o.done = done;
	long long m = -1;
	if (max && (rc = cli_count(&m, "--stats-max", max, CLI_COUNT_OR_ALL)))
		return rc;
	o.stats_max_bytes = m < 0 ? -1 : m ? m : 1; /* 0 bytes: no statistics, not the default */
	fdl_repo *repo = NULL;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	rc = fdl_preview_fill(repo, pos + 1, (size_t)npos - 1, &o, &err);
	fdl_repo_free(repo);
	return rc ? cli_fail(&err) : 0;
}
