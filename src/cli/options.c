#include "cli.h"

#include <string.h>

static void print_help(const cli_opt *opts, const char *usage, const char *description)
{
	printf("usage: %s\n\n%s\n", usage, description);
	bool any = false;
	for (const cli_opt *o = opts; o && o->name; o++) {
		if (!any)
			printf("\noptions:\n");
		any = true;
		char left[64];
		if (o->short_name)
			snprintf(left, sizeof left, "-%c, --%s%s", o->short_name, o->name,
				 o->value || o->many ? " VALUE" : "");
		else
			snprintf(left, sizeof left, "    --%s%s", o->name, o->value || o->many ? " VALUE" : "");
		printf("  %-26s %s\n", left, o->help);
	}
	printf("  %-26s %s\n", "-h, --help", "show this help");
	if (strstr(usage, "REF") || strstr(usage, "VERSION"))
		fputs(CLI_REFS_HELP, stdout);
}

static const cli_opt *find(const cli_opt *opts, const char *name, size_t len, char short_name)
{
	for (const cli_opt *o = opts; o && o->name; o++) {
		if (short_name && o->short_name == short_name)
			return o;
		if (!short_name && strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	}
	return NULL;
}

int cli_parse(int argc, char **argv, const cli_opt *opts, const char *usage, const char *description,
	      const char **pos, int min, int max, int *npos, bool *done)
{
	*npos = 0;
	*done = false;
	bool options_end = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options_end || a[0] != '-' || a[1] == '\0') {
			if (*npos >= max) {
				fprintf(stderr, "fdl: unexpected argument '%s'\nusage: %s\n", a, usage);
				*done = true;
				return CLI_EXIT_USAGE;
			}
			pos[(*npos)++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			options_end = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_help(opts, usage, description);
			*done = true;
			return 0;
		}
		const cli_opt *o;
		const char *inline_value = NULL;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			o = find(opts, a + 2, len, 0);
			if (eq)
				inline_value = eq + 1;
		} else {
			o = a[2] == '\0' ? find(opts, NULL, 0, a[1]) : NULL;
		}
		if (!o) {
			fprintf(stderr, "fdl: unknown option '%s'\nusage: %s\n", a, usage);
			*done = true;
			return CLI_EXIT_USAGE;
		}
		if (o->flag) {
			if (inline_value) {
				fprintf(stderr, "fdl: option --%s takes no value\n", o->name);
				*done = true;
				return CLI_EXIT_USAGE;
			}
			*o->flag = true;
		} else if (inline_value || i + 1 < argc) {
			const char *v = inline_value ? inline_value : argv[++i];
			if (o->many) {
				if (*o->nmany >= o->max_many) {
					fprintf(stderr, "fdl: --%s given more than %zu times\n", o->name, o->max_many);
					*done = true;
					return CLI_EXIT_USAGE;
				}
				o->many[(*o->nmany)++] = v;
			} else {
				*o->value = v;
			}
		} else {
			fprintf(stderr, "fdl: option --%s needs a value\nusage: %s\n", o->name, usage);
			*done = true;
			return CLI_EXIT_USAGE;
		}
	}
	if (*npos < min) {
		fprintf(stderr, "fdl: missing arguments\nusage: %s\n", usage);
		*done = true;
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int cli_exit_code(int code)
{
	if (code == 0)
		return 0;
	if (code <= -3 && code >= -99)
		return -code;
	return 1;
}

int cli_fail(const fdl_error *err)
{
	fprintf(stderr, "fdl: %s\n", err->message[0] ? err->message : "failed");
	return cli_exit_code(err->code ? err->code : FDL_ERROR);
}
