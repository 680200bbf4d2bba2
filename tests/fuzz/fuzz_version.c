#include "fuzz.h"
#include "../../src/layout/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fdl_version *v = NULL;
	fdl_error err;
	if (fdl_version_parse(&v, (const char *)data, size, "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c", "fuzz", &err) == 0) {
		char *out = NULL;
		if (fdl_version_to_json(&out, v, &err) == 0)
			free(out);
		for (size_t i = 0; fdl_version_parent(v, i); i++)
			;
	}
	fdl_version_free(v);
	return 0;
}
