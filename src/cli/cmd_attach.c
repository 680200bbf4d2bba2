#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* "ROOT" + optional "REF" into the "ROOT@REF" form the reader takes. */
char *cli_target(const char *root, const char *ref)
{
	char *t = NULL;
	if (ref) {
		if (asprintf(&t, "%s@%s", root, ref) < 0)
			return NULL;
		return t;
	}
	return strdup(root);
}

int cmd_attach(int argc, char **argv)
{
	const char *alias = NULL, *pos[2];
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "as", .short_name = 0, .value = &alias, .flag = NULL, .help = "catalog alias in the ATTACH (default: lake)"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl attach ROOT[@REF] [REF] [--as NAME]",
			   "Print the SQL that opens a version read-only in stock DuckDB, with DATA_PATH\n"
			   "overridden to where the repository's data is (and the httpfs lines an http(s)://\n"
			   "repository needs). REF is a branch, a tag, HEAD (default), a version id, a seq\n"
			   "on HEAD's branch (12) or on a branch (main:12). version.json and the catalog's\n"
			   "size and sha256 are checked first.",
			   pos, 1, 2, &npos, &done);
	if (done)
		return rc;
	fdl_error err = {0};
	char *target = cli_target(pos[0], npos > 1 ? pos[1] : NULL);
	fdl_reader *r = NULL;
	rc = target ? fdl_reader_open(&r, target, &err) : FDL_ERROR;
	free(target);
	char *sql = NULL;
	if (!rc)
		rc = fdl_reader_attach_sql(&sql, r, alias, &err);
	fdl_reader_free(r);
	if (rc)
		return cli_fail(&err);
	fputs(sql, stdout);
	fdl_free(sql);
	return 0;
}
