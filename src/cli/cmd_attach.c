#include "cli.h"


int cmd_attach(int argc, char **argv)
{
	const char *alias = NULL, *pos[2];
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "as", .short_name = 0, .value = &alias, .flag = NULL, .help = "catalog alias in the ATTACH (default: lake)"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl attach ROOT[@REF] [REF] [--as NAME]",
			   "Print the SQL that opens a version read-only in stock DuckDB, with DATA_PATH\n"
			   "overridden to where the repository's data is (and the httpfs lines an http(s)://\n"
			   "repository needs). version.json and the catalog's size and sha256 are checked\n"
			   "first.",
			   pos, 1, 2, &npos, &done);
	if (done)
		return rc;
	fdl_error err = {0};
	fdl_reader *r = NULL;
	rc = npos > 1 ? fdl_reader_open_ref(&r, pos[0], pos[1], &err) : fdl_reader_open(&r, pos[0], &err);
	char *sql = NULL;
	if (!rc)
		rc = fdl_reader_attach_sql(&sql, r, alias, &err);
	fdl_reader_free(r);
	if (rc)
		return cli_fail(&err);
	fputs(sql, stdout);
	fdl_free(sql);
	return 0;
}
