/* Libraries a command may never need, loaded on first use: libcurl and
 * libxml2 (HTTP and S3 stores, inputs), libmicrohttpd (fdl serve). Linking
 * them costs every command ~40 shared objects to map and relocate, most of
 * `fdl log`'s start-up (bench/RESULTS.md); loaded with dlopen() when a store
 * or the server first needs one, a command that reads a folder pays nothing.
 *
 * Each table of functions is written once under pthread_once and only read
 * after: the only process-wide state besides DuckDB's (duckapi.c). The
 * sources that call these libraries include "lazy_curl.h", "lazy_xml.h" or
 * "lazy_mhd.h" after the library's header; the functions they call are then
 * fdl_lazy_* forwards, hidden in libfdl, so no program linking libfdl.a and
 * libcurl itself sees two definitions. */
#ifndef FDL_UTIL_DYNLIB_H
#define FDL_UTIL_DYNLIB_H

#include "fdl.h"

#include <stddef.h>

/* dlopen(soname) and dlsym() each of names[0..n) into slots; on failure a
 * message in errbuf and NULL. */
void *fdl_dynlib_open(const char *soname, const char *const *names, void **slots, size_t n, char *errbuf,
		      size_t errlen);

/* Load libcurl / libxml2 / libmicrohttpd if not yet; FDL_ERROR with the
 * loader's message when the library is not installed. Call before the
 * first use; a forward called before its library loaded aborts (a bug in
 * libfdl, not a user's error). */
int fdl_curl_load(fdl_error *err);
int fdl_xml_load(fdl_error *err);
int fdl_mhd_load(fdl_error *err);

/* Abort with a message naming the library: a forward ran unloaded. */
void fdl_dynlib_unloaded(const char *what, const char *why);

#endif
