/* A minimal test harness: each test is a function that records failed
 * checks; the runner prints "N passed, N failed" and exits non-zero on any
 * failure. */
#ifndef FDL_TEST_H
#define FDL_TEST_H

#include <stdio.h>
#include <string.h>

typedef struct t_ctx {
	int failures;
} t_ctx;

#define CHECK(t, cond)                                                                     \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "    %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			(t)->failures++;                                                   \
		}                                                                          \
	} while (0)

#define CHECK_CONTAINS(t, haystack, needle)                                                             \
	do {                                                                                            \
		const char *h_ = (haystack);                                                            \
		if (!h_ || !strstr(h_, (needle))) {                                                     \
			fprintf(stderr, "    %s:%d: expected \"%s\" in \"%s\"\n", __FILE__, __LINE__, (needle), \
				h_ ? h_ : "(null)");                                                    \
			(t)->failures++;                                                                \
		}                                                                                       \
	} while (0)

typedef struct t_case {
	const char *name;
	void (*fn)(t_ctx *t);
} t_case;

/* Each test file exports its cases, terminated by {NULL, NULL}. */
extern const t_case uuid7_tests[];
extern const t_case version_tests[];
extern const t_case store_tests[];
extern const t_case aws_tests[];
extern const t_case refs_tests[];
extern const t_case catalog_tests[];
extern const t_case yaml_tests[];
extern const t_case range_tests[];
extern const t_case thread_tests[];
extern const t_case commit_tests[];
extern const t_case dataset_tests[];
extern const t_case hindex_tests[];
extern const t_case rebase_tests[];
extern const t_case pool_tests[];
extern const t_case iceberg_tests[];
extern const t_case api_tests[];
extern const t_case options_tests[];

/* A fresh temporary folder for a test (caller frees and removes). */
char *t_tempdir(void);

#endif
