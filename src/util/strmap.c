/* A small string-keyed hash map (open addressing). */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t slot(char *const *keys, size_t cap, const char *key)
{
	size_t i = hash(key) & (cap - 1);
	while (keys[i] && strcmp(keys[i], key) != 0)
		i = (i + 1) & (cap - 1);
	return i;
}

bool fdl_strmap_get(const fdl_strmap *m, const char *key, int64_t *value)
{
	if (!m->cap)
		return false;
	size_t i = slot(m->keys, m->cap, key);
	if (!m->keys[i])
		return false;
	*value = m->values[i];
	return true;
}

static int grow(fdl_strmap *m, fdl_error *err)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	char **keys = calloc(cap, sizeof *keys);
	int64_t *values = calloc(cap, sizeof *values);
	if (!keys || !values) {
		free(keys);
		free(values);
		return fdl_oom(err);
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i]) {
			size_t j = slot(keys, cap, m->keys[i]);
			keys[j] = m->keys[i];
			values[j] = m->values[i];
		}
	free(m->keys);
	free(m->values);
	m->keys = keys;
	m->values = values;
	m->cap = cap;
	return 0;
}

int fdl_strmap_put(fdl_strmap *m, const char *key, int64_t value, fdl_error *err)
{
	if ((m->len + 1) * 4 > m->cap * 3 && grow(m, err)) /* at most 3/4 full */
		return FDL_ENOMEM;
	size_t i = slot(m->keys, m->cap, key);
	if (!m->keys[i]) {
		if (!(m->keys[i] = fdl_strdup(key)))
			return fdl_oom(err);
		m->len++;
	}
	m->values[i] = value;
	return 0;
}

void fdl_strmap_free(fdl_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->values);
	memset(m, 0, sizeof *m);
}
