/* An Iceberg table another engine wrote (Spark, Flink, pyiceberg), read for
 * fdl add --iceberg: its metadata.json (the format version, the current
 * snapshot, the current schema with each column's field id and its type as
 * DuckDB names it). The manifests are read through DuckDB's iceberg
 * extension (src/catalog/add_iceberg.c); docs/decisions.md says why. */
#include "iceberg.h"

#include <stdlib.h>
#include <string.h>

#define MAX_METADATA ((size_t)64 << 20)

static int bad(fdl_error *err, const char *path, const char *what)
{
	return fdl_fail(err, FDL_EINVALID, "%s is not the metadata of an Iceberg table fdl add reads: %s. Nothing was "
			"added", path, what);
}

static int type_of(fdl_buf *out, const json_t *t, const char *path, fdl_error *err);

/* "name" TYPE of a struct's field. */
static int field_of(fdl_buf *out, const json_t *f, const char *path, fdl_error *err)
{
	const char *name = json_string_value(json_object_get(f, "name"));
	if (!name)
		return bad(err, path, "a struct field has no name");
	int rc = fdl_buf_sql_ident(out, name, err);
	if (!rc)
		rc = fdl_buf_puts(out, " ", err);
	return rc ? rc : type_of(out, json_object_get(f, "type"), path, err);
}

static int nested_of(fdl_buf *out, const json_t *t, const char *path, fdl_error *err)
{
	const char *kind = json_string_value(json_object_get(t, "type"));
	int rc = 0;
	if (kind && !strcmp(kind, "struct")) {
		const json_t *fields = json_object_get(t, "fields");
		rc = fdl_buf_puts(out, "STRUCT(", err);
		for (size_t i = 0; !rc && i < json_array_size(fields); i++) {
			rc = i ? fdl_buf_puts(out, ", ", err) : 0;
			if (!rc)
				rc = field_of(out, json_array_get(fields, i), path, err);
		}
		return rc ? rc : fdl_buf_puts(out, ")", err);
	}
	if (kind && !strcmp(kind, "list")) {
		rc = type_of(out, json_object_get(t, "element"), path, err);
		return rc ? rc : fdl_buf_puts(out, "[]", err);
	}
	if (kind && !strcmp(kind, "map")) {
		rc = fdl_buf_puts(out, "MAP(", err);
		if (!rc)
			rc = type_of(out, json_object_get(t, "key"), path, err);
		if (!rc)
			rc = fdl_buf_puts(out, ", ", err);
		if (!rc)
			rc = type_of(out, json_object_get(t, "value"), path, err);
		return rc ? rc : fdl_buf_puts(out, ")", err);
	}
	return bad(err, path, "a type is neither a primitive nor a struct, list or map");
}

/* An Iceberg type as DuckDB names it (docs/format.md, "fdl add --iceberg"). */
static int type_of(fdl_buf *out, const json_t *t, const char *path, fdl_error *err)
{
	static const char *const prim[][2] = {
		{"boolean", "BOOLEAN"}, {"int", "INTEGER"},	{"long", "BIGINT"},
		{"float", "FLOAT"},	{"double", "DOUBLE"},	{"date", "DATE"},
		{"time", "TIME"},	{"timestamp", "TIMESTAMP"}, {"timestamptz", "TIMESTAMP WITH TIME ZONE"},
		{"string", "VARCHAR"},	{"uuid", "UUID"},	{"binary", "BLOB"},
	};
	if (json_is_object(t))
		return nested_of(out, t, path, err);
	const char *s = json_string_value(t);
	if (!s)
		return bad(err, path, "a column has no type");
	for (size_t i = 0; i < sizeof prim / sizeof prim[0]; i++)
		if (!strcmp(s, prim[i][0]))
			return fdl_buf_puts(out, prim[i][1], err);
	unsigned p, sc;
	char end;
	if (sscanf(s, "decimal(%u, %u%c", &p, &sc, &end) == 3 && end == ')' && p >= 1 && p <= 38 && sc <= p)
		return fdl_buf_printf(out, err, "DECIMAL(%u,%u)", p, sc);
	if (!strncmp(s, "fixed[", 6))
		return fdl_buf_puts(out, "BLOB", err);
	return fdl_fail(err, FDL_EINVALID, "%s: Iceberg type %s has no DuckLake type fdl add maps it to. Nothing was "
			"added", path, s);
}

/* The schema whose schema-id is the current one. */
static const json_t *current_schema(const json_t *m)
{
	const json_t *schemas = json_object_get(m, "schemas");
	const json_t *id = json_object_get(m, "current-schema-id");
	for (size_t i = 0; id && i < json_array_size(schemas); i++) {
		const json_t *s = json_array_get(schemas, i);
		if (json_is_integer(json_object_get(s, "schema-id")) &&
		    json_integer_value(json_object_get(s, "schema-id")) == json_integer_value(id))
			return s;
	}
	return NULL;
}

static int read_schema(fdl_ice_source *s, const json_t *schema, const char *path, fdl_error *err)
{
	const json_t *fields = json_object_get(schema, "fields");
	size_t n = json_array_size(fields);
	s->ids = calloc(n ? n : 1, sizeof *s->ids);
	if (!s->ids)
		return fdl_oom(err);
	int rc = n ? 0 : bad(err, path, "its current schema has no column");
	for (size_t i = 0; !rc && i < n; i++) {
		const json_t *f = json_array_get(fields, i);
		const char *name = json_string_value(json_object_get(f, "name"));
		fdl_buf t = {0};
		if (!name || !json_is_integer(json_object_get(f, "id")))
			rc = bad(err, path, "a column of its current schema has no name or no id");
		if (!rc)
			rc = type_of(&t, json_object_get(f, "type"), path, err);
		if (!rc)
			rc = fdl_strlist_add(&s->names, name, err);
		if (!rc)
			rc = fdl_strlist_add(&s->types, t.data, err);
		if (!rc)
			s->ids[i] = json_integer_value(json_object_get(f, "id"));
		fdl_buf_free(&t);
	}
	return rc;
}

/* The current snapshot's id and sequence number (-1, 0: none yet). */
static int read_snapshot(fdl_ice_source *s, const json_t *m, const char *path, fdl_error *err)
{
	const json_t *cur = json_object_get(m, "current-snapshot-id");
	s->snapshot = json_is_integer(cur) ? json_integer_value(cur) : -1;
	if (s->snapshot < 0)
		return 0;
	const json_t *snaps = json_object_get(m, "snapshots");
	for (size_t i = 0; i < json_array_size(snaps); i++) {
		const json_t *sn = json_array_get(snaps, i);
		if (json_integer_value(json_object_get(sn, "snapshot-id")) == s->snapshot) {
			s->sequence = json_integer_value(json_object_get(sn, "sequence-number"));
			return 0;
		}
	}
	return bad(err, path, "its current snapshot is not among its snapshots");
}

int fdl_ice_source_read(fdl_ice_source *s, const char *path, fdl_error *err)
{
	memset(s, 0, sizeof *s);
	fdl_buf b = {0};
	int rc = fdl_file_read(&b, path, MAX_METADATA, err);
	if (rc)
		return fdl_error_prefix(err, "reading the Iceberg table's metadata");
	json_error_t je;
	json_t *m = json_loadb(b.data ? b.data : "", b.len, 0, &je);
	fdl_buf_free(&b);
	if (!json_is_object(m)) {
		char what[256];
		snprintf(what, sizeof what, "no JSON object (line %d: %s)", je.line, je.text);
		json_decref(m);
		return bad(err, path, what);
	}
	const json_t *fv = json_object_get(m, "format-version");
	const char *loc = json_string_value(json_object_get(m, "location"));
	const json_t *schema = current_schema(m);
	if (!json_is_integer(fv) || !loc || !schema)
		rc = bad(err, path, "no format-version, location or current schema");
	else if (json_integer_value(fv) != 2)
		rc = fdl_fail(err, FDL_EINVALID,
			      "%s is the metadata of an Iceberg v%lld table; fdl add --iceberg reads v2 tables (in Spark: "
			      "ALTER TABLE ... SET TBLPROPERTIES ('format-version' = '2')). Nothing was added",
			      path, (long long)json_integer_value(fv));
	s->format = (int)json_integer_value(fv);
	if (!rc && !(s->location = fdl_strdup(loc)))
		rc = fdl_oom(err);
	if (!rc)
		rc = read_schema(s, schema, path, err);
	if (!rc)
		rc = read_snapshot(s, m, path, err);
	json_decref(m);
	if (rc)
		fdl_ice_source_free(s);
	return rc;
}

void fdl_ice_source_free(fdl_ice_source *s)
{
	free(s->location);
	free(s->ids);
	fdl_strlist_free(&s->names);
	fdl_strlist_free(&s->types);
	memset(s, 0, sizeof *s);
}
