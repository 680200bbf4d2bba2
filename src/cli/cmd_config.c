/* fdl config: show or set a repository's settings in fdl.json (its
 * retention), as git config does for a repository's. */
#include "cli.h"

#include <inttypes.h>
#include <string.h>

const cli_doc doc_config = {
	.usage = "fdl config ROOT [KEY [VALUE]] [--unset KEY]",
	.summary = "show or set the repository's retention",
	.text = "Shows the settings kept in `fdl.json` that a publisher changes, or sets\n"
		"one: `retention.days` (versions older than this many days may expire) and\n"
		"`retention.keep` (the newest this many versions of each branch never do);\n"
		"`none`, or `--unset KEY`, is forever. `fdl expire` applies them; a branch\n"
		"tip or a tagged version never expires. The change is a compare-and-swap\n"
		"on `fdl.json` (exit 4 when another writer changed it meanwhile) that keeps\n"
		"every other field.",
	.examples = "fdl config /srv/population retention.days 365\n"
		    "fdl config /srv/population retention.keep 12\n"
		    "fdl config /srv/population --unset retention.days\n"
		    "fdl config /srv/population\n",
	.min = 1,
	.max = 3,
};

static void print_setting(const char *key, int64_t v, bool only)
{
	if (only && v < 0)
		printf("none\n");
	else if (only)
		printf("%" PRId64 "\n", v);
	else if (v < 0)
		printf("%s = none (forever)\n", key);
	else
		printf("%s = %" PRId64 "\n", key, v);
}

int cmd_config(int argc, char **argv)
{
	const char *pos[3], *unset = NULL;
	int npos;
	cli_opt opts[] = {
		{.name = "unset", .value = &unset, .arg = "KEY", .help = "set KEY back to none (forever)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_config, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (unset && npos > 1) {
		fprintf(stderr, "fdl: --unset KEY takes no other KEY or VALUE\n");
		return CLI_EXIT_USAGE;
	}
	fdl_repo *repo = NULL;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	const char *key = unset ? unset : npos > 1 ? pos[1] : NULL;
	const char *value = npos > 2 && strcmp(pos[2], "none") ? pos[2] : NULL;
	if (!unset && npos == 2 && strcmp(key, "retention.days") && strcmp(key, "retention.keep")) {
		fdl_repo_free(repo);
		fprintf(stderr, "fdl: '%s' is not a setting fdl config knows: retention.days or retention.keep\n", key);
		return cli_exit_code(FDL_EINVALID);
	}
	if (unset || npos > 2)
		rc = fdl_repo_retention_set(repo, key, value, &err);
	int64_t days = -1, keep = -1;
	if (!rc)
		rc = fdl_repo_retention(&days, &keep, repo, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	if (!key || !strcmp(key, "retention.days"))
		print_setting("retention.days", days, key && !unset && npos < 3);
	if (!key || !strcmp(key, "retention.keep"))
		print_setting("retention.keep", keep, key && !unset && npos < 3);
	return 0;
}
