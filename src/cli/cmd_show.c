/* fdl show: show one version.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

const cli_doc doc_show = {
	.usage = "fdl show ROOT [VERSION|REF] [--json]",
	.summary = "show one version",
	.text = "One version (default HEAD), as `git show` shows a commit: id, seq,\n"
		"parents, author, date, catalog and message, then what it changed (the\n"
		"schema changes recorded against its parent, and what its description\n"
		"changed: licenses, title, descriptions) and what it holds (each table\n"
		"with its rows, columns, data files and bytes, from `dataset.json` and\n"
		"`files.json`). `--json` prints its `version.json` as stored.",
	.examples = "fdl show /srv/population 019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c\n"
		    "fdl show /srv/population main:3\n",
	.min = 1,
	.max = 2,
};

int cmd_show(int argc, char **argv)
{
	const char *pos[2];
	bool json = false;
	int npos;
	cli_opt opts[] = {
		{.name = "json", .flag = &json, .help = "print version.json as stored"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_show, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_repo *repo;
	fdl_error err = {0};
	char id[FDL_ID_LEN + 1];
	fdl_version *v = NULL;
	if ((rc = cli_open_version(&repo, id, pos[0], npos > 1 ? pos[1] : NULL)))
		return rc;
	rc = fdl_version_read(&v, repo, id, &err);
	fdl_table_list *tables = NULL;
	if (!rc && !json && (rc = fdl_version_tables(&tables, repo, v, &err)))
		fdl_version_free(v);
	/* what the description changed since the first parent (fdl diff says it of any two) */
	fdl_diff *desc = NULL;
	fdl_error derr;
	if (!rc && !json && fdl_version_parent(v, 0) && fdl_diff_descriptions(&desc, repo, fdl_version_parent(v, 0), id, &derr))
		desc = NULL;
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	if (json) {
		char *text;
		if ((rc = fdl_version_to_json(&text, v, &err))) {
			fdl_version_free(v);
			return cli_fail(&err);
		}
		fputs(text, stdout);
		fdl_free(text);
	} else {
		const char *email = fdl_version_author_email(v);
		printf("version  %s\nseq      %lld\n", fdl_version_id(v), (long long)fdl_version_seq(v));
		for (size_t i = 0; i < fdl_version_parent_count(v); i++)
			printf("parent   %s\n", fdl_version_parent(v, i));
		printf("author   %s%s%s%s\n", fdl_version_author_name(v), email ? " <" : "", email ? email : "",
		       email ? ">" : "");
		printf("date     %s\n", fdl_version_created_at(v));
		printf("catalog  %s (%lld bytes, %s, sha256 %s)\n", fdl_version_catalog_path(v),
		       (long long)fdl_version_catalog_bytes(v), fdl_version_catalog_storage(v),
		       fdl_version_catalog_sha256(v));
		printf("ducklake format %s, snapshot %lld\n\n    %s\n", fdl_version_ducklake_format(v),
		       (long long)fdl_version_snapshot_id(v), fdl_version_message(v));
		size_t nc = fdl_version_change_count(v);
		if (nc) {
			printf("\nchanges\n");
			for (size_t i = 0; i < nc; i++)
				cli_print_change(stdout, fdl_version_change(v, i), "  ");
		}
		if (desc && desc->desc_change_count) {
			printf("\ndescription changes\n");
			for (size_t i = 0; i < desc->desc_change_count; i++)
				cli_print_desc_change(stdout, &desc->desc_changes[i], "  ");
		}
		if (tables && tables->count) {
			printf("\n%-32s %12s %8s %6s %12s\n", "table", "rows", "columns", "files", "bytes");
			for (size_t i = 0; i < tables->count; i++) {
				const fdl_table_info *t = &tables->items[i];
				char rows[32] = "-", files[32] = "-", bytes[32] = "-";
				if (t->rows >= 0)
					snprintf(rows, sizeof rows, "%lld", (long long)t->rows);
				if (t->bytes >= 0 && !t->view) {
					snprintf(files, sizeof files, "%zu", t->files);
					snprintf(bytes, sizeof bytes, "%lld", (long long)t->bytes);
				}
				printf("%-32s %12s %8zu %6s %12s\n", t->name, t->view ? "view" : rows, t->columns, files,
				       bytes);
			}
		}
	}
	fdl_diff_free(desc);
	fdl_table_list_free(tables);
	fdl_version_free(v);
	return 0;
}
