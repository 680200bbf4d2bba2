/* Iceberg v2 manifests and manifest lists as Avro files (the Iceberg
 * spec's "Manifests", "Manifest Lists" and Appendix A's field ids), and the
 * single-value encoding of column bounds (Appendix D). */
#include "iceberg_int.h"
#include "../util/avro.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- bounds ----------------------------------------------------------- */

static int le_bytes(fdl_buf *out, uint64_t v, int n, fdl_error *err)
{
	unsigned char b[8];
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return fdl_buf_add(out, b, (size_t)n, err);
}

/* "-12.50" at scale s as the unscaled value's minimal two's complement,
 * big-endian (Java's BigInteger.toByteArray()); *none (and nothing
 * written) when it is not a plain decimal of at most s fraction digits. */
static int decimal_bytes(bool *none, fdl_buf *out, const char *text, int scale, fdl_error *err)
{
	unsigned char v[17] = {0}; /* big-endian magnitude */
	bool neg = *text == '-', dot = false;
	int frac = 0, digits = 0;
	for (const char *p = text + (neg || *text == '+'); *p; p++) {
		if (*p == '.' && !dot) {
			dot = true;
			continue;
		}
		if ((*none = *p < '0' || *p > '9' || (dot && ++frac > scale)))
			return 0;
		unsigned carry = (unsigned)(*p - '0');
		for (int i = 16; i >= 0; i--) {
			unsigned x = v[i] * 10u + carry;
			v[i] = (unsigned char)x;
			carry = x >> 8;
		}
		digits++;
	}
	for (; frac < scale; frac++)
		for (int i = 16, carry = 0; i >= 0; i--) {
			unsigned x = v[i] * 10u + (unsigned)carry;
			v[i] = (unsigned char)x;
			carry = (int)(x >> 8);
		}
	if ((*none = !digits || v[0]))
		return 0;
	if (neg) { /* two's complement */
		int carry = 1;
		for (int i = 16; i >= 0; i--) {
			int x = (unsigned char)~v[i] + carry;
			v[i] = (unsigned char)x;
			carry = x >> 8;
		}
	}
	int start = 0;
	unsigned char pad = neg ? 0xff : 0x00;
	while (start < 16 && v[start] == pad && ((v[start + 1] & 0x80) != 0) == neg)
		start++;
	return fdl_buf_add(out, v + start, (size_t)(17 - start), err);
}

int fdl_ice_bound(bool *none, fdl_buf *out, const char *type, const char *text, bool has_epoch, int64_t epoch,
		  bool upper, fdl_error *err)
{
	char *end = NULL;
	*none = false;
	if (!strcmp(type, "boolean") && (!strcmp(text, "true") || !strcmp(text, "false")))
		return fdl_buf_add(out, text[0] == 't' ? "\1" : "\0", 1, err);
	if (!strcmp(type, "int") || !strcmp(type, "long")) {
		long long x = strtoll(text, &end, 10);
		bool is_int = !strcmp(type, "int");
		if ((*none = end == text || *end || (is_int && (x < INT32_MIN || x > INT32_MAX))))
			return 0;
		return le_bytes(out, (uint64_t)x, is_int ? 4 : 8, err);
	}
	if (!strcmp(type, "float") || !strcmp(type, "double")) {
		double x = strtod(text, &end);
		if ((*none = end == text || *end || isnan(x)))
			return 0;
		if (x == 0)
			x = upper ? 0.0 : -0.0; /* -0.0 sorts before +0.0 */
		if (!strcmp(type, "float")) {
			float f = (float)x;
			uint32_t u;
			memcpy(&u, &f, 4);
			return le_bytes(out, u, 4, err);
		}
		uint64_t u;
		memcpy(&u, &x, 8);
		return le_bytes(out, u, 8, err);
	}
	if (!strcmp(type, "date") && has_epoch)
		return le_bytes(out, (uint64_t)epoch, 4, err);
	if ((!strcmp(type, "time") || !strcmp(type, "timestamp") || !strcmp(type, "timestamptz")) && has_epoch)
		return le_bytes(out, (uint64_t)epoch, 8, err);
	if (!strcmp(type, "string"))
		return fdl_buf_puts(out, text, err);
	int p, s;
	if (sscanf(type, "decimal(%d,%d)", &p, &s) == 2)
		return decimal_bytes(none, out, text, s, err);
	*none = true;
	return 0;
}

/* ---- schemas ---------------------------------------------------------- */

#define OPT(t) "[\"null\"," t "],\"default\":null"
#define MAP(name, k, v, vt)                                                                                        \
	"{\"type\":\"array\",\"logicalType\":\"map\",\"items\":{\"type\":\"record\",\"name\":\"" name              \
	"\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":" k "},{\"name\":\"value\",\"type\":\"" vt \
	"\",\"field-id\":" v "}]}}"

static const char ENTRY_HEAD[] =
	"{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
	"{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
	"{\"name\":\"snapshot_id\",\"type\":" OPT("\"long\"") ",\"field-id\":1},"
	"{\"name\":\"sequence_number\",\"type\":" OPT("\"long\"") ",\"field-id\":3},"
	"{\"name\":\"file_sequence_number\",\"type\":" OPT("\"long\"") ",\"field-id\":4},"
	"{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
	"{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"
	"{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
	"{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
	"{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[";

static const char ENTRY_TAIL[] =
	"]},\"field-id\":102},"
	"{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
	"{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"
	"{\"name\":\"column_sizes\",\"type\":" OPT(MAP("k117_v118", "117", "118", "long")) ",\"field-id\":108},"
	"{\"name\":\"value_counts\",\"type\":" OPT(MAP("k119_v120", "119", "120", "long")) ",\"field-id\":109},"
	"{\"name\":\"null_value_counts\",\"type\":" OPT(MAP("k121_v122", "121", "122", "long")) ",\"field-id\":110},"
	"{\"name\":\"nan_value_counts\",\"type\":" OPT(MAP("k138_v139", "138", "139", "long")) ",\"field-id\":137},"
	"{\"name\":\"lower_bounds\",\"type\":" OPT(MAP("k126_v127", "126", "127", "bytes")) ",\"field-id\":125},"
	"{\"name\":\"upper_bounds\",\"type\":" OPT(MAP("k129_v130", "129", "130", "bytes")) ",\"field-id\":128},"
	"{\"name\":\"key_metadata\",\"type\":" OPT("\"bytes\"") ",\"field-id\":131},"
	"{\"name\":\"split_offsets\",\"type\":" OPT("{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}") ",\"field-id\":132},"
	"{\"name\":\"equality_ids\",\"type\":" OPT("{\"type\":\"array\",\"items\":\"int\",\"element-id\":136}") ",\"field-id\":135},"
	"{\"name\":\"sort_order_id\",\"type\":" OPT("\"int\"") ",\"field-id\":140},"
	"{\"name\":\"referenced_data_file\",\"type\":" OPT("\"string\"") ",\"field-id\":143}"
	"]},\"field-id\":2}]}";

static const char LIST_SCHEMA[] =
	"{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
	"{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
	"{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
	"{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
	"{\"name\":\"content\",\"type\":\"int\",\"field-id\":517},"
	"{\"name\":\"sequence_number\",\"type\":\"long\",\"field-id\":515},"
	"{\"name\":\"min_sequence_number\",\"type\":\"long\",\"field-id\":516},"
	"{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"
	"{\"name\":\"added_files_count\",\"type\":\"int\",\"field-id\":504},"
	"{\"name\":\"existing_files_count\",\"type\":\"int\",\"field-id\":505},"
	"{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":506},"
	"{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},"
	"{\"name\":\"existing_rows_count\",\"type\":\"long\",\"field-id\":513},"
	"{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"field-id\":514},"
	"{\"name\":\"partitions\",\"type\":" OPT("{\"type\":\"array\",\"element-id\":508,\"items\":{\"type\":\"record\","
					  "\"name\":\"r508\",\"fields\":["
					  "{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509},"
					  "{\"name\":\"contains_nan\",\"type\":" OPT("\"boolean\"") ",\"field-id\":518},"
					  "{\"name\":\"lower_bound\",\"type\":" OPT("\"bytes\"") ",\"field-id\":510},"
					  "{\"name\":\"upper_bound\",\"type\":" OPT("\"bytes\"") ",\"field-id\":511}]}}")
	",\"field-id\":507},"
	"{\"name\":\"key_metadata\",\"type\":" OPT("\"bytes\"") ",\"field-id\":519}]}";

/* An Iceberg partition result type as Avro. */
static const char *avro_of(const char *t)
{
	if (!strcmp(t, "date"))
		return "{\"type\":\"int\",\"logicalType\":\"date\"}";
	if (!strcmp(t, "string"))
		return "\"string\"";
	if (!strcmp(t, "long"))
		return "\"long\"";
	return "\"int\"";
}

static int entry_schema(fdl_buf *b, const fdl_ice_spec *spec, fdl_error *err)
{
	int rc = fdl_buf_puts(b, ENTRY_HEAD, err);
	size_t i;
	const json_t *f;
	json_array_foreach(spec->fields, i, f)
	{
		if (rc)
			break;
		rc = fdl_buf_printf(b, err, "%s{\"name\":", i ? "," : "");
		char *name = json_dumps(json_object_get(f, "name"), JSON_ENCODE_ANY);
		rc = rc ? rc : name ? fdl_buf_puts(b, name, err) : fdl_oom(err);
		free(name);
		if (!rc)
			rc = fdl_buf_printf(b, err, ",\"type\":[\"null\",%s],\"default\":null,\"field-id\":%lld}",
					    avro_of(spec->result_type[i]),
					    (long long)json_integer_value(json_object_get(f, "field-id")));
	}
	return rc ? rc : fdl_buf_puts(b, ENTRY_TAIL, err);
}

/* ---- entries ---------------------------------------------------------- */

/* A partition value, DuckLake's text, as the spec field's Avro value. */
static int part_value(fdl_buf *b, const fdl_ice_spec *spec, size_t i, const fdl_lake_file *f, fdl_error *err)
{
	size_t k = spec->key_index[i];
	const char *text = k < f->nparts ? f->parts[k] : NULL;
	const char *t = spec->result_type[i];
	if (!text)
		return fdl_avro_union(b, 0, err);
	int rc = fdl_avro_union(b, 1, err);
	if (rc)
		return rc;
	if (!strcmp(t, "string"))
		return fdl_avro_string(b, text, err);
	long long x = strtoll(text, NULL, 10);
	if (spec->year[i])
		x -= 1970;
	/* dates: DuckLake records 'YYYY-MM-DD'; the days come from the caller's epoch (ops/iceberg.c) */
	return fdl_avro_long(b, x, err);
}

/* The stats maps: which = 0 values, 1 nulls, 2 lower, 3 upper. */
static int stats_map(fdl_buf *b, const fdl_ice_entry *e, const json_t *schema, int which, fdl_error *err)
{
	const fdl_lake_file *f = e->data;
	fdl_buf items = {0};
	int64_t count = 0;
	int rc = 0;
	for (size_t i = 0; f && !e->is_delete && i < f->nstats && !rc; i++) {
		const fdl_lake_stat *s = &f->stats[i];
		const json_t *t = fdl_ice_field_type(schema, s->column_id);
		if (!json_is_string(t))
			continue; /* nested, or not in the schema */
		fdl_buf v = {0};
		bool skip = false;
		if (which < 2 && (which ? s->nulls : s->values) >= 0) {
			rc = fdl_avro_long(&v, which ? s->nulls : s->values, err);
		} else if (which >= 2 && (which == 2 ? s->min : s->max)) {
			const char *ty = json_string_value(t);
			bool nan_risk = (!strcmp(ty, "float") || !strcmp(ty, "double")) && s->contains_nan != 0;
			skip = nan_risk;
			if (!skip)
				rc = fdl_ice_bound(&skip, &v, ty, which == 2 ? s->min : s->max, s->has_epoch,
						   which == 2 ? s->min_epoch : s->max_epoch, which == 3, err);
			if (!rc && !skip) {
				fdl_buf enc = {0};
				rc = fdl_avro_bytes(&enc, v.data, v.len, err);
				fdl_buf_free(&v);
				v = enc;
			}
		} else
			skip = true;
		if (!rc && !skip) {
			rc = fdl_avro_long(&items, s->column_id, err);
			if (!rc)
				rc = fdl_buf_add(&items, v.data, v.len, err);
			count++;
		}
		fdl_buf_free(&v);
	}
	if (!rc && !count)
		rc = fdl_avro_union(b, 0, err);
	else if (!rc) {
		rc = fdl_avro_union(b, 1, err);
		if (!rc)
			rc = fdl_avro_long(b, count, err);
		if (!rc)
			rc = fdl_buf_add(b, items.data, items.len, err);
		if (!rc)
			rc = fdl_avro_long(b, 0, err);
	}
	fdl_buf_free(&items);
	return rc;
}

static int entry(fdl_buf *b, const fdl_ice_entry *e, const json_t *schema, const fdl_ice_spec *spec, fdl_error *err)
{
	int rc = fdl_avro_long(b, 0, err); /* EXISTING: sequence numbers are explicit */
	for (int k = 0; k < 3 && !rc; k++) { /* snapshot_id, sequence_number, file_sequence_number */
		rc = fdl_avro_union(b, 1, err);
		if (!rc)
			rc = fdl_avro_long(b, k ? e->seq : e->snapshot, err);
	}
	if (!rc)
		rc = fdl_avro_long(b, e->is_delete ? 1 : 0, err);
	if (!rc)
		rc = fdl_avro_string(b, e->uri, err);
	if (!rc)
		rc = fdl_avro_string(b, "PARQUET", err);
	for (size_t i = 0; i < spec->n && !rc; i++)
		rc = part_value(b, spec, i, e->data, err);
	if (!rc)
		rc = fdl_avro_long(b, e->rows, err);
	if (!rc)
		rc = fdl_avro_long(b, e->bytes, err);
	if (!rc)
		rc = fdl_avro_union(b, 0, err); /* column_sizes */
	for (int which = 0; which < 2 && !rc; which++)
		rc = stats_map(b, e, schema, which, err);
	if (!rc)
		rc = fdl_avro_union(b, 0, err); /* nan_value_counts */
	for (int which = 2; which < 4 && !rc; which++)
		rc = stats_map(b, e, schema, which, err);
	for (int k = 0; k < 4 && !rc; k++) /* key_metadata, split_offsets, equality_ids, sort_order_id */
		rc = fdl_avro_union(b, 0, err);
	if (!rc && e->is_delete) {
		rc = fdl_avro_union(b, 1, err);
		if (!rc)
			rc = fdl_avro_string(b, e->data_uri, err);
	} else if (!rc)
		rc = fdl_avro_union(b, 0, err);
	return rc;
}

int fdl_ice_manifest(fdl_buf *out, const fdl_ice_entry *e, size_t n, const json_t *schema, const fdl_ice_spec *spec,
		     fdl_error *err)
{
	fdl_buf avro_schema = {0}, objects = {0};
	int rc = entry_schema(&avro_schema, spec, err);
	for (size_t i = 0; i < n && !rc; i++)
		rc = entry(&objects, &e[i], schema, spec, err);
	char *schema_text = rc ? NULL : json_dumps(schema, JSON_COMPACT);
	char *spec_text = rc ? NULL : json_dumps(spec->fields, JSON_COMPACT);
	char schema_id[32], spec_id[32];
	snprintf(schema_id, sizeof schema_id, "%lld", (long long)json_integer_value(json_object_get(schema, "schema-id")));
	snprintf(spec_id, sizeof spec_id, "%d", spec->id);
	if (!rc && (!schema_text || !spec_text))
		rc = fdl_oom(err);
	const char *meta[] = {"schema", schema_text, "schema-id", schema_id, "partition-spec", spec_text,
			      "partition-spec-id", spec_id, "format-version", "2", "content",
			      n && e[0].is_delete ? "deletes" : "data"};
	if (!rc)
		rc = fdl_avro_file(out, avro_schema.data, meta, 6, &objects, (int64_t)n, err);
	free(schema_text);
	free(spec_text);
	fdl_buf_free(&avro_schema);
	fdl_buf_free(&objects);
	return rc;
}

static int listed(fdl_buf *b, const fdl_ice_listed *m, fdl_error *err)
{
	int rc = fdl_avro_string(b, m->uri, err);
	int64_t v[] = {m->length, m->spec_id, m->deletes ? 1 : 0, m->seq, m->min_seq, m->added_snapshot,
		       0,         m->files,   0,                    0,      m->rows,    0};
	for (size_t i = 0; i < sizeof v / sizeof v[0] && !rc; i++)
		rc = fdl_avro_long(b, v[i], err);
	if (!rc)
		rc = fdl_avro_union(b, 0, err); /* partitions: no summaries */
	if (!rc)
		rc = fdl_avro_union(b, 0, err); /* key_metadata */
	return rc;
}

int fdl_ice_manifest_list(fdl_buf *out, const fdl_ice_listed *m, size_t n, int64_t snapshot, int64_t parent,
			  int64_t seq, fdl_error *err)
{
	fdl_buf objects = {0};
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = listed(&objects, &m[i], err);
	char sid[32], pid[32], sq[32];
	snprintf(sid, sizeof sid, "%lld", (long long)snapshot);
	snprintf(pid, sizeof pid, "%lld", (long long)parent);
	snprintf(sq, sizeof sq, "%lld", (long long)seq);
	const char *meta[] = {"snapshot-id", sid, "sequence-number", sq, "format-version", "2", "parent-snapshot-id", pid};
	if (!rc)
		rc = fdl_avro_file(out, LIST_SCHEMA, meta, parent >= 0 ? 4 : 3, &objects, (int64_t)n, err);
	fdl_buf_free(&objects);
	return rc;
}
