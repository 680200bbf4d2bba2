/* fdl tag: list, create and delete tags, as git tag does. */
#include "cli.h"

const cli_doc doc_tag = {
	.usage = "fdl tag ROOT [NAME [REF]] [--delete NAME]",
	.summary = "list, create or delete tags",
	.text = "Lists tags with the versions they name, creates `NAME` at `REF` (default\n"
		"HEAD), or deletes one. A tag names one version for good: commits never move\n"
		"it, retention never expires the version it names, and creating a tag that\n"
		"exists, or one with a branch's name, is refused (exit 9, naming it). A tag\n"
		"is never created on a version that expired or was withdrawn (exit 7, with\n"
		"the reason): tags are created, and versions expired, under one lock\n"
		"(`refs.lock`), so a tag racing `fdl expire` either protects its version or\n"
		"is refused. Every command that takes a ref accepts a tag, as `ROOT@NAME` or\n"
		"`NAME`.",
	.examples = "fdl tag /srv/population v2025\n"
		    "fdl tag /srv/population v2024 main:3\n"
		    "fdl attach /srv/population@v2025\n"
		    "fdl tag /srv/population --delete v2024\n",
	.min = 1,
	.max = 3,
};

int cmd_tag(int argc, char **argv)
{
	return cli_ref_command(argc, argv, &doc_tag, CLI_REF_TAGS);
}
