/*
 * libduckdb, loaded when a command first needs DuckDB rather than when fdl
 * starts: `fdl log`, `show`, `branch` and `--version` never open DuckDB, and
 * mapping and initialising its 68 MB library cost more than the command
 * itself (measured in bench/RESULTS.md). libfdl defines the DuckDB C API
 * functions it uses as forwards to the library dlopen() found, hidden inside
 * libfdl (-fvisibility=hidden), so a program that links DuckDB itself sees
 * its own. The library is $FDL_DUCKDB_LIBRARY, else the one beside libfdl
 * (<libdir>/fdl after make install), else the loader's, else the build
 * tree's deps/lib.
 *
 * Loaded through the one loader of optional libraries (../util/dynlib.h),
 * as libcurl, libxml2 and libmicrohttpd are: its table of functions is
 * written once, under the loader's lock, and only read after.
 */
#include "duck.h"
#include "../util/dynlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FDL_DEFAULT_DUCKDB_LIBRARY
#define FDL_DEFAULT_DUCKDB_LIBRARY "/usr/local/lib/fdl/libduckdb.so"
#endif

#define FDL_DYN_SYMBOL(name) "duckdb_" #name
#define FDL_DYN_FORWARD(name) fdl_lazy_duckdb_##name

static const char *const names[] = {DUCKDB_FUNCTIONS(FDL_DYN_NAME_F, FDL_DYN_NAME_V, FDL_DYN_NAME_H)};

/* In the order of names. */
static union {
	void *slot[sizeof names / sizeof *names];
	struct {
		DUCKDB_FUNCTIONS(FDL_DYN_SLOT_F, FDL_DYN_SLOT_V, FDL_DYN_SLOT_H)
	} f;
} api;
_Static_assert(sizeof api.slot == sizeof api.f, "one slot per function");

/* RTLD_LAZY: libduckdb's own calls bind on first use; binding all of them
 * up front (RTLD_NOW) costs ~5 ms of every command that opens DuckDB. The
 * functions fdl calls are looked up (and checked) by dlsym at load.
 * RTLD_DEEPBIND: libduckdb's ~40,000 references to its own symbols (its
 * vtables, type info, inline functions) are found in libduckdb first,
 * rather than after every library already loaded (libcrypto, libcurl,
 * ...): its load took ~10 ms in fdl's process, ~5.5 ms so. Not when the
 * process's malloc or free is not libc's (a sanitizer's, or an allocator
 * the program links or preloads): libduckdb would then free with libc's
 * what libc's own functions allocated through the other one, and the
 * sanitizers refuse the flag. A pure function of the process: the same
 * answer at every call. */
bool fdl_duck_deep_bound(void)
{
#ifdef RTLD_DEEPBIND
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	bool plain = libc && dlsym(libc, "malloc") == dlsym(RTLD_DEFAULT, "malloc") &&
		     dlsym(libc, "free") == dlsym(RTLD_DEFAULT, "free");
	if (libc)
		dlclose(libc);
	return plain;
#else
	return false;
#endif
}

static int dlopen_flags(void)
{
#ifdef RTLD_DEEPBIND
	if (fdl_duck_deep_bound())
		return RTLD_LAZY | RTLD_LOCAL | RTLD_DEEPBIND;
#endif
	return RTLD_LAZY | RTLD_LOCAL;
}

static void *open_library(const char **tried)
{
	int flags = dlopen_flags();
	const char *env = getenv("FDL_DUCKDB_LIBRARY");
	if (env && *env) {
		*tried = env;
		return dlopen(env, flags);
	}
	char *beside = fdl_dynlib_beside("libduckdb.so");
	void *lib = beside ? dlopen(beside, flags) : NULL;
	free(beside);
	if (lib)
		return lib;
	/* the loader's own search is not enough: a program run under
	 * AddressSanitizer has dlopen called from libasan, whose run path is
	 * not ours; hence the build tree's default after it */
	lib = dlopen("libduckdb.so", flags);
	*tried = FDL_DEFAULT_DUCKDB_LIBRARY;
	return lib ? lib : dlopen(FDL_DEFAULT_DUCKDB_LIBRARY, flags);
}

/* dlopen() of the first of those that loads; `tried` names the last one
 * tried, for the message. */
static void *open_duckdb(char *tried, size_t n)
{
	const char *path = "libduckdb.so";
	void *lib = open_library(&path);
	snprintf(tried, n, "%s", path);
	return lib;
}

static fdl_dynlib lib = FDL_DYNLIB_OPEN("libduckdb.so", "set FDL_DUCKDB_LIBRARY, or run `make setup`", names, api.slot,
				       open_duckdb);

/* Every forward but library_version: callers reach them only through a
 * handle fdl_duck_open() made, which loaded the library first, so an
 * unloaded table here is a bug in libfdl, not a user's error. */
static void need(void)
{
	fdl_dynlib_need(&lib);
}

int fdl_duck_load_library(fdl_error *err)
{
	return fdl_dynlib_load(&lib, err) ? (err ? (err->code = FDL_EDUCKDB) : FDL_EDUCKDB) : 0;
}

/* ---- the forwards: the C API as duckdb.h declares it --------------------------- */

DUCKDB_FUNCTIONS(FDL_DYN_FORWARD_F, FDL_DYN_FORWARD_V, FDL_DYN_FORWARD_H)

const char *fdl_lazy_duckdb_library_version(void)
{
	fdl_error e;
	return fdl_dynlib_load(&lib, &e) == 0 ? api.f.library_version() : "(DuckDB not loaded)";
}
