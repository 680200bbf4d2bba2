/* fdl checkout: make a working catalog holding a branch's latest version.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <string.h>

const cli_doc doc_checkout = {
	.usage = "fdl checkout ROOT WORK|postgres:CONNINFO [--ref BRANCH] [--meta postgres] [--as NAME] | --abandon WORK",
	.summary = "make a working catalog holding a branch's latest version",
	.text = "Makes the working catalog folder `WORK` (it must not exist or be empty): a\n"
		"SQLite DuckLake catalog (format 1.0, data inlining off) holding the branch's\n"
		"latest version, empty when the branch has none. Prints (on stdout) the\n"
		"`LOAD`s and `ATTACH` to run in DuckDB; then `fdl commit WORK` publishes\n"
		"what you wrote. WORK may not be inside the repository's data folder. A\n"
		"new branch (`--ref NAME`, which its first commit creates) may not have a\n"
		"tag's name (exit 9).\n"
		"\n"
		"The repository knows the working catalog (`work/<id>.json`, refreshed by\n"
		"every command on it), and DuckDB writes its new data files into the\n"
		"repository's `work/<id>/`, which `fdl gc` keeps, whatever their age,\n"
		"until a commit publishes them into the data folder. The data files it\n"
		"holds that a version published are out of reach of DuckLake's clean-up\n"
		"(`ducklake_cleanup_old_files`, `ducklake_delete_orphaned_files`,\n"
		"`CHECKPOINT`): run any of it in a working catalog, published versions\n"
		"keep their data. `--abandon WORK` drops a working catalog: its record,\n"
		"the files it had not committed, and the folder (a PostgreSQL database\n"
		"stops being a working catalog; its tables stay).\n"
		"\n"
		"With `postgres:CONNINFO` (a libpq connection string) or `--meta postgres`\n"
		"(the `PG*` variables), the working catalog is a DuckLake catalog in\n"
		"PostgreSQL (schema public) that many writers on many machines share; a\n"
		"second checkout of the same database adopts it. For an `s3://` ROOT the\n"
		"SQL carries `LOAD httpfs` and a `CREATE SECRET` with your credentials.",
	.examples = "fdl checkout /srv/population work --ref main > attach.sql\n"
		    "duckdb -init attach.sql\n"
		    "fdl checkout --abandon work\n",
	.min = 1,
	.max = 2,
};

int cmd_checkout(int argc, char **argv)
{
	const char *ref = NULL, *alias = NULL, *meta = NULL, *pos[2];
	bool abandon = false;
	int npos;
	cli_opt opts[] = {
		{.name = "abandon", .flag = &abandon, .help = "drop WORK: its record in the repository, its uncommitted files, the folder"},
		{.name = "ref", .value = &ref, .arg = "BRANCH", .help = "branch to work on (default: the branch HEAD names)"},
		{.name = "as", .value = &alias, .arg = "NAME", .help = "catalog alias in the printed ATTACH (default: lake)"},
		{.name = "meta", .value = &meta, .arg = "postgres", .help = "a catalog in PostgreSQL named by the PG* variables (no WORK)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_checkout, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (abandon) {
		fdl_error err = {0};
		if (npos != 1 || ref || alias || meta) {
			fprintf(stderr, "fdl: --abandon takes WORK alone\nusage: %s\n", doc_checkout.usage);
			return CLI_EXIT_USAGE;
		}
		if (fdl_work_remove(pos[0], &err))
			return cli_fail(&err);
		fprintf(stderr, "Abandoned the working catalog %s\n", pos[0]);
		return 0;
	}
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
	fdl_repo *repo;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
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
