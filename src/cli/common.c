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
