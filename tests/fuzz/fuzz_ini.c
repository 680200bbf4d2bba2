#include "fuzz.h"
#include "../../src/store/aws.h"
#include "../../src/util/ini.h"

/* The AWS config and credentials files are read from the user's home: any
 * bytes must parse without a crash or a leak. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sections[] = {"default", "profile pub"};
	const char *keys[] = {"region", "s3.addressing_style", "aws_access_key_id"};
	for (size_t i = 0; i < 2; i++)
		for (size_t k = 0; k < 3; k++) {
			char *v = NULL;
			fdl_ini_get(&v, (const char *)data, size, sections[i], keys[k]);
			free(v);
		}
	return 0;
}
