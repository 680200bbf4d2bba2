/* The prologue every command shares: open the repository, resolve a ref,
 * print a report's JSON. Each returns an exit code (0 to go on). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_open_repo(fdl_repo **out, const char *root)
{
	fdl_error err = {0};
	*out = NULL;
	return fdl_repo_open(out, root, &err) ? cli_fail(&err) : 0;
}

int cli_open_version(fdl_repo **out, char id[FDL_ID_LEN + 1], const char *root, const char *ref)
{
	int rc = cli_open_repo(out, root);
	if (rc)
		return rc;
	fdl_error err = {0};
	if (fdl_ref_resolve(id, *out, ref, &err)) {
		fdl_repo_free(*out);
		*out = NULL;
		return cli_fail(&err);
	}
	return 0;
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
