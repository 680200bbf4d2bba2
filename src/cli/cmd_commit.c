#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* "Name <email>" or "Name"; falls back on FDL_AUTHOR_NAME/EMAIL, then
 * GIT_AUTHOR_NAME/EMAIL, then $USER. */
static void author_from(const char *spec, char *name, size_t nsz, char *email, size_t esz)
{
	name[0] = email[0] = '\0';
	if (spec) {
		const char *lt = strchr(spec, '<'), *gt = lt ? strchr(lt, '>') : NULL;
		size_t n = lt && gt ? (size_t)(lt - spec) : strlen(spec);
		while (n && spec[n - 1] == ' ')
			n--;
		snprintf(name, nsz, "%.*s", (int)n, spec);
		if (lt && gt)
			snprintf(email, esz, "%.*s", (int)(gt - lt - 1), lt + 1);
		return;
	}
	const char *vars[][2] = {{"FDL_AUTHOR_NAME", "FDL_AUTHOR_EMAIL"}, {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"}};
	for (size_t i = 0; i < 2; i++) {
		const char *n = getenv(vars[i][0]);
		if (n && *n) {
			const char *e = getenv(vars[i][1]);
			snprintf(name, nsz, "%s", n);
			snprintf(email, esz, "%s", e ? e : "");
			return;
		}
	}
	const char *user = getenv("USER");
	snprintf(name, nsz, "%s", user && *user ? user : "unknown");
}

int cmd_commit(int argc, char **argv)
{
	const char *message = NULL, *author = NULL, *pos[1], *inputs[256];
	size_t ninputs = 0;
	bool quiet = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "message", .short_name = 'm', .value = &message, .flag = NULL, .help = "what changed (required)"},
		{.name = "author", .short_name = 0, .value = &author, .flag = NULL, .help = "\"NAME <EMAIL>\" (default: $FDL_AUTHOR_NAME, $GIT_AUTHOR_NAME, $USER)"},
		{.name = "quiet", .short_name = 'q', .value = NULL, .flag = &quiet, .help = "print only the new version id, no upload progress"},
		{.name = "input", .help = "SOURCE_ID=FILE_OR_URL: record a source file (repeatable)", .many = inputs,
		 .nmany = &ninputs, .max_many = 256},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl commit WORK -m MESSAGE [--author \"NAME <EMAIL>\"] [--input ID=FILE_OR_URL]...",
			   "Freeze the working catalog's latest snapshot into a new version and move its branch,\n"
			   "only if nobody else moved it since the checkout (else exit 4, nothing published).\n"
			   "With no new snapshot since the last commit, says so, writes nothing and exits 8.\n"
			   "The description (dataset.yml, *.table.yml or dataset.json in WORK) is checked and\n"
			   "merged with the catalog into the version's dataset.json (see `fdl describe`).",
			   pos, 1, 1, &npos, &done);
	if (done)
		return rc;
	if (!message) {
		fprintf(stderr, "fdl: commit needs a message: -m MESSAGE\n");
		return CLI_EXIT_USAGE;
	}
	char name[256], email[256];
	author_from(author, name, sizeof name, email, sizeof email);
	cli_progress progress;
	fdl_commit_options o = {.message = message, .author_name = name, .author_email = email,
				.inputs = inputs, .input_count = ninputs,
				.progress = cli_progress_start(&progress, quiet), .progress_payload = &progress};
	fdl_error err = {0};
	char id[FDL_ID_LEN + 1];
	rc = fdl_commit(id, pos[0], &o, &err);
	cli_progress_end(&progress);
	if (rc)
		return cli_fail(&err);
	if (quiet)
		printf("%s\n", id);
	else
		printf("Committed version %s\n", id);
	return 0;
}
