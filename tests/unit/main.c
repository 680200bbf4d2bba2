/* The unit test runner: `unit-tests [-j N] [NAME]` runs every case whose
 * name contains NAME, prints "ok   name" or "FAIL name" for each in the
 * order the suites list them, then one "N passed, N failed" line, and
 * exits non-zero on any failure (LeakSanitizer's exit check included).
 *
 * -j N (N > 1) runs the cases in N worker processes forked before any
 * case runs; each worker takes the next case not yet taken (a counter in
 * shared memory), so a slow case never holds the others up. A case's
 * stdout and stderr go to a file of its own, printed whole, in order, by
 * the parent. LeakSanitizer checks each worker at its exit: a leak fails
 * the run, its report printed with the cases that worker ran (a check
 * after each case would name the case, but costs seconds a check once
 * DuckDB is loaded). A worker that dies in a case (a sanitizer report, a
 * signal) fails that case, and a new worker takes the rest. */
#include "test.h"
#include "../../src/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { T_WAITING, T_RUNNING, T_PASSED, T_FAILED, T_CRASHED };
enum { MAX_JOBS = 16, SLOWEST = 5 };

typedef struct run_state {
	int next;      /* the next case a worker takes */
	int *state;    /* T_* of each case */
	double *secs;  /* each case's wall time */
	int *worker;   /* the worker that took each case */
} run_state;

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

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The cases whose name contains `only` (all when NULL), in suite order. */
static const t_case **select_cases(const char *only, int *n)
{
	const t_case *suites[] = {uuid7_tests, version_tests, store_tests, refs_tests, catalog_tests, yaml_tests, range_tests, aws_tests, thread_tests,
				    commit_tests, dataset_tests, hindex_tests, rebase_tests, pool_tests, iceberg_tests, api_tests, options_tests};
	size_t total = 0;
	for (size_t s = 0; s < sizeof suites / sizeof *suites; s++)
		for (const t_case *c = suites[s]; c->name; c++)
			total++;
	const t_case **out = calloc(total + 1, sizeof *out);
	if (!out)
		exit(2);
	*n = 0;
	for (size_t s = 0; s < sizeof suites / sizeof *suites; s++)
		for (const t_case *c = suites[s]; c->name; c++)
			if (!only || strstr(c->name, only))
				out[(*n)++] = c;
	return out;
}

/* Run one case in this process: its failed checks. */
static int run_case(const t_case *c, double *secs)
{
	t_ctx t = {0};
	double start = now();
	c->fn(&t);
	*secs = now() - start;
	fflush(stdout);
	fflush(stderr);
	return t.failures;
}

static void print_result(const char *name, int state, double secs)
{
	const char *tag = state == T_PASSED ? "ok  " : "FAIL";
	if (secs >= 0.5)
		printf("%s %s (%.1f s)%s\n", tag, name, secs, state == T_CRASHED ? ", its worker died" : "");
	else
		printf("%s %s%s\n", tag, name, state == T_CRASHED ? ", its worker died" : "");
	fflush(stdout);
}

/* The slowest cases of half a second or more, one line, so a slow case
 * shows itself when it lands. */
static void print_slowest(const t_case **cases, const double *secs, int n)
{
	int top[SLOWEST], k = 0;
	for (int i = 0; i < n; i++) {
		if (secs[i] < 0.5)
			continue;
		int j;
		if (k < SLOWEST)
			j = k++;
		else if (secs[i] <= secs[top[SLOWEST - 1]])
			continue;
		else
			j = SLOWEST - 1;
		while (j > 0 && secs[top[j - 1]] < secs[i]) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = i;
	}
	if (k == 0)
		return;
	printf("slowest:");
	for (int i = 0; i < k; i++)
		printf("%s %s %.1f s", i ? "," : "", cases[top[i]]->name, secs[top[i]]);
	printf("\n");
}

static int run_serial(const t_case **cases, int n)
{
	int passed = 0, failed = 0;
	double *secs = calloc((size_t)n + 1, sizeof *secs);
	if (!secs)
		exit(2);
	for (int i = 0; i < n; i++) {
		int bad = run_case(cases[i], &secs[i]);
		print_result(cases[i]->name, bad ? T_FAILED : T_PASSED, secs[i]);
		bad ? failed++ : passed++;
	}
	print_slowest(cases, secs, n);
	printf("%d passed, %d failed\n", passed, failed);
	free(secs);
	return failed ? 1 : 0;
}

static int open_output(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		_exit(2);
	}
	return fd;
}

static void redirect(int fd)
{
	fflush(stdout);
	fflush(stderr);
	dup2(fd, 1);
	dup2(fd, 2);
}

/* A worker: take cases until none is left, each one's output to
 * <dir>/<index>; then exit, LeakSanitizer's exit check to <dir>/w<id>. */
static void worker(const t_case **cases, int n, run_state *rs, const char *dir, int id)
{
	for (;;) {
		int i = __atomic_fetch_add(&rs->next, 1, __ATOMIC_SEQ_CST);
		if (i >= n)
			break;
		char name[32];
		snprintf(name, sizeof name, "%d", i);
		int fd = open_output(dir, name);
		rs->worker[i] = id;
		__atomic_store_n(&rs->state[i], T_RUNNING, __ATOMIC_SEQ_CST);
		redirect(fd);
		close(fd);
		double secs = 0;
		int bad = run_case(cases[i], &secs);
		rs->secs[i] = secs;
		__atomic_store_n(&rs->state[i], bad ? T_FAILED : T_PASSED, __ATOMIC_SEQ_CST);
	}
	char name[32];
	snprintf(name, sizeof name, "w%d", id);
	int fd = open_output(dir, name);
	redirect(fd);
	close(fd);
	exit(0);
}

static pid_t start_worker(const t_case **cases, int n, run_state *rs, const char *dir, int id)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "cannot fork a test worker: %s\n", strerror(errno));
		exit(2);
	}
	if (pid == 0)
		worker(cases, n, rs, dir, id);
	return pid;
}

/* Print a file of <dir> whole to stdout. */
static void print_file(const char *dir, const char *name)
{
	char path[4096], buf[8192];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, got, stdout);
	fclose(f);
}

/* Print the finished cases from *shown on, in order, up to the first
 * that has not finished. */
static void print_done(const t_case **cases, int n, run_state *rs, const char *dir, int *shown)
{
	while (*shown < n) {
		int st = __atomic_load_n(&rs->state[*shown], __ATOMIC_SEQ_CST);
		if (st != T_PASSED && st != T_FAILED && st != T_CRASHED)
			return;
		char name[32];
		snprintf(name, sizeof name, "%d", *shown);
		print_file(dir, name);
		print_result(cases[*shown]->name, st, rs->secs[*shown]);
		(*shown)++;
	}
}

/* A worker ended: a case it had taken and not finished failed (its
 * output says why); a worker that exited non-zero after its cases (a leak
 * found at exit) fails the run. Returns 1 when it did. */
static int worker_ended(const t_case **cases, int n, run_state *rs, const char *dir, int id, int status)
{
	int crashed = 0;
	for (int i = 0; i < n; i++) {
		if (rs->worker[i] == id && __atomic_load_n(&rs->state[i], __ATOMIC_SEQ_CST) == T_RUNNING) {
			rs->state[i] = T_CRASHED;
			crashed = 1;
		}
	}
	if (crashed || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
		return 0;
	char name[32];
	snprintf(name, sizeof name, "w%d", id);
	print_file(dir, name);
	printf("FAIL worker %d: %s %d after its last case; it ran:", id, WIFEXITED(status) ? "exited" : "killed by signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	for (int i = 0; i < n; i++)
		if (rs->worker[i] == id)
			printf(" %s", cases[i]->name);
	printf("\n");
	return 1;
}

static void *shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "cannot map shared memory: %s\n", strerror(errno));
		exit(2);
	}
	return p;
}

static int run_parallel(const t_case **cases, int n, int jobs)
{
	run_state *rs = shared(sizeof *rs);
	rs->state = shared(((size_t)n + 1) * sizeof *rs->state);
	rs->secs = shared(((size_t)n + 1) * sizeof *rs->secs);
	rs->worker = shared(((size_t)n + 1) * sizeof *rs->worker);
	for (int i = 0; i < n; i++)
		rs->worker[i] = -1;
	char *dir = t_tempdir();
	pid_t *pids = calloc((size_t)(n + jobs), sizeof *pids); /* at most one new worker a case */
	if (!pids)
		exit(2);
	int ids = 0, alive = 0, shown = 0, worker_failed = 0;
	for (; ids < jobs; ids++, alive++)
		pids[ids] = start_worker(cases, n, rs, dir, ids);
	while (alive > 0) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid == 0) {
			print_done(cases, n, rs, dir, &shown);
			usleep(50000);
			continue;
		}
		if (pid < 0)
			break;
		alive--;
		int id = -1;
		for (int k = 0; k < ids && id < 0; k++)
			if (pids[k] == pid)
				id = k;
		worker_failed |= worker_ended(cases, n, rs, dir, id, status);
		if (__atomic_load_n(&rs->next, __ATOMIC_SEQ_CST) < n) {
			pids[ids] = start_worker(cases, n, rs, dir, ids);
			ids++, alive++;
		}
	}
	for (int i = 0; i < n; i++) /* taken by a worker that died before it said so */
		if (rs->state[i] == T_WAITING || rs->state[i] == T_RUNNING)
			rs->state[i] = T_CRASHED;
	print_done(cases, n, rs, dir, &shown);
	int passed = 0, failed = 0;
	for (int i = 0; i < n; i++)
		rs->state[i] == T_PASSED ? passed++ : failed++;
	print_slowest(cases, rs->secs, n);
	printf("%d passed, %d failed%s\n", passed, failed, worker_failed ? ", and a worker failed after its cases (above)" : "");
	fdl_rm_rf(dir);
	free(dir);
	free(pids);
	return failed || worker_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	int jobs = 1, a = 1;
	if (a < argc && !strncmp(argv[a], "-j", 2)) { /* -j N or -jN */
		const char *v = argv[a][2] ? argv[a] + 2 : (a + 1 < argc ? argv[++a] : "");
		char *end;
		jobs = (int)strtol(v, &end, 10);
		if (end == v || *end)
			jobs = 0;
		a++;
	}
	if (jobs < 1 || jobs > MAX_JOBS || argc > a + 1) {
		fprintf(stderr, "usage: %s [-j N (1 to %d)] [NAME]\n", argv[0], MAX_JOBS);
		return 2;
	}
	int n = 0;
	const t_case **cases = select_cases(a < argc ? argv[a] : NULL, &n);
	int rc = jobs > 1 ? run_parallel(cases, n, jobs) : run_serial(cases, n);
	free(cases);
	return rc;
}
