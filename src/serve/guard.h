/* fdl serve's guard against slow clients (guard.c). */
#ifndef FDL_SERVE_GUARD_H
#define FDL_SERVE_GUARD_H

#include "../util/util.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* libmicrohttpd's connection limit; 1/16 of it is kept free for new
 * clients by shutting down the oldest connection still sending headers. */
#define FDL_SERVE_MAX_CONNECTIONS 512u
/* Connections one client address may hold at once. */
#define FDL_SERVE_MAX_PER_IP 64u

typedef struct fdl_serve_guard fdl_serve_guard;

/* Starts the watchdog thread. The deadline for a complete request (headers
 * included) is FDL_SERVE_HEADER_TIMEOUT seconds, default 10. */
int fdl_serve_guard_new(fdl_serve_guard **out, fdl_error *err);
/* Stop the daemon first: it must call nothing of the guard's after this. */
void fdl_serve_guard_free(fdl_serve_guard *g);

/* libmicrohttpd callbacks, each with the guard as its closure. */
enum MHD_Result fdl_serve_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len);
void fdl_serve_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			    enum MHD_ConnectionNotificationCode code);
void fdl_serve_guard_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			       enum MHD_RequestTerminationCode code);
/* The handler calls this once a request's headers are all in. */
void fdl_serve_guard_request(fdl_serve_guard *g, struct MHD_Connection *c);

#endif
