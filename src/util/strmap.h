/* A map from strings to int64 values (open addressing, FNV-1a): what a
 * walk over many versions remembers of files they share, e.g. verify's
 * one `head` per data file however many versions reference it. */
#ifndef FDL_UTIL_STRMAP_H
#define FDL_UTIL_STRMAP_H

#include "util.h"

typedef struct fdl_strmap {
	char **keys;
	int64_t *values;
	size_t cap; /* a power of two, or 0 */
	size_t len;
} fdl_strmap;

/* true and *value when `key` is in the map. */
bool fdl_strmap_get(const fdl_strmap *m, const char *key, int64_t *value);
/* Add or replace; the map keeps its own copy of key. */
int fdl_strmap_put(fdl_strmap *m, const char *key, int64_t value, fdl_error *err);
void fdl_strmap_free(fdl_strmap *m);

#endif
