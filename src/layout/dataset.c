/*
 * dataset.json (docs/format.md, "dataset.json"). The publisher's description lives in
 * the working folder as dataset.yml (or dataset.yaml, or dataset.json), plus
 * optional <table>.table.yml files, each one item of `tables`. It is checked
 * key by key against the spec (unknown keys refused, naming file, line and
 * key), merged with what the frozen catalog knows (rows, types, nullability,
 * comments: dataset_merge.c), and written as one JSON file. This file owns
 * the description: loading and checking it, the base version's, writing it
 * as YAML for checkout, and the diff of two.
 */
#include "dataset_int.h"
#include "../util/yaml.h"

#include <stdlib.h>
#include <string.h>

typedef enum {
	T_STR,      /* a scalar, kept as text */
	T_STRLIST,  /* a list of scalars */
	T_MAP,      /* annotations: any map, kept as written */
	T_LICENSES, /* SPDX id, or {id, spdx, url, title} */
	T_OBJLIST,  /* a list of objects of `sub` */
	T_OBJ,      /* one object of `sub` */
	T_INT,
	T_BOOL,
} ftype;

typedef struct fspec {
	const char *key;
	ftype type;
	bool required;
	const struct fspec *sub;
} fspec;

static const fspec LICENSE[] = {{"id", T_STR, true, NULL}, {"spdx", T_STR, false, NULL},
				{"url", T_STR, false, NULL}, {"title", T_STR, false, NULL}, {NULL, 0, 0, NULL}};
static const fspec SOURCE[] = {{"title", T_STR, false, NULL}, {"path", T_STR, false, NULL}, {NULL, 0, 0, NULL}};
static const fspec CONTRIBUTOR[] = {{"title", T_STR, false, NULL}, {"roles", T_STRLIST, false, NULL},
				    {NULL, 0, 0, NULL}};
static const fspec COVERAGE[] = {{"start", T_STR, false, NULL}, {"end", T_STR, false, NULL}, {NULL, 0, 0, NULL}};
static const fspec SCHEMA[] = {{"name", T_STR, true, NULL}, {"title", T_STR, false, NULL}, {NULL, 0, 0, NULL}};
static const fspec FIELD[] = {{"name", T_STR, true, NULL},        {"title", T_STR, false, NULL},
			      {"description", T_STR, false, NULL}, {"type", T_STR, false, NULL},
			      {"nullable", T_BOOL, false, NULL},   {"annotations", T_MAP, false, NULL},
			      {NULL, 0, 0, NULL}};
static const fspec TABLE[] = {{"schema", T_STR, false, NULL},      {"name", T_STR, true, NULL},
			      {"kind", T_STR, false, NULL},        {"title", T_STR, false, NULL},
			      {"description", T_STR, false, NULL}, {"primary_key", T_STRLIST, false, NULL},
			      {"depends_on", T_STRLIST, false, NULL}, {"sql", T_STR, false, NULL},
			      {"rows", T_INT, false, NULL},        {"fields", T_OBJLIST, false, FIELD},
			      {"annotations", T_MAP, false, NULL}, {NULL, 0, 0, NULL}};
static const fspec DATASET[] = {
	{"name", T_STR, true, NULL},          {"title", T_STR, true, NULL},
	{"description", T_STR, false, NULL},  {"keywords", T_STRLIST, false, NULL},
	{"language", T_STR, false, NULL},     {"homepage", T_STR, false, NULL},
	{"issued", T_STR, false, NULL},       {"update_frequency", T_STR, false, NULL},
	{"licenses", T_LICENSES, false, LICENSE}, {"sources", T_OBJLIST, false, SOURCE},
	{"contributors", T_OBJLIST, false, CONTRIBUTOR}, {"temporal_coverage", T_OBJ, false, COVERAGE},
	{"spatial_coverage", T_STRLIST, false, NULL}, {"schemas", T_OBJLIST, false, SCHEMA},
	{"tables", T_OBJLIST, false, TABLE},  {"annotations", T_MAP, false, NULL},
	{NULL, 0, 0, NULL},
};

static bool is_null(const fdl_ynode *n)
{
	return n->kind == FDL_Y_SCALAR && n->plain &&
	       (!*n->text || !strcmp(n->text, "~") || !strcmp(n->text, "null"));
}

static int convert(json_t **out, const fdl_ynode *n, const fspec *f, const char *src, const char *where,
		   fdl_error *err);

static const char *kind_name(const fdl_ynode *n)
{
	return n->kind == FDL_Y_MAP ? "a mapping" : n->kind == FDL_Y_SEQ ? "a list" : "a value";
}

/* Convert a map with `spec`, output keys in spec order. `extensions` is read
 * as `annotations` (versions from before the name). */
static int convert_map(json_t **out, const fdl_ynode *n, const fspec *spec, const char *src, const char *where,
		       fdl_error *err)
{
	if (n->kind != FDL_Y_MAP)
		return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s is %s; expected a mapping", src, n->line, where,
				kind_name(n));
	for (size_t i = 0; i < n->n; i++) {
		const char *k = n->keys[i];
		bool known = !strcmp(k, "extensions") && fdl_ynode_get(n, "annotations", NULL) == NULL;
		for (const fspec *f = spec; f->key && !known; f++)
			known = !strcmp(f->key, k);
		if (!known) {
			const char *keys[32];
			size_t nk = 0;
			for (const fspec *f = spec; f->key && nk < 32; f++)
				keys[nk++] = f->key;
			const char *meant = fdl_closest(k, keys, nk);
			return fdl_fail(err, FDL_EINVALID,
					"%s, line %d: key '%s' in %s is not defined by the FDL spec%s%s%s (put "
					"tool-specific information under 'annotations')",
					src, n->key_lines[i], k, where, meant ? ": did you mean '" : "",
					meant ? meant : "", meant ? "'?" : "");
		}
	}
	json_t *o = json_object();
	if (!o)
		return fdl_oom(err);
	for (const fspec *f = spec; f->key; f++) {
		int line = n->line;
		const fdl_ynode *v = fdl_ynode_get(n, f->key, &line);
		if (!v && !strcmp(f->key, "annotations"))
			v = fdl_ynode_get(n, "extensions", &line);
		if (!v || is_null(v)) {
			if (f->required) {
				json_decref(o);
				return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s has no '%s' (required)", src,
						n->line, where, f->key);
			}
			continue;
		}
		char sub[256];
		snprintf(sub, sizeof sub, "%s.%s", where, f->key);
		json_t *j = NULL;
		int rc = convert(&j, v, f, src, sub, err);
		if (!rc && json_object_set_new(o, f->key, j))
			rc = fdl_oom(err);
		if (rc) {
			json_decref(o);
			return rc;
		}
	}
	*out = o;
	return 0;
}

static int convert(json_t **out, const fdl_ynode *n, const fspec *f, const char *src, const char *where,
		   fdl_error *err)
{
	switch (f->type) {
	case T_STR:
		if (n->kind != FDL_Y_SCALAR)
			return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s is %s; expected text", src, n->line,
					where, kind_name(n));
		*out = json_string(n->text);
		break;
	case T_INT: {
		char *end;
		long long v = n->kind == FDL_Y_SCALAR && n->plain ? strtoll(n->text, &end, 10) : 0;
		if (n->kind != FDL_Y_SCALAR || !n->plain || !*n->text || *end)
			return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s is '%s'; expected an integer", src,
					n->line, where, n->kind == FDL_Y_SCALAR ? n->text : kind_name(n));
		*out = json_integer(v);
		break;
	}
	case T_BOOL:
		if (n->kind != FDL_Y_SCALAR || !n->plain || (strcmp(n->text, "true") && strcmp(n->text, "false")))
			return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s is '%s'; expected true or false", src,
					n->line, where, n->kind == FDL_Y_SCALAR ? n->text : kind_name(n));
		*out = json_boolean(!strcmp(n->text, "true"));
		break;
	case T_MAP:
		if (n->kind != FDL_Y_MAP)
			return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s is %s; expected a mapping", src,
					n->line, where, kind_name(n));
		*out = fdl_ynode_to_json(n);
		break;
	case T_OBJ:
		return convert_map(out, n, f->sub, src, where, err);
	case T_STRLIST:
	case T_OBJLIST:
	case T_LICENSES: {
		if (n->kind != FDL_Y_SEQ)
			return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s is %s; expected a list", src, n->line,
					where, kind_name(n));
		json_t *a = json_array();
		for (size_t i = 0; a && i < n->n; i++) {
			const fdl_ynode *it = n->items[i];
			char sub[300];
			snprintf(sub, sizeof sub, "%s[%zu]", where, i);
			json_t *j = NULL;
			int rc = 0;
			if (f->type == T_STRLIST || (f->type == T_LICENSES && it->kind == FDL_Y_SCALAR)) {
				fspec s = {f->key, T_STR, false, NULL};
				rc = convert(&j, it, &s, src, sub, err);
			} else {
				rc = convert_map(&j, it, f->sub, src, sub, err);
			}
			if (rc) {
				json_decref(a);
				return rc;
			}
			json_array_append_new(a, j);
		}
		*out = a;
		break;
	}
	}
	return *out ? 0 : fdl_oom(err);
}

/* ---- loading the description files ---------------------------------- */

void fdl__ds_desc_free(desc *d)
{
	json_decref(d->top);
	free(d->top_src);
	for (size_t i = 0; i < d->ntables; i++) {
		json_decref(d->tables[i].table);
		json_decref(d->tables[i].field_lines);
		free(d->tables[i].src);
	}
	free(d->tables);
	memset(d, 0, sizeof *d);
}

/* The line of each field item of a table's YAML node ({name: line}), so
 * that what is said of a column names its own line. */
static json_t *field_lines(const fdl_ynode *table)
{
	const fdl_ynode *fields = table ? fdl_ynode_get(table, "fields", NULL) : NULL;
	json_t *lines = json_object();
	for (size_t i = 0; lines && fields && fields->kind == FDL_Y_SEQ && i < fields->n; i++) {
		int line = fields->items[i]->line;
		const fdl_ynode *name = fields->items[i]->kind == FDL_Y_MAP ? fdl_ynode_get(fields->items[i], "name", &line)
									    : NULL;
		if (name && name->kind == FDL_Y_SCALAR)
			json_object_set_new(lines, name->text, json_integer(line));
	}
	return lines;
}

static int add_table(desc *d, json_t *t, const char *src, int line, const fdl_ynode *node, fdl_error *err)
{
	described *p = realloc(d->tables, (d->ntables + 1) * sizeof *p);
	if (!p) {
		json_decref(t);
		return fdl_oom(err);
	}
	d->tables = p;
	p[d->ntables++] = (described){t, fdl_strdup(src), line, false, node ? field_lines(node) : NULL};
	return 0;
}

/* The line of field `name` of a described table: its own where known,
 * else the table's. */
int fdl__ds_field_line(const described *dsc, const char *name)
{
	json_t *l = dsc && name ? json_object_get(dsc->field_lines, name) : NULL;
	return l ? (int)json_integer_value(l) : dsc ? dsc->line : 0;
}

void fdl_desc_files_free(fdl_desc_files *f)
{
	if (!f)
		return;
	free(f->top.path);
	fdl_buf_free(&f->top.text);
	for (size_t i = 0; i < f->ntables; i++) {
		free(f->tables[i].path);
		fdl_buf_free(&f->tables[i].text);
	}
	free(f->tables);
	memset(f, 0, sizeof *f);
}

int fdl_desc_files_sha256(char hex[65], const fdl_desc_files *f, fdl_error *err)
{
	fdl_sha256 *h = NULL;
	int rc = fdl_sha256_new(&h, err);
	for (size_t i = 0; !rc && i <= f->ntables; i++) {
		const fdl_desc_file *one = i ? &f->tables[i - 1] : &f->top;
		if (!one->path)
			continue;
		const char *name = strrchr(one->path, '/') ? strrchr(one->path, '/') + 1 : one->path;
		char len[32];
		snprintf(len, sizeof len, "\n%zu\n", one->text.len);
		rc = fdl_sha256_update(h, name, strlen(name), err);
		if (!rc)
			rc = fdl_sha256_update(h, len, strlen(len), err);
		if (!rc)
			rc = fdl_sha256_update(h, one->text.data ? one->text.data : "", one->text.len, err);
	}
	if (!rc)
		rc = fdl_sha256_final(h, hex, err);
	fdl_sha256_free(h);
	return rc;
}

int fdl__ds_desc_load(desc *d, const fdl_desc_files *f, fdl_error *err)
{
	memset(d, 0, sizeof *d);
	int rc = 0;
	fdl_ynode *root = NULL;
	if (f->top.path && !(d->top_src = fdl_strdup(f->top.path)))
		rc = fdl_oom(err);
	if (!rc && d->top_src && !(rc = fdl_yaml_load(&root, f->top.text.data, f->top.text.len, d->top_src, err))) {
		/* convert without tables, then each table item on its own */
		rc = convert_map(&d->top, root, DATASET, d->top_src, "the dataset", err);
		if (!rc)
			json_object_del(d->top, "tables");
		const fdl_ynode *tables = fdl_ynode_get(root, "tables", NULL);
		for (size_t i = 0; !rc && tables && tables->kind == FDL_Y_SEQ && i < tables->n; i++) {
			json_t *t = NULL;
			char where[64];
			snprintf(where, sizeof where, "tables[%zu]", i);
			rc = convert_map(&t, tables->items[i], TABLE, d->top_src, where, err);
			if (!rc)
				rc = add_table(d, t, d->top_src, tables->items[i]->line, tables->items[i], err);
		}
	}
	fdl_ynode_free(root);
	for (size_t i = 0; !rc && i < f->ntables; i++) {
		const fdl_desc_file *tf = &f->tables[i];
		fdl_ynode *tn = NULL;
		json_t *t = NULL;
		rc = fdl_yaml_load(&tn, tf->text.data, tf->text.len, tf->path, err);
		if (!rc)
			rc = convert_map(&t, tn, TABLE, tf->path, "the table", err);
		if (!rc)
			rc = add_table(d, t, tf->path, tn->line, tn, err);
		fdl_ynode_free(tn);
	}
	if (rc)
		fdl__ds_desc_free(d);
	return rc;
}

const char *fdl__ds_str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* ---- the base version's description ---------------------------------- */

static const char *const TABLE_KEYS[] = {"schema", "name", "kind", "title", "description", "primary_key",
					 "depends_on", "sql", "annotations", "extensions", NULL};
static const char *const FIELD_KEYS[] = {"name", "title", "description", "annotations", "extensions", NULL};

static json_t *pick(const json_t *o, const char *const *keys)
{
	json_t *r = json_object();
	for (const char *const *k = keys; r && *k; k++)
		if (json_object_get(o, *k))
			json_object_set(r, *k, json_object_get(o, *k));
	return r;
}

json_t *fdl_dataset_user_part(const json_t *dataset)
{
	json_t *top = json_deep_copy(dataset);
	if (!top)
		return NULL;
	json_object_del(top, "tables");
	json_t *tables = json_array();
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(dataset, "tables"), i, t)
	{
		bool view = fdl__ds_str(t, "kind") != NULL;
		json_t *u = pick(t, TABLE_KEYS);
		if (view)
			json_object_del(u, "sql"); /* the catalog's, not the writer's */
		json_t *fields = json_array();
		size_t j;
		const json_t *f;
		json_array_foreach(json_object_get(t, "fields"), j, f)
		{
			json_t *uf = view ? json_deep_copy(f) : pick(f, FIELD_KEYS);
			if (json_object_size(uf) > 1)
				json_array_append(fields, uf);
			json_decref(uf);
		}
		if (json_array_size(fields))
			json_object_set(u, "fields", fields);
		json_decref(fields);
		/* only what somebody wrote: a table with just its name is added
		 * from the catalog anyway */
		if (json_object_size(u) > (view ? 3u : 2u))
			json_array_append(tables, u);
		json_decref(u);
	}
	if (json_array_size(tables))
		json_object_set(top, "tables", tables);
	json_decref(tables);
	return top;
}

int fdl__ds_desc_from_base(desc *d, const json_t *base, fdl_error *err)
{
	json_t *u = fdl_dataset_user_part(base);
	if (!u)
		return fdl_oom(err);
	d->inherited = true;
	d->top_src = fdl_strdup("the base version's dataset.json");
	size_t i;
	json_t *t;
	int rc = d->top_src ? 0 : fdl_oom(err);
	json_array_foreach(json_object_get(u, "tables"), i, t)
	{
		if (rc)
			break;
		rc = add_table(d, json_incref(t), d->top_src, 0, NULL, err);
	}
	json_object_del(u, "tables");
	if (json_object_get(u, "extensions") && !json_object_get(u, "annotations"))
		json_object_set(u, "annotations", json_object_get(u, "extensions"));
	json_object_del(u, "extensions");
	d->top = u;
	return rc;
}

/* The base version's item for table schema.name, and whether it has a
 * field `col`: what the base described and the catalog has since dropped
 * is dropped from the description, not refused. */
const json_t *fdl__ds_base_table(const json_t *base, const char *schema, const char *name)
{
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(base, "tables"), i, t)
	{
		const char *s = fdl__ds_str(t, "schema");
		if (!strcmp(s ? s : "main", schema ? schema : "main") && fdl__ds_str(t, "name") && !strcmp(fdl__ds_str(t, "name"), name))
			return t;
	}
	return NULL;
}

bool fdl__ds_base_has_field(const json_t *bt, const char *col)
{
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(bt, "fields"), i, f) if (fdl__ds_str(f, "name") && col && !strcmp(fdl__ds_str(f, "name"), col))
		return true;
	return false;
}

/* ---- the description as YAML, for checkout ------------------------------- */

int fdl_dataset_yaml(fdl_buf *out, const json_t *description, const char *header, fdl_error *err)
{
	int rc = fdl_buf_puts(out, header, err);
	if (!rc)
		rc = fdl_yaml_write(out, description, "the description", err);
	return rc;
}

int fdl_dataset_check_text(json_t **out, const char *data, size_t len, const char *source, int table, fdl_error *err)
{
	fdl_ynode *n = NULL;
	int rc = fdl_yaml_load(&n, data, len, source, err);
	if (!rc)
		rc = convert_map(out, n, table ? TABLE : DATASET, source, table ? "the table" : "the dataset", err);
	fdl_ynode_free(n);
	return rc;
}

/* ---- what changed in a description ---------------------------------------- */

static int desc_change(json_t *out, const char *table, const char *column, const char *field, const json_t *a,
		       const json_t *b)
{
	if (json_equal(a, b) || (!a && !b))
		return 0;
	json_t *o = json_pack("{s:s, s:s}", "field", field, "kind", !a ? "added" : !b ? "removed" : "changed");
	if (o && table)
		json_object_set_new(o, "table", json_string(table));
	if (o && column)
		json_object_set_new(o, "column", json_string(column));
	return o ? json_array_append_new(out, o) : -1;
}

/* Each key of `keys` (NULL: the union of both objects' keys but `skip`). */
static int desc_keys(json_t *out, const char *table, const char *column, const json_t *a, const json_t *b,
		     const char *skip)
{
	json_t *names = json_object();
	int rc = names ? 0 : -1;
	const char *k;
	json_t *v;
	for (int side = 0; !rc && side < 2; side++)
		json_object_foreach((json_t *)(side ? b : a), k, v) if (strcmp(k, skip)) json_object_set_new(names, k, json_null());
	json_object_foreach(names, k, v) if (!rc) rc = desc_change(out, table, column, k, json_object_get(a, k), json_object_get(b, k));
	json_decref(names);
	return rc;
}

static const json_t *by_name(const json_t *list, const char *schema, const char *name)
{
	size_t i;
	const json_t *t;
	json_array_foreach(list, i, t)
	{
		const char *s = fdl__ds_str(t, "schema");
		if (fdl__ds_str(t, "name") && !strcmp(fdl__ds_str(t, "name"), name) && (!schema || !strcmp(s ? s : "main", schema)))
			return t;
	}
	return NULL;
}

int fdl_dataset_diff(json_t **out, const json_t *a, const json_t *b, fdl_error *err)
{
	json_t *empty = json_object();
	json_t *ua = fdl_dataset_user_part(a ? a : empty), *ub = fdl_dataset_user_part(b ? b : empty);
	json_decref(empty);
	json_t *list = json_array();
	int rc = ua && ub && list ? desc_keys(list, NULL, NULL, ua, ub, "tables") : -1;
	size_t i;
	const json_t *tb;
	/* tables and columns in both: tables added, dropped or renamed are schema changes */
	json_array_foreach(json_object_get(b, "tables"), i, tb)
	{
		const char *schema = fdl__ds_str(tb, "schema") ? fdl__ds_str(tb, "schema") : "main";
		const json_t *ta = by_name(json_object_get(a, "tables"), schema, fdl__ds_str(tb, "name"));
		if (rc || !ta)
			continue;
		char full[600];
		snprintf(full, sizeof full, "%s.%s", schema, fdl__ds_str(tb, "name"));
		const json_t *pa = by_name(json_object_get(ua, "tables"), schema, fdl__ds_str(tb, "name"));
		const json_t *pb = by_name(json_object_get(ub, "tables"), schema, fdl__ds_str(tb, "name"));
		json_t *ea = pa ? json_deep_copy(pa) : json_object(), *eb = pb ? json_deep_copy(pb) : json_object();
		const char *drop[] = {"schema", "name", "kind", "sql"};
		for (size_t k = 0; ea && eb && k < 4; k++) {
			json_object_del(ea, drop[k]);
			json_object_del(eb, drop[k]);
		}
		rc = ea && eb ? desc_keys(list, full, NULL, ea, eb, "fields") : -1;
		json_decref(ea);
		json_decref(eb);
		size_t j;
		const json_t *fb;
		json_array_foreach(json_object_get(tb, "fields"), j, fb)
		{
			const json_t *fa = fdl__ds_str(fb, "name") ? by_name(json_object_get(ta, "fields"), NULL, fdl__ds_str(fb, "name")) : NULL;
			const char *keys[] = {"title", "description", "annotations"};
			for (size_t k = 0; !rc && fa && k < 3; k++)
				rc = desc_change(list, full, fdl__ds_str(fb, "name"), keys[k], json_object_get(fa, keys[k]),
						 json_object_get(fb, keys[k]));
		}
	}
	json_decref(ua);
	json_decref(ub);
	if (rc) {
		json_decref(list);
		return fdl_oom(err);
	}
	*out = list;
	return 0;
}
