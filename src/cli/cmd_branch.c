/* fdl branch: list, create and delete branches, as git branch does. */
#include "cli.h"

const cli_doc doc_branch = {
	.usage = "fdl branch ROOT [NAME [START-REF] [--force]] [--delete NAME] [--set-head NAME]",
	.summary = "list, create, move or delete branches",
	.text = "Lists branches with their tips (`*` marks the one HEAD names), creates\n"
		"`NAME` at `START-REF` (default HEAD), or deletes one (not HEAD's). Every ref\n"
		"change is a compare-and-swap. A branch is never created with a tag's name\n"
		"(exit 9, naming the tag), nor on a version that expired or was withdrawn\n"
		"(exit 7, with the reason). Work on a branch with\n"
		"`fdl checkout ROOT WORK --ref NAME`.\n"
		"\n"
		"`--force` moves an existing branch to `START-REF`, back to an older version\n"
		"too, as `git branch --force` does: to undo a commit, or to keep a branch\n"
		"readable before a withdrawal. It prints the version the branch was at and\n"
		"the command that moves it back; a working catalog based on the old tip then\n"
		"conflicts at commit (exit 4). `--set-head NAME` makes HEAD name another\n"
		"branch (the default of every command), after which the old default can be\n"
		"deleted. A name of digits alone (it would hide a seq) or a version id is\n"
		"refused.",
	.examples = "fdl branch /srv/population fixes\n"
		    "fdl checkout /srv/population work-fixes --ref fixes\n"
		    "fdl branch /srv/population main main:7 --force\n"
		    "fdl branch /srv/population --set-head fixes\n",
	.min = 1,
	.max = 3,
};

int cmd_branch(int argc, char **argv)
{
	return cli_ref_command(argc, argv, &doc_branch, CLI_REF_BRANCHES);
}
