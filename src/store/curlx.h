/*
 * What the HTTP and S3 stores share of libcurl: a response sink that fills
 * a buffer or a file up to a bound and picks the ETag out of the headers,
 * and the timeouts every request gets.
 */
#ifndef FDL_STORE_CURLX_H
#define FDL_STORE_CURLX_H

#include "store.h"

#include <curl/curl.h>
#include "lazy_curl.h"
#include "../util/dynlib.h"

typedef struct fdl_sink {
	fdl_buf *buf; /* the body goes here, or */
	FILE *file;   /* here, or nowhere when both are NULL */
	fdl_sha256 *hash; /* and through this digest when not NULL */
	size_t max;
	size_t got;
	bool too_big;
	char etag[FDL_ETAG_MAX];
} fdl_sink;

/* Take `len` bytes of a response body; returns len, or 0 to stop. */
size_t fdl_sink_write(fdl_sink *s, const char *p, size_t len);
/* Point the request's body and header callbacks at `s`. */
void fdl_curl_sink(CURL *c, fdl_sink *s);
/* Timeouts (connect 30 s; abandon a transfer slower than 1 byte/s for
 * FDL_HTTP_TIMEOUT seconds, default 60), protocols http(s) only, the user
 * agent and the error buffer; with FDL_CURL_VERBOSE set, libcurl's account
 * of the exchange on stderr, credentials left out. */
void fdl_curl_defaults(CURL *c, char errbuf[CURL_ERROR_SIZE]);
/* The CA file HTTPS servers are checked against, when libcurl's own (`own`,
 * NULL when it names none) cannot be read: the first of known[0..n) that
 * can, else NULL (NULL too when `own` can: nothing to change). The libcurl
 * the wheel and the tarball carry is Debian's, which names Debian's file;
 * Fedora, RHEL, openSUSE and Alpine keep theirs elsewhere. */
const char *fdl_curl_ca_file(const char *own, const char *const *known, size_t n);

#endif
