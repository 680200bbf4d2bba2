/* An old v1/namespaces list of the REST catalog, read back before a
 * branch's pass rewrites it. */
#include "fuzz.h"
#include "../../src/iceberg/iceberg_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *keep = json_array(), *nested = json_array();
	fdl_error err;
	bool foreign = false;
	if (keep && nested &&
	    fdl_ice_namespaces_old(&foreign, keep, nested, (const char *)data, size, "main", "v1/namespaces", &err) == 0 &&
	    !foreign) {
		size_t i;
		json_t *x;
		json_array_foreach(keep, i, x)
		if (!json_string_value(json_array_get(x, 0)) || !strcmp(json_string_value(json_array_get(x, 0)), "main"))
			abort();
		json_array_foreach(nested, i, x)
		if (json_array_size(x) != 2 || strcmp(json_string_value(json_array_get(x, 0)), "main"))
			abort();
	}
	json_decref(keep);
	json_decref(nested);
	return 0;
}
