#include "cli.h"

#include <string.h>

#ifndef FDL_VERSION
#define FDL_VERSION "0.1.0"
#endif

static const cli_cmd commands[] = {
	{"init", cmd_init, "create a repository"},
	{"checkout", cmd_checkout, "make a working catalog holding a branch's latest version"},
	{"commit", cmd_commit, "freeze a working catalog into a new version and move its branch"},
	{"log", cmd_log, "list versions, newest first, following the first parent"},
	{"show", cmd_show, "show one version"},
	{"attach", cmd_attach, "print the SQL that opens a version in stock DuckDB"},
	{"query", cmd_query, "run SQL against a version (folder or http)"},
	{"export", cmd_export, "export a table as plain Parquet"},
	{"serve", cmd_serve, "serve a repository over HTTP"},
	{"verify", cmd_verify, "check a repository like git fsck"},
	{"sign", cmd_sign, "sign a version (SSH signature over version.json)"},
	{"expire", cmd_expire, "apply fdl.json's retention to old versions"},
	{"withdraw", cmd_withdraw, "withdraw a version published by mistake"},
	{"gc", cmd_gc, "delete data files no live version needs"},
	{"clone", cmd_clone, "copy a repository, resumable and checked"},
	{"catalogs", cmd_catalogs, "add a catalog in another DuckLake format to a version"},
	{"describe", cmd_describe, "print the dataset.json the next commit would write"},
	{"branch", cmd_branch, "list, create or delete branches"},
	{"diff", cmd_diff, "schema (and row) differences between two versions"},
	{"run", cmd_run, "check out, run a build command, commit if it succeeded"},
	{NULL, NULL, NULL},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: fdl <command> [options] [args]\n\n"
		   "fdl keeps versions of a DuckLake dataset on a folder, the way Git keeps commits.\n\n"
		   "commands:\n");
	for (const cli_cmd *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\n'fdl <command> --help' describes one command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		if (argc > 2 && strcmp(name, "help") == 0) {
			char *args[] = {argv[2], "--help", NULL};
			for (const cli_cmd *c = commands; c->name; c++)
				if (!strcmp(c->name, argv[2]))
					return c->run(2, args);
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("fdl %s (FDL %s)\n", FDL_VERSION, FDL_SPEC_VERSION);
		return 0;
	}
	for (const cli_cmd *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c->run(argc - 1, argv + 1);
	fprintf(stderr, "fdl: '%s' is not an fdl command; see 'fdl --help'\n", name);
	return CLI_EXIT_USAGE;
}
