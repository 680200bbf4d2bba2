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
	char *text = NULL;
	cli_progress progress;
	fdl_clone_options o = {.progress = cli_progress_start(&progress, quiet || json), .progress_payload = &progress};
	rc = fdl_clone(&text, pos[0], pos[1], &o, &err);
	cli_progress_end(&progress);
	if (rc)
		return cli_fail(&err);
	if (json) {
		fputs(text, stdout);
	} else {
		json_t *doc = json_loads(text, 0, NULL);
		printf("Cloned %s into %s: %lld versions, %lld files copied, %lld already there\n", pos[0], pos[1],
		       (long long)json_integer_value(json_object_get(doc, "versions")),
		       (long long)json_integer_value(json_object_get(doc, "copied")),
		       (long long)json_integer_value(json_object_get(doc, "already_there")));
		json_decref(doc);
	}
	fdl_free(text);
	return 0;
}
