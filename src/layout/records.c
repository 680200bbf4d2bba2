/* The small JSON records readers take from a repository besides
 * version.json: files.json and expired.json, checked field by field. */
#include "layout.h"

#include <string.h>

static int file_entry(const json_t *f, const char *src, const char *where, fdl_error *err)
{
	const char *path;
	int64_t n;
	int rc = 0;
	char field[600];
	if (!json_is_object(f))
		return fdl_fail(err, FDL_EINVALID, "%s: %s is not an object", src, where);
	snprintf(field, sizeof field, "%s.path", where);
	if ((rc = fdl_json_get_string(&path, f, "path", true, src, field, err)))
		return rc;
	if ((rc = fdl_path_check_relative(path, field, err)))
		return fdl_error_prefix(err, "%s", src);
	snprintf(field, sizeof field, "%s.rows", where);
	if ((rc = fdl_json_get_int(&n, NULL, f, "rows", true, src, field, err)))
		return rc;
	snprintf(field, sizeof field, "%s.bytes", where);
	if ((rc = fdl_json_get_int(&n, NULL, f, "bytes", true, src, field, err)))
		return rc;
	if (n < 0)
		return fdl_fail(err, FDL_EINVALID, "%s: field '%s' is negative", src, field);
	return 0;
}

/* fdl's "sha256": data file path -> its sha256, 64 lower-case hex digits. */
static int hashes_check(const json_t *map, const char *src, fdl_error *err)
{
	if (!map)
		return 0;
	if (!json_is_object(map))
		return fdl_fail(err, FDL_EINVALID, "%s: field '" FDL_FILES_SHA256 "' is not an object", src);
	const char *path;
	const json_t *v;
	json_object_foreach((json_t *)map, path, v)
	{
		const char *hex = json_string_value(v);
		size_t n = hex ? strspn(hex, "0123456789abcdef") : 0;
		if (fdl_path_check_relative(path, FDL_FILES_SHA256 " key", err))
			return fdl_error_prefix(err, "%s", src);
		if (n != 64 || hex[64])
			return fdl_fail(err, FDL_EINVALID, "%s: " FDL_FILES_SHA256 ".%.400s is not 64 lower-case hex digits",
					src, path);
	}
	return 0;
}

/* What a reader without the catalog needs (fdl's fields of a table:
 * renamed_columns, schema_changed, unreadable, columns), typed. */
static int table_reading(const json_t *t, const char *src, const char *name, fdl_error *err)
{
	const char *flags[] = {"renamed_columns", "schema_changed"};
	for (size_t k = 0; k < 2; k++) {
		const json_t *b = json_object_get(t, flags[k]);
		if (b && !json_is_boolean(b))
			return fdl_fail(err, FDL_EINVALID, "%s: tables.%.400s.%s is not a boolean", src, name, flags[k]);
	}
	const json_t *why = json_object_get(t, "unreadable"), *cols = json_object_get(t, "columns"), *c;
	if (why && !json_is_string(why))
		return fdl_fail(err, FDL_EINVALID, "%s: tables.%.400s.unreadable is not a string", src, name);
	if (cols && !json_is_array(cols))
		return fdl_fail(err, FDL_EINVALID, "%s: tables.%.400s.columns is not an array", src, name);
	size_t i;
	json_array_foreach(cols, i, c)
	{
		const json_t *d = json_object_get(c, "initial_default");
		if (!json_is_object(c) || !json_is_string(json_object_get(c, "name")) ||
		    !json_is_integer(json_object_get(c, "field_id")) || !json_is_string(json_object_get(c, "type")) ||
		    (d && !json_is_string(d)))
			return fdl_fail(err, FDL_EINVALID,
					"%s: tables.%.400s.columns[%zu] is not {\"name\": string, \"field_id\": integer, "
					"\"type\": string, \"initial_default\"?: string}",
					src, name, i);
	}
	return 0;
}

int fdl_files_json_check(const json_t *doc, const char *src, fdl_error *err)
{
	const json_t *tables;
	int rc = json_is_object(doc) ? fdl_json_get_typed(&tables, doc, "tables", JSON_OBJECT, true, src, "tables", err)
				     : fdl_fail(err, FDL_EINVALID, "%s: expected a JSON object", src);
	if (rc)
		return rc;
	const char *name;
	const json_t *t;
	json_object_foreach((json_t *)tables, name, t)
	{
		char where[512];
		const json_t *files;
		snprintf(where, sizeof where, "tables.%.400s.files", name);
		if (!json_is_object(t))
			return fdl_fail(err, FDL_EINVALID, "%s: tables.%.400s is not an object", src, name);
		if ((rc = fdl_json_get_typed(&files, t, "files", JSON_ARRAY, true, src, where, err)))
			return rc;
		if ((rc = table_reading(t, src, name, err)))
			return rc;
		size_t i;
		const json_t *f;
		json_array_foreach(files, i, f)
		{
			char fw[560];
			snprintf(fw, sizeof fw, "%s[%zu]", where, i);
			if ((rc = file_entry(f, src, fw, err)))
				return rc;
			const json_t *d = json_object_get(f, "deletes");
			snprintf(fw, sizeof fw, "%s[%zu].deletes", where, i);
			if (d && (rc = file_entry(d, src, fw, err)))
				return rc;
		}
	}
	return hashes_check(json_object_get(doc, FDL_FILES_SHA256), src, err);
}

int fdl_expired_parse(const char **reason, const char **when, const json_t *doc, const char *src, fdl_error *err)
{
	int rc = json_is_object(doc) ? 0 : fdl_fail(err, FDL_EINVALID, "%s: expected a JSON object", src);
	if (!rc)
		rc = fdl_json_get_string(reason, doc, "reason", true, src, "reason", err);
	if (!rc && strcmp(*reason, "retention") && strcmp(*reason, "withdrawn"))
		rc = fdl_fail(err, FDL_EINVALID, "%s: field 'reason' is '%.40s'; expected retention or withdrawn", src,
			      *reason);
	if (!rc)
		rc = fdl_json_get_string(when, doc, "expired_at", true, src, "expired_at", err);
	if (!rc && !fdl_time_is_iso_utc(*when))
		rc = fdl_fail(err, FDL_EINVALID, "%s: field 'expired_at' is not UTC ISO 8601", src);
	return rc;
}
