#include "fuzz.h"
#include "../../src/layout/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *branch = NULL;
	fdl_error err;
	if (fdl_head_parse(&branch, (const char *)data, size, &err) == 0)
		free(branch);
	char *s = fuzz_cstr(data, size);
	if (s) {
		fdl_ref_name_check(s, &err);
		fdl_id_is_valid(s);
		fdl_path_check_relative(s, "fuzz", &err);
		free(s);
	}
	return 0;
}
