/* WORK/fdl-work.json, a working folder's record. */
#include "fuzz.h"
#include "../../src/ops/work.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fdl_work w;
	memset(&w, 0, sizeof w);
	w.base_snapshot = -1;
	fdl_error err;
	if (fdl_work_parse(&w, (const char *)data, size, "/fuzz/fdl-work.json", &err) == 0) {
		if (!w.repository || !w.branch || !w.data_path)
			abort();
		if ((*w.base && !fdl_id_is_valid(w.base)) || (*w.pending && !fdl_id_is_valid(w.pending)))
			abort();
	}
	fdl_work_free(&w);
	return 0;
}
