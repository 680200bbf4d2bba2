/* fdl clone: copy a repository, resumable and checked.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"
#include <string.h>

const cli_doc doc_clone = {
	.usage = "fdl clone SRC[@BRANCH] DST [--branch BRANCH] [--force] [--jobs N] [--json] [-q]",
	.summary = "copy a repository, resumable and checked",
	.text = "Copies a repository from a folder, a bucket or an `http(s)://` URL into the\n"
		"folder or bucket DST (on a terminal, unless `-q`, a line of files and bytes\n"
		"done, rate and time left): every branch and tag with what they reach (a\n"
		"static host, which cannot be listed, names them in the ref list fdl\n"
		"writes, `history/refs.json`; without one, HEAD's branch), or with\n"
		"`SRC@BRANCH` or `--branch BRANCH` that branch alone, which the copy's HEAD\n"
		"then names. Each ref gets the value it had when the clone began, so a\n"
		"commit at the source meanwhile never leaves the copy naming a version it\n"
		"lacks. A copy whose ref names a version the source does not have holds\n"
		"another repository: refused (exit 4) unless `--force`; a ref the source\n"
		"moved back (`fdl branch --force`) follows it, with a line that says so.\n"
		"Checking every\n"
		"byte against what the versions record (a data file's sha256 is in\n"
		"`files.json`, checked as it is copied): data files first, each version's\n"
		"`version.json` after its other files, refs last, so an interrupted clone is\n"
		"still a valid repository; the same command finishes it. The plan comes\n"
		"first, so each file is asked for once (a data file's size is in its\n"
		"catalog), and what `fdl verify --all` checks is checked on it: a source\n"
		"verify rejects gets no version file and no ref, and the copy is never\n"
		"read back. From a host or a bucket, or into a bucket, 8 transfers run at\n"
		"once (`--jobs`). Cloning into an existing copy fetches only what it lacks, and\n"
		"deletes from it what the source has expired or withdrawn since (a mirror\n"
		"keeps no withdrawn data). The previews of the versions copied (first rows\n"
		"and statistics, `fdl preview`) are copied too, checked, after the refs.",
	.examples = "fdl clone https://data.example.org/population /srv/mirror/population\n"
		    "fdl clone /srv/population s3://open-data/population\n",
	.min = 2,
	.max = 2,
};

int cmd_clone(int argc, char **argv)
{
	const char *pos[2];
	bool json = false, quiet = false;
	const char *jobs_s = NULL;
	int npos;
	const char *branch = NULL;
	bool force = false;
	cli_opt opts[] = {
		{.name = "branch", .short_name = 'b', .value = &branch, .arg = "BRANCH",
		 .help = "copy this branch alone (as SRC@BRANCH does); the copy's HEAD names it"},
		{.name = "force", .flag = &force,
		 .help = "make a copy that holds another repository follow the source"},
		{.name = "jobs", .short_name = 'j', .value = &jobs_s, .arg = "N",
		 .help = "transfers at once (default 8 from a host or bucket or into a bucket, 1 between folders)"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{.name = "quiet", .short_name = 'q', .flag = &quiet, .help = "no progress line"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_clone, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	long long jobs = 0;
	if (jobs_s && (rc = cli_count(&jobs, "--jobs", jobs_s, false)))
		return rc;
	if (jobs > 64) {
		fprintf(stderr, "fdl: --jobs is at most 64, not %lld\n", jobs);
		return CLI_EXIT_USAGE;
	}
	fdl_error err = {0};
	fdl_clone_report *r = NULL;
	/* ROOT@REF: a clone copies a repository, not one version */
	char *src = NULL, *at = NULL;
	if (fdl_target_split(&src, &at, pos[0], &err))
		return cli_fail(&err);
	if (at && branch && strcmp(at, branch)) {
		fprintf(stderr, "fdl: '%s' and --branch %s name two branches; give one\n", pos[0], branch);
		fdl_free(src);
		fdl_free(at);
		return CLI_EXIT_USAGE;
	}
	cli_progress progress;
	fdl_clone_options o = FDL_CLONE_OPTIONS_INIT;
	o.progress = cli_progress_start(&progress, quiet || json);
	o.progress_payload = &progress;
	o.jobs = (int)jobs;
	o.branch = at ? at : branch;
	o.force = force;
	rc = fdl_clone(&r, src, pos[1], &o, &err);
	fdl_free(src);
	fdl_free(at);
	cli_progress_end(&progress);
	if (rc)
		return cli_fail(&err);
	if (json) {
		char *text = NULL;
		rc = cli_print_json(fdl_clone_report_json(&text, r, &err), &text, &err);
	} else {
		printf("Cloned %s into %s: %lld versions, %lld files copied, %lld already there", pos[0], pos[1],
		       (long long)r->versions, (long long)r->copied, (long long)r->already_there);
		if (r->removed)
			printf(", %lld removed (their versions expired or were withdrawn at the source)",
			       (long long)r->removed);
		putchar('\n');
		for (size_t i = 0; i < r->moved.count; i++)
			printf("warning: %s\n", r->moved.strings[i]);
	}
	fdl_clone_report_free(r);
	if (rc)
		return rc;
	return 0;
}
