/* fdl tag: list, create and delete tags, as git tag does. */
#include "cli.h"

#include <string.h>

const cli_doc doc_tag = {
	.usage = "fdl tag ROOT [NAME [REF]] [--delete NAME]",
	.summary = "list, create or delete tags",
	.text = "Lists tags with the versions they name, creates `NAME` at `REF` (default\n"
		"HEAD), or deletes one. A tag names one version for good: commits never move\n"
		"it, retention never expires the version it names, and creating a tag that\n"
		"exists is refused (exit 9). Every command that takes a ref accepts a tag,\n"
		"as `ROOT@NAME` or `NAME`.",
	.examples = "fdl tag /srv/population v2025\n"
		    "fdl tag /srv/population v2024 main:3\n"
		    "fdl attach /srv/population@v2025\n"
		    "fdl tag /srv/population --delete v2024\n",
	.min = 1,
	.max = 3,
};

int cmd_tag(int argc, char **argv)
{
	const char *del = NULL, *pos[3];
	int npos;
	cli_opt opts[] = {
		{.name = "delete", .short_name = 'd', .value = &del, .arg = "NAME", .help = "delete tag NAME"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_tag, opts, pos, &npos);
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
		rc = fdl_tag_delete(repo, del, &err);
		if (!rc)
			printf("Deleted tag %s\n", del);
	} else if (npos > 1) {
		rc = fdl_tag_create(repo, pos[1], npos > 2 ? pos[2] : NULL, &err);
		if (!rc)
			printf("Created tag %s\n", pos[1]);
	} else {
		fdl_tag *list = NULL;
		size_t n = 0;
		rc = fdl_tag_list(&list, &n, repo, &err);
		for (size_t i = 0; !rc && i < n; i++) {
			fdl_version *v = NULL;
			fdl_error verr;
			long long seq = fdl_version_read(&v, repo, list[i].target, &verr) ? -1
											 : (long long)fdl_version_seq(v);
			printf("%-20s %s", list[i].name, list[i].target);
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
