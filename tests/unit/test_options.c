/* The options of expire, withdraw, gc and clone: started from their _INIT
 * macro (or NULL) they run with the defaults, and a version this libfdl
 * does not know is refused (FDL_EINVALID) before anything is read. */
#include "test.h"
#include "../../src/util/util.h"
#include "fdl.h"

#include <stdlib.h>

static void lifecycle_options_version(t_ctx *t)
{
	char *dir = t_tempdir(), root[4096], copy[4096];
	snprintf(root, sizeof root, "%s/repo", dir);
	snprintf(copy, sizeof copy, "%s/copy", dir);
	fdl_error err = {0};
	fdl_repo *repo = NULL;
	CHECK(t, fdl_repo_init(root, NULL, &err) == 0);
	CHECK(t, fdl_repo_open(&repo, root, &err) == 0);
	unsigned int unknown[] = {0, 2};
	if (repo) {
		fdl_expire_options xo = FDL_EXPIRE_OPTIONS_INIT;
		fdl_expire_report *x = NULL;
		CHECK(t, xo.version == FDL_EXPIRE_OPTIONS_VERSION && !xo.dry_run);
		CHECK(t, fdl_expire(&x, repo, &xo, &err) == 0 && x && !x->expired_count);
		fdl_expire_report_free(x);
		x = NULL;
		CHECK(t, fdl_expire(&x, repo, NULL, &err) == 0 && x);
		fdl_expire_report_free(x);
		fdl_gc_options go = FDL_GC_OPTIONS_INIT;
		fdl_gc_report *g = NULL;
		CHECK(t, go.version == FDL_GC_OPTIONS_VERSION && go.grace_seconds == FDL_GC_GRACE_DEFAULT && !go.dry_run);
		go.dry_run = 1;
		CHECK(t, fdl_gc(&g, repo, &go, &err) == 0 && g && g->dry_run && g->grace_seconds == 14 * 86400);
		fdl_gc_report_free(g);
		fdl_withdraw_options wo = FDL_WITHDRAW_OPTIONS_INIT;
		CHECK(t, wo.version == FDL_WITHDRAW_OPTIONS_VERSION && !wo.reason && !wo.dry_run && !wo.force &&
				 !wo.remove_version_json);
		fdl_clone_options co = FDL_CLONE_OPTIONS_INIT;
		CHECK(t, co.version == FDL_CLONE_OPTIONS_VERSION && !co.jobs && !co.branch && !co.force && !co.progress);
		const char *ids[] = {"019a0000-0000-7000-8000-000000000000"};
		for (size_t i = 0; i < 2; i++) {
			xo.version = go.version = wo.version = co.version = unknown[i];
			wo.reason = "a test";
			x = NULL;
			g = NULL;
			fdl_withdraw_report *w = NULL;
			fdl_clone_report *c = NULL;
			CHECK(t, fdl_expire(&x, repo, &xo, &err) == FDL_EINVALID && !x);
			CHECK_CONTAINS(t, err.message, "FDL_EXPIRE_OPTIONS_INIT");
			CHECK(t, fdl_gc(&g, repo, &go, &err) == FDL_EINVALID && !g);
			CHECK_CONTAINS(t, err.message, "FDL_GC_OPTIONS_INIT");
			CHECK(t, fdl_withdraw(&w, repo, ids, 1, &wo, &err) == FDL_EINVALID && !w);
			CHECK_CONTAINS(t, err.message, "FDL_WITHDRAW_OPTIONS_INIT");
			w = NULL;
			CHECK(t, fdl_withdraw_clean_rows(&w, repo, ids, 1, dir, &wo, &err) == FDL_EINVALID && !w);
			CHECK_CONTAINS(t, err.message, "FDL_WITHDRAW_OPTIONS_INIT");
			CHECK(t, fdl_clone(&c, root, copy, &co, &err) == FDL_EINVALID && !c);
			CHECK_CONTAINS(t, err.message, "FDL_CLONE_OPTIONS_INIT");
		}
	}
	fdl_repo_free(repo);
	fdl_rm_rf(dir);
	free(dir);
}

const t_case options_tests[] = {
	{"options: expire, withdraw, gc and clone start from their _INIT; an unknown version is refused",
	 lifecycle_options_version},
	{NULL, NULL},
};
