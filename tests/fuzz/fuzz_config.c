#include "fuzz.h"
#include "../../src/layout/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = NULL;
	fdl_error err;
	if (fdl_json_parse(&j, (const char *)data, size, "fdl.json", &err) == 0)
		fdl_config_check(j, "fdl.json", &err);
	json_decref(j);
	return 0;
}
