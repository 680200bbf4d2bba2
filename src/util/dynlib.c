/* The loader behind the lazy libraries (dynlib.h). */
#include "dynlib.h"
#include "util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *fdl_dynlib_beside(const char *name)
{
	Dl_info info;
	if (!dladdr((void *)fdl_dynlib_beside, &info) || !info.dli_fname || info.dli_fname[0] != '/')
		return NULL;
	const char *slash = strrchr(info.dli_fname, '/');
	static const char *const rel[] = {"fdl", "../lib/fdl"};
	for (size_t i = 0; i < 2; i++) {
		char *path = fdl_asprintf("%.*s/%s/%s", (int)(slash - info.dli_fname), info.dli_fname, rel[i], name);
		if (path && access(path, F_OK) == 0)
			return path;
		free(path);
	}
	return NULL;
}

/* The copy beside libfdl (a wheel, the tarball, make install), else the
 * loader's search by soname. */
static void *open_default(const fdl_dynlib *l, char *tried, size_t n)
{
	char *beside = fdl_dynlib_beside(l->soname);
	if (beside) {
		snprintf(tried, n, "%s", beside);
		void *h = dlopen(beside, RTLD_NOW | RTLD_LOCAL);
		free(beside);
		return h;
	}
	return dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
}

static void try_load(fdl_dynlib *l)
{
	char tried[512];
	snprintf(tried, sizeof tried, "%s", l->soname);
	void *h = l->open ? l->open(tried, sizeof tried) : open_default(l, tried, sizeof tried);
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
