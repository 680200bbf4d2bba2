/* The one JSON writer and the field checkers every reader uses (jansson). */
#ifndef FDL_JSON_H
#define FDL_JSON_H

#include "util.h"
#include <jansson.h>

/* Serialise with two-space indent, keys in insertion order, and a final
 * newline. Caller frees *out. */
int fdl_json_dump(char **out, size_t *len, const json_t *j, fdl_error *err);
/* The same, on one line when `compact` (files.json: an index for programs,
 * 40% smaller without the indentation). */
int fdl_json_dump_as(char **out, size_t *len, const json_t *j, bool compact, fdl_error *err);
/* Parse `len` bytes; errors name `source` with line and column. */
int fdl_json_parse(json_t **out, const char *data, size_t len, const char *source, fdl_error *err);

/* Field checkers: `source` is the file, `field` the dotted name. Each
 * returns FDL_EINVALID with "<source>: field '<field>' ..." on failure.
 * `required`: a missing field is an error; otherwise *out is left NULL/0. */
int fdl_json_get_string(const char **out, const json_t *obj, const char *key, bool required,
			const char *source, const char *field, fdl_error *err);
int fdl_json_get_int(int64_t *out, bool *present, const json_t *obj, const char *key, bool required,
		     const char *source, const char *field, fdl_error *err);
/* type: JSON_OBJECT or JSON_ARRAY */
int fdl_json_get_typed(const json_t **out, const json_t *obj, const char *key, json_type type, bool required,
		       const char *source, const char *field, fdl_error *err);

#endif
