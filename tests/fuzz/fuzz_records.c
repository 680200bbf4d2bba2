/* files.json and expired.json */
#include "fuzz.h"
#include "../../src/layout/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = NULL;
	fdl_error err;
	if (fdl_json_parse(&j, (const char *)data, size, "files.json", &err) == 0) {
		fdl_files_json_check(j, "files.json", &err);
		const char *reason, *when;
		fdl_expired_parse(&reason, &when, j, "expired.json", &err);
	}
	json_decref(j);
	return 0;
}
