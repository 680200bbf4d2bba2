/* Lock files that cannot strand what they guard: Git's <name>.lock, created
 * exclusively, plus a record of its holder (pid, host, since) and an
 * advisory flock() held for as long as the lock is. The kernel drops the
 * flock when the holder dies, however it dies (kill -9 included), so a lock
 * whose flock is free and whose recorded host is this one has provably no
 * holder and is broken; any other lock is waited for briefly, then reported
 * with its file, holder and the command that clears it. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_MAGIC "fdl-lock 1\n"

int fdl_lock_wait_ms(void)
{
	const char *s = getenv("FDL_LOCK_WAIT_MS");
	char *end;
	long v = s && *s ? strtol(s, &end, 10) : -1;
	return s && *s && !*end && v >= 0 && v <= 600000 ? (int)v : 2000;
}

/* What a lock file says of its holder; host[0] == '\0' when it records
 * none (a lock written by another tool, or one caught being born). */
typedef struct holder {
	long pid;
	char host[256];
	char since[32];
	char cmd[64];
} holder;

static void holder_parse(holder *h, const char *text)
{
	memset(h, 0, sizeof *h);
	if (strncmp(text, LOCK_MAGIC, strlen(LOCK_MAGIC)) != 0)
		return;
	char host[256] = "", since[32] = "", cmd[64] = "";
	long pid = 0;
	for (const char *line = text + strlen(LOCK_MAGIC); *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
		if (sscanf(line, "pid %ld", &pid) == 1 || sscanf(line, "host %255[^\n]", host) == 1 ||
		    sscanf(line, "since %31[^\n]", since) == 1 || sscanf(line, "command %63[^\n]", cmd) == 1)
			continue;
	}
	if (pid > 0 && host[0] && since[0]) {
		h->pid = pid;
		memcpy(h->host, host, sizeof host);
		memcpy(h->since, since, sizeof since);
		memcpy(h->cmd, cmd, sizeof cmd);
	}
}

static void my_host(char out[256])
{
	if (gethostname(out, 255) != 0)
		strcpy(out, "?");
	out[255] = '\0';
}

size_t fdl_lock_record(char out[FDL_LOCK_RECORD_MAX], const char *command)
{
	char host[256], since[32];
	fdl_error ignore;
	my_host(host);
	if (fdl_time_now_iso(since, &ignore))
		strcpy(since, "?");
	int len = snprintf(out, FDL_LOCK_RECORD_MAX, LOCK_MAGIC "pid %ld\nhost %s\nsince %s\ncommand %s\n",
			   (long)getpid(), host, since, command ? command : "fdl");
	return len < 0 ? 0 : (size_t)len < FDL_LOCK_RECORD_MAX ? (size_t)len : FDL_LOCK_RECORD_MAX - 1;
}

bool fdl_lock_record_dead(const char *text)
{
	holder h;
	char me[256];
	holder_parse(&h, text);
	my_host(me);
	return h.host[0] && !strcmp(me, h.host) && h.pid > 0 && kill((pid_t)h.pid, 0) != 0 && errno == ESRCH;
}

/* The message for a lock that stays: which file, whose, since when, and
 * what clears it. */
static int report(const char *path, const char *what, const holder *h, const struct stat *st, fdl_error *err)
{
	if (h->host[0]) {
		char me[256];
		my_host(me);
		bool here = !strcmp(me, h->host);
		return fdl_fail(err, FDL_ECONFLICT,
				"%s is locked by another fdl (%s%spid %ld on %s, since %s): %s. %s", what,
				h->cmd[0] ? h->cmd : "", h->cmd[0] ? ", " : "", h->pid, h->host, h->since, path,
				here ? "It is still running; wait for it to finish and try again."
				     : "If that process is no longer running on that host, remove the lock "
				       "file (rm on it) and try again.");
	}
	char when[32] = "?";
	struct tm tm;
	time_t t = st ? st->st_mtime : 0;
	if (st && gmtime_r(&t, &tm))
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return fdl_fail(err, FDL_ECONFLICT,
			"%s is locked: %s exists (since %s) and records no holder fdl can check. If no other "
			"program is writing to this repository, remove that file (rm on it) and try again.",
			what, path, when);
}

int fdl_lock_record_report(const char *text, const char *where, const char *what, fdl_error *err)
{
	holder h;
	holder_parse(&h, text);
	return report(where, what, &h, NULL, err);
}

/* One look at an existing lock: *stale_removed when it was stale and is
 * now removed (try again at once); else it is live (wait). `h` and `st`
 * describe it for the report. */
static int inspect(const char *path, holder *h, struct stat *st, bool *stale_removed, fdl_error *err)
{
	*stale_removed = false;
	memset(h, 0, sizeof *h);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) { /* released meanwhile */
			*stale_removed = true;
			return 0;
		}
		return fdl_fail(err, FDL_EIO, "cannot open the lock %s: %s", path, strerror(errno));
	}
	int rc = 0;
	if (fstat(fd, st) != 0) {
		rc = fdl_fail(err, FDL_EIO, "cannot stat the lock %s: %s", path, strerror(errno));
		goto out;
	}
	char text[1024];
	ssize_t n = pread(fd, text, sizeof text - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	holder_parse(h, text);
	if (!h->host[0] || flock(fd, LOCK_EX | LOCK_NB) != 0)
		goto out; /* live, or not ours to judge */
	/* flock was free: nobody holds this lock file open any more. Re-read
	 * under our flock, since the record was written after the holder took it. */
	n = pread(fd, text, sizeof text - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	holder_parse(h, text);
	char me[256];
	my_host(me);
	if (!h->host[0] || strcmp(me, h->host) != 0)
		goto out; /* another host's flock is not seen here */
	/* The holder is gone. Remove the file only if the path still names the
	 * inode we hold (another breaker may have replaced it already). */
	struct stat now;
	if (stat(path, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino) {
		if (unlink(path) != 0 && errno != ENOENT) {
			rc = fdl_fail(err, FDL_EIO, "cannot remove the stale lock %s: %s", path, strerror(errno));
			goto out;
		}
	}
	*stale_removed = true;
out:
	close(fd);
	return rc;
}

int fdl_lockfile_take(fdl_lockfile *lk, const char *path, const char *what, const char *command, fdl_error *err)
{
	lk->fd = -1;
	lk->path = NULL;
	long deadline = fdl_now_ms() + fdl_lock_wait_ms();
	for (long pause = 1;;) {
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			/* flock first, then the record: a breaker that finds the flock
			 * free always finds either no record (leaves it) or a dead one */
			while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
				;
			char rec[FDL_LOCK_RECORD_MAX];
			int len = (int)fdl_lock_record(rec, command);
			if (write(fd, rec, (size_t)len) != len) {
				int e = errno;
				close(fd);
				unlink(path);
				return fdl_fail(err, FDL_EIO, "cannot write the lock %s: %s",
						path, strerror(e ? e : EIO));
			}
			lk->fd = fd;
			if (!(lk->path = fdl_strdup(path))) {
				fdl_lockfile_release(lk);
				return fdl_oom(err);
			}
#ifdef FDL_CRASH_POINTS
			const char *crash = getenv("FDL_CRASH_HOLDING_LOCK");
			size_t cl = crash ? strlen(crash) : 0, pl = strlen(path);
			if (cl && pl >= cl + 5 && !strncmp(path + pl - cl - 5, crash, cl)) {
				fprintf(stderr, "fdl: crash point: holding %s (FDL_CRASH_HOLDING_LOCK)\n", path);
				abort();
			}
#endif
			return 0;
		}
		if (errno != EEXIST) {
			int e = errno;
			return fdl_fail(err, e == ENOENT ? FDL_ENOTFOUND : FDL_EIO,
					"cannot create the lock %s: %s", path, strerror(e));
		}
		holder h;
		struct stat st;
		bool gone;
		int rc = inspect(path, &h, &st, &gone, err);
		if (rc)
			return rc;
		if (gone)
			continue;
		if (fdl_now_ms() >= deadline)
			return report(path, what, &h, &st, err);
		fdl_sleep_ms(pause);
		pause = pause < 50 ? pause * 2 : 50;
	}
}

int fdl_lockfile_check(const char *path, const char *what, fdl_error *err)
{
	long deadline = fdl_now_ms() + fdl_lock_wait_ms();
	for (long pause = 1;;) {
		holder h;
		struct stat st;
		bool gone;
		int rc = inspect(path, &h, &st, &gone, err);
		if (rc || gone)
			return rc;
		if (fdl_now_ms() >= deadline)
			return report(path, what, &h, &st, err);
		fdl_sleep_ms(pause);
		pause = pause < 50 ? pause * 2 : 50;
	}
}

void fdl_lockfile_release(fdl_lockfile *lk)
{
	if (lk->path && lk->fd >= 0)
		unlink(lk->path); /* unlink before close: the flock still guards it */
	if (lk->fd >= 0)
		close(lk->fd);
	free(lk->path);
	lk->fd = -1;
	lk->path = NULL;
}
