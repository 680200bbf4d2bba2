/* fdl serve: a repository over HTTP (libmicrohttpd). */
#ifndef FDL_SERVE_H
#define FDL_SERVE_H

#include "../util/util.h"

typedef struct fdl_range {
	int64_t start, end; /* inclusive */
} fdl_range;

enum {
	FDL_RANGE_OK = 0,            /* *count satisfiable ranges */
	FDL_RANGE_NONE = 1,          /* no (bytes) Range header: the whole file */
	FDL_RANGE_INVALID = 2,       /* malformed: ignored, the whole file */
	FDL_RANGE_UNSATISFIABLE = 3, /* 416 */
	FDL_RANGE_TOO_MANY = 4,      /* more than max: the whole file */
};

/* Parse a Range header against a file of `size` bytes. */
int fdl_http_parse_ranges(const char *header, int64_t size, fdl_range *out, size_t max, size_t *count);

/* Which request paths (without the leading '/') are the repository's own
 * files: 1 serve, 0 not found, -1 forbidden (traversal attempts). */
int fdl_serve_path_allowed(const char *data_dir, const char *rel);

/* The raw request target (path and query, still percent-encoded): 0 when
 * every escape is %XX, nothing decodes to a NUL or a control character,
 * and the decoded path is valid UTF-8; -1 otherwise (400). */
int fdl_http_uri_check(const char *raw);

#endif
