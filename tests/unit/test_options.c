/* The options structs of the public API (verify's in test_api.c): started
 * from their _INIT macro (or NULL) they run with the defaults, and a
 * version this libfdl does not know is refused (FDL_EINVALID, naming the
 * macro) before anything is read or written. */
#include "test.h"
#include "../../src/util/util.h"
#include "fdl.h"

#include <stdlib.h>
#include <sys/stat.h>

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

/* init, checkout, commit, rebase, serve and diff's rows: each refuses a
 * struct with version 0 (not started from its _INIT) or one past what this
 * libfdl knows, and writes nothing. */
static void api_options_version(t_ctx *t)
{
	char *dir = t_tempdir(), root[4096], other[4096], work[4096];
	snprintf(root, sizeof root, "%s/repo", dir);
	snprintf(other, sizeof other, "%s/other", dir);
	snprintf(work, sizeof work, "%s/work", dir);
	fdl_error err = {0};
	fdl_repo *repo = NULL;
	fdl_init_options io = FDL_INIT_OPTIONS_INIT;
	CHECK(t, io.version == FDL_INIT_OPTIONS_VERSION && !io.branch && !io.data_dir);
	CHECK(t, fdl_repo_init(root, &io, &err) == 0);
	CHECK(t, fdl_repo_open(&repo, root, &err) == 0);
	fdl_checkout_options ko = FDL_CHECKOUT_OPTIONS_INIT;
	fdl_commit_options mo = FDL_COMMIT_OPTIONS_INIT;
	fdl_rebase_options ro = FDL_REBASE_OPTIONS_INIT;
	fdl_serve_options so = FDL_SERVE_OPTIONS_INIT;
	fdl_diff_rows_options d = FDL_DIFF_ROWS_OPTIONS_INIT;
	CHECK(t, ko.version == FDL_CHECKOUT_OPTIONS_VERSION && !ko.ref && !ko.create && !ko.start);
	CHECK(t, mo.version == FDL_COMMIT_OPTIONS_VERSION && !mo.message && !mo.inputs && !mo.compact);
	CHECK(t, ro.version == FDL_REBASE_OPTIONS_VERSION && !ro.onto);
	CHECK(t, so.version == FDL_SERVE_OPTIONS_VERSION && !so.bind && !so.port && !so.token_file);
	CHECK(t, d.version == FDL_DIFF_ROWS_OPTIONS_VERSION && !d.table && !d.limit && !d.on_row);
	mo.message = "m";
	mo.author_name = "unit";
	struct stat st;
	for (unsigned int v = 0; repo && v < 2; v++) {
		unsigned int bad = v ? 2 : 0; /* every struct here is at version 1 */
		io.version = ko.version = mo.version = ro.version = so.version = d.version = bad;
		CHECK(t, fdl_repo_init(other, &io, &err) == FDL_EINVALID && stat(other, &st) != 0);
		CHECK_CONTAINS(t, err.message, "FDL_INIT_OPTIONS_INIT");
		CHECK(t, fdl_checkout(repo, work, &ko, &err) == FDL_EINVALID && stat(work, &st) != 0);
		CHECK_CONTAINS(t, err.message, "FDL_CHECKOUT_OPTIONS_INIT");
		char id[FDL_ID_LEN + 1];
		CHECK(t, fdl_commit(id, work, &mo, &err) == FDL_EINVALID);
		CHECK_CONTAINS(t, err.message, "FDL_COMMIT_OPTIONS_INIT");
		CHECK(t, fdl_commit_rebase(id, NULL, work, &mo, 3, &err) == FDL_EINVALID);
		CHECK_CONTAINS(t, err.message, "FDL_COMMIT_OPTIONS_INIT");
		fdl_rebase_report *rr = NULL;
		CHECK(t, fdl_rebase(&rr, work, &ro, &err) == FDL_EINVALID && !rr);
		CHECK_CONTAINS(t, err.message, "FDL_REBASE_OPTIONS_INIT");
		fdl_server *s = NULL;
		CHECK(t, fdl_server_start(&s, root, &so, &err) == FDL_EINVALID && !s);
		CHECK_CONTAINS(t, err.message, "FDL_SERVE_OPTIONS_INIT");
		CHECK(t, fdl_diff_rows(repo, "main", "main", &d, &err) == FDL_EINVALID);
		CHECK_CONTAINS(t, err.message, "FDL_DIFF_ROWS_OPTIONS_INIT");
		fdl_diff none = {0};
		CHECK(t, fdl_diff_rows_json(stdout, repo, &none, &d, &err) == FDL_EINVALID);
		CHECK_CONTAINS(t, err.message, "fdl_diff_rows_options version");
	}
	fdl_repo_free(repo);
	fdl_rm_rf(dir);
	free(dir);
}

const t_case options_tests[] = {
	{"options: expire, withdraw, gc and clone start from their _INIT; an unknown version is refused",
	 lifecycle_options_version},
	{"options: init, checkout, commit, rebase, serve and diff's rows start from their _INIT; an unknown version "
	 "is refused, nothing written",
	 api_options_version},
	{NULL, NULL},
};
