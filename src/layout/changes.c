/* version.json's `changes` as fdl_change (fdl.h) and back: what commit
 * writes, log prints and diff reports. */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

static char *opt_string(const json_t *o, const char *key, bool *oom)
{
	const char *v = json_string_value(json_object_get(o, key));
	char *copy = v ? fdl_strdup(v) : NULL;
	if (v && !copy)
		*oom = true;
	return copy;
}

int fdl_changes_from_json(fdl_change **out, size_t *count, const json_t *list, fdl_error *err)
{
	*out = NULL;
	*count = 0;
	size_t n = json_array_size(list);
	if (n == 0)
		return 0;
	fdl_change *c = calloc(n, sizeof *c);
	if (!c)
		return fdl_oom(err);
	bool oom = false;
	for (size_t i = 0; i < n; i++) {
		const json_t *o = json_array_get(list, i);
		c[i].table = opt_string(o, "table", &oom);
		c[i].kind = opt_string(o, "kind", &oom);
		c[i].column = opt_string(o, "column", &oom);
		c[i].from = opt_string(o, "from", &oom);
		c[i].type = opt_string(o, "type", &oom);
		c[i].from_type = opt_string(o, "from_type", &oom);
		c[i].breaking = json_is_true(json_object_get(o, "breaking"));
	}
	if (oom) {
		fdl_changes_free(c, n);
		return fdl_oom(err);
	}
	*out = c;
	*count = n;
	return 0;
}

json_t *fdl_changes_json(const fdl_change *c, size_t count)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < count; i++) {
		json_t *o = json_pack("{s:s, s:s}", "table", c[i].table ? c[i].table : "", "kind",
				      c[i].kind ? c[i].kind : "");
		const char *keys[] = {"column", "from", "from_type", "type"};
		const char *vals[] = {c[i].column, c[i].from, c[i].from_type, c[i].type};
		for (size_t k = 0; o && k < 4; k++)
			if (vals[k])
				json_object_set_new(o, keys[k], json_string(vals[k]));
		if (o)
			json_object_set_new(o, "breaking", json_boolean(c[i].breaking));
		json_array_append_new(list, o);
	}
	return list;
}

void fdl_changes_free(fdl_change *c, size_t count)
{
	for (size_t i = 0; c && i < count; i++) {
		free(c[i].table);
		free(c[i].kind);
		free(c[i].column);
		free(c[i].from);
		free(c[i].type);
		free(c[i].from_type);
	}
	free(c);
}

