#include "test.h"
#include "../../src/util/util.h"

#include <stdlib.h>

char *t_tempdir(void)
{
	char *dir = NULL;
	fdl_error err;
	if (fdl_tempdir(&dir, "unit", &err) != 0) {
		fprintf(stderr, "cannot make a temp folder: %s\n", err.message);
		exit(2);
	}
	return dir;
}

int main(int argc, char **argv)
{
	const t_case *suites[] = {uuid7_tests, version_tests, store_tests, refs_tests, catalog_tests, yaml_tests, range_tests, aws_tests, thread_tests,
				    commit_tests, dataset_tests, hindex_tests, rebase_tests, pool_tests, iceberg_tests, api_tests, options_tests};
	int passed = 0, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;
	for (size_t s = 0; s < sizeof suites / sizeof *suites; s++) {
		for (const t_case *c = suites[s]; c->name; c++) {
			if (only && !strstr(c->name, only))
				continue;
			t_ctx t = {0};
			c->fn(&t);
			if (t.failures) {
				printf("FAIL %s\n", c->name);
				failed++;
			} else {
				printf("ok   %s\n", c->name);
				passed++;
			}
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
