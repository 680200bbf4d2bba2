#include "cli.h"

int cmd_describe(int argc, char **argv)
{
	const char *pos[1];
	int npos;
	bool done;
	cli_opt opts[] = {{0}};
	int rc = cli_parse(argc, argv, opts, "fdl describe WORK",
			   "Print the dataset.json the next `fdl commit WORK` would write: WORK's dataset.yml\n"
			   "(or dataset.yaml, or dataset.json) and <table>.table.yml files, checked against the\n"
			   "spec and merged with what the catalog knows (rows, types, nullability, comments).\n"
			   "Fails with the errors commit would give; writes nothing.",
			   pos, 1, 1, &npos, &done);
	if (done)
		return rc;
	fdl_error err = {0};
	char *json = NULL;
	if (fdl_describe(&json, pos[0], &err))
		return cli_fail(&err);
	fputs(json, stdout);
	fdl_free(json);
	return 0;
}
