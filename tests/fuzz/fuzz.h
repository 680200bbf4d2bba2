/* Fuzz targets: each file defines LLVMFuzzerTestOneInput for one parser.
 * Built with libFuzzer by `make fuzz`; with driver.c, the same targets run
 * every input kept in tests/corpus/<target>/ in `make test`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input, for parsers of C strings. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}
