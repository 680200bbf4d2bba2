/* Pause points of test builds, the one way a test stops a command: a test
 * that must put one process's step between two steps of another (a tag
 * landing between an expiry's check and its write, four writers taking
 * turns at commit's last look at the branch) stops the other there and lets
 * it go, with files, never with timing. Compiled to nothing without
 * -DFDL_CRASH_POINTS.
 *
 * FDL_PAUSE_AT=<point> (or several, comma-separated: two threads of one
 * command held, each at its own) with FDL_PAUSE_DIR=<dir>: at <point> the command
 * creates <dir>/<point>.reached and <dir>/<point>.<pid>.reached, and waits
 * until <dir>/<point>.go exists (kept: every later pass goes through) or
 * <dir>/<point>.<pid>.go exists (removed when seen: the next pass of that
 * process waits again). */
#include "util.h"

#include <stdlib.h>
#include <string.h>

#ifdef FDL_CRASH_POINTS
#include <fcntl.h>
#include <unistd.h>

/* Whether `point` is one of the comma-separated names of `at`. */
static bool named(const char *at, const char *point)
{
	size_t n = strlen(point);
	for (const char *p = at; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, point, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static void touch(const char *path)
{
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
	if (fd >= 0)
		close(fd);
}

void fdl_test_pause(const char *point)
{
	const char *at = getenv("FDL_PAUSE_AT"), *dir = getenv("FDL_PAUSE_DIR");
	if (!at || !dir || !*dir || !named(at, point))
		return;
	long pid = (long)getpid();
	char *reached = fdl_asprintf("%s/%s.reached", dir, point), *go = fdl_asprintf("%s/%s.go", dir, point);
	char *mine = fdl_asprintf("%s/%s.%ld.reached", dir, point, pid);
	char *my_go = fdl_asprintf("%s/%s.%ld.go", dir, point, pid);
	touch(mine);
	touch(reached);
	fprintf(stderr, "fdl: pause point %s reached (FDL_PAUSE_AT)\n", point);
	while (go && my_go && access(go, F_OK) != 0 && access(my_go, F_OK) != 0)
		fdl_sleep_ms(5);
	if (my_go)
		unlink(my_go);
	free(reached);
	free(go);
	free(mine);
	free(my_go);
}
#else
void fdl_test_pause(const char *point)
{
	(void)point;
}
#endif
