/* The loader behind the lazy libraries (dynlib.h). */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *fdl_dynlib_open(const char *soname, const char *const *names, void **slots, size_t n, char *errbuf,
		      size_t errlen)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(errbuf, errlen, "cannot load %s: %s", soname, dlerror());
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!(slots[i] = dlsym(lib, names[i]))) {
			snprintf(errbuf, errlen, "%s has no %s: it is older than the one fdl was built with", soname,
				 names[i]);
			dlclose(lib);
			return NULL;
		}
	errbuf[0] = '\0';
	return lib;
}

void fdl_dynlib_unloaded(const char *what, const char *why)
{
	fprintf(stderr, "libfdl: %s called before it was loaded%s%s\n", what, why && *why ? ": " : "", why ? why : "");
	abort();
}
