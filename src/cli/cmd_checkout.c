/* fdl checkout: make a working catalog holding a branch's latest version.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <string.h>

const cli_doc doc_checkout = {
	.usage = "fdl checkout ROOT WORK|postgres:CONNINFO [--ref BRANCH | --new-branch NAME [--from REF] | --orphan NAME] "
		 "[--meta postgres] [--as NAME] | --abandon WORK",
	.summary = "make a working catalog holding a branch's latest version",
	.text = "Makes the working catalog folder `WORK` (it must not exist or be empty): a\n"
		"SQLite DuckLake catalog (format 1.0, data inlining off) holding the branch's\n"
		"latest version, empty when the branch has none. Prints (on stdout) the\n"
		"SQL to run in DuckDB: `LOAD`s of the extension files fdl itself loads, by\n"
		"path (a DuckDB of the same version, 1.5.5, needs nothing installed or\n"
		"downloaded), and the `ATTACH`; then `fdl commit WORK` publishes\n"
		"what you wrote. WORK may not be inside the repository's data folder. A\n"
		"new branch (`--new-branch`, `--orphan`) may not have a tag's name\n"
		"(exit 9).\n"
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
		"SQL carries `LOAD httpfs` and a `CREATE SECRET` with your credentials.\n"
		"\n"
		"`--ref` names a branch that exists (or HEAD's, before its first version); a\n"
		"name that is not a branch is refused (exit 3) with the one it most likely\n"
		"meant, and nothing is made. A new branch is asked for by name, as in Git:\n"
		"`--new-branch NAME` (`-b`) creates it at `--from REF` (default HEAD) and\n"
		"checks it out; `--orphan NAME` starts it empty, with no history, and its\n"
		"first commit creates it.",
	.examples = "fdl checkout /srv/population work --ref main > attach.sql\n"
		    "fdl checkout /srv/population work-fix --new-branch correction --from v2025\n"
		    "fdl checkout --abandon work\n",
	.min = 1,
	.max = 2,
};

int cmd_checkout(int argc, char **argv)
{
	const char *ref = NULL, *alias = NULL, *meta = NULL, *pos[2], *new_branch = NULL, *orphan = NULL, *from = NULL;
	bool abandon = false;
	int npos;
	cli_opt opts[] = {
		{.name = "abandon", .flag = &abandon, .help = "drop WORK: its record in the repository, its uncommitted files, the folder"},
		{.name = "ref", .value = &ref, .arg = "BRANCH", .help = "branch to work on (default: the branch HEAD names)"},
		{.name = "new-branch", .short_name = 'b', .value = &new_branch, .arg = "NAME",
		 .help = "create branch NAME (at --from, default HEAD) and work on it"},
		{.name = "from", .value = &from, .arg = "REF", .help = "where --new-branch starts (default HEAD)"},
		{.name = "orphan", .value = &orphan, .arg = "NAME", .help = "work on a new, empty branch NAME (no history)"},
		{.name = "as", .value = &alias, .arg = "NAME", .help = "catalog alias in the printed ATTACH (default: lake)"},
		{.name = "meta", .value = &meta, .arg = "postgres", .help = "a catalog in PostgreSQL named by the PG* variables (no WORK)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_checkout, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (abandon) {
		fdl_error err = {0};
		if (npos != 1 || ref || alias || meta || new_branch || orphan || from) {
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
	if (npos == 2 && meta) {
		fprintf(stderr, "fdl: give WORK or --meta postgres, not both (--meta postgres makes the catalog the PG* "
				"variables name; postgres:CONNINFO names one itself)\n");
		return CLI_EXIT_USAGE;
	}
	if ((ref != NULL) + (new_branch != NULL) + (orphan != NULL) > 1 || (from && !new_branch)) {
		fprintf(stderr, "fdl: give one of --ref BRANCH, --new-branch NAME [--from REF] and --orphan NAME\n");
		return CLI_EXIT_USAGE;
	}
	if (npos == 1)
		pos[1] = "postgres:";
	fdl_repo *repo;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	fdl_checkout_options o = FDL_CHECKOUT_OPTIONS_INIT;
	o.ref = ref;
	if (new_branch) {
		o.ref = new_branch;
		o.create = FDL_CHECKOUT_NEW;
		o.start = from;
	} else if (orphan) {
		o.ref = orphan;
		o.create = FDL_CHECKOUT_ORPHAN;
	}
	char *sql = NULL;
	rc = fdl_checkout(repo, pos[1], &o, &err);
	fdl_repo_free(repo);
	if (!rc)
		rc = fdl_work_attach_sql(&sql, pos[1], alias, &err);
	if (rc)
		return cli_fail(&err);
	if (new_branch)
		fprintf(stderr, "Created branch %s\n", new_branch);
	fprintf(stderr, "Working catalog ready in %s. Write to it from DuckDB with:\n", pos[1]);
	fputs(sql, stdout);
	fdl_free(sql);
	return 0;
}
