/* fdl init: create a repository.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

const cli_doc doc_init = {
	.usage = "fdl init ROOT [--branch main] [--data-dir data] [--iceberg]",
	.summary = "create a repository",
	.text = "Creates an empty repository in a folder (or bucket prefix) that does not\n"
		"exist or is empty: `fdl.json`, `HEAD`, `refs/` and the data folder.\n"
		"\n"
		"Refuses a non-empty folder that is not a repository, and an existing\n"
		"repository (exit 9). On S3 it first proves that the server honours\n"
		"conditional writes (If-None-Match, If-Match) and refuses one that does\n"
		"not (exit 5): publishers could otherwise overwrite each other.\n"
		"\n"
		"With `--iceberg`, every commit also writes its version's Iceberg view\n"
		"(see `fdl iceberg`).",
	.examples = "fdl init /srv/population --branch main --data-dir data\n"
		    "fdl init s3://open-data/population\n",
	.min = 1,
	.max = 1,
};

int cmd_init(int argc, char **argv)
{
	const char *branch = NULL, *data_dir = NULL, *pos[1];
	bool iceberg = false;
	int npos;
	cli_opt opts[] = {
		{.name = "branch", .value = &branch, .arg = "NAME", .help = "name of the default branch (default: main)"},
		{.name = "data-dir", .value = &data_dir, .arg = "DIR", .help = "data folder, relative to ROOT (default: data)"},
		{.name = "iceberg", .flag = &iceberg, .help = "every commit also writes its Iceberg view (fdl iceberg)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_init, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_error err = {0};
	fdl_init_options o = {.version = FDL_INIT_OPTIONS_VERSION, .branch = branch, .data_dir = data_dir};
	if (fdl_repo_init(pos[0], &o, &err))
		return cli_fail(&err);
	fdl_repo *repo = NULL;
	if (iceberg && (fdl_repo_open(&repo, pos[0], &err) || fdl_iceberg_enable(repo, NULL, &err))) {
		fdl_repo_free(repo);
		return cli_fail(&err);
	}
	fdl_repo_free(repo);
	printf("Initialized empty fdl repository in %s (branch %s)\n", pos[0], branch ? branch : "main");
	return 0;
}
