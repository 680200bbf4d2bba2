/* The libmicrohttpd forwards (lazy_mhd.h, ../util/dynlib.h). */
#include "lazy_mhd.h"
#include "../util/dynlib.h"
#include "../util/util.h"


static const char *const names[] = {
	"MHD_start_daemon_va",		     "MHD_stop_daemon",		 "MHD_get_daemon_info",
	"MHD_lookup_connection_value",	     "MHD_queue_response",	 "MHD_create_response_from_callback",
	"MHD_create_response_from_buffer", "MHD_add_response_header", "MHD_destroy_response",
	"MHD_create_response_from_fd64",   "MHD_create_response_from_fd_at_offset64",
	"MHD_get_connection_info",
};

static union {
	void *slot[sizeof names / sizeof *names];
	struct {
		struct MHD_Daemon *(*start_va)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
					       MHD_AccessHandlerCallback, void *, va_list);
		void (*stop)(struct MHD_Daemon *);
		const union MHD_DaemonInfo *(*info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
		const char *(*lookup)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
		enum MHD_Result (*queue)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
		struct MHD_Response *(*from_callback)(uint64_t, size_t, MHD_ContentReaderCallback, void *,
						      MHD_ContentReaderFreeCallback);
		struct MHD_Response *(*from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
		enum MHD_Result (*add_header)(struct MHD_Response *, const char *, const char *);
		void (*destroy)(struct MHD_Response *);
		struct MHD_Response *(*from_fd)(uint64_t, int);
		struct MHD_Response *(*from_fd_at)(uint64_t, int, uint64_t);
		const union MHD_ConnectionInfo *(*conn_info)(struct MHD_Connection *, enum MHD_ConnectionInfoType, ...);
	} f;
} api;
_Static_assert(sizeof api.slot == sizeof api.f, "one slot per function");

static fdl_dynlib lib = FDL_DYNLIB("libmicrohttpd.so.12", "libmicrohttpd12", names, api.slot);

int fdl_mhd_load(fdl_error *err)
{
	return fdl_dynlib_load(&lib, err);
}

static void need(void)
{
	fdl_dynlib_need(&lib);
}

struct MHD_Daemon *fdl_lazy_MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
					     void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	need();
	va_list ap;
	va_start(ap, dh_cls);
	struct MHD_Daemon *d = api.f.start_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

void fdl_lazy_MHD_stop_daemon(struct MHD_Daemon *daemon)
{
	need();
	api.f.stop(daemon);
}

const union MHD_DaemonInfo *fdl_lazy_MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType type)
{
	need();
	return api.f.info(daemon, type);
}

const char *fdl_lazy_MHD_lookup_connection_value(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key)
{
	need();
	return api.f.lookup(c, kind, key);
}

enum MHD_Result fdl_lazy_MHD_queue_response(struct MHD_Connection *c, unsigned int status, struct MHD_Response *r)
{
	need();
	return api.f.queue(c, status, r);
}

struct MHD_Response *fdl_lazy_MHD_create_response_from_callback(uint64_t size, size_t block_size,
							      MHD_ContentReaderCallback crc, void *crc_cls,
							      MHD_ContentReaderFreeCallback crfc)
{
	need();
	return api.f.from_callback(size, block_size, crc, crc_cls, crfc);
}

struct MHD_Response *fdl_lazy_MHD_create_response_from_buffer(size_t size, void *buffer,
							    enum MHD_ResponseMemoryMode mode)
{
	need();
	return api.f.from_buffer(size, buffer, mode);
}

enum MHD_Result fdl_lazy_MHD_add_response_header(struct MHD_Response *r, const char *header, const char *content)
{
	need();
	return api.f.add_header(r, header, content);
}

void fdl_lazy_MHD_destroy_response(struct MHD_Response *r)
{
	need();
	api.f.destroy(r);
}

struct MHD_Response *fdl_lazy_MHD_create_response_from_fd64(uint64_t size, int fd)
{
	need();
	return api.f.from_fd(size, fd);
}

struct MHD_Response *fdl_lazy_MHD_create_response_from_fd_at_offset64(uint64_t size, int fd, uint64_t offset)
{
	need();
	return api.f.from_fd_at(size, fd, offset);
}

const union MHD_ConnectionInfo *fdl_lazy_MHD_get_connection_info(struct MHD_Connection *c,
								 enum MHD_ConnectionInfoType type)
{
	need();
	return api.f.conn_info(c, type);
}
