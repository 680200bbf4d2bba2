/* Test builds only (-DFDL_CRASH_POINTS): a command paused at a named point
 * until the test lets it go, so a test can put another process's work at
 * exactly that place (a writer inserting while a commit is between reading
 * the working catalog's snapshot and copying it). Release builds compile
 * it to nothing. */
#include "util.h"

#ifdef FDL_CRASH_POINTS
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#endif

void fdl_hold(const char *point)
{
#ifdef FDL_CRASH_POINTS
	/* FDL_HOLD_AT=<point>:<fifo>: opening the FIFO for reading blocks until
	 * the test opens it for writing (then both know the command is here);
	 * the command goes on when the test closes it. */
	const char *v = getenv("FDL_HOLD_AT");
	size_t n = strlen(point);
	if (!v || strncmp(v, point, n) != 0 || v[n] != ':')
		return;
	fprintf(stderr, "fdl: held at %s (FDL_HOLD_AT)\n", point);
	int fd = open(v + n + 1, O_RDONLY);
	char buf[64];
	while (fd >= 0 && read(fd, buf, sizeof buf) > 0)
		;
	if (fd >= 0)
		close(fd);
#else
	(void)point;
#endif
}
