#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cmd_query(int argc, char **argv)
{
	const char *format = "table", *pos[2];
	bool stats = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "format", .short_name = 'f', .value = &format, .help = "table (default), csv or json (one object per line)"},
		{.name = "requests", .flag = &stats, .help = "report on stderr how many requests (HTTP or S3) the open took"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl query ROOT[@REF] SQL [--format table|csv|json]",
			   "Run SQL against a version in DuckDB: the version is attached read-only as `lake`\n"
			   "(the default catalog, so `SELECT * FROM population` works), DATA_PATH pointing at\n"
			   "where the repository's data really is. Rows are streamed. ROOT may be a folder or\n"
			   "an http(s):// URL; catalogs are cached by sha256 in ~/.cache/fdl/read.",
			   pos, 2, 2, &npos, &done);
	if (done)
		return rc;
	fdl_format fmt;
	if (!strcmp(format, "table"))
		fmt = FDL_FORMAT_TABLE;
	else if (!strcmp(format, "csv"))
		fmt = FDL_FORMAT_CSV;
	else if (!strcmp(format, "json"))
		fmt = FDL_FORMAT_JSON;
	else {
		fprintf(stderr, "fdl: --format must be table, csv or json, not '%s'\n", format);
		return CLI_EXIT_USAGE;
	}
	fdl_error err = {0};
	fdl_reader *r = NULL;
	if (fdl_reader_open(&r, pos[0], &err))
		return cli_fail(&err);
	if (stats)
		fprintf(stderr, "fdl: opening %s took %ld request%s\n", fdl_version_id(fdl_reader_version(r)),
			fdl_reader_requests(r), fdl_reader_requests(r) == 1 ? "" : "s");
	rc = fdl_reader_query(r, pos[1], fmt, stdout, &err);
	fdl_reader_free(r);
	return rc ? cli_fail(&err) : 0;
}
