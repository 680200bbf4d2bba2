/* The one bounded worker pool of libfdl (pool.c): a fixed number of
 * threads take numbered jobs 0..n-1 in order, each worker with its own
 * state made once; the first error stops the pool.
 *
 * How to use it:
 *
 *     static int my_init(void *ctx, size_t worker, void **state, fdl_error *err);  // optional
 *     static int my_job(void *ctx, void *state, size_t job, fdl_error *err);
 *     static void my_fini(void *ctx, size_t worker, void *state);                 // optional
 *
 *     fdl_pool_task t = {.jobs = n, .threads = fdl_pool_threads(8, "FDL_X_THREADS"),
 *                        .ctx = &mine, .init = my_init, .job = my_job, .fini = my_fini};
 *     int rc = fdl_pool_run(&t, err);
 *
 * - Jobs are handed out in index order, one at a time, to whichever worker
 *   is free. A job writes its results where its index says (an array the
 *   caller owns, one slot per job), so the caller reads them in job order
 *   afterwards: results never depend on which thread ran what.
 * - Per-worker state (a repository handle, a DuckDB: things one thread
 *   owns) is made by `init` on that worker's thread before its first job
 *   and freed by `fini` after its last, even after an error. Worker 0 is
 *   the calling thread; at most `threads` workers run, fewer when there
 *   are fewer jobs or a thread cannot be started (its share goes to the
 *   others).
 * - Stopping, the one way: a job (or an `init`) that returns non-zero
 *   stops the pool. No job is started after that; the jobs already running
 *   finish. fdl_pool_run returns the error of the failing job with the
 *   lowest index (an `init`'s error counts as job 0's), with its message:
 *   every job below it was started before it, so which error is reported
 *   does not depend on timing or on the number of threads. A job that
 *   only records findings (fdl verify's problems) returns 0 and lets the
 *   pool go on.
 * - Jobs share nothing through the pool but `ctx`; anything they both
 *   write needs the caller's own lock or atomics.
 *
 * One job beside the caller (DuckDB starting while a version arrives, the
 * frozen catalog's data files checked while DuckDB writes it) is the
 * pool's other shape: fdl_pool_side_start runs fn(arg) on a thread of its
 * own and fdl_pool_side_join waits for it; when no thread can be started
 * it returns NULL and the caller runs fn itself (or goes without).
 */
#ifndef FDL_POOL_H
#define FDL_POOL_H

#include "util.h"

typedef struct fdl_pool_task {
	size_t jobs;   /* jobs 0..jobs-1 */
	size_t threads; /* at most this many workers (0 or 1: the calling thread alone) */
	void *ctx;     /* given to every callback */
	int (*init)(void *ctx, size_t worker, void **state, fdl_error *err); /* NULL: state is NULL */
	int (*job)(void *ctx, void *state, size_t job, fdl_error *err);
	void (*fini)(void *ctx, size_t worker, void *state); /* NULL: nothing to free */
} fdl_pool_task;

/* Run every job (until the first error); 0, or the lowest-indexed failing
 * job's code with its message in err. */
int fdl_pool_run(const fdl_pool_task *t, fdl_error *err);

/* How many workers: the environment variable `env` when set to a positive
 * number, else the machine's cores, at most `cap`. */
size_t fdl_pool_threads(size_t cap, const char *env);

/* One job beside the caller: fn(arg) on a thread of its own, or NULL when
 * none could be started (nothing ran: the caller decides). */
typedef struct fdl_pool_side fdl_pool_side;
fdl_pool_side *fdl_pool_side_start(void (*fn)(void *arg), void *arg);
/* Wait until that job ended and free its handle; NULL: nothing. */
void fdl_pool_side_join(fdl_pool_side *s);

#endif
