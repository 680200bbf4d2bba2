/* Avro's binary encoding and object container files (Apache Avro 1.11
 * specification), as much as Iceberg's manifests and manifest lists need:
 * the caller writes each object's fields in its schema's order with these
 * encoders, then wraps them in one container file. The schema is the
 * caller's JSON text, written as given, so Iceberg's field-id, element-id
 * and logicalType attributes stay (Debian's avro-c rewrites a schema it
 * parsed and drops them: docs/decisions.md). */
#ifndef FDL_AVRO_H
#define FDL_AVRO_H

#include "util.h"

/* int and long: zig-zag, then a little-endian base-128 varint. */
int fdl_avro_long(fdl_buf *b, int64_t v, fdl_error *err);
/* boolean: one byte, 0 or 1. */
int fdl_avro_bool(fdl_buf *b, bool v, fdl_error *err);
/* bytes: the length as a long, then the bytes. */
int fdl_avro_bytes(fdl_buf *b, const void *data, size_t len, fdl_error *err);
/* string: as bytes, UTF-8. */
int fdl_avro_string(fdl_buf *b, const char *s, fdl_error *err);
/* A union's branch: its index as a long, then (not null) its value. */
#define fdl_avro_union fdl_avro_long

/* An object container file in `out`: the magic, a metadata map holding
 * avro.schema (schema, as given), avro.codec "null" and `pairs` more
 * key/value strings (meta[2i], meta[2i+1]), then one block of `count`
 * objects already encoded in `objects`. The 16-byte sync marker is taken
 * from the sha256 of schema, metadata and objects, so equal content gives
 * equal bytes (Iceberg's files here are named by their sha256). */
int fdl_avro_file(fdl_buf *out, const char *schema, const char *const *meta, size_t pairs, const fdl_buf *objects,
		  int64_t count, fdl_error *err);

#endif
