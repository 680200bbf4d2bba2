/* iceberg/views.json: the locations a repository's Iceberg views are at. */
#include "fuzz.h"
#include "../../src/layout/iceberg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc = NULL;
	fdl_error err;
	if (fdl_iceberg_views_parse(&doc, (const char *)data, size, "iceberg/views.json", &err) == 0) {
		size_t i;
		json_t *v;
		json_array_foreach(json_object_get(doc, "views"), i, v)
		{
			const char *loc = json_string_value(json_object_get(v, "location"));
			char lid[FDL_ICEBERG_LID_LEN + 1];
			if (!loc || fdl_iceberg_location_id(lid, loc, &err) ||
			    strcmp(lid, json_string_value(json_object_get(v, "id"))))
				abort();
			fdl_iceberg_view_has_catalog(v);
			char *dir = fdl_iceberg_view_dir(lid, "0190a0a0a0a07000800000000000000a");
			if (!dir || fdl_path_check_relative(dir, "a view", &err))
				abort(); /* an accepted id gives a path inside the repository */
			free(dir);
		}
		json_decref(doc);
	}
	return 0;
}
