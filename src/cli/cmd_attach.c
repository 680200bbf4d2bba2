/* fdl attach: print the SQL that opens a version in stock DuckDB.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

const cli_doc doc_attach = {
	.usage = "fdl attach ROOT[@REF] [REF] [--as NAME] [--show-token]",
	.summary = "print the SQL that opens a version in stock DuckDB",
	.text = "Prints the SQL that opens a version read-only in stock DuckDB, with\n"
		"`DATA_PATH` overridden to where the data is; for an `http(s)://` repository\n"
		"it adds the `httpfs` lines and DuckDB reads the catalog straight from the\n"
		"host, and for `s3://` also a `CREATE SECRET` from your AWS configuration.\n"
		"Extensions load from fdl's own folder (`extension_directories`), as `fdl checkout` prints\n"
		"them. The catalog's size and sha256 are checked against `version.json` first. A\n"
		"ref with `/` in its name is given as REF, or in full as\n"
		"`ROOT@refs/heads/NAME`.\n"
		"\n"
		"A private host (one fdl has a token for: `FDL_TOKEN`, the credentials file\n"
		"or `~/.netrc`, docs/private.md) gets DuckDB's `CREATE SECRET (TYPE http,\n"
		"BEARER_TOKEN ...)` before the `ATTACH`, scoped to the repository; the token\n"
		"is `getenv('FDL_TOKEN')`, read where DuckDB runs, unless `--show-token`\n"
		"writes the token itself into the SQL.",
	.examples = "fdl attach /srv/population main --as pop | duckdb\n"
		    "fdl attach https://data.example.org/population | duckdb\n"
		    "fdl attach s3://open-data/population@main:3 | duckdb\n",
	.min = 1,
	.max = 2,
};

int cmd_attach(int argc, char **argv)
{
	const char *alias = NULL, *pos[2];
	bool show_token = false;
	int npos;
	cli_opt opts[] = {
		{.name = "as", .value = &alias, .arg = "NAME", .help = "catalog alias in the ATTACH (default: lake)"},
		{.name = "show-token", .flag = &show_token, .help = "a private host's token itself in the secret, not getenv('FDL_TOKEN')"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_attach, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_error err = {0};
	fdl_reader *r = NULL;
	rc = npos > 1 ? fdl_reader_open_ref(&r, pos[0], pos[1], &err) : fdl_reader_open(&r, pos[0], &err);
	char *sql = NULL;
	if (!rc)
		rc = fdl_reader_attach_sql_token(&sql, r, alias, show_token, &err);
	fdl_reader_free(r);
	if (rc)
		return cli_fail(&err);
	fputs(sql, stdout);
	fdl_free(sql);
	return 0;
}
