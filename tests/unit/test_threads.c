/* fdl.h's thread-safety promise, held to by force: libfdl has no global
 * state, so threads that each use their own handles may work on the same
 * repository at once. Eight threads read two versions of one repository
 * (resolve refs, read version.json, fetch and check the catalog, query it
 * in DuckDB, verify the repository), each with its own fdl_repo and
 * fdl_reader; every answer must be the one a single thread gets. Run under
 * AddressSanitizer in `make unit`. */
#include "test.h"
#include "../../src/catalog/duck.h"
#include "fdl.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>

#define THREADS 8
#define ROUNDS 1

typedef struct job {
	const char *root;
	int index;
	int failures;
	char message[2600];
} job;

static void failed(job *j, const char *what, const fdl_error *err)
{
	j->failures++;
	snprintf(j->message, sizeof j->message, "%s: %s", what, err ? err->message : "wrong answer");
}

/* "count,sum" of t in version `ref`, through a reader of our own. */
static int query(job *j, const char *ref, char *out, size_t size)
{
	char target[4096];
	snprintf(target, sizeof target, "%s@%s", j->root, ref);
	fdl_error err;
	fdl_reader *r = NULL;
	/* half the threads open DuckDB while the version is fetched */
	if (fdl_reader_open_flags(&r, target, j->index % 2 ? FDL_READER_WARM : 0, &err)) {
		failed(j, "fdl_reader_open", &err);
		return -1;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc = f ? fdl_reader_query(r, "SELECT count(*) AS n, sum(i) AS s FROM t", FDL_FORMAT_CSV, f, &err) : -1;
	if (f)
		fclose(f);
	fdl_reader_free(r);
	if (rc)
		failed(j, "fdl_reader_query", f ? &err : NULL);
	else
		snprintf(out, size, "%s", text ? text : "");
	free(text);
	return rc;
}

static void *reader(void *arg)
{
	job *j = arg;
	for (int round = 0; round < ROUNDS && !j->failures; round++) {
		char one[128] = "", two[128] = "";
		/* alternate the order, so threads overlap on different work */
		bool first = (j->index + round) % 2 == 0;
		query(j, first ? "1" : "main", first ? one : two, 128);
		query(j, first ? "main" : "1", first ? two : one, 128);
		if (!j->failures && (strcmp(one, "n,s\n10,45\n") || strcmp(two, "n,s\n20,190\n"))) {
			j->failures++;
			snprintf(j->message, sizeof j->message, "version 1 gave %s, version 2 gave %s", one, two);
		}
		fdl_error err;
		fdl_reader *unused = NULL; /* a DuckDB opened meanwhile and never used is closed */
		if (fdl_reader_open_flags(&unused, j->root, FDL_READER_WARM, &err))
			failed(j, "fdl_reader_open_flags", &err);
		fdl_reader_free(unused);
		fdl_repo *repo = NULL;
		fdl_verify_report *rep = NULL;
		char id[FDL_ID_LEN + 1];
		if (fdl_repo_open(&repo, j->root, &err) || fdl_ref_resolve(id, repo, "main:1", &err) ||
		    fdl_verify(&rep, repo, NULL, &err))
			failed(j, "open, resolve and verify", &err);
		else if (rep->problem_count || rep->versions_checked != 2)
			failed(j, "verify found problems", NULL);
		fdl_verify_report_free(rep);
		fdl_repo_free(repo);
	}
	return NULL;
}

static int commit_table(const char *work, const char *sql, const char *message, fdl_error *err)
{
	char *attach = NULL;
	fdl_duck d;
	int rc = fdl_work_attach_sql(&attach, work, "lake", err);
	if (!rc)
		rc = fdl_duck_open(&d, err);
	if (!rc) {
		rc = fdl_duck_exec(&d, attach, err);
		if (!rc)
			rc = fdl_duck_exec(&d, sql, err);
		fdl_duck_close(&d);
	}
	fdl_free(attach);
	char id[FDL_ID_LEN + 1];
	fdl_commit_options o = {.version = FDL_COMMIT_OPTIONS_VERSION, .message = message, .author_name = "threads"};
	return rc ? rc : fdl_commit(id, work, &o, err);
}

static void threads_share_a_repository(t_ctx *t)
{
	/* fdl relies on libcurl's thread-safe global init (7.84 and later) */
	CHECK(t, (curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_THREADSAFE) != 0);
	char *dir = t_tempdir();
	char root[4096], work[4096];
	snprintf(root, sizeof root, "%s/repo", dir);
	snprintf(work, sizeof work, "%s/work", dir);
	fdl_error err;
	fdl_repo *repo = NULL;
	int rc = fdl_repo_init(root, NULL, &err);
	if (!rc)
		rc = fdl_repo_open(&repo, root, &err);
	if (!rc)
		rc = fdl_checkout(repo, work, NULL, &err);
	fdl_repo_free(repo);
	if (!rc)
		rc = commit_table(work, "CREATE TABLE lake.t AS SELECT i::INTEGER AS i FROM range(10) r(i)", "one", &err);
	if (!rc)
		rc = commit_table(work, "INSERT INTO lake.t SELECT i::INTEGER FROM range(10, 20) r(i)", "two", &err);
	if (rc)
		fprintf(stderr, "    setting up: %s\n", err.message);
	CHECK(t, rc == 0);
	job jobs[THREADS];
	pthread_t th[THREADS];
	for (int i = 0; !rc && i < THREADS; i++) {
		jobs[i] = (job){.root = root, .index = i};
		CHECK(t, pthread_create(&th[i], NULL, reader, &jobs[i]) == 0);
	}
	for (int i = 0; !rc && i < THREADS; i++) {
		pthread_join(th[i], NULL);
		if (jobs[i].failures)
			fprintf(stderr, "    thread %d: %s\n", i, jobs[i].message);
		CHECK(t, jobs[i].failures == 0);
	}
	fdl_rm_rf(dir);
	free(dir);
}

const t_case thread_tests[] = {
	{"threads: eight readers with their own handles share one repository", threads_share_a_repository},
	{NULL, NULL},
};
