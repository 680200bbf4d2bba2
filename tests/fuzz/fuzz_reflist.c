/* history/refs.json, the ref list clone reads from a static host. */
#include "fuzz.h"
#include "../../src/layout/layout.h"
#include "../../src/layout/keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* as reflist_get reads it */
	json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	fdl_error err;
	if (doc && fdl_reflist_check(doc, "history/refs.json", &err) == 0) {
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(doc, "refs"), k, v)
		{
			fdl_ref_kind kind;
			const char *name = fdl_ref_short(k, &kind);
			if (kind == FDL_REF_NONE || fdl_ref_name_check(name, NULL) || !fdl_id_is_valid(json_string_value(v)))
				abort();
			if (fdl_path_check_relative(k, "a ref", &err))
				abort(); /* clone writes it as a file */
		}
	}
	json_decref(doc);
	return 0;
}
