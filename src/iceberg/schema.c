/* A DuckLake table's columns as an Iceberg schema: DuckLake's column ids
 * are the Parquet field ids of every data file (nested fields too), so they
 * are the Iceberg field ids; types Iceberg v2 cannot hold, and columns whose
 * old rows Iceberg would read otherwise than DuckLake, are left out and
 * named (docs/iceberg.md "What a view cannot say"). */
#include "iceberg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct prim {
	const char *ducklake, *iceberg, *engines;
} prim;

static const prim PRIMS[] = {
	{"boolean", "boolean", NULL},
	{"int8", "int", NULL},
	{"int16", "int", NULL},
	{"int32", "int", NULL},
	{"int64", "long", NULL},
	{"uint8", "int", "Spark cannot read an unsigned Parquet column"},
	{"uint16", "int", "Spark cannot read an unsigned Parquet column"},
	{"uint32", "long", "Spark cannot read an unsigned Parquet column"},
	{"float32", "float", NULL},
	{"float64", "double", NULL},
	{"date", "date", NULL},
	{"time", "time", "Spark cannot read Iceberg's time type"},
	{"timestamp", "timestamp", NULL},
	{"timestamptz", "timestamptz", NULL},
	{"varchar", "string", NULL},
	{"blob", "binary", NULL},
	{"uuid", "uuid", NULL},
	{NULL, NULL, NULL},
};

typedef struct refused {
	const char *ducklake, *why;
} refused;

static const refused REFUSED[] = {
	{"uint64", "no Iceberg type holds an unsigned 64-bit integer"},
	{"int128", "DuckLake stores HUGEINT as a double: its values are not exact"},
	{"uint128", "DuckLake stores UHUGEINT as a double: its values are not exact"},
	{"hugeint", "DuckLake stores HUGEINT as a double: its values are not exact"},
	{"uhugeint", "DuckLake stores UHUGEINT as a double: its values are not exact"},
	{"interval", "Iceberg has no interval type"},
	{"timetz", "Iceberg has no time with a time zone"},
	{"timestamp_ns", "Iceberg v2 has no nanosecond timestamp"},
	{"timestamp_ms", "Iceberg's timestamps are microseconds; the files hold milliseconds"},
	{"timestamp_s", "Iceberg's timestamps are microseconds; the files hold seconds"},
	{NULL, NULL},
};

const char *fdl_ice_primitive(const char *type, const char **why, const char **engines)
{
	*why = NULL;
	*engines = NULL;
	for (const prim *p = PRIMS; p->ducklake; p++)
		if (!strcmp(p->ducklake, type)) {
			*engines = p->engines;
			return p->iceberg;
		}
	int prec = 0, scale = 0, n = 0;
	if (sscanf(type, "decimal(%d,%d)%n", &prec, &scale, &n) == 2 && (size_t)n == strlen(type)) {
		if (prec >= 1 && prec <= 38 && scale >= 0 && scale <= prec)
			return type; /* "decimal(P,S)": the same spelling */
		*why = "Iceberg's decimals have at most 38 digits";
		return NULL;
	}
	for (const refused *r = REFUSED; r->ducklake; r++)
		if (!strcmp(r->ducklake, type)) {
			*why = r->why;
			return NULL;
		}
	*why = "fdl does not map this DuckLake type to Iceberg";
	return NULL;
}

/* Columns of table tid live at snap, children of `parent`, in order. */
typedef struct cols {
	const fdl_lake_column **items;
	size_t len;
} cols;

static int live_children(cols *out, const fdl_lake *l, int64_t tid, int64_t snap, int64_t parent, fdl_error *err)
{
	out->items = calloc(l->ncolumns ? l->ncolumns : 1, sizeof *out->items);
	out->len = 0;
	if (!out->items)
		return fdl_oom(err);
	for (size_t i = 0; i < l->ncolumns; i++) {
		const fdl_lake_column *c = &l->columns[i];
		if (c->table_id == tid && c->parent == parent && c->begin <= snap && snap < c->end)
			out->items[out->len++] = c;
	}
	return 0;
}

static int add_notice(json_t *notices, const char *key, const fdl_lake_column *c, const char *why)
{
	if (!notices)
		return 0;
	json_t *n = json_pack("{s:s, s:s, s:s, s:s}", "table", key, "column", c->name, "type", c->type, "reason", why);
	return n ? json_array_append_new(notices, n) : -1;
}

/* Whether every type column `c` had before reads as its type in Iceberg
 * (int -> long, float -> double, a wider decimal): a data file written
 * before a change holds the older type. Only the older types count: a
 * snapshot's schema is the one of its own time (its files were written
 * with it, or with older types), whatever the column became later. */
static bool promotions_ok(const fdl_lake *l, const fdl_lake_column *c)
{
	for (size_t i = 0; i < l->ncolumns; i++) {
		const fdl_lake_column *o = &l->columns[i];
		if (o->table_id != c->table_id || o->id != c->id || o->begin >= c->begin || !strcmp(o->type, c->type))
			continue;
		const char *w1, *e1, *w2, *e2;
		const char *a = fdl_ice_primitive(o->type, &w1, &e1), *b = fdl_ice_primitive(c->type, &w2, &e2);
		int p1, s1, p2, s2;
		bool ok = a && b &&
			  (!strcmp(a, b) || (!strcmp(a, "int") && !strcmp(b, "long")) ||
			   (!strcmp(a, "float") && !strcmp(b, "double")) ||
			   (sscanf(a, "decimal(%d,%d)", &p1, &s1) == 2 && sscanf(b, "decimal(%d,%d)", &p2, &s2) == 2 &&
			    s1 == s2 && p1 <= p2));
		if (!ok || (e1 && !e2))
			return false;
	}
	return true;
}

/* Whether column c, an Iceberg long, was an Iceberg int before (an
 * int -> long promotion, older files holding 32 bits or fewer). */
static bool widened_from_int(const fdl_lake *l, const fdl_lake_column *c)
{
	const char *why, *engines;
	const char *t = fdl_ice_primitive(c->type, &why, &engines);
	for (size_t i = 0; t && !strcmp(t, "long") && i < l->ncolumns; i++) {
		const fdl_lake_column *o = &l->columns[i];
		const char *ot = o->table_id == c->table_id && o->id == c->id && o->begin < c->begin
					 ? fdl_ice_primitive(o->type, &why, &engines)
					 : NULL;
		if (ot && !strcmp(ot, "int"))
			return true;
	}
	return false;
}

bool fdl_ice_widened_from_int(const fdl_lake *l, int64_t tid)
{
	for (size_t i = 0; i < l->ncolumns; i++)
		if (l->columns[i].table_id == tid && l->columns[i].parent < 0 && widened_from_int(l, &l->columns[i]))
			return true;
	return false;
}

/* A live data file of the table written before column c existed: DuckLake
 * gives its rows c's initial default, Iceberg v2 gives them NULL. */
static bool default_differs(const fdl_lake *l, const fdl_lake_column *c, int64_t snap)
{
	if (!c->initial_default || !strcmp(c->initial_default, "NULL"))
		return false;
	for (size_t i = 0; i < l->nfiles; i++) {
		const fdl_lake_file *f = &l->files[i];
		if (f->table_id == c->table_id && f->begin <= snap && snap < f->end && f->begin < c->begin)
			return true;
	}
	return false;
}

static json_t *column_type(const fdl_lake *l, const fdl_lake_column *c, int64_t snap, int64_t *max_id,
			   const char **why, fdl_error *err);

static json_t *struct_type(const fdl_lake *l, int64_t tid, int64_t parent, int64_t snap, int64_t *max_id,
			   const char **why, fdl_error *err)
{
	cols kids;
	if (live_children(&kids, l, tid, snap, parent, err))
		return NULL;
	json_t *fields = json_array();
	for (size_t i = 0; i < kids.len && fields; i++) {
		json_t *t = column_type(l, kids.items[i], snap, max_id, why, err);
		if (!t) {
			json_decref(fields);
			fields = NULL;
			break;
		}
		json_array_append_new(fields, json_pack("{s:I, s:s, s:b, s:o}", "id", (json_int_t)kids.items[i]->id,
							"name", kids.items[i]->name, "required", 0, "type", t));
	}
	free(kids.items);
	return fields ? json_pack("{s:s, s:o}", "type", "struct", "fields", fields) : NULL;
}

/* list and map: their children by name ("element"; "key", "value"). */
static const fdl_lake_column *child(const fdl_lake *l, const fdl_lake_column *c, int64_t snap, const char *name)
{
	for (size_t i = 0; i < l->ncolumns; i++) {
		const fdl_lake_column *k = &l->columns[i];
		if (k->table_id == c->table_id && k->parent == c->id && k->begin <= snap && snap < k->end &&
		    !strcmp(k->name, name))
			return k;
	}
	return NULL;
}

static json_t *column_type(const fdl_lake *l, const fdl_lake_column *c, int64_t snap, int64_t *max_id,
			   const char **why, fdl_error *err)
{
	if (c->id > *max_id)
		*max_id = c->id;
	if (!promotions_ok(l, c)) {
		*why = "its type changed in a way Iceberg cannot read from the older files";
		return NULL;
	}
	if (!strcmp(c->type, "struct"))
		return struct_type(l, c->table_id, c->id, snap, max_id, why, err);
	if (!strcmp(c->type, "list")) {
		const fdl_lake_column *e = child(l, c, snap, "element");
		json_t *et = e ? column_type(l, e, snap, max_id, why, err) : NULL;
		return et ? json_pack("{s:s, s:I, s:o, s:b}", "type", "list", "element-id", (json_int_t)e->id, "element",
				      et, "element-required", 0)
			  : NULL;
	}
	if (!strcmp(c->type, "map")) {
		const fdl_lake_column *k = child(l, c, snap, "key"), *v = child(l, c, snap, "value");
		json_t *kt = k ? column_type(l, k, snap, max_id, why, err) : NULL;
		json_t *vt = kt && v ? column_type(l, v, snap, max_id, why, err) : NULL;
		if (!vt) {
			json_decref(kt);
			return NULL;
		}
		return json_pack("{s:s, s:I, s:o, s:I, s:o, s:b}", "type", "map", "key-id", (json_int_t)k->id, "key", kt,
				 "value-id", (json_int_t)v->id, "value", vt, "value-required", 0);
	}
	const char *engines;
	const char *t = fdl_ice_primitive(c->type, why, &engines);
	return t ? json_string(t) : NULL;
}

int fdl_ice_schema(json_t **out, int64_t *max_id, const fdl_lake *l, int64_t tid, int64_t snap, const char *key,
		   json_t *notices, fdl_error *err)
{
	cols top;
	int rc = live_children(&top, l, tid, snap, -1, err);
	json_t *fields = rc ? NULL : json_array();
	if (!rc && !fields)
		rc = fdl_oom(err);
	for (size_t i = 0; i < top.len && !rc; i++) {
		const fdl_lake_column *c = top.items[i];
		const char *why = NULL, *engines = NULL;
		json_t *t = column_type(l, c, snap, max_id, &why, err);
		if (t && default_differs(l, c, snap)) {
			json_decref(t);
			t = NULL;
			why = "added with a DEFAULT: DuckLake gives older rows the default, Iceberg v2 would give NULL";
		}
		if (!t) {
			rc = add_notice(notices, key, c, why ? why : "cannot be said in Iceberg") ? fdl_oom(err) : 0;
			continue;
		}
		if (json_is_string(t))
			fdl_ice_primitive(c->type, &why, &engines);
		if (engines && add_notice(notices, key, c, engines))
			rc = fdl_oom(err);
		if (!rc && widened_from_int(l, c) && add_notice(notices, key, c, FDL_ICE_SPARK_WIDENED))
			rc = fdl_oom(err);
		json_array_append_new(fields, json_pack("{s:I, s:s, s:b, s:o}", "id", (json_int_t)c->id, "name", c->name,
							"required", 0, "type", t));
	}
	free(top.items);
	if (rc) {
		json_decref(fields);
		return rc;
	}
	*out = json_pack("{s:s, s:o}", "type", "struct", "fields", fields);
	return *out ? 0 : fdl_oom(err);
}

const json_t *fdl_ice_field_type(const json_t *schema, int64_t column_id)
{
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(schema, "fields"), i, f)
	{
		if (json_integer_value(json_object_get(f, "id")) == column_id)
			return json_object_get(f, "type");
	}
	return NULL;
}

/* Iceberg's name mapping of a (nested) type's fields: how a reader finds
 * the columns of a data file written without field ids (Spark's, Polars'
 * Parquet, which fdl add registers) by their names. */
static json_t *mapping_of(const json_t *type)
{
	json_t *out = json_array();
	const char *kind = json_string_value(json_object_get(type, "type"));
	if (!out || !kind)
		return out;
	json_t *one;
	if (!strcmp(kind, "struct")) {
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(type, "fields"), i, f)
		{
			one = json_pack("{s:O, s:[O], s:o}", "field-id", json_object_get(f, "id"), "names",
					json_object_get(f, "name"), "fields", mapping_of(json_object_get(f, "type")));
			json_array_append_new(out, one);
		}
	} else if (!strcmp(kind, "list")) {
		json_array_append_new(out, json_pack("{s:O, s:[s], s:o}", "field-id", json_object_get(type, "element-id"),
						     "names", "element", "fields",
						     mapping_of(json_object_get(type, "element"))));
	} else if (!strcmp(kind, "map")) {
		json_array_append_new(out, json_pack("{s:O, s:[s], s:o}", "field-id", json_object_get(type, "key-id"),
						     "names", "key", "fields", mapping_of(json_object_get(type, "key"))));
		json_array_append_new(out, json_pack("{s:O, s:[s], s:o}", "field-id", json_object_get(type, "value-id"),
						     "names", "value", "fields",
						     mapping_of(json_object_get(type, "value"))));
	}
	return out;
}

void fdl_ice_name_mapping(json_t *properties, const json_t *schemas, json_int_t id)
{
	size_t i;
	json_t *s;
	json_array_foreach(schemas, i, s)
	{
		if (json_integer_value(json_object_get(s, "schema-id")) != id)
			continue;
		json_t *m = mapping_of(s);
		char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;
		if (text)
			json_object_set_new(properties, "schema.name-mapping.default", json_string(text));
		free(text);
		json_decref(m);
	}
}
