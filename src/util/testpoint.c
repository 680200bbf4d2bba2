/* Pause points of test builds: a test that must put one process's step
 * between two steps of another (a tag landing between an expiry's check and
 * its write) stops the other there and lets it go, with files, never with
 * timing. Compiled to nothing without -DFDL_CRASH_POINTS. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

#ifdef FDL_CRASH_POINTS
#include <fcntl.h>
#include <unistd.h>

void fdl_test_pause(const char *point)
{
	const char *at = getenv("FDL_PAUSE_AT"), *dir = getenv("FDL_PAUSE_DIR");
	if (!at || !dir || strcmp(at, point))
		return;
	char *reached = fdl_asprintf("%s/%s.reached", dir, point), *go = fdl_asprintf("%s/%s.go", dir, point);
	int fd = reached ? open(reached, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
	if (fd >= 0)
		close(fd);
	fprintf(stderr, "fdl: pause point %s reached (FDL_PAUSE_AT)\n", point);
	while (go && access(go, F_OK) != 0)
		fdl_sleep_ms(10);
	free(reached);
	free(go);
}
#else
void fdl_test_pause(const char *point)
{
	(void)point;
}
#endif
