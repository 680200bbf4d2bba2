/* Avro binary encoding and one-block object container files: see avro.h. */
#include "avro.h"

#include <stdio.h>
#include <string.h>

int fdl_avro_long(fdl_buf *b, int64_t v, fdl_error *err)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	unsigned char out[10];
	size_t n = 0;
	do {
		unsigned char byte = (unsigned char)(z & 0x7f);
		z >>= 7;
		out[n++] = (unsigned char)(byte | (z ? 0x80 : 0));
	} while (z);
	return fdl_buf_add(b, out, n, err);
}

int fdl_avro_bool(fdl_buf *b, bool v, fdl_error *err)
{
	unsigned char c = v ? 1 : 0;
	return fdl_buf_add(b, &c, 1, err);
}

int fdl_avro_bytes(fdl_buf *b, const void *data, size_t len, fdl_error *err)
{
	if (len > INT64_MAX)
		return fdl_fail(err, FDL_EINVALID, "an Avro value of %zu bytes is too large", len);
	int rc = fdl_avro_long(b, (int64_t)len, err);
	return rc ? rc : fdl_buf_add(b, data, len, err);
}

int fdl_avro_string(fdl_buf *b, const char *s, fdl_error *err)
{
	return fdl_avro_bytes(b, s, strlen(s), err);
}

static int header(fdl_buf *out, const char *schema, const char *const *meta, size_t pairs, fdl_error *err)
{
	int rc = fdl_buf_add(out, "Obj\x01", 4, err);
	/* the metadata map: one block of pairs + 2 entries, then the end */
	if (!rc)
		rc = fdl_avro_long(out, (int64_t)pairs + 2, err);
	if (!rc)
		rc = fdl_avro_string(out, "avro.schema", err);
	if (!rc)
		rc = fdl_avro_string(out, schema, err);
	if (!rc)
		rc = fdl_avro_string(out, "avro.codec", err);
	if (!rc)
		rc = fdl_avro_string(out, "null", err);
	for (size_t i = 0; i < pairs && !rc; i++) {
		rc = fdl_avro_string(out, meta[2 * i], err);
		if (!rc)
			rc = fdl_avro_string(out, meta[2 * i + 1], err);
	}
	return rc ? rc : fdl_avro_long(out, 0, err);
}

/* The first 16 bytes of the sha256 of what the file holds. */
static int sync_marker(unsigned char sync[16], const fdl_buf *head, const fdl_buf *objects, fdl_error *err)
{
	fdl_sha256 *h = NULL;
	char hex[65];
	int rc = fdl_sha256_new(&h, err);
	if (!rc)
		rc = fdl_sha256_update(h, head->data, head->len, err);
	if (!rc && objects->len)
		rc = fdl_sha256_update(h, objects->data, objects->len, err);
	if (!rc)
		rc = fdl_sha256_final(h, hex, err);
	fdl_sha256_free(h);
	for (int i = 0; i < 16 && !rc; i++) {
		unsigned v = 0;
		sscanf(hex + 2 * i, "%2x", &v);
		sync[i] = (unsigned char)v;
	}
	return rc;
}

int fdl_avro_file(fdl_buf *out, const char *schema, const char *const *meta, size_t pairs, const fdl_buf *objects,
		  int64_t count, fdl_error *err)
{
	int rc = header(out, schema, meta, pairs, err);
	if (rc)
		return rc;
	unsigned char digest[16];
	rc = sync_marker(digest, out, objects, err);
	if (!rc)
		rc = fdl_buf_add(out, digest, 16, err);
	if (!rc && count > 0) {
		rc = fdl_avro_long(out, count, err);
		if (!rc)
			rc = fdl_avro_long(out, (int64_t)objects->len, err);
		if (!rc)
			rc = fdl_buf_add(out, objects->data, objects->len, err);
		if (!rc)
			rc = fdl_buf_add(out, digest, 16, err);
	}
	return rc;
}
