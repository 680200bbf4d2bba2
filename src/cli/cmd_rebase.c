/* fdl rebase: move a working catalog onto its branch's new tip, its changes
 * replayed on top. Parses its arguments, calls libfdl and prints what it
 * returns. */
#include "cli.h"

#include <string.h>

const cli_doc doc_rebase = {
	.usage = "fdl rebase WORK [--onto REF] [--json]",
	.summary = "replay a working catalog's changes on its branch's new tip",
	.text = "When someone else committed to the branch since WORK was checked out,\n"
		"`fdl commit` refuses (exit 4). `fdl rebase` moves WORK's base to the\n"
		"branch's tip (or to `--onto REF`, a later version of its history) and\n"
		"replays every snapshot WORK made since its base on top, as Git's rebase\n"
		"does, keeping each one's commit message and extra info; then commit as\n"
		"usual. Data files are never copied: a replayed data file is the same file\n"
		"under the data folder. A delete file whose rows carry snapshot ids is\n"
		"written again beside the old one with those ids moved.\n"
		"\n"
		"DuckLake's conflict rules apply, table by table. Appends to the same\n"
		"table, changes to different tables, and deletes in data files the tip\n"
		"did not touch go through. Two schema changes to one table, a delete in a\n"
		"data file the tip also deleted from or rewrote, a write to a table the\n"
		"tip dropped, a name created on both sides, and a description\n"
		"(`dataset.yml`) edited here while the tip's changed are conflicts: each is\n"
		"named with its table and kind, nothing in WORK changes, and the exit code\n"
		"is 4. A `dataset.yml` left as checkout wrote it is written again from the\n"
		"tip's description.\n"
		"\n"
		"The rebased catalog is built in a folder beside WORK, which gets WORK's\n"
		"other files as hard links, and the two are swapped in one step: killed at\n"
		"any point, WORK is as it was or fully rebased. Close the DuckDB sessions\n"
		"writing to WORK first; a snapshot written during the rebase stops it.\n"
		"\n"
		"A PostgreSQL working catalog needs no rebase: its writers share the one\n"
		"catalog and DuckLake orders their transactions; `fdl rebase` on one says\n"
		"so (exit 5). `fdl commit --rebase` rebases and commits again by itself.",
	.examples = "fdl rebase work\n"
		    "fdl rebase work --onto main --json\n",
	.min = 1,
	.max = 1,
};

int cmd_rebase(int argc, char **argv)
{
	const char *pos[1], *onto = NULL;
	bool json = false;
	int npos;
	cli_opt opts[] = {
		{.name = "onto", .value = &onto, .arg = "REF", .help = "the version to rebase onto (default: the branch's tip)"},
		{.name = "json", .flag = &json, .help = "print the report as JSON (conflicts included)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_rebase, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_rebase_options o = {.version = FDL_REBASE_OPTIONS_VERSION, .onto = onto};
	fdl_rebase_report *r = NULL;
	fdl_error err = {0};
	rc = fdl_rebase(&r, pos[0], &o, &err);
	if (rc && !r)
		return cli_fail(&err);
	char *text = NULL;
	if (json) {
		fdl_error jerr = {0};
		if (cli_print_json(fdl_rebase_report_json(&text, r, &jerr), &text, &jerr) != 0)
			rc = rc ? rc : FDL_ERROR;
	} else if (!rc && !r->snapshots && !strcmp(r->from, r->onto)) {
		printf("%s is already based on %s; nothing to rebase\n", pos[0], r->onto);
	} else if (!rc) {
		printf("Rebased %s onto %s: %lld snapshot%s replayed", pos[0], r->onto, (long long)r->snapshots,
		       r->snapshots == 1 ? "" : "s");
		if (r->delete_files)
			printf(", %lld delete file%s written again", (long long)r->delete_files,
			       r->delete_files == 1 ? "" : "s");
		printf(". Commit it with: fdl commit %s\n", pos[0]);
	}
	fdl_rebase_report_free(r);
	return rc ? cli_fail(&err) : 0;
}
