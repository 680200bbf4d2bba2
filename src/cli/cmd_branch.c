#include "cli.h"

#include <string.h>

const cli_doc doc_branch = {
	.usage = "fdl branch ROOT [NAME [START-REF]] [--delete NAME]",
	.summary = "list, create or delete branches",
	.text = "Lists branches with their tips (`*` marks the one HEAD names), creates\n"
		"`NAME` at `START-REF` (default HEAD), or deletes one (not HEAD's). Every ref\n"
		"change is a compare-and-swap. Work on a branch with\n"
		"`fdl checkout ROOT WORK --ref NAME`.",
	.examples = "fdl branch /srv/population fixes\n"
		    "fdl checkout /srv/population work-fixes --ref fixes\n",
	.min = 1,
	.max = 3,
};

int cmd_branch(int argc, char **argv)
{
	const char *del = NULL, *pos[3];
	int npos;
	cli_opt opts[] = {
		{.name = "delete", .short_name = 'd', .value = &del, .arg = "NAME", .help = "delete branch NAME (not the one HEAD names)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_branch, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (del && npos > 1) {
		fprintf(stderr, "fdl: --delete takes no other NAME\n");
		return CLI_EXIT_USAGE;
	}
	fdl_repo *repo;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	if (del) {
		rc = fdl_branch_delete(repo, del, &err);
		if (!rc)
			printf("Deleted branch %s\n", del);
	} else if (npos > 1) {
		rc = fdl_branch_create(repo, pos[1], npos > 2 ? pos[2] : NULL, &err);
		if (!rc)
			printf("Created branch %s\n", pos[1]);
	} else {
		fdl_branch *list = NULL;
		size_t n = 0;
		rc = fdl_branch_list(&list, &n, repo, &err);
		for (size_t i = 0; !rc && i < n; i++) {
			fdl_version *v = NULL;
			fdl_error verr;
			long long seq = fdl_version_read(&v, repo, list[i].tip, &verr) ? -1 : (long long)fdl_version_seq(v);
			printf("%c %-20s %s", list[i].head ? '*' : ' ', list[i].name, list[i].tip);
			if (seq > 0)
				printf(" (seq %lld) %s\n", seq, fdl_version_message(v));
			else
				printf(" (unreadable: %s)\n", verr.message);
			fdl_version_free(v);
		}
		fdl_free(list);
	}
	fdl_repo_free(repo);
	return rc ? cli_fail(&err) : 0;
}
