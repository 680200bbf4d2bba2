/* libmicrohttpd, loaded when fdl serve starts (../util/dynlib.h). Include
 * after <microhttpd.h>. */
#ifndef FDL_SERVE_LAZY_MHD_H
#define FDL_SERVE_LAZY_MHD_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

struct MHD_Daemon *fdl_lazy_MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
					     void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
void fdl_lazy_MHD_stop_daemon(struct MHD_Daemon *daemon);
/* Only the info types that take no further argument. */
const union MHD_DaemonInfo *fdl_lazy_MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType type);
const char *fdl_lazy_MHD_lookup_connection_value(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key);
enum MHD_Result fdl_lazy_MHD_queue_response(struct MHD_Connection *c, unsigned int status, struct MHD_Response *r);
struct MHD_Response *fdl_lazy_MHD_create_response_from_callback(uint64_t size, size_t block_size,
							      MHD_ContentReaderCallback crc, void *crc_cls,
							      MHD_ContentReaderFreeCallback crfc);
struct MHD_Response *fdl_lazy_MHD_create_response_from_buffer(size_t size, void *buffer,
							    enum MHD_ResponseMemoryMode mode);
enum MHD_Result fdl_lazy_MHD_add_response_header(struct MHD_Response *r, const char *header, const char *content);
void fdl_lazy_MHD_destroy_response(struct MHD_Response *r);
struct MHD_Response *fdl_lazy_MHD_create_response_from_fd64(uint64_t size, int fd);
struct MHD_Response *fdl_lazy_MHD_create_response_from_fd_at_offset64(uint64_t size, int fd, uint64_t offset);
/* Only the info types that take no further argument. */
const union MHD_ConnectionInfo *fdl_lazy_MHD_get_connection_info(struct MHD_Connection *c,
								 enum MHD_ConnectionInfoType type);
enum MHD_Result fdl_lazy_MHD_is_feature_supported(enum MHD_FEATURE feature);
#define MHD_get_connection_info fdl_lazy_MHD_get_connection_info
#define MHD_is_feature_supported fdl_lazy_MHD_is_feature_supported
#define MHD_start_daemon fdl_lazy_MHD_start_daemon
#define MHD_stop_daemon fdl_lazy_MHD_stop_daemon
#define MHD_get_daemon_info fdl_lazy_MHD_get_daemon_info
#define MHD_lookup_connection_value fdl_lazy_MHD_lookup_connection_value
#define MHD_queue_response fdl_lazy_MHD_queue_response
#define MHD_create_response_from_callback fdl_lazy_MHD_create_response_from_callback
#define MHD_create_response_from_buffer fdl_lazy_MHD_create_response_from_buffer
#define MHD_add_response_header fdl_lazy_MHD_add_response_header
#define MHD_destroy_response fdl_lazy_MHD_destroy_response
#define MHD_create_response_from_fd64 fdl_lazy_MHD_create_response_from_fd64
#define MHD_create_response_from_fd_at_offset64 fdl_lazy_MHD_create_response_from_fd_at_offset64

#endif
