#include "test.h"
#include "../../src/util/pool.h"

#include <stdatomic.h>
#include <stdlib.h>

typedef struct counts {
	atomic_int *ran;       /* per job */
	atomic_int inits, finis, started;
	size_t fail[2];        /* jobs that fail (SIZE_MAX: none) */
	bool init_fails;
} counts;

static int c_init(void *ctx, size_t worker, void **state, fdl_error *err)
{
	counts *c = ctx;
	atomic_fetch_add(&c->inits, 1);
	*state = (void *)(worker + 1);
	if (c->init_fails && worker == 0)
		return fdl_fail(err, FDL_EIO, "worker %zu could not start", worker);
	return 0;
}

static int c_job(void *ctx, void *state, size_t k, fdl_error *err)
{
	counts *c = ctx;
	if (!state)
		return fdl_fail(err, FDL_ERROR, "no worker state");
	atomic_fetch_add(&c->started, 1);
	atomic_fetch_add(&c->ran[k], 1);
	for (int i = 0; i < 2; i++)
		if (c->fail[i] == k)
			return fdl_fail(err, FDL_EINVALID, "job %zu failed", k);
	return 0;
}

static void c_fini(void *ctx, size_t worker, void *state)
{
	(void)worker;
	(void)state;
	atomic_fetch_add(&((counts *)ctx)->finis, 1);
}

static int run(counts *c, size_t jobs, size_t threads, fdl_error *err)
{
	c->ran = calloc(jobs, sizeof *c->ran);
	fdl_pool_task t = {jobs, threads, c, c_init, c_job, c_fini};
	return fdl_pool_run(&t, err);
}

static void every_job_once(t_ctx *t)
{
	size_t sizes[] = {1, 2, 3, 8, 64};
	for (size_t s = 0; s < 5; s++) {
		counts c = {.fail = {SIZE_MAX, SIZE_MAX}};
		fdl_error err;
		CHECK(t, run(&c, 1000, sizes[s], &err) == 0);
		for (size_t k = 0; k < 1000; k++)
			CHECK(t, atomic_load(&c.ran[k]) == 1);
		/* one state per worker, each made and freed once */
		CHECK(t, atomic_load(&c.inits) >= 1 && (size_t)atomic_load(&c.inits) <= sizes[s]);
		CHECK(t, atomic_load(&c.inits) == atomic_load(&c.finis));
		free(c.ran);
	}
	counts c = {.fail = {SIZE_MAX, SIZE_MAX}};
	fdl_error err;
	CHECK(t, run(&c, 0, 4, &err) == 0 && atomic_load(&c.inits) == 0); /* no job, no worker */
	free(c.ran);
	c = (counts){.fail = {SIZE_MAX, SIZE_MAX}};
	CHECK(t, run(&c, 3, 16, &err) == 0 && atomic_load(&c.inits) <= 3); /* never more workers than jobs */
	free(c.ran);
}

static void first_error_stops(t_ctx *t)
{
	for (size_t threads = 1; threads <= 8; threads *= 2) {
		counts c = {.fail = {10, SIZE_MAX}};
		fdl_error err;
		CHECK(t, run(&c, 100000, threads, &err) == FDL_EINVALID);
		CHECK_CONTAINS(t, err.message, "job 10 failed");
		for (size_t k = 0; k < 10; k++) /* every job below it ran */
			CHECK(t, atomic_load(&c.ran[k]) == 1);
		/* it stops: one worker takes nothing after the failing job; on
		 * more, the others run on until the failing one's worker has set
		 * the stop, which no bound in time can say (a worker descheduled
		 * there once let 8 threads start more than 11 + 8), only that the
		 * jobs stop long before the last */
		if (threads == 1)
			CHECK(t, atomic_load(&c.started) == 11);
		else
			CHECK(t, (size_t)atomic_load(&c.started) < 100000);
		CHECK(t, atomic_load(&c.inits) == atomic_load(&c.finis));
		free(c.ran);
	}
}

static void lowest_failure_reported(t_ctx *t)
{
	/* two jobs fail; the lower one's error is reported on any number of
	 * threads, whichever failed first in time */
	for (int round = 0; round < 50; round++) {
		size_t threads = 1 + (size_t)round % 8;
		counts c = {.fail = {37, 3}};
		fdl_error err;
		CHECK(t, run(&c, 200, threads, &err) == FDL_EINVALID);
		CHECK_CONTAINS(t, err.message, "job 3 failed");
		free(c.ran);
	}
}

static void init_error_stops(t_ctx *t)
{
	counts c = {.fail = {SIZE_MAX, SIZE_MAX}, .init_fails = true};
	fdl_error err;
	CHECK(t, run(&c, 1000, 4, &err) == FDL_EIO);
	CHECK_CONTAINS(t, err.message, "could not start");
	CHECK(t, atomic_load(&c.inits) == atomic_load(&c.finis)); /* freed after the error too */
	free(c.ran);
}

static void threads_from_env(t_ctx *t)
{
	setenv("FDL_TEST_POOL_THREADS", "3", 1);
	CHECK(t, fdl_pool_threads(8, "FDL_TEST_POOL_THREADS") == 3);
	setenv("FDL_TEST_POOL_THREADS", "12", 1);
	CHECK(t, fdl_pool_threads(8, "FDL_TEST_POOL_THREADS") == 12); /* asked for: the cap is the default's */
	unsetenv("FDL_TEST_POOL_THREADS");
	size_t n = fdl_pool_threads(2, "FDL_TEST_POOL_THREADS");
	CHECK(t, n >= 1 && n <= 2);
}

const t_case pool_tests[] = {
	{"pool: every job runs once, one state per worker", every_job_once},
	{"pool: the first error stops the pool", first_error_stops},
	{"pool: the lowest failing job is the one reported", lowest_failure_reported},
	{"pool: a worker's setup error stops it, states freed", init_error_stops},
	{"pool: threads from the environment, else cores up to the cap", threads_from_env},
	{NULL, NULL},
};
