/* fdl config: show or set a repository's settings in fdl.json (its
 * retention), as git config does for a repository's. */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const cli_doc doc_config = {
	.usage = "fdl config ROOT [KEY [VALUE]] [--unset KEY]",
	.summary = "show or set the repository's retention and public address",
	.text = "Shows the settings kept in `fdl.json` that a publisher changes, or sets\n"
		"one: `retention.days` (versions older than this many days may expire) and\n"
		"`retention.keep` (the newest this many versions of each branch never do);\n"
		"`none`, or `--unset KEY`, is forever. `fdl expire` applies them; a branch\n"
		"tip or a tagged version never expires. The change is a compare-and-swap\n"
		"on `fdl.json` (exit 4 when another writer changed it meanwhile) that keeps\n"
		"every other field.\n"
		"\n"
		"`public_url` is the address the repository is published at (http:// or\n"
		"https://): the pages, Croissant and Data Package files `fdl site` writes\n"
		"name its files under it (run `fdl site` again after changing it).",
	.examples = "fdl config /srv/population retention.days 365\n"
		    "fdl config /srv/population retention.keep 12\n"
		    "fdl config /srv/population --unset retention.days\n"
		    "fdl config /srv/population public_url https://data.example.org/population\n"
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
	bool url = key && !strcmp(key, "public_url");
	if (!unset && npos == 2 && strcmp(key, "retention.days") && strcmp(key, "retention.keep") && !url) {
		fdl_repo_free(repo);
		fprintf(stderr,
			"fdl: '%s' is not a setting fdl config knows: retention.days, retention.keep or public_url\n",
			key);
		return cli_exit_code(FDL_EINVALID);
	}
	if ((unset || npos > 2) && url)
		rc = fdl_repo_public_url_set(repo, value, &err);
	else if (unset || npos > 2)
		rc = fdl_repo_retention_set(repo, key, value, &err);
	int64_t days = -1, keep = -1;
	if (!rc)
		rc = fdl_repo_retention(&days, &keep, repo, &err);
	const char *public_url = rc ? NULL : fdl_repo_public_url(repo);
	if (!rc && url && npos < 3 && !unset)
		printf("%s\n", public_url ? public_url : "none");
	char *shown = public_url ? strdup(public_url) : NULL;
	fdl_repo_free(repo);
	if (rc || url) {
		free(shown);
		return rc ? cli_fail(&err) : 0;
	}
	if (!key || !strcmp(key, "retention.days"))
		print_setting("retention.days", days, key && !unset && npos < 3);
	if (!key || !strcmp(key, "retention.keep"))
		print_setting("retention.keep", keep, key && !unset && npos < 3);
	if (!key && shown) /* shown only once set: the output of a repository without one is as it was */
		printf("public_url = %s\n", shown);
	free(shown);
	return 0;
}
