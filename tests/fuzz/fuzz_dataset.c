#include "fuzz.h"
#include "../../src/layout/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fdl_error err;
	for (int table = 0; table < 2; table++) {
		json_t *out = NULL;
		if (fdl_dataset_check_text(&out, (const char *)data, size, "dataset.yml", table, &err) == 0)
			json_decref(out);
	}
	return 0;
}
