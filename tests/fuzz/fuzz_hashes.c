/* WORK/fdl-hashes.txt, the working folder's copy of its base's sha256 map.
 * Its header names files.json's sha256 and its body's: an odd first byte
 * has the target write a header that matches the rest (what a fuzzer
 * cannot forge), an even one takes the input as the whole file, read for
 * the files.json its header names (as when the base is that one). */
#include "fuzz.h"
#include "../../src/ops/work.h"

#define FILES_SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fdl_buf b = {0};
	fdl_error err;
	char body[65];
	if ((data[0] & 1) && fdl_sha256_mem(body, data + 1, size - 1, &err) == 0 &&
	    fdl_buf_printf(&b, &err, "fdl-hashes 1 %s %s\n", FILES_SHA, body)) {
		fdl_buf_free(&b);
		return 0;
	}
	if (fdl_buf_add(&b, data + 1, size - 1, &err)) {
		fdl_buf_free(&b);
		return 0;
	}
	char files[65] = FILES_SHA;
	if (!(data[0] & 1) && b.len >= 13 + 64)
		memcpy(files, b.data + 13, 64);
	json_t *map = NULL;
	char why[160];
	if (fdl_work_hashes_parse(&map, &b, files, why, &err) == 0 && map) {
		const char *k;
		json_t *v;
		json_object_foreach(map, k, v)
		if (strlen(json_string_value(v)) != 64)
			abort();
	}
	json_decref(map);
	fdl_buf_free(&b);
	return 0;
}
