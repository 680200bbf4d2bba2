#include "cli.h"

int cmd_show(int argc, char **argv)
{
	const char *pos[2];
	bool json = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "json", .short_name = 0, .value = NULL, .flag = &json, .help = "print version.json as stored"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl show ROOT [VERSION|REF] [--json]",
			   "Show one version (default: HEAD): who made it, when, why, and the catalog it holds.",
			   pos, 1, 2, &npos, &done);
	if (done)
		return rc;
	fdl_error err = {0};
	fdl_repo *repo;
	if (fdl_repo_open(&repo, pos[0], &err))
		return cli_fail(&err);
	char id[FDL_ID_LEN + 1];
	fdl_version *v = NULL;
	rc = fdl_ref_resolve(id, repo, npos > 1 ? pos[1] : NULL, &err);
	if (!rc)
		rc = fdl_version_read(&v, repo, id, &err);
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
	}
	fdl_version_free(v);
	return 0;
}
