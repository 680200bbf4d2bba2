/* The prologue every command shares: open the repository, resolve a ref,
 * print a report's JSON. Each returns an exit code (0 to go on). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Open the repository `target` names; with `ref` not NULL, *ref gets the
 * REF of ROOT@REF (or keeps the positional one it holds; both at once is a
 * usage error). Without `ref`, ROOT@REF is refused: the command takes none. */
static int open_target(fdl_repo **out, const char *target, const char **ref, char **owned)
{
	fdl_error err = {0};
	char *root = NULL, *at = NULL;
	*out = NULL;
	*owned = NULL;
	if (fdl_target_split(&root, &at, target, &err))
		return cli_fail(&err);
	int rc = 0;
	if (at && !ref) {
		fprintf(stderr, "fdl: '%s' names a version after '@', and this command takes only a repository; give %s\n",
			target, root);
		rc = CLI_EXIT_USAGE;
	} else if (at && *ref) {
		fprintf(stderr, "fdl: '%s' names a version after '@' and '%s' names another; give one\n", target,
			*ref);
		rc = CLI_EXIT_USAGE;
	} else if (at) {
		*ref = *owned = at;
		at = NULL;
	}
	if (!rc && fdl_repo_open(out, root, &err))
		rc = cli_fail(&err);
	fdl_free(root);
	fdl_free(at);
	if (rc) {
		fdl_free(*owned);
		*owned = NULL;
	}
	return rc;
}

int cli_open_repo(fdl_repo **out, const char *root)
{
	char *owned;
	return open_target(out, root, NULL, &owned);
}

int cli_open_repo_ref(fdl_repo **out, const char *target, const char **ref, char **owned)
{
	return open_target(out, target, ref, owned);
}

int cli_open_version(fdl_repo **out, char id[FDL_ID_LEN + 1], const char *root, const char *ref)
{
	char *owned = NULL;
	int rc = open_target(out, root, &ref, &owned);
	if (rc)
		return rc;
	fdl_error err = {0};
	if (fdl_ref_resolve(id, *out, ref, &err)) {
		fdl_repo_free(*out);
		*out = NULL;
		rc = cli_fail(&err);
	}
	fdl_free(owned);
	return rc;
}

int cli_print_json(int rc, char **text, const fdl_error *err)
{
	if (!rc)
		fputs(*text, stdout);
	fdl_free(*text);
	*text = NULL;
	return rc ? cli_fail(err) : 0;
}

int cli_count(long long *out, const char *option, const char *value, bool all)
{
	if (all && !strcmp(value, "all")) {
		*out = -1;
		return 0;
	}
	char *end;
	long long n = strtoll(value, &end, 10);
	if (!*value || *end || n < 0) {
		fprintf(stderr, "fdl: %s expects a number%s, got '%s'\n", option, all ? " or 'all'" : "", value);
		return CLI_EXIT_USAGE;
	}
	*out = n;
	return 0;
}

void cli_print_removals(const char *what, const fdl_version_removal *v, size_t n, bool dry_run)
{
	for (size_t i = 0; i < n; i++) {
		printf("%s %s", what, v[i].id);
		for (size_t k = 0; k < v[i].removed.count; k++)
			printf("%s %s", k ? "," : (dry_run ? ": would remove" : ": removed"), v[i].removed.strings[k]);
		printf("\n");
	}
}

void cli_print_list(const char *before, const fdl_strarray *a, const char *after)
{
	for (size_t i = 0; i < a->count; i++)
		printf("%s%s%s\n", before, a->strings[i], after);
}

/* One ref's line: "  NAME  ID (seq N) MESSAGE", `*` for HEAD's branch. */
static void ref_line(fdl_repo *repo, const char *name, const char *id, int mark)
{
	fdl_version *v = NULL;
	fdl_error verr;
	long long seq = fdl_version_read(&v, repo, id, &verr) ? -1 : (long long)fdl_version_seq(v);
	if (mark >= 0)
		printf("%c ", mark ? '*' : ' ');
	printf("%-20s %s", name, id);
	if (seq > 0)
		printf(" (seq %lld) %s\n", seq, fdl_version_message(v));
	else
		printf(" (unreadable: %s)\n", verr.message);
	fdl_version_free(v);
}

int cli_ref_command(int argc, char **argv, const cli_doc *doc, bool tags)
{
	const char *del = NULL, *pos[3];
	int npos;
	cli_opt opts[] = {
		{.name = "delete", .short_name = 'd', .value = &del, .arg = "NAME",
		 .help = tags ? "delete tag NAME" : "delete branch NAME (not the one HEAD names)"},
		{0},
	};
	int rc = cli_parse(argc, argv, doc, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (del && npos > 1) {
		fprintf(stderr, "fdl: --delete takes no other NAME\n");
		return CLI_EXIT_USAGE;
	}
	fdl_repo *repo;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	const char *kind = tags ? "tag" : "branch";
	if (del) {
		rc = tags ? fdl_tag_delete(repo, del, &err) : fdl_branch_delete(repo, del, &err);
		if (!rc)
			printf("Deleted %s %s\n", kind, del);
	} else if (npos > 1) {
		const char *start = npos > 2 ? pos[2] : NULL;
		rc = tags ? fdl_tag_create(repo, pos[1], start, &err) : fdl_branch_create(repo, pos[1], start, &err);
		if (!rc)
			printf("Created %s %s\n", kind, pos[1]);
	} else if (tags) {
		fdl_tag *list = NULL;
		size_t n = 0;
		rc = fdl_tag_list(&list, &n, repo, &err);
		for (size_t i = 0; !rc && i < n; i++)
			ref_line(repo, list[i].name, list[i].target, -1);
		fdl_free(list);
	} else {
		fdl_branch *list = NULL;
		size_t n = 0;
		rc = fdl_branch_list(&list, &n, repo, &err);
		for (size_t i = 0; !rc && i < n; i++)
			ref_line(repo, list[i].name, list[i].tip, list[i].head);
		fdl_free(list);
	}
	fdl_repo_free(repo);
	return rc ? cli_fail(&err) : 0;
}
