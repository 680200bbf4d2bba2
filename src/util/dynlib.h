/* Libraries a command may never need, loaded on first use: libduckdb
 * (catalog/duckapi.c), libcurl and libxml2 (HTTP and S3 stores, inputs),
 * libmicrohttpd (fdl serve). Linking
 * them costs every command ~40 shared objects to map and relocate, most of
 * `fdl log`'s start-up (bench/RESULTS.md); loaded with dlopen() when a store
 * or the server first needs one, a command that reads a folder pays nothing.
 *
 * Each table of functions is written once, under its fdl_dynlib's lock, and
 * only read after: the only process-wide state libfdl has. The
 * sources that call these libraries include "lazy_curl.h", "lazy_xml.h" or
 * "lazy_mhd.h" after the library's header; the functions they call are then
 * fdl_lazy_* forwards, hidden in libfdl, so no program linking libfdl.a and
 * libcurl itself sees two definitions. */
#ifndef FDL_UTIL_DYNLIB_H
#define FDL_UTIL_DYNLIB_H

#include "fdl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/* One library: its soname, what to do when it is missing (the Debian
 * package that has it, for the message), where each of names[0..n) goes
 * once it is loaded, and how to find it (NULL: the copy beside libfdl,
 * fdl_dynlib_beside(soname), when there is one, else dlopen(soname); else a
 * function that dlopen()s it and names what it tried last). */
typedef struct fdl_dynlib {
	const char *soname;
	const char *hint;
	const char *const *names;
	void **slots;
	size_t n;
	void *(*open)(char *tried, size_t n);
	pthread_mutex_t lock;
	atomic_int state; /* 0 not tried, 1 loaded, -1 could not */
	char error[1024];
} fdl_dynlib;

#define FDL_DYNLIB_OPEN(soname, hint, names, slots, open)                                          \
	{(soname), (hint), (names), (slots), sizeof(names) / sizeof *(names), (open), PTHREAD_MUTEX_INITIALIZER, 0, ""}
#define FDL_DYNLIB(soname, package, names, slots) FDL_DYNLIB_OPEN(soname, "install " package, names, slots, NULL)

/* Each shim lists its library's functions once, as an X-macro list
 *
 *   #define CURL_FUNCTIONS(F, V, H)                                   \
 *	F(CURL *, easy_init, (void), ())                          \
 *	V(easy_cleanup, (CURL * c), (c))                          \
 *	H(CURLcode, easy_setopt, (CURL *, CURLoption, ...))
 *
 * F a function with a result, V one returning void (each: its name
 * without the library's prefix, its parameters, the arguments passing
 * them on), H one whose forward the shim writes by hand (variadic, or
 * special). The shim defines FDL_DYN_SYMBOL(name), the symbol dlsym looks
 * up, and FDL_DYN_FORWARD(name), its forward's name; then
 *
 *   static const char *const names[] = {CURL_FUNCTIONS(FDL_DYN_NAME_F, FDL_DYN_NAME_V, FDL_DYN_NAME_H)};
 *   static union { void *slot[...]; struct { CURL_FUNCTIONS(FDL_DYN_SLOT_F, FDL_DYN_SLOT_V, FDL_DYN_SLOT_H) } f; } api;
 *   CURL_FUNCTIONS(FDL_DYN_FORWARD_F, FDL_DYN_FORWARD_V, FDL_DYN_FORWARD_H)
 *
 * are the names, the table they land in (api.f.<name>, in the order of
 * names) and the forwards, each calling need() (the shim's
 * fdl_dynlib_need) first. */
#define FDL_DYN_NAME_F(ret, name, params, args) FDL_DYN_SYMBOL(name),
#define FDL_DYN_NAME_V(name, params, args) FDL_DYN_SYMBOL(name),
#define FDL_DYN_NAME_H(ret, name, params) FDL_DYN_SYMBOL(name),
#define FDL_DYN_SLOT_F(ret, name, params, args) ret(*name) params;
#define FDL_DYN_SLOT_V(name, params, args) void(*name) params;
#define FDL_DYN_SLOT_H(ret, name, params) ret(*name) params;
#define FDL_DYN_FORWARD_F(ret, name, params, args)                                                 \
	ret FDL_DYN_FORWARD(name) params                                                           \
	{                                                                                          \
		need();                                                                            \
		return api.f.name args;                                                            \
	}
#define FDL_DYN_FORWARD_V(name, params, args)                                                      \
	void FDL_DYN_FORWARD(name) params                                                          \
	{                                                                                          \
		need();                                                                            \
		api.f.name args;                                                                   \
	}
#define FDL_DYN_FORWARD_H(ret, name, params)

/* What a package of fdl puts beside libfdl (make install, the wheel, the
 * tarball: scripts/package.py): <libdir>/fdl/<name>, found from where this
 * code was loaded (the shared library, or a program linked with the static
 * one; also <bindir>/../lib/fdl/<name>), so a packaged fdl loads its own
 * copies, wherever it was unpacked, before the system's. NULL when neither
 * exists; caller frees. */
char *fdl_dynlib_beside(const char *name);

/* Load it if nobody has yet (dlopen, then dlsym of every name); FDL_ERROR
 * naming the library and the hint when it cannot be. Thread safe. */
int fdl_dynlib_load(fdl_dynlib *lib, fdl_error *err);
/* For a forward: the library must be loaded; abort naming it if not. */
void fdl_dynlib_need(fdl_dynlib *lib);

/* Load libcurl / libxml2 / libmicrohttpd if not yet; FDL_ERROR with the
 * loader's message when the library is not installed. Call before the
 * first use; a forward called before its library loaded aborts (a bug in
 * libfdl, not a user's error). */
int fdl_curl_load(fdl_error *err);
int fdl_xml_load(fdl_error *err);
int fdl_mhd_load(fdl_error *err);

#endif
