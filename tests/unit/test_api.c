/* The public API's options structs: a struct started from its _INIT macro
 * (or NULL) runs with the defaults, and one whose version this libfdl does
 * not know is refused before anything is read. */
#include "test.h"
#include "../../src/util/util.h"
#include "fdl.h"

#include <stdlib.h>

static void verify_options_version(t_ctx *t)
{
	char *dir = t_tempdir(), root[4096];
	snprintf(root, sizeof root, "%s/repo", dir);
	fdl_error err = {0};
	fdl_repo *repo = NULL;
	CHECK(t, fdl_repo_init(root, NULL, &err) == 0);
	CHECK(t, fdl_repo_open(&repo, root, &err) == 0);
	if (repo) {
		fdl_verify_report *r = NULL;
		fdl_verify_options o = FDL_VERIFY_OPTIONS_INIT;
		CHECK(t, o.version == FDL_VERIFY_OPTIONS_VERSION && !o.reachable_only && !o.allowed_signers);
		CHECK(t, fdl_verify(&r, repo, &o, &err) == 0 && r && r->problem_count == 0 && !r->signatures_checked);
		fdl_verify_report_free(r);
		r = NULL;
		CHECK(t, fdl_verify(&r, repo, NULL, &err) == 0 && r && r->problem_count == 0);
		fdl_verify_report_free(r);
		unsigned int unknown[] = {0, FDL_VERIFY_OPTIONS_VERSION + 1};
		for (size_t i = 0; i < 2; i++) {
			r = NULL;
			o.version = unknown[i];
			CHECK(t, fdl_verify(&r, repo, &o, &err) == FDL_EINVALID && err.code == FDL_EINVALID && !r);
			CHECK_CONTAINS(t, err.message, "FDL_VERIFY_OPTIONS_INIT");
		}
	}
	fdl_repo_free(repo);
	fdl_rm_rf(dir);
	free(dir);
}

/* Out of memory has its own code (exit 12): FDL_ERROR means only
 * "anything else", so no caller reads it as an allocation. */
static void oom_code(t_ctx *t)
{
	fdl_error err = {0};
	CHECK(t, fdl_oom(&err) == FDL_ENOMEM && err.code == FDL_ENOMEM && FDL_ENOMEM != FDL_ERROR);
	CHECK_CONTAINS(t, err.message, "out of memory");
	CHECK(t, fdl_oom(NULL) == FDL_ENOMEM);
}

const t_case api_tests[] = {
	{"api: verify options start from FDL_VERIFY_OPTIONS_INIT; an unknown version is refused", verify_options_version},
	{"api: out of memory is FDL_ENOMEM, not FDL_ERROR", oom_code},
	{NULL, NULL},
};
