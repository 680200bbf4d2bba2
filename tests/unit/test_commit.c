/* fdl_commit's own rules, through the library (the CLI's tests reach them
 * only through the binary): a message and an author are required; nothing
 * new is "nothing to commit"; a branch that moved, a branch whose lock a
 * live writer holds, and a working folder another commit holds are each
 * refused before anything is written; a lock whose holder is gone is broken
 * and the commit goes through. */
#include "test.h"
#include "../../src/catalog/duck.h"
#include "../../src/util/util.h"
#include "fdl.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

static int run_sql(const char *work, const char *sql, fdl_error *err)
{
	char *attach = NULL;
	fdl_duck d;
	int rc = fdl_work_attach_sql(&attach, work, "lake", err);
	if (!rc && !(rc = fdl_duck_open(&d, err))) {
		rc = fdl_duck_exec(&d, attach, err);
		if (!rc)
			rc = fdl_duck_exec(&d, sql, err);
		fdl_duck_close(&d);
	}
	fdl_free(attach);
	return rc;
}

static int commit(char id[FDL_ID_LEN + 1], const char *work, const char *message, fdl_error *err)
{
	fdl_commit_options o = {.version = FDL_COMMIT_OPTIONS_VERSION, .message = message, .author_name = "unit"};
	return fdl_commit(id, work, &o, err);
}

static int count_versions(const char *root)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/versions", root);
	DIR *d = opendir(path);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

typedef struct fixture {
	char *dir;
	char root[4096], work[4096];
} fixture;

static int setup(fixture *f, t_ctx *t)
{
	f->dir = t_tempdir();
	snprintf(f->root, sizeof f->root, "%s/repo", f->dir);
	snprintf(f->work, sizeof f->work, "%s/work", f->dir);
	fdl_error err;
	fdl_repo *repo = NULL;
	char id[FDL_ID_LEN + 1];
	int rc = fdl_repo_init(f->root, NULL, &err);
	if (!rc)
		rc = fdl_repo_open(&repo, f->root, &err);
	if (!rc)
		rc = fdl_checkout(repo, f->work, NULL, &err);
	fdl_repo_free(repo);
	if (!rc)
		rc = run_sql(f->work, "CREATE TABLE lake.t (a INTEGER)", &err);
	if (!rc)
		rc = commit(id, f->work, "base", &err);
	if (rc)
		fprintf(stderr, "    setting up: %s\n", err.message);
	CHECK(t, rc == 0);
	return rc;
}

static void teardown(fixture *f)
{
	fdl_rm_rf(f->dir);
	free(f->dir);
}

static void needs_message_and_author(t_ctx *t)
{
	fixture f;
	if (setup(&f, t))
		return teardown(&f);
	fdl_error err;
	char id[FDL_ID_LEN + 1];
	fdl_commit_options none = {.version = FDL_COMMIT_OPTIONS_VERSION, .author_name = "unit"},
			   nobody = {.version = FDL_COMMIT_OPTIONS_VERSION, .message = "m"};
	CHECK(t, fdl_commit(id, f.work, &none, &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "message");
	CHECK(t, fdl_commit(id, f.work, &nobody, &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "author");
	CHECK(t, commit(id, f.work, "again", &err) == FDL_ENOCHANGE);
	CHECK_CONTAINS(t, err.message, "nothing to commit");
	CHECK(t, count_versions(f.root) == 1);
	teardown(&f);
}

static void moved_branch_writes_nothing(t_ctx *t)
{
	fixture f;
	if (setup(&f, t))
		return teardown(&f);
	fdl_error err;
	char id[FDL_ID_LEN + 1], other[4200];
	snprintf(other, sizeof other, "%s/other", f.dir);
	fdl_repo *repo = NULL;
	int rc = fdl_repo_open(&repo, f.root, &err);
	if (!rc)
		rc = fdl_checkout(repo, other, NULL, &err);
	fdl_repo_free(repo);
	CHECK(t, rc == 0);
	CHECK(t, run_sql(other, "INSERT INTO lake.t VALUES (1)", &err) == 0);
	CHECK(t, commit(id, other, "wins", &err) == 0);
	CHECK(t, run_sql(f.work, "INSERT INTO lake.t VALUES (2)", &err) == 0);
	CHECK(t, commit(id, f.work, "loses", &err) == FDL_ECONFLICT);
	CHECK_CONTAINS(t, err.message, "moved");
	CHECK_CONTAINS(t, err.message, "nothing was written");
	CHECK(t, count_versions(f.root) == 2);
	teardown(&f);
}

/* Hold `path` as a live writer does: created, flocked, holder recorded. */
static int hold(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		return -1;
	flock(fd, LOCK_EX);
	char host[256] = "", rec[512];
	gethostname(host, sizeof host - 1);
	int n = snprintf(rec, sizeof rec, "fdl-lock 1\npid %ld\nhost %s\nsince 2026-12-03T10:00:00Z\ncommand unit\n",
			 (long)getpid(), host);
	if (write(fd, rec, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return fd;
}

static void locks_block_before_any_write_and_stale_ones_break(t_ctx *t)
{
	fixture f;
	if (setup(&f, t))
		return teardown(&f);
	setenv("FDL_LOCK_WAIT_MS", "0", 1);
	fdl_error err;
	char id[FDL_ID_LEN + 1], lock[4200], wlock[4200];
	snprintf(lock, sizeof lock, "%s/refs/heads/main.lock", f.root);
	snprintf(wlock, sizeof wlock, "%s/fdl-work.lock", f.work);
	CHECK(t, run_sql(f.work, "INSERT INTO lake.t VALUES (1)", &err) == 0);
	/* a live writer holds the branch: a lock, not "moved", and no version */
	int fd = hold(lock);
	CHECK(t, fd >= 0);
	CHECK(t, commit(id, f.work, "blocked", &err) == FDL_ECONFLICT);
	CHECK_CONTAINS(t, err.message, "locked by another fdl");
	CHECK_CONTAINS(t, err.message, lock);
	CHECK(t, !strstr(err.message, "moved"));
	CHECK(t, count_versions(f.root) == 1);
	/* its holder is gone (the flock dropped, the file left): broken */
	close(fd);
	CHECK(t, access(lock, F_OK) == 0);
	CHECK(t, commit(id, f.work, "through", &err) == 0);
	CHECK(t, access(lock, F_OK) != 0 && count_versions(f.root) == 2);
	/* another commit of the same folder is running */
	CHECK(t, run_sql(f.work, "INSERT INTO lake.t VALUES (2)", &err) == 0);
	fd = hold(wlock);
	CHECK(t, fd >= 0);
	CHECK(t, commit(id, f.work, "second", &err) == FDL_ECONFLICT);
	CHECK_CONTAINS(t, err.message, "the working catalog");
	CHECK(t, count_versions(f.root) == 2);
	close(fd);
	CHECK(t, commit(id, f.work, "after it", &err) == 0);
	unsetenv("FDL_LOCK_WAIT_MS");
	teardown(&f);
}

const t_case commit_tests[] = {
	{"commit: a message and an author are required; nothing new is nothing to commit", needs_message_and_author},
	{"commit: a branch that moved is refused with nothing written", moved_branch_writes_nothing},
	{"commit: live locks refuse before any write, a dead holder's lock is broken",
	 locks_block_before_any_write_and_stale_ones_break},
	{NULL, NULL},
};
