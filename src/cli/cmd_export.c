/* fdl export: export a table as plain Parquet.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"


const cli_doc doc_export = {
	.usage = "fdl export ROOT[@REF] TABLE --to DIR|FILE.parquet [--apply] [--list]",
	.summary = "export a table as plain Parquet",
	.text = "Exports a table as plain Parquet from its data files, found through\n"
		"`files.json` (the catalog when a version has none). Into one `.parquet` file:\n"
		"the rows DuckLake returns, read the way docs/format.md says a reader without\n"
		"the catalog must (columns by Parquet field id, a column's initial default in\n"
		"files written before it existed, deletes applied, partition folders ignored).\n"
		"Into a folder: the data files as published, one each, refused with the\n"
		"reason when they are not the table (deleted rows, columns changed since a\n"
		"file was written). A table no plain reader can read right (files.json's\n"
		"`unreadable`) is refused either way; `--apply` exports through DuckLake.\n"
		"`--list` prints the table's files (JSON).",
	.examples = "fdl export /srv/population population --to population.parquet\n"
		    "fdl export /srv/population population --to population.parquet --apply\n",
	.min = 2,
	.max = 2,
};

int cmd_export(int argc, char **argv)
{
	const char *to = NULL, *pos[2];
	bool apply = false, list = false;
	int npos;
	cli_opt opts[] = {
		{.name = "to", .value = &to, .arg = "DIR|FILE.parquet", .help = "a folder (one Parquet file per data file) or one FILE.parquet"},
		{.name = "apply", .flag = &apply, .help = "read the table through DuckLake (one FILE.parquet)"},
		{.name = "list", .flag = &list, .help = "only print the table's data files (JSON)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_export, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (!to && !list) {
		fprintf(stderr, "fdl: export needs --to DIR|FILE.parquet (or --list)\n");
		return CLI_EXIT_USAGE;
	}
	fdl_error err = {0};
	fdl_reader *r = NULL;
	if (fdl_reader_open(&r, pos[0], &err))
		return cli_fail(&err);
	if (list) {
		char *json = NULL;
		rc = fdl_reader_table_files(&json, r, pos[1], &err);
		if (!rc)
			fputs(json, stdout);
		fdl_free(json);
	} else {
		rc = fdl_reader_export(r, pos[1], to, apply, &err);
		if (!rc)
			printf("Exported %s to %s\n", pos[1], to);
	}
	fdl_reader_free(r);
	return rc ? cli_fail(&err) : 0;
}
