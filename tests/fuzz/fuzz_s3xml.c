/* An S3 server's XML answers: an error body, CreateMultipartUpload's
 * UploadId, a page of ListObjectsV2 (keys URL-encoded). */
#include "fuzz.h"
#include "../../src/store/s3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	fdl_buf b = {.data = (char *)text, .len = size};
	free(fdl_s3_error_text(&b));
	xmlDoc *doc = fdl_s3_xml_parse(text, size);
	if (doc) {
		free(fdl_s3_xml_text(xmlDocGetRootElement(doc), "UploadId"));
		xmlFreeDoc(doc);
	}
	/* a store at s3://bucket/pfx listing "dir": keys under pfx/dir/ */
	fdl_strlist keys = {0};
	char *token = NULL;
	fdl_error err;
	if (fdl_s3_list_page(&keys, &token, NULL, text, size, "pfx/dir/", 4, "s3://bucket/pfx", &err) == 0) {
		for (size_t i = 0; i < keys.len; i++)
			if (strncmp(keys.items[i], "dir/", 4))
				abort(); /* a key outside what was asked */
	} else if (token) {
		abort(); /* a failed page leaves no token */
	}
	free(token);
	fdl_strlist_free(&keys);
	return 0;
}
