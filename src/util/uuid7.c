/* Version ids: UUIDv7, monotonic within a process, checked on read. */
#include "util.h"

#include <openssl/rand.h>
#include <string.h>

/*
 * RFC 9562 UUIDv7: 48-bit Unix time in ms, version 7, 12 bits of rand_a,
 * variant 10, 62 bits of rand_b. rand_a holds a counter (method 1, "fixed
 * bit-length dedicated counter"): seeded randomly in its lower half each
 * new millisecond, incremented within one, and when it overflows the
 * timestamp is advanced, so ids from one generator always sort in order.
 */
int fdl_uuid7_next_at(fdl_uuid7_gen *g, uint64_t now_ms, char out[FDL_ID_LEN + 1], fdl_error *err)
{
	unsigned char rnd[10];
	if (RAND_bytes(rnd, sizeof rnd) != 1)
		return fdl_fail(err, FDL_ERROR, "OpenSSL: no random bytes for a UUIDv7");
	uint64_t ms = now_ms;
	if (ms <= g->last_ms && g->last_ms != 0) {
		ms = g->last_ms;
		if (g->counter >= 0xfff) {
			ms++;
			g->counter = (uint16_t)(((rnd[0] << 8) | rnd[1]) & 0x7ff);
		} else {
			g->counter++;
		}
	} else {
		g->counter = (uint16_t)(((rnd[0] << 8) | rnd[1]) & 0x7ff);
	}
	g->last_ms = ms;

	unsigned char u[16];
	for (int i = 0; i < 6; i++)
		u[i] = (unsigned char)(ms >> (40 - 8 * i));
	u[6] = (unsigned char)(0x70 | ((g->counter >> 8) & 0x0f));
	u[7] = (unsigned char)(g->counter & 0xff);
	memcpy(u + 8, rnd + 2, 8);
	u[8] = (unsigned char)(0x80 | (u[8] & 0x3f));

	static const char digits[] = "0123456789abcdef";
	char *p = out;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = digits[u[i] >> 4];
		*p++ = digits[u[i] & 15];
	}
	*p = '\0';
	return 0;
}

int fdl_uuid7_next(fdl_uuid7_gen *g, char out[FDL_ID_LEN + 1], fdl_error *err)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return fdl_fail(err, FDL_ERROR, "cannot read the clock");
	uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	return fdl_uuid7_next_at(g, ms, out, err);
}

bool fdl_id_is_valid(const char *s)
{
	if (!s || strlen(s) != FDL_ID_LEN)
		return false;
	for (int i = 0; i < FDL_ID_LEN; i++) {
		char c = s[i];
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
			return false;
		}
	}
	return true;
}

bool fdl_id_is_uuid7(const char *s)
{
	return fdl_id_is_valid(s) && s[14] == '7' && strchr("89ab", s[19]) != NULL;
}
