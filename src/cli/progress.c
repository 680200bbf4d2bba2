/* Progress on a terminal (an upload, or a whole clone's files and bytes):
 * one line on stderr, redrawn at most ten times a second, with bytes, rate
 * and time left; nothing when stderr is not a terminal or the command was
 * asked to be quiet. */
#include "cli.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void human(char *out, size_t n, double bytes)
{
	const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(out, n, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

static void on_progress(const char *what, int64_t done, int64_t total, void *payload)
{
	cli_progress *p = payload;
	if (!strcmp(what, "clone files")) { /* the count of the next "clone" line */
		p->files_done = done;
		p->files_total = total;
		return;
	}
	double t = now_s();
	bool finished = !strcmp(what, "clone") ? p->files_total > 0 && p->files_done >= p->files_total
						: total > 0 && done >= total;
	if (strcmp(p->what, what)) {
		if (p->what[0])
			fputc('\n', stderr);
		snprintf(p->what, sizeof p->what, "%s", what);
		p->started = t;
		p->shown = 0;
	} else if (!finished && t - p->shown < 0.1) {
		return;
	}
	p->shown = t;
	char d[32], tot[32], rate[32];
	double secs = t - p->started;
	double bps = secs > 0 ? (double)done / secs : 0;
	human(d, sizeof d, (double)done);
	human(tot, sizeof tot, (double)total);
	human(rate, sizeof rate, bps);
	long eta = bps > 0 && total > done ? (long)((double)(total - done) / bps) : 0;
	long shown = finished ? (long)secs : eta;
	if (!strcmp(what, "clone"))
		fprintf(stderr, "\rclone: %lld/%lld files, %s / %s, %s/s, %s %ld:%02ld   ", (long long)p->files_done,
			(long long)p->files_total, d, tot, rate, finished ? "took" : "ETA", shown / 60, shown % 60);
	else
		fprintf(stderr, "\rupload %s: %s / %s, %s/s, %s %ld:%02ld   ", what, d, tot, rate,
			finished ? "took" : "ETA", shown / 60, shown % 60);
	fflush(stderr);
}

fdl_progress_cb cli_progress_start(cli_progress *p, bool quiet)
{
	memset(p, 0, sizeof *p);
	return quiet || !isatty(fileno(stderr)) ? NULL : on_progress;
}

void cli_progress_end(cli_progress *p)
{
	if (p->what[0])
		fputc('\n', stderr);
}
