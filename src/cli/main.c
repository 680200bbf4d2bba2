/* The fdl command: finds the command in argv, checks its arguments against
 * its cli_doc, prints help, and maps library errors to exit codes. */
#include "cli.h"

#include <string.h>

static const cli_cmd commands[] = {
	{"init", cmd_init, &doc_init},
	{"checkout", cmd_checkout, &doc_checkout},
	{"add", cmd_add, &doc_add},
	{"commit", cmd_commit, &doc_commit},
	{"rebase", cmd_rebase, &doc_rebase},
	{"describe", cmd_describe, &doc_describe},
	{"log", cmd_log, &doc_log},
	{"branch", cmd_branch, &doc_branch},
	{"tag", cmd_tag, &doc_tag},
	{"diff", cmd_diff, &doc_diff},
	{"show", cmd_show, &doc_show},
	{"attach", cmd_attach, &doc_attach},
	{"iceberg", cmd_iceberg, &doc_iceberg},
	{"preview", cmd_preview, &doc_preview},
	{"site", cmd_site, &doc_site},
	{"query", cmd_query, &doc_query},
	{"export", cmd_export, &doc_export},
	{"serve", cmd_serve, &doc_serve},
	{"verify", cmd_verify, &doc_verify},
	{"config", cmd_config, &doc_config},
	{"expire", cmd_expire, &doc_expire},
	{"withdraw", cmd_withdraw, &doc_withdraw},
	{"gc", cmd_gc, &doc_gc},
	{"catalogs", cmd_catalogs, &doc_catalogs},
	{"sign", cmd_sign, &doc_sign},
	{"clone", cmd_clone, &doc_clone},
	{"run", cmd_run, &doc_run},
	{NULL, NULL, NULL},
};

static const char exit_codes[] =
	"Exit codes: 0 ok, 1 other failure, 2 usage, 3 not found, 4 conflict (another\n"
	"writer moved the branch, or holds its lock), 5 invalid input or a file that\n"
	"breaks the format, 6 I/O (no space left included),\n"
	"7 expired or withdrawn, 8 nothing to commit, 9 already exists, 10 DuckDB error,\n"
	"11 an abbreviated id that matches several versions.\n";

static void usage(FILE *f)
{
	fprintf(f, "usage: fdl <command> [options] [args]\n\n"
		   "fdl keeps versions of a DuckLake dataset on a folder, a web host or a bucket,\n"
		   "the way Git keeps commits.\n\ncommands:\n");
	for (const cli_cmd *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->doc->summary);
	fprintf(f, "\n%s\n%s\n'fdl <command> --help' describes one command; 'fdl --version' prints the version.\n"
		   "The repository format fdl reads and writes: docs/format.md in fdl's sources\n"
		   "(installed as share/doc/fdl/format.md).\n",
		exit_codes, CLI_REFS_HELP);
}

/* fdl(1): the commands, the ref syntax, the exit codes. */
static void man_page(FILE *f)
{
	fprintf(f, ".TH FDL 1 \"\" \"fdl %s\" \"fdl manual\"\n.SH NAME\nfdl \\- versions of a DuckLake dataset, "
		   "kept the way Git keeps commits\n.SH SYNOPSIS\n.B fdl\n.I command\n[options] [args]\n"
		   ".SH DESCRIPTION\nfdl keeps versions of a DuckLake dataset on a plain folder, a static web host or "
		   "an S3 bucket: a publisher builds data with DuckDB and DuckLake in a working catalog, "
		   "\\fBfdl commit\\fR freezes it into an immutable version, and anyone reads any version with one "
		   "DuckDB ATTACH, with no server.\n.SH COMMANDS\n",
		fdl_libversion());
	for (const cli_cmd *c = commands; c->name; c++)
		fprintf(f, ".TP\n.BR fdl\\-%s (1)\n%s\n", c->name, c->doc->summary);
	fputs(".SH REFS\n", f);
	cli_man_text(f, CLI_REFS_HELP);
	fputs(".SH EXIT STATUS\n", f);
	cli_man_text(f, exit_codes);
	fprintf(f, ".SH FORMAT\nThe repository format fdl reads and writes (FDL 0.1: every file, every field, the "
		   "rules and what fdl adds) is described in docs/format.md of fdl's sources, installed as "
		   "share/doc/fdl/format.md.\n");
	fprintf(f, ".SH ENVIRONMENT\n.TP\n.B FDL_EXTENSION_DIR\nwhere the DuckDB extensions are loaded from\n"
		   ".TP\n.B FDL_CACHE_DIR\nthe read cache (default ~/.cache/fdl/read)\n.TP\n.B FDL_AUTHOR_NAME, "
		   "FDL_AUTHOR_EMAIL\nthe author of commits\n.TP\n.B AWS_*\nthe S3 configuration, as the AWS tools "
		   "read it\n.TP\n.B FDL_TRACE\nset to 1: every DuckDB statement a command runs, with its time, on "
		   "stderr\n.TP\n.B FDL_VERIFY_EXTENSIONS\nset to 1: keep DuckDB's signature check of fdl's own "
		   "extensions\n.TP\n.B FDL_VERIFY_THREADS\nhow many threads fdl verify checks versions on\n"
		   ".TP\n.B FDL_DUCKDB_LIBRARY\nthe libduckdb.so to load instead of the one beside libfdl\n");
}

static const cli_cmd *find(const char *name)
{
	for (const cli_cmd *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* fdl help [COMMAND | --commands | --man] */
static int help(int argc, char **argv)
{
	if (argc < 3) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[2], "--commands")) { /* for shell completion */
		for (const cli_cmd *c = commands; c->name; c++)
			printf("%s\n", c->name);
		return 0;
	}
	if (!strcmp(argv[2], "--man")) {
		man_page(stdout);
		return 0;
	}
	const cli_cmd *c = find(argv[2]);
	if (!c) {
		fprintf(stderr, "fdl: '%s' is not an fdl command; see 'fdl --help'\n", argv[2]);
		return CLI_EXIT_USAGE;
	}
	char *args[] = {argv[2], argc > 3 ? argv[3] : "--help", NULL};
	return c->run(2, args);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help"))
		return help(argc, argv);
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("fdl %s (FDL %s)\n", fdl_libversion(), FDL_SPEC_VERSION);
		return 0;
	}
	const cli_cmd *c = find(name);
	if (c)
		return c->run(argc - 1, argv + 1);
	fprintf(stderr, "fdl: '%s' is not an fdl command; see 'fdl --help'\n", name);
	return CLI_EXIT_USAGE;
}
