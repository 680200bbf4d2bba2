#include "cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* "add_column main.t.note", with the old name or type where there is one. */
void cli_print_change(FILE *f, const json_t *c, const char *indent)
{
	const char *table = json_string_value(json_object_get(c, "table"));
	const char *kind = json_string_value(json_object_get(c, "kind"));
	const char *col = json_string_value(json_object_get(c, "column"));
	const char *from = json_string_value(json_object_get(c, "from"));
	const char *type = json_string_value(json_object_get(c, "type"));
	const char *from_type = json_string_value(json_object_get(c, "from_type"));
	fprintf(f, "%s%-16s %s%s%s", indent, kind ? kind : "?", table ? table : "?", col ? "." : "", col ? col : "");
	if (from)
		fprintf(f, " (was %s)", from);
	if (from_type && type)
		fprintf(f, " (%s -> %s)", from_type, type);
	else if (type)
		fprintf(f, " %s", type);
	if (json_is_true(json_object_get(c, "breaking")))
		fprintf(f, "  BREAKING");
	fprintf(f, "\n");
}

int cmd_diff(int argc, char **argv)
{
	const char *pos[4];
	bool json = false, rows = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "rows", .short_name = 0, .value = NULL, .flag = &rows, .help = "also the rows added and removed (of TABLE, or of every table)"},
		{.name = "json", .short_name = 0, .value = NULL, .flag = &json, .help = "print JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl diff ROOT REF-A REF-B [--rows [TABLE]] [--limit N] [--json]",
			   "The schema changes from version A to version B (refs or ids), computed from the two\n"
			   "frozen catalogs; with --rows, the rows added and removed, computed by DuckDB over\n"
			   "the columns both versions have.",
			   pos, 3, 4, &npos, &done);
	if (done)
		return rc;
	if (npos == 4 && !rows) {
		fprintf(stderr, "fdl: TABLE goes with --rows\n");
		return CLI_EXIT_USAGE;
	}
	fdl_error err = {0};
	fdl_repo *repo;
	if (fdl_repo_open(&repo, pos[0], &err))
		return cli_fail(&err);
	char *text = NULL;
	rc = fdl_diff(&text, repo, pos[1], pos[2], rows, npos == 4 ? pos[3] : NULL, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	if (json) {
		fputs(text, stdout);
		fdl_free(text);
		return 0;
	}
	json_t *doc = json_loads(text, 0, NULL);
	fdl_free(text);
	printf("from %s\nto   %s\n", json_string_value(json_object_get(doc, "from")),
	       json_string_value(json_object_get(doc, "to")));
	const json_t *changes = json_object_get(doc, "changes");
	if (json_array_size(changes) == 0)
		printf("no schema changes\n");
	size_t i;
	const json_t *c;
	json_array_foreach(changes, i, c) cli_print_change(stdout, c, "  ");
	const char *table;
	const json_t *t;
	json_object_foreach(json_object_get(doc, "rows"), table, t)
	{
		const json_t *added = json_object_get(t, "added"), *removed = json_object_get(t, "removed");
		printf("rows of %s: +%zu -%zu\n", table, json_array_size(added), json_array_size(removed));
		const json_t *r;
		json_array_foreach(added, i, r)
		{
			char *s = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER);
			printf("  + %s\n", s ? s : "?");
			free(s);
		}
		json_array_foreach(removed, i, r)
		{
			char *s = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER);
			printf("  - %s\n", s ? s : "?");
			free(s);
		}
	}
	json_decref(doc);
	return 0;
}
