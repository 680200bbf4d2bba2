#include "test.h"
#include "../../src/util/util.h"

#include <stdlib.h>

static uint64_t ms_of(const char *id)
{
	/* first 12 hex digits (with the hyphen after 8) are the timestamp */
	char hex[13];
	memcpy(hex, id, 8);
	memcpy(hex + 8, id + 9, 4);
	hex[12] = '\0';
	return strtoull(hex, NULL, 16);
}

static void format(t_ctx *t)
{
	fdl_uuid7_gen g = {0};
	char id[FDL_ID_LEN + 1];
	fdl_error err;
	CHECK(t, fdl_uuid7_next(&g, id, &err) == 0);
	CHECK(t, strlen(id) == 36);
	CHECK(t, fdl_id_is_valid(id));
	CHECK(t, fdl_id_is_uuid7(id));
	CHECK(t, id[14] == '7');
	CHECK(t, strchr("89ab", id[19]) != NULL);
	for (const char *p = id; *p; p++)
		CHECK(t, *p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'));
}

static void encodes_time(t_ctx *t)
{
	fdl_uuid7_gen g = {0};
	char id[FDL_ID_LEN + 1];
	fdl_error err;
	CHECK(t, fdl_uuid7_next_at(&g, 0x019a3c4e7b21ull, id, &err) == 0);
	CHECK(t, ms_of(id) == 0x019a3c4e7b21ull);
	CHECK(t, strncmp(id, "019a3c4e-7b21-7", 15) == 0);
}

static void monotonic_same_ms(t_ctx *t)
{
	/* More ids in one millisecond than the 12-bit counter holds: the
	 * generator must advance the timestamp instead of repeating. */
	fdl_uuid7_gen g = {0};
	char prev[FDL_ID_LEN + 1] = "", id[FDL_ID_LEN + 1];
	fdl_error err;
	int bad = 0;
	for (int i = 0; i < 10000; i++) {
		CHECK(t, fdl_uuid7_next_at(&g, 1000000, id, &err) == 0);
		if (i && strcmp(prev, id) >= 0)
			bad++;
		memcpy(prev, id, sizeof id);
	}
	CHECK(t, bad == 0);
	CHECK(t, ms_of(id) > 1000000); /* the counter overflowed at least once */
}

static void monotonic_clock_backwards(t_ctx *t)
{
	fdl_uuid7_gen g = {0};
	char a[FDL_ID_LEN + 1], b[FDL_ID_LEN + 1];
	fdl_error err;
	CHECK(t, fdl_uuid7_next_at(&g, 5000, a, &err) == 0);
	CHECK(t, fdl_uuid7_next_at(&g, 4000, b, &err) == 0);
	CHECK(t, strcmp(a, b) < 0);
}

static void monotonic_real_clock(t_ctx *t)
{
	fdl_uuid7_gen g = {0};
	char prev[FDL_ID_LEN + 1] = "", id[FDL_ID_LEN + 1];
	fdl_error err;
	int bad = 0;
	for (int i = 0; i < 20000; i++) {
		fdl_uuid7_next(&g, id, &err);
		if (i && strcmp(prev, id) >= 0)
			bad++;
		memcpy(prev, id, sizeof id);
	}
	CHECK(t, bad == 0);
}

static void id_validation(t_ctx *t)
{
	CHECK(t, fdl_id_is_valid("019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"));
	CHECK(t, !fdl_id_is_valid("019A3C4E-7B21-7F3A-9C55-2F0D8E1A4B6C")); /* upper case */
	CHECK(t, !fdl_id_is_valid("019a3c4e7b217f3a9c552f0d8e1a4b6c"));     /* no hyphens */
	CHECK(t, !fdl_id_is_valid("019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6"));  /* short */
	CHECK(t, !fdl_id_is_valid("../../etc/passwd-xxxxxxxxxxxxxxxxxxxx"));
	CHECK(t, !fdl_id_is_valid(NULL));
	CHECK(t, !fdl_id_is_uuid7("019a3c4e-7b21-4f3a-9c55-2f0d8e1a4b6c")); /* v4 */
}

const t_case uuid7_tests[] = {
	{"uuid7: format and version bits", format},
	{"uuid7: timestamp is the given ms", encodes_time},
	{"uuid7: monotonic within one ms past the counter", monotonic_same_ms},
	{"uuid7: monotonic when the clock goes back", monotonic_clock_backwards},
	{"uuid7: monotonic on the real clock", monotonic_real_clock},
	{"uuid7: id validation", id_validation},
	{NULL, NULL},
};
