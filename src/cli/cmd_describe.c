/* fdl describe: print the dataset.json the next commit would write.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

const cli_doc doc_describe = {
	.usage = "fdl describe WORK",
	.summary = "print the dataset.json the next commit would write",
	.text = "Prints the `dataset.json` the next commit would write, and fails with\n"
		"exactly the errors commit would give; writes no version (it renews the\n"
		"working catalog's lease, see `fdl gc`). The publisher's\n"
		"description lives in WORK as `dataset.yml` (or `dataset.yaml`, or\n"
		"`dataset.json`), optionally split into `<table>.table.yml` files, each one\n"
		"item of `tables`. Only `name` and `title` are required; keys the spec does\n"
		"not define are refused with file, line and key; `annotations` (or the\n"
		"older `extensions`) are kept as written.\n"
		"\n"
		"Tables you do not describe are added from the catalog; `rows`, each\n"
		"column's `type` and `nullable`, and `COMMENT ON` text (where you wrote no\n"
		"description) come from the catalog; a table or column that is not in the\n"
		"catalog is refused. Views follow the tables with `\"kind\": \"view\"` and the\n"
		"catalog's SQL.",
	.examples = "cat > work/dataset.yml <<'YML'\n"
		    "name: population\n"
		    "title: Population by town\n"
		    "licenses: [CC-BY-4.0]\n"
		    "tables:\n"
		    "  - name: population\n"
		    "    primary_key: [town_code]\n"
		    "    fields: [{name: town_code, title: Town code}]\n"
		    "YML\n"
		    "fdl describe work\n",
	.min = 1,
	.max = 1,
};

int cmd_describe(int argc, char **argv)
{
	const char *pos[1];
	int npos;
	int rc = cli_parse(argc, argv, &doc_describe, NULL, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_error err = {0};
	char *json = NULL;
	if (fdl_describe(&json, pos[0], &err))
		return cli_fail(&err);
	fputs(json, stdout);
	fdl_free(json);
	return 0;
}
