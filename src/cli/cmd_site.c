/* fdl site: give a repository its pages for people without JavaScript and
 * for crawlers, with Croissant and Data Package files, and write them for
 * older versions. Parses its arguments, calls libfdl and prints what it
 * returns. */
#include "cli.h"

#include <stdio.h>

#define SITE_MAX_REFS 64

const cli_doc doc_site = {
	.usage = "fdl site ROOT [REF...]",
	.summary = "write the dataset's pages, Croissant and Data Package files",
	.text = "Gives the repository pages that need no JavaScript and descriptions that\n"
		"search engines and data tools read, and writes them for each version REF\n"
		"names (default: every version): `site/<id>/index.html` (the version's\n"
		"title, description, licences, people, tables, columns and first rows, how\n"
		"to read and cite it, with schema.org `Dataset` JSON-LD in its head),\n"
		"`site/<id>/croissant.json` (Croissant 1.1: what mlcroissant, TFDS and\n"
		"PyTorch load) and `site/<id>/datapackage.json` (a Frictionless Data\n"
		"Package), then `index.html` at the root, the page of HEAD's branch tip.\n"
		"From then on every commit writes its version's, and an expiry or a\n"
		"withdrawal removes the Croissant and Data Package of the version it ends.\n"
		"\n"
		"Croissant and the Data Package describe the tables a plain Parquet reader\n"
		"reads right (no deleted rows, no renamed or later columns, plain types);\n"
		"the others are named, with the reason. Their addresses start with the\n"
		"repository's public address (`fdl config ROOT public_url URL`); without\n"
		"one they are relative to the file, and `fdl serve` answers with its own\n"
		"address instead (docs/web.md). Run it again after setting the address.\n"
		"The page's script (`make web`, copied as `_fdl/` beside the repository)\n"
		"takes over where scripts run.",
	.examples = "fdl site /srv/population\n"
		    "fdl config /srv/population public_url https://data.example.org/population\n"
		    "fdl site /srv/population main v2025\n",
	.min = 1,
	.max = SITE_MAX_REFS + 1,
};

int cmd_site(int argc, char **argv)
{
	const char *pos[SITE_MAX_REFS + 1];
	int npos;
	int rc = cli_parse(argc, argv, &doc_site, NULL, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_repo *repo = NULL;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	size_t written = 0;
	rc = fdl_site_fill(repo, pos + 1, (size_t)npos - 1, &written, &err);
	const char *url = rc ? NULL : fdl_repo_public_url(repo);
	if (!rc)
		printf("Wrote the pages of %zu version%s and index.html%s%s\n", written, written == 1 ? "" : "s",
		       url ? ", with addresses under " : " (addresses relative: no public_url set)", url ? url : "");
	fdl_repo_free(repo);
	return rc ? cli_fail(&err) : 0;
}
