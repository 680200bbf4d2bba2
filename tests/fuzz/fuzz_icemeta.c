/* A parent view's metadata.json, read back and checked before fdl builds
 * the next view from it (the seeds are views fdl wrote, with this
 * location, snapshot id and uuid). */
#include "fuzz.h"
#include "../../src/iceberg/iceberg_int.h"

#define PREFIX "file:///fuzz/repo/iceberg/0123456789abcdef/manifests/"
#define CURRENT 4242424242424242LL
#define UUID "01234567-89ab-7cde-8f01-23456789abcd"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc = NULL;
	fdl_error err;
	if (fdl_json_parse(&doc, (const char *)data, size, "metadata.json", &err))
		return 0;
	if (fdl_ice_parent_meta_ok(doc, PREFIX, CURRENT, UUID)) {
		/* what table_from_parent then takes from it */
		json_t *snaps = json_object_get(doc, "snapshots");
		if (!json_array_size(snaps) || !json_is_array(json_object_get(doc, "schemas")))
			abort();
		json_integer_value(json_object_get(json_array_get(snaps, json_array_size(snaps) - 1), "snapshot-id"));
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(doc, "partition-specs"), i, x)
		{
			char id[32];
			snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(x, "spec-id")));
		}
	}
	json_decref(doc);
	return 0;
}
