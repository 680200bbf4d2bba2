/* fdl serve under abuse: every connection's time to send a complete
 * request (headers included) is bounded, and a few slots are always kept
 * for new clients. libmicrohttpd's own timeout is one of inactivity, which
 * a client that sends one byte a second never trips; so the guard tracks
 * each connection (libmicrohttpd's connection notifications), a watchdog
 * thread shuts down any that has not finished its request headers within
 * the deadline, and when the connections near the limit the oldest one
 * still sending headers is shut down to make room for a new one. shutdown()
 * on the socket makes libmicrohttpd's thread for it see the end and close
 * it; the guard never closes a socket itself. */
#include <microhttpd.h>
#include "guard.h"
#include "lazy_mhd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

typedef struct slot {
	int fd;
	bool used;
	bool busy;     /* its request's headers are in: being answered */
	long since_ms; /* when it started waiting for a request */
} slot;

struct fdl_serve_guard {
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_t watchdog;
	bool stop, started;
	long header_ms;
	unsigned limit, reserve;
	slot slots[FDL_SERVE_MAX_CONNECTIONS];
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *watch(void *arg)
{
	fdl_serve_guard *g = arg;
	pthread_mutex_lock(&g->mu);
	while (!g->stop) {
		long now = now_ms();
		for (unsigned i = 0; i < g->limit; i++) {
			slot *s = &g->slots[i];
			if (s->used && !s->busy && s->fd >= 0 && now - s->since_ms > g->header_ms) {
				shutdown(s->fd, SHUT_RDWR);
				s->fd = -1; /* once */
			}
		}
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 200 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->mu, &until);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int fdl_serve_guard_new(fdl_serve_guard **out, fdl_error *err)
{
	fdl_serve_guard *g = calloc(1, sizeof *g);
	if (!g)
		return fdl_oom(err);
	const char *t = getenv("FDL_SERVE_HEADER_TIMEOUT");
	double secs = t && *t ? strtod(t, NULL) : 10;
	g->header_ms = secs > 0 ? (long)(secs * 1000) : 10000;
	g->limit = FDL_SERVE_MAX_CONNECTIONS;
	g->reserve = FDL_SERVE_MAX_CONNECTIONS / 16;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->wake, NULL);
	if (pthread_create(&g->watchdog, NULL, watch, g) != 0) {
		fdl_serve_guard_free(g);
		return fdl_fail(err, FDL_ERROR, "cannot start the server's watchdog thread");
	}
	g->started = true;
	*out = g;
	return 0;
}

void fdl_serve_guard_free(fdl_serve_guard *g)
{
	if (!g)
		return;
	if (g->started) {
		pthread_mutex_lock(&g->mu);
		g->stop = true;
		pthread_cond_signal(&g->wake);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->watchdog, NULL);
	}
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->wake);
	free(g);
}

enum MHD_Result fdl_serve_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	(void)addr;
	(void)len;
	fdl_serve_guard *g = cls;
	pthread_mutex_lock(&g->mu);
	unsigned used = 0;
	slot *oldest = NULL;
	for (unsigned i = 0; i < g->limit; i++) {
		slot *s = &g->slots[i];
		used += s->used;
		if (s->used && !s->busy && s->fd >= 0 && (!oldest || s->since_ms < oldest->since_ms))
			oldest = s;
	}
	/* near the limit: the oldest connection still sending headers makes
	 * room, so a new client is never turned away by slow ones */
	if (used + g->reserve >= g->limit && oldest) {
		shutdown(oldest->fd, SHUT_RDWR);
		oldest->fd = -1;
	}
	pthread_mutex_unlock(&g->mu);
	return MHD_YES;
}

void fdl_serve_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			    enum MHD_ConnectionNotificationCode code)
{
	fdl_serve_guard *g = cls;
	pthread_mutex_lock(&g->mu);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = NULL;
		for (unsigned i = 0; ci && i < g->limit; i++)
			if (!g->slots[i].used) {
				g->slots[i] = (slot){.fd = ci->connect_fd, .used = true, .since_ms = now_ms()};
				*socket_context = &g->slots[i];
				break;
			}
	} else if (*socket_context) {
		slot *s = *socket_context;
		memset(s, 0, sizeof *s);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&g->mu);
}

/* The slot of a connection, through libmicrohttpd's socket context. */
static slot *slot_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void fdl_serve_guard_request(fdl_serve_guard *g, struct MHD_Connection *c)
{
	pthread_mutex_lock(&g->mu);
	slot *s = slot_of(c);
	if (s)
		s->busy = true;
	pthread_mutex_unlock(&g->mu);
}

void fdl_serve_guard_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			       enum MHD_RequestTerminationCode code)
{
	(void)con_cls;
	(void)code;
	fdl_serve_guard *g = cls;
	pthread_mutex_lock(&g->mu);
	slot *s = slot_of(c);
	if (s) { /* kept alive: the next request has its own deadline */
		s->busy = false;
		s->since_ms = now_ms();
	}
	pthread_mutex_unlock(&g->mu);
}
