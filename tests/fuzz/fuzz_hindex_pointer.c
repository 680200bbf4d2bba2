/* history/heads/<branch>.json, the history index's pointer, as any host
 * hands it to fdl log, show and clone. */
#include "fuzz.h"
#include "../../src/layout/hindex_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hindex ix;
	memset(&ix, 0, sizeof ix);
	ix.key = strdup("history/heads/main.json");
	if (!ix.key)
		return 0;
	fdl__hix_pointer_parse(&ix, (const char *)data, size);
	if (ix.usable) { /* what readers rely on once it is usable */
		int64_t next = 1;
		if (!fdl_id_is_valid(ix.tip) || ix.seq < 1 || ix.npacks > HIST_MAX_PACKS)
			abort();
		for (size_t i = 0; i < ix.npacks; i++) {
			if (ix.packs[i].first != next || ix.packs[i].last < ix.packs[i].first ||
			    ix.packs[i].last - ix.packs[i].first + 1 > ix.packs[i].bytes / 64)
				abort();
			next = ix.packs[i].last + 1;
		}
		for (size_t i = 0; i < ix.ntail; i++)
			if (ix.tail[i].seq != next++ || !ix.tail[i].doc)
				abort();
		if (next - 1 != ix.seq)
			abort();
	}
	fdl__hix_free(&ix);
	return 0;
}
