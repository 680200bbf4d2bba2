#include "cli.h"

int cmd_init(int argc, char **argv)
{
	const char *branch = NULL, *data_dir = NULL, *pos[1];
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "branch", .short_name = 0, .value = &branch, .flag = NULL, .help = "name of the default branch (default: main)"},
		{.name = "data-dir", .short_name = 0, .value = &data_dir, .flag = NULL, .help = "data folder, relative to ROOT (default: data)"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl init ROOT [--branch NAME] [--data-dir DIR]",
			   "Create an empty repository at ROOT (a folder, or s3://bucket/prefix): fdl.json, HEAD,\n"
			   "refs/ and the data folder. ROOT must not exist or be empty. On S3, the server is first\n"
			   "checked to honour conditional writes (If-None-Match, If-Match); one that ignores them\n"
			   "is refused, since publishers could then overwrite each other.",
			   pos, 1, 1, &npos, &done);
	if (done)
		return rc;
	fdl_error err = {0};
	fdl_init_options o = {.branch = branch, .data_dir = data_dir};
	if (fdl_repo_init(pos[0], &o, &err))
		return cli_fail(&err);
	printf("Initialized empty fdl repository in %s (branch %s)\n", pos[0], branch ? branch : "main");
	return 0;
}
