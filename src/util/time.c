/* Time as the spec writes it: UTC ISO 8601 to the second; and the
 * monotonic clock and pauses of the loops that wait for a lock. */
#include "util.h"

#include <errno.h>
#include <string.h>

long fdl_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fdl_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int fdl_time_now_iso(char out[32], fdl_error *err)
{
	time_t t = time(NULL);
	struct tm tm;
	if (t == (time_t)-1 || !gmtime_r(&t, &tm))
		return fdl_fail(err, FDL_ERROR, "cannot read the clock");
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return 0;
}

int64_t fdl_time_parse_iso(const char *iso)
{
	struct tm tm = {0};
	if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
		return -1;
	return (int64_t)timegm(&tm);
}

void fdl_time_format_iso(char out[32], int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm))
		snprintf(out, 32, "?");
	else
		strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static bool digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00) */
bool fdl_time_is_iso_utc(const char *s)
{
	if (!s || strlen(s) < 20)
		return false;
	if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2) ||
	    (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2) || s[13] != ':' || !digits(s + 14, 2) ||
	    s[16] != ':' || !digits(s + 17, 2))
		return false;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return strcmp(p, "Z") == 0 || strcmp(p, "z") == 0 || strcmp(p, "+00:00") == 0;
}
