/* JSON through jansson: parse with limits, dump as fdl writes it, typed
 * field access with messages that name the file and the field. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

int fdl_json_dump(char **out, size_t *len, const json_t *j, fdl_error *err)
{
	return fdl_json_dump_as(out, len, j, false, err);
}

int fdl_json_dump_as(char **out, size_t *len, const json_t *j, bool compact, fdl_error *err)
{
	size_t flags = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) | (compact ? JSON_COMPACT : JSON_INDENT(2));
	char *s = json_dumps(j, flags);
	if (!s)
		return fdl_fail(err, FDL_ENOMEM, "cannot serialise JSON (out of memory)");
	size_t n = strlen(s);
	char *p = realloc(s, n + 2);
	if (!p) {
		free(s);
		return fdl_oom(err);
	}
	p[n] = '\n';
	p[n + 1] = '\0';
	*out = p;
	if (len)
		*len = n + 1;
	return 0;
}

int fdl_json_parse(json_t **out, const char *data, size_t len, const char *source, fdl_error *err)
{
	json_error_t je;
	json_t *j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return fdl_fail(err, FDL_EINVALID, "%s: not valid JSON at line %d, column %d: %s", source, je.line,
				je.column, je.text);
	*out = j;
	return 0;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static int missing(bool required, const char *source, const char *field, fdl_error *err)
{
	if (required)
		return fdl_fail(err, FDL_EINVALID, "%s: required field '%s' is missing", source, field);
	return 0;
}

int fdl_json_get_string(const char **out, const json_t *obj, const char *key, bool required,
			const char *source, const char *field, fdl_error *err)
{
	*out = NULL;
	json_t *v = json_object_get(obj, key);
	if (!v)
		return missing(required, source, field, err);
	if (!json_is_string(v))
		return fdl_fail(err, FDL_EINVALID, "%s: field '%s' is %s; expected a string", source, field,
				type_name(v));
	*out = json_string_value(v);
	return 0;
}

int fdl_json_get_int(int64_t *out, bool *present, const json_t *obj, const char *key, bool required,
		     const char *source, const char *field, fdl_error *err)
{
	*out = 0;
	if (present)
		*present = false;
	json_t *v = json_object_get(obj, key);
	if (!v)
		return missing(required, source, field, err);
	if (!json_is_integer(v))
		return fdl_fail(err, FDL_EINVALID, "%s: field '%s' is %s; expected an integer", source, field,
				type_name(v));
	*out = (int64_t)json_integer_value(v);
	if (present)
		*present = true;
	return 0;
}

int fdl_json_get_typed(const json_t **out, const json_t *obj, const char *key, json_type type, bool required,
		       const char *source, const char *field, fdl_error *err)
{
	*out = NULL;
	json_t *v = json_object_get(obj, key);
	if (!v)
		return missing(required, source, field, err);
	if (json_typeof(v) != type)
		return fdl_fail(err, FDL_EINVALID, "%s: field '%s' is %s; expected %s", source, field,
				type_name(v), type == JSON_OBJECT ? "an object" : "an array");
	*out = v;
	return 0;
}
