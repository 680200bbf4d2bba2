/* The libmicrohttpd forwards (lazy_mhd.h, ../util/dynlib.h). */
#include "lazy_mhd.h"
#include "../util/dynlib.h"
#include "../util/util.h"


/* Every libmicrohttpd function libfdl calls, once (../util/dynlib.h says
 * how the list is read). The variadic ones are forwarded by hand below:
 * MHD_start_daemon through MHD_start_daemon_va, and the two info getters
 * for the info types that take no further argument. */
#define MHD_FUNCTIONS(F, V, H) \
	H(struct MHD_Daemon *, start_daemon_va, (unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *, \
						 MHD_AccessHandlerCallback, void *, va_list)) \
	V(stop_daemon, (struct MHD_Daemon *daemon), (daemon)) \
	H(const union MHD_DaemonInfo *, get_daemon_info, (struct MHD_Daemon *, enum MHD_DaemonInfoType, ...)) \
	F(const char *, lookup_connection_value, (struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key), \
	  (c, kind, key)) \
	F(enum MHD_Result, queue_response, (struct MHD_Connection *c, unsigned int status, struct MHD_Response *r), \
	  (c, status, r)) \
	F(struct MHD_Response *, create_response_from_callback, (uint64_t size, size_t block_size, \
	  MHD_ContentReaderCallback crc, void *crc_cls, MHD_ContentReaderFreeCallback crfc), \
	  (size, block_size, crc, crc_cls, crfc)) \
	F(struct MHD_Response *, create_response_from_buffer, (size_t size, void *buffer, \
	  enum MHD_ResponseMemoryMode mode), (size, buffer, mode)) \
	F(enum MHD_Result, add_response_header, (struct MHD_Response *r, const char *header, const char *content), \
	  (r, header, content)) \
	V(destroy_response, (struct MHD_Response *r), (r)) \
	F(struct MHD_Response *, create_response_from_fd64, (uint64_t size, int fd), (size, fd)) \
	F(struct MHD_Response *, create_response_from_fd_at_offset64, (uint64_t size, int fd, uint64_t offset), \
	  (size, fd, offset)) \
	H(const union MHD_ConnectionInfo *, get_connection_info, (struct MHD_Connection *, \
	  enum MHD_ConnectionInfoType, ...)) \
	F(enum MHD_Result, is_feature_supported, (enum MHD_FEATURE feature), (feature))

#define FDL_DYN_SYMBOL(name) "MHD_" #name
#define FDL_DYN_FORWARD(name) fdl_lazy_MHD_##name

static const char *const names[] = {MHD_FUNCTIONS(FDL_DYN_NAME_F, FDL_DYN_NAME_V, FDL_DYN_NAME_H)};

/* In the order of names. */
static union {
	void *slot[sizeof names / sizeof *names];
	struct {
		MHD_FUNCTIONS(FDL_DYN_SLOT_F, FDL_DYN_SLOT_V, FDL_DYN_SLOT_H)
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

MHD_FUNCTIONS(FDL_DYN_FORWARD_F, FDL_DYN_FORWARD_V, FDL_DYN_FORWARD_H)

struct MHD_Daemon *fdl_lazy_MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
					     void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	need();
	va_list ap;
	va_start(ap, dh_cls);
	struct MHD_Daemon *d = api.f.start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

const union MHD_DaemonInfo *fdl_lazy_MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType type)
{
	need();
	return api.f.get_daemon_info(daemon, type);
}

const union MHD_ConnectionInfo *fdl_lazy_MHD_get_connection_info(struct MHD_Connection *c,
								 enum MHD_ConnectionInfoType type)
{
	need();
	return api.f.get_connection_info(c, type);
}
