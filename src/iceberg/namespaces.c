/* The REST catalog's namespace list (v1/namespaces) as a branch's pass
 * reads it back before rewriting it: which namespaces stay, and whether it
 * is a list fdl writes at all (iceberg_int.h, fdl_ice_namespaces_old). */
#include "iceberg_int.h"

#include <stdlib.h>
#include <string.h>

/* [ref] or [ref, schema] with a schema name as fdl writes it: one that
 * names a folder of its own (its files are deleted by that name). */
static bool levels_plain(const json_t *levels)
{
	const char *schema = json_string_value(json_array_get(levels, 1));
	char *plain = schema ? fdl_iceberg_catalog_name(schema, 0) : NULL;
	bool ok = json_array_size(levels) == 1 || (json_array_size(levels) == 2 && plain && !strcmp(plain, schema));
	free(plain);
	return ok;
}

int fdl_ice_namespaces_old(bool *foreign, json_t *keep, json_t *nested, const char *data, size_t len,
			   const char *name, const char *key, fdl_error *err)
{
	fdl_error e;
	json_t *doc = NULL;
	*foreign = fdl_json_parse(&doc, data, len, key, &e) || !json_is_array(json_object_get(doc, "namespaces"));
	int rc = 0;
	size_t i;
	const json_t *x;
	json_array_foreach(*foreign ? NULL : json_object_get(doc, "namespaces"), i, x)
	{
		const char *first = json_string_value(json_array_get(x, 0));
		if ((*foreign = !first || !levels_plain(x))) /* not what fdl writes: the whole catalog again */
			break;
		if (strcmp(first, name) ? json_array_append(keep, (json_t *)x)
					: json_array_size(x) > 1 && json_array_append(nested, (json_t *)x)) {
			rc = fdl_oom(err);
			break;
		}
	}
	json_decref(doc);
	return rc;
}
