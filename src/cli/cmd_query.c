/* fdl query: run SQL against a version.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <string.h>

const cli_doc doc_query = {
	.usage = "fdl query ROOT[@REF] SQL [--format table|csv|json] [--requests]",
	.summary = "run SQL against a version",
	.text = "Runs SQL against a version in DuckDB and streams the rows. The version is\n"
		"attached read-only as `lake` and made the default catalog, so table names\n"
		"need no prefix. ROOT is a folder, an `s3://` bucket or an `http(s)://` URL;\n"
		"remotely the catalog is downloaded once, checked and cached by sha256 in\n"
		"`~/.cache/fdl/read` (`FDL_CACHE_DIR`); over HTTP or S3 `version.json` is\n"
		"cached for good and `fdl.json`/`HEAD` for 60 s (`FDL_CACHE_TTL`), so a warm\n"
		"open costs two requests (the ref, and `expired.json`: a cached catalog is\n"
		"read only while its version is live). `--format json` prints one object per\n"
		"line; `--requests` reports how many requests (HTTP or S3) the open took.",
	.examples = "fdl query /srv/population@main:1 \"SELECT town, sum(people) FROM population GROUP BY ALL\" --format csv\n"
		    "fdl query http://127.0.0.1:4001@main \"SELECT count(*) FROM population\"\n",
	.min = 2,
	.max = 2,
};

int cmd_query(int argc, char **argv)
{
	const char *format = "table", *pos[2];
	bool stats = false;
	int npos;
	cli_opt opts[] = {
		{.name = "format", .short_name = 'f', .value = &format, .arg = "FORMAT", .help = "table (default), csv or json (one object per line)"},
		{.name = "requests", .flag = &stats, .help = "report on stderr how many requests (HTTP or S3) the open took"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_query, opts, pos, &npos);
	if (rc != CLI_GO)
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
	if (fdl_reader_open_flags(&r, pos[0], FDL_READER_WARM, &err))
		return cli_fail(&err);
	if (stats)
		fprintf(stderr, "fdl: opening %s took %ld request%s\n", fdl_version_id(fdl_reader_version(r)),
			fdl_reader_requests(r), fdl_reader_requests(r) == 1 ? "" : "s");
	rc = fdl_reader_query(r, pos[1], fmt, stdout, &err);
	fdl_reader_free(r);
	return rc ? cli_fail(&err) : 0;
}
