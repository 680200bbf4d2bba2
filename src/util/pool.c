/* The one bounded worker pool: numbered jobs in order on a fixed number of
 * threads, per-worker state, the first error stops it; and one job beside
 * the caller (pool.h says how to use both). */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct pool {
	const fdl_pool_task *t;
	atomic_size_t next;
	atomic_bool stop;
	pthread_mutex_t mu; /* guards the error below */
	bool failed;
	size_t failed_job;
	int rc;
	fdl_error err;
} pool;

typedef struct worker {
	pool *p;
	size_t index;
	pthread_t thread;
} worker;

/* Keep the failure of the lowest job index, and stop handing out jobs. */
static void failed(pool *p, size_t job, int rc, const fdl_error *e)
{
	pthread_mutex_lock(&p->mu);
	if (!p->failed || job < p->failed_job) {
		p->failed = true;
		p->failed_job = job;
		p->rc = rc;
		p->err = *e;
	}
	pthread_mutex_unlock(&p->mu);
	atomic_store(&p->stop, true);
}

static void *work(void *arg)
{
	worker *w = arg;
	pool *p = w->p;
	const fdl_pool_task *t = p->t;
	void *state = NULL;
	fdl_error e = {0};
	int rc = t->init ? t->init(t->ctx, w->index, &state, &e) : 0;
	if (rc)
		failed(p, 0, rc, &e);
	while (!rc && !atomic_load(&p->stop)) {
		size_t k = atomic_fetch_add(&p->next, 1);
		if (k >= t->jobs)
			break;
		if ((rc = t->job(t->ctx, state, k, &e)))
			failed(p, k, rc, &e);
	}
	if (t->fini)
		t->fini(t->ctx, w->index, state);
	return NULL;
}

int fdl_pool_run(const fdl_pool_task *t, fdl_error *err)
{
	if (!t->jobs)
		return 0;
	size_t n = t->threads ? t->threads : 1;
	if (n > t->jobs)
		n = t->jobs;
	worker *w = calloc(n, sizeof *w);
	if (!w)
		return fdl_oom(err);
	pool p = {.t = t};
	atomic_init(&p.next, 0);
	atomic_init(&p.stop, false);
	pthread_mutex_init(&p.mu, NULL);
	size_t started = 0; /* threads 1..started run beside the caller, worker 0 */
	for (size_t i = 0; i < n; i++) {
		w[i] = (worker){&p, i, 0};
		if (i && pthread_create(&w[i].thread, NULL, work, &w[i]) != 0)
			break; /* fewer threads: the others take their share */
		started = i;
	}
	work(&w[0]);
	for (size_t i = 1; i <= started; i++)
		pthread_join(w[i].thread, NULL);
	pthread_mutex_destroy(&p.mu);
	free(w);
	if (!p.failed)
		return 0;
	if (err)
		*err = p.err;
	return p.rc;
}

size_t fdl_pool_threads(size_t cap, const char *env)
{
	const char *v = env ? getenv(env) : NULL;
	long n = v ? atol(v) : 0;
	if (n > 0)
		return (size_t)n;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	n = cores > 0 ? cores : 1;
	return (size_t)n < cap ? (size_t)n : cap;
}

struct fdl_pool_side {
	pthread_t thread;
	void (*fn)(void *arg);
	void *arg;
};

static void *side_work(void *arg)
{
	fdl_pool_side *s = arg;
	s->fn(s->arg);
	return NULL;
}

fdl_pool_side *fdl_pool_side_start(void (*fn)(void *arg), void *arg)
{
	fdl_pool_side *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fn = fn;
	s->arg = arg;
	if (pthread_create(&s->thread, NULL, side_work, s) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

void fdl_pool_side_join(fdl_pool_side *s)
{
	if (!s)
		return;
	pthread_join(s->thread, NULL);
	free(s);
}
