/* history/packs/<sha256>.jsonl, a pack of the history index, as any host
 * hands it. The first byte picks the pointer's format (1 or 2) and whether
 * whole version.json files are loaded; the pointer says the pack holds
 * one entry per line, from seq 1. */
#include "fuzz.h"
#include "../../src/layout/hindex_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	hindex ix;
	memset(&ix, 0, sizeof ix);
	ix.format = data[0] & 1 ? 2 : 1;
	ix.whole = data[0] & 2;
	const char *text = (const char *)data + 1;
	size_t len = size - 1, lines = 1;
	for (size_t i = 0; i + 1 < len; i++)
		lines += text[i] == '\n';
	hpack p = {.first = 1, .last = (int64_t)lines, .bytes = (int64_t)len};
	strcpy(p.name, "fuzz.jsonl");
	if (fdl__hix_pack_parse(&ix, &p, text, len, "history/packs/fuzz.jsonl")) {
		if (p.n != lines || ix.usable)
			abort(); /* ix.usable is only ever set by the pointer */
		for (size_t i = 0; i < p.n; i++) {
			if (p.e[i].seq != (int64_t)i + 1 || !fdl_id_is_valid(p.e[i].id) || !p.e[i].doc)
				abort();
			fdl__hix_entry_clear(&p.e[i]);
		}
		free(p.e);
	}
	return 0;
}
