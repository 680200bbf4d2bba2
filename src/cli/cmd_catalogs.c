/* fdl catalogs: add a catalog in another DuckLake format to a version.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <string.h>

const cli_doc doc_catalogs = {
	.usage = "fdl catalogs add ROOT VERSION FORMAT",
	.summary = "add a catalog in another DuckLake format to a version",
	.text = "Adds `versions/<id>/catalogs/<FORMAT>.duckdb` for readers of that DuckLake\n"
		"format; an existing file is never replaced (exit 9). DuckDB 1.5.5 writes\n"
		"format 1.0 only, so other formats are refused with that reason (exit 5).",
	.examples = "fdl catalogs add /srv/population main 1.0\n",
	.min = 4,
	.max = 4,
};

int cmd_catalogs(int argc, char **argv)
{
	const char *pos[4];
	int npos;
	int rc = cli_parse(argc, argv, &doc_catalogs, NULL, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (strcmp(pos[0], "add")) {
		fprintf(stderr, "fdl: unknown catalogs command '%s' (only: add)\n", pos[0]);
		return CLI_EXIT_USAGE;
	}
	fdl_repo *repo = NULL;
	char id[FDL_ID_LEN + 1];
	if ((rc = cli_open_version(&repo, id, pos[1], pos[2])))
		return rc;
	fdl_error err = {0};
	rc = fdl_catalogs_add(repo, id, pos[3], &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	printf("Added versions/%s/catalogs/%s.duckdb\n", id, pos[3]);
	return 0;
}
