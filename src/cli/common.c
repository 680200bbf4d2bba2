/* The prologue every command shares: open the repository, resolve a ref,
 * print a report's JSON. Each returns an exit code (0 to go on). */
#include "cli.h"

int cli_open_repo(fdl_repo **out, const char *root)
{
	fdl_error err = {0};
	*out = NULL;
	return fdl_repo_open(out, root, &err) ? cli_fail(&err) : 0;
}

int cli_open_version(fdl_repo **out, char id[FDL_ID_LEN + 1], const char *root, const char *ref)
{
	int rc = cli_open_repo(out, root);
	if (rc)
		return rc;
	fdl_error err = {0};
	if (fdl_ref_resolve(id, *out, ref, &err)) {
		fdl_repo_free(*out);
		*out = NULL;
		return cli_fail(&err);
	}
	return 0;
}

int cli_print_json(int rc, char **text, const fdl_error *err)
{
	if (!rc)
		fputs(*text, stdout);
	fdl_free(*text);
	*text = NULL;
	return rc ? cli_fail(err) : 0;
}
