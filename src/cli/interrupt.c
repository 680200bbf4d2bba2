/* Ctrl-C (SIGINT), SIGTERM and SIGHUP during a command that writes: one
 * thread waits for them (sigwait; every other thread has them blocked), so
 * the command can say it was interrupted, leave no temporary folder behind
 * and exit 128 + the signal's number, instead of dying without a word. */
#include "cli.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static void blocked_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

static void *waiter(void *arg)
{
	cli_interrupt *ci = arg;
	sigset_t set;
	blocked_set(&set);
	for (;;) {
		int sig = 0;
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		if (sigwait(&set, &sig) != 0) /* a cancellation point: cli_interrupt_end */
			continue;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		pthread_mutex_lock(&ci->mu);
		if (ci->child > 0) { /* fdl run's command: it is told, and fdl ends after it */
			ci->got = sig;
			kill(ci->child, sig);
			pthread_mutex_unlock(&ci->mu);
			continue;
		}
		fprintf(stderr, "\nfdl: %s interrupted (%s). %s\n", ci->what, strsignal(sig), ci->message);
		if (ci->tmp[0])
			ci->cleanup(ci->tmp);
		fdl_tempdirs_remove();
		fflush(stderr);
		_exit(128 + sig);
	}
	return NULL;
}

int cli_interrupt_start(cli_interrupt *ci, const char *what, const char *message)
{
	memset(ci, 0, sizeof *ci);
	snprintf(ci->what, sizeof ci->what, "%s", what);
	snprintf(ci->message, sizeof ci->message, "%s", message);
	pthread_mutex_init(&ci->mu, NULL);
	sigset_t set;
	blocked_set(&set);
	/* before any other thread starts (DuckDB's, libcurl's): they inherit
	 * the mask, so only the waiter sees these signals */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 || pthread_create(&ci->thread, NULL, waiter, ci) != 0) {
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		return -1;
	}
	ci->started = true;
	return 0;
}

void cli_interrupt_end(cli_interrupt *ci)
{
	if (!ci->started)
		return;
	pthread_cancel(ci->thread);
	pthread_join(ci->thread, NULL);
	pthread_mutex_destroy(&ci->mu);
	ci->started = false;
}

void cli_interrupt_say(cli_interrupt *ci, const char *message)
{
	pthread_mutex_lock(&ci->mu);
	snprintf(ci->message, sizeof ci->message, "%s", message);
	pthread_mutex_unlock(&ci->mu);
}

void cli_interrupt_child(cli_interrupt *ci, pid_t child)
{
	pthread_mutex_lock(&ci->mu);
	ci->child = child;
	pthread_mutex_unlock(&ci->mu);
}

/* fork(), the child noted under the lock the waiter takes: a signal that
 * comes before the parent has noted it (the child may already have said it
 * runs: fdl run's COMMAND told a test, which sent Ctrl-C at once) waits for
 * the note and goes to the child, never taken for fdl's own, which would
 * exit and leave the child behind. The child returns with the lock held in
 * its copy, which it never takes (it execs). */
pid_t cli_interrupt_fork(cli_interrupt *ci)
{
	pthread_mutex_lock(&ci->mu);
	pid_t pid = fork();
	if (pid > 0)
		ci->child = pid;
	if (pid != 0)
		pthread_mutex_unlock(&ci->mu);
	return pid;
}

int cli_interrupt_got(cli_interrupt *ci)
{
	pthread_mutex_lock(&ci->mu);
	int sig = ci->got;
	pthread_mutex_unlock(&ci->mu);
	return sig;
}

void cli_interrupt_unblock(void)
{
	sigset_t set;
	blocked_set(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
