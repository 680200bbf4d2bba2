#include "cli.h"

int cmd_clone(int argc, char **argv)
{
	const char *pos[2];
	bool json = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl clone SRC DST [--json]",
			   "Copy a repository from SRC (a folder, or an http(s):// URL: then what HEAD's branch\n"
			   "reaches) to the folder DST, checking every byte against what the versions record.\n"
			   "Data files first, refs last, so an interrupted clone is still a valid repository;\n"
			   "run the same command again to finish it.",
			   pos, 2, 2, &npos, &done);
	if (done)
		return rc;
	fdl_error err = {0};
	char *text = NULL;
	if (fdl_clone(&text, pos[0], pos[1], &err))
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
