/* The CLI's option parser (src/cli/options.c): the input is an argv, one
 * argument per line. Whatever it holds, cli_parse must stay inside argv
 * and its own tables, and keep its promises about what it returns. */
#include "fuzz.h"
#include "../../src/cli/cli.h"

#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	if (!s)
		return 0;
	char *argv[66] = {"fdl-fuzz"};
	int argc = 1;
	for (char *save = NULL, *a = strtok_r(s, "\n", &save); a && argc < 65; a = strtok_r(NULL, "\n", &save))
		argv[argc++] = a;
	argv[argc] = NULL;
	const char *value = NULL, *many[4], *pos[3];
	size_t nmany = 0;
	bool flag = false;
	int npos = -1;
	static const cli_doc doc = {.usage = "fdl fuzz A [B [C]] [--value V] [--flag] [--many M]...",
				    .summary = "fuzzing",
				    .text = "fuzzing\n\n  literal\n\nmore `code`",
				    .examples = "fdl fuzz a\n",
				    .min = 1,
				    .max = 3};
	cli_opt opts[] = {
		{.name = "value", .short_name = 'v', .value = &value, .help = "a value"},
		{.name = "flag", .short_name = 'f', .flag = &flag, .help = "a flag"},
		{.name = "many", .help = "repeatable", .many = many, .nmany = &nmany, .max_many = 4},
		{0},
	};
	/* help and usage errors go nowhere while it parses */
	fflush(stdout);
	fflush(stderr);
	int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
	int null = open("/dev/null", O_WRONLY);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
	int rc = cli_parse(argc, argv, &doc, opts, pos, &npos);
	fflush(stdout);
	fflush(stderr);
	if (saved_out >= 0) {
		dup2(saved_out, STDOUT_FILENO);
		close(saved_out);
	}
	if (saved_err >= 0) {
		dup2(saved_err, STDERR_FILENO);
		close(saved_err);
	}
	if (npos < 0 || npos > 3 || nmany > 4)
		abort(); /* wrote past its tables */
	if (rc == CLI_GO && npos < 1)
		abort(); /* went on with fewer positionals than required */
	if (rc != CLI_GO && rc != 0 && rc != CLI_EXIT_USAGE)
		abort();
	for (int i = 0; i < npos; i++) {
		bool inside = false;
		for (int k = 1; k < argc; k++)
			inside |= pos[i] == argv[k];
		if (!inside)
			abort(); /* a positional that is not an argument */
	}
	if (value && (value < s || value > s + size))
		abort(); /* a value from outside the input */
	free(s);
	return 0;
}
