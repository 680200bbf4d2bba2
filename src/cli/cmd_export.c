#include "cli.h"

#include <stdlib.h>

int cmd_export(int argc, char **argv)
{
	const char *to = NULL, *pos[2];
	bool apply = false, list = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "to", .value = &to, .help = "a folder (one Parquet file per data file) or FILE.parquet"},
		{.name = "apply", .flag = &apply, .help = "apply deletes and renames through DuckLake (one FILE.parquet)"},
		{.name = "list", .flag = &list, .help = "only print the table's data files (JSON)"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl export ROOT[@REF] TABLE --to DIR|FILE.parquet [--apply]",
			   "Export a table as plain Parquet using files.json alone (the catalog when a version\n"
			   "has no files.json). A table with delete files or renamed columns is refused, with\n"
			   "the reason: read as plain Parquet, deleted rows would come back and renamed\n"
			   "columns go missing. --apply exports it through DuckLake instead.",
			   pos, 2, 2, &npos, &done);
	if (done)
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
