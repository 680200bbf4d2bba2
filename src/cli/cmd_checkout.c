#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cmd_checkout(int argc, char **argv)
{
	const char *ref = NULL, *alias = NULL, *meta = NULL, *pos[2];
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "ref", .short_name = 0, .value = &ref, .flag = NULL, .help = "branch to work on (default: the branch HEAD names)"},
		{.name = "as", .short_name = 0, .value = &alias, .flag = NULL, .help = "catalog alias in the printed ATTACH (default: lake)"},
		{.name = "meta", .value = &meta, .help = "postgres: a catalog in PostgreSQL named by the PG* variables (no WORK)"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl checkout ROOT WORK|postgres:CONNINFO [--ref BRANCH] [--meta postgres]",
			   "Make the working catalog folder WORK (it must not exist or be empty): a SQLite\n"
			   "DuckLake catalog holding the branch's latest version, writing data files into the\n"
			   "repository's data folder, with data inlining off. Prints the ATTACH to run in\n"
			   "DuckDB to write to it; then `fdl commit WORK` publishes what you wrote.\n"
			   "With postgres:CONNINFO (a libpq connection string) or --meta postgres (the PG*\n"
			   "variables), the working catalog is a DuckLake catalog in PostgreSQL (schema public)\n"
			   "that many writers on many machines share; run it again to adopt it.",
			   pos, 1, 2, &npos, &done);
	if (done)
		return rc;
	if (meta && strcmp(meta, "postgres")) {
		fprintf(stderr, "fdl: --meta takes only 'postgres'\n");
		return CLI_EXIT_USAGE;
	}
	if (npos == 1 && !meta) {
		fprintf(stderr, "fdl: missing WORK (or --meta postgres)\n");
		return CLI_EXIT_USAGE;
	}
	if (npos == 1)
		pos[1] = "postgres:";
	fdl_error err = {0};
	fdl_repo *repo;
	if (fdl_repo_open(&repo, pos[0], &err))
		return cli_fail(&err);
	fdl_checkout_options o = {.ref = ref};
	char *sql = NULL;
	rc = fdl_checkout(repo, pos[1], &o, &err);
	fdl_repo_free(repo);
	if (!rc)
		rc = fdl_work_attach_sql(&sql, pos[1], alias, &err);
	if (rc)
		return cli_fail(&err);
	fprintf(stderr, "Working catalog ready in %s. Write to it from DuckDB with:\n", pos[1]);
	fputs(sql, stdout);
	fdl_free(sql);
	return 0;
}
