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
	int rc = cli_parse(argc, argv, opts, "fdl attach ROOT [REF|ID] [--as NAME]",
			   "Print the SQL that opens a version read-only in stock DuckDB, with DATA_PATH\n"
			   "overridden to where the repository's data is. REF is a branch, a tag, HEAD\n"
			   "(default) or a version id. version.json and the catalog's size and sha256 are\n"
			   "checked first.",
			   pos, 1, 2, &npos, &done);
	if (done)
		return rc;
	fdl_error err = {0};
	fdl_repo *repo;
	if (fdl_repo_open(&repo, pos[0], &err))
		return cli_fail(&err);
	char *sql = NULL;
	rc = fdl_attach_sql(&sql, repo, npos > 1 ? pos[1] : NULL, alias, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	fputs(sql, stdout);
	fdl_free(sql);
	return 0;
}
