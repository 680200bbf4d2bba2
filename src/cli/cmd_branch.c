/* fdl branch: list, create and delete branches, as git branch does. */
#include "cli.h"

const cli_doc doc_branch = {
	.usage = "fdl branch ROOT [NAME [START-REF]] [--delete NAME]",
	.summary = "list, create or delete branches",
	.text = "Lists branches with their tips (`*` marks the one HEAD names), creates\n"
		"`NAME` at `START-REF` (default HEAD), or deletes one (not HEAD's). Every ref\n"
		"change is a compare-and-swap. A branch is never created with a tag's name\n"
		"(exit 9, naming the tag), nor on a version that expired or was withdrawn\n"
		"(exit 7, with the reason). Work on a branch with\n"
		"`fdl checkout ROOT WORK --ref NAME`.",
	.examples = "fdl branch /srv/population fixes\n"
		    "fdl checkout /srv/population work-fixes --ref fixes\n",
	.min = 1,
	.max = 3,
};

int cmd_branch(int argc, char **argv)
{
	return cli_ref_command(argc, argv, &doc_branch, false);
}
