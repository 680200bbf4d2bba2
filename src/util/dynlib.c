/* The loader behind the lazy libraries (dynlib.h). */
#include "dynlib.h"
#include "util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void try_load(fdl_dynlib *l)
{
	char tried[256];
	snprintf(tried, sizeof tried, "%s", l->soname);
	void *h = l->open ? l->open(tried, sizeof tried) : dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(l->error, sizeof l->error, "cannot load %s: %s", tried, dlerror());
		atomic_store(&l->state, -1);
		return;
	}
	for (size_t i = 0; i < l->n; i++)
		if (!(l->slots[i] = dlsym(h, l->names[i]))) {
			snprintf(l->error, sizeof l->error, "%s has no %s: it is older than the one fdl was built with",
				 l->soname, l->names[i]);
			dlclose(h);
			atomic_store(&l->state, -1);
			return;
		}
	atomic_store(&l->state, 1);
}

int fdl_dynlib_load(fdl_dynlib *l, fdl_error *err)
{
	if (atomic_load(&l->state) == 0) {
		pthread_mutex_lock(&l->lock);
		if (atomic_load(&l->state) == 0)
			try_load(l);
		pthread_mutex_unlock(&l->lock);
	}
	return atomic_load(&l->state) == 1 ? 0 : fdl_fail(err, FDL_ERROR, "%s (%s)", l->error, l->hint);
}

void fdl_dynlib_need(fdl_dynlib *l)
{
	if (atomic_load(&l->state) == 1)
		return;
	fdl_error e;
	if (fdl_dynlib_load(l, &e)) {
		fprintf(stderr, "libfdl: %s called before it was loaded: %s\n", l->soname, e.message);
		abort();
	}
}
