#include "cli.h"

int cmd_clone(int argc, char **argv)
{
	const char *pos[2];
	bool json = false, quiet = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{.name = "quiet", .short_name = 'q', .flag = &quiet, .help = "no upload progress"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl clone SRC DST [--json] [-q]",
			   "Copy a repository from SRC (a folder or s3:// bucket, or an http(s):// URL: then what\n"
			   "HEAD's branch reaches) to DST (a folder or s3://bucket/prefix), checking every byte\n"
			   "against what the versions record.\n"
			   "Data files first, refs last, so an interrupted clone is still a valid repository;\n"
			   "run the same command again to finish it.",
			   pos, 2, 2, &npos, &done);
	if (done)
		return rc;
	fdl_error err = {0};
	fdl_clone_report *r = NULL;
	cli_progress progress;
	fdl_clone_options o = {.progress = cli_progress_start(&progress, quiet || json), .progress_payload = &progress};
	rc = fdl_clone(&r, pos[0], pos[1], &o, &err);
	cli_progress_end(&progress);
	if (rc)
		return cli_fail(&err);
	if (json) {
		char *text = NULL;
		rc = cli_print_json(fdl_clone_report_json(&text, r, &err), &text, &err);
	} else {
		printf("Cloned %s into %s: %lld versions, %lld files copied, %lld already there\n", pos[0], pos[1],
		       (long long)r->versions, (long long)r->copied, (long long)r->already_there);
	}
	fdl_clone_report_free(r);
	if (rc)
		return rc;
	return 0;
}
