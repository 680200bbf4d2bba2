/*
 * dataset.json (docs/format.md, "dataset.json"). The publisher's description lives in
 * the working folder as dataset.yml (or dataset.yaml, or dataset.json), plus
 * optional <table>.table.yml files, each one item of `tables`. It is checked
 * key by key against the spec (unknown keys refused, naming file, line and
 * key), merged with what the frozen catalog knows (rows, types, nullability,
 * comments), and written as one JSON file.
 */
#include "dataset.h"
#include "../util/yaml.h"

#include <stdarg.h>
#include <stdlib.h>
#include <fnmatch.h>
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

typedef struct described {
	json_t *table; /* converted table item */
	char *src;
	int line;
	bool used;
	json_t *field_lines; /* {"<field name>": line} where the YAML gave them, or NULL */
} described;

typedef struct desc {
	json_t *top; /* converted dataset (without tables) or NULL */
	char *top_src;
	/* the description is the base version's, carried over (inherited, or
	 * the dataset.yml checkout wrote, unedited): what the catalog no longer
	 * has (a dropped table or column) is dropped from it, not refused */
	bool inherited;
	described *tables;
	size_t ntables;
} desc;

static void desc_free(desc *d)
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
static int field_line(const described *dsc, const char *name)
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

static int desc_load(desc *d, const fdl_desc_files *f, fdl_error *err)
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
		desc_free(d);
	return rc;
}

static const char *str(const json_t *o, const char *k)
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
		bool view = str(t, "kind") != NULL;
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

static int desc_from_base(desc *d, const json_t *base, fdl_error *err)
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
static const json_t *base_table(const json_t *base, const char *schema, const char *name)
{
	size_t i;
	const json_t *t;
	json_array_foreach(json_object_get(base, "tables"), i, t)
	{
		const char *s = str(t, "schema");
		if (!strcmp(s ? s : "main", schema ? schema : "main") && str(t, "name") && !strcmp(str(t, "name"), name))
			return t;
	}
	return NULL;
}

static bool base_has_field(const json_t *bt, const char *col)
{
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(bt, "fields"), i, f) if (str(f, "name") && col && !strcmp(str(f, "name"), col))
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

/* ---- merging with the catalog ---------------------------------------- */


static described *find_described(desc *d, const char *schema, const char *name, fdl_error *err, int *rc)
{
	described *hit = NULL;
	for (size_t i = 0; i < d->ntables; i++) {
		const char *s = str(d->tables[i].table, "schema");
		if (strcmp(s ? s : "main", schema) || strcmp(str(d->tables[i].table, "name"), name))
			continue;
		if (hit) {
			*rc = fdl_fail(err, FDL_EINVALID, "%s.%s is described twice: %s, line %d and %s, line %d", schema,
				       name, hit->src, hit->line, d->tables[i].src, d->tables[i].line);
			return NULL;
		}
		hit = &d->tables[i];
	}
	if (hit)
		hit->used = true;
	return hit;
}

static int set_str(json_t *o, const char *k, const char *v)
{
	return v ? json_object_set_new(o, k, json_string(v)) : 0;
}

static int copy_key(json_t *dst, const json_t *src, const char *k)
{
	json_t *v = json_object_get(src, k);
	return v ? json_object_set(dst, k, v) : 0;
}

/* One table: the described item merged with the catalog's facts. */
static int merge_table(json_t **out, const json_t *cat, const described *dsc, bool lenient, const json_t *bt,
		       fdl_error *err)
{
	const json_t *w = dsc ? dsc->table : NULL;
	bool view = str(cat, "kind") != NULL;
	if (lenient && w && str(w, "kind") && strcmp(str(w, "kind"), view ? "view" : "table"))
		w = NULL; /* a table that became a view (or back): its old description goes */
	const char *src = dsc ? dsc->src : "";
	json_t *t = json_object();
	if (!t)
		return fdl_oom(err);
	set_str(t, "schema", str(cat, "schema"));
	set_str(t, "name", str(cat, "name"));
	if (view)
		set_str(t, "kind", "view");
	if (w) {
		const char *kind = str(w, "kind");
		if (kind && strcmp(kind, view ? "view" : "table")) {
			json_decref(t);
			return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s.%s is a %s in the catalog, not a %s", src,
					dsc->line, str(cat, "schema"), str(cat, "name"), view ? "view" : "table", kind);
		}
		copy_key(t, w, "title");
	}
	const char *wd = w ? str(w, "description") : NULL;
	set_str(t, "description", wd ? wd : str(cat, "description"));
	const json_t *fields_cat = json_object_get(cat, "fields");
	if (w) {
		/* primary key columns must exist */
		bool pk_gone = false;
		size_t i;
		const json_t *k;
		json_array_foreach(json_object_get(w, "primary_key"), i, k)
		{
			bool found = false;
			size_t j;
			const json_t *f;
			json_array_foreach(fields_cat, j, f) found |= !strcmp(str(f, "name"), json_string_value(k));
			if (!found && !view && (lenient || base_has_field(bt, json_string_value(k)))) {
				pk_gone = true;
				break;
			}
			if (!found && !view) {
				json_decref(t);
				return fdl_fail(err, FDL_EINVALID,
						"%s, line %d: primary_key of %s.%s names column '%s', which the table "
						"does not have",
						src, dsc->line, str(cat, "schema"), str(cat, "name"), json_string_value(k));
			}
		}
		if (!pk_gone)
			copy_key(t, w, "primary_key");
		copy_key(t, w, "depends_on");
	}
	if (view)
		set_str(t, "sql", str(cat, "sql"));
	else if (w)
		copy_key(t, w, "sql"); /* the SQL that built the table, as the writer gives it */
	if (!view)
		json_object_set(t, "rows", json_object_get(cat, "rows"));

	json_t *fields = json_array();
	const json_t *wf = w ? json_object_get(w, "fields") : NULL;
	size_t i;
	json_t *f;
	if (view) {
		/* the catalog does not record view columns: exactly what was written */
		json_array_foreach(wf, i, f)
		{
			if (json_object_get(f, "type") || json_object_get(f, "nullable")) {
				json_decref(fields);
				json_decref(t);
				return fdl_fail(err, FDL_EINVALID,
						"%s: field '%s' of view %s.%s has a type or nullable; the catalog does not "
						"record view columns, so a view's fields carry neither",
						src, str(f, "name"), str(cat, "schema"), str(cat, "name"));
			}
			json_array_append(fields, f);
		}
	} else {
		/* every described field must be a column */
		json_array_foreach(wf, i, f)
		{
			bool found = false;
			size_t j;
			const json_t *c;
			json_array_foreach(fields_cat, j, c) found |= !strcmp(str(c, "name"), str(f, "name"));
			if (!found && !lenient && !base_has_field(bt, str(f, "name"))) {
				json_decref(fields);
				json_decref(t);
				return fdl_fail(err, FDL_EINVALID,
						"%s, line %d: %s.%s has no column '%s' in the catalog's last snapshot", src,
						field_line(dsc, str(f, "name")), str(cat, "schema"), str(cat, "name"),
						str(f, "name"));
			}
		}
		const json_t *c;
		json_array_foreach(fields_cat, i, c)
		{
			const json_t *d = NULL;
			size_t j;
			json_t *x;
			json_array_foreach(wf, j, x) if (!strcmp(str(x, "name"), str(c, "name"))) d = x;
			json_t *o = json_object();
			set_str(o, "name", str(c, "name"));
			if (d)
				copy_key(o, d, "title");
			const char *dd = d ? str(d, "description") : NULL;
			set_str(o, "description", dd ? dd : str(c, "description"));
			json_object_set(o, "type", json_object_get(c, "type"));
			json_object_set(o, "nullable", json_object_get(c, "nullable"));
			if (d)
				copy_key(o, d, "annotations");
			json_array_append_new(fields, o);
		}
	}
	if (json_array_size(fields) || !view)
		json_object_set_new(t, "fields", fields);
	else
		json_decref(fields);
	if (w)
		copy_key(t, w, "annotations");
	*out = t;
	return 0;
}

/* The tables the description leaves out: `annotations: {fdl: {exclude:
 * [PATTERN, ...]}}`, shell patterns on "schema.table" (a pipeline's
 * bookkeeping, such as dlt's `*._dlt_*`). Annotations are keyed by the tool
 * that reads them (the format's rule), so the rule travels with the
 * description: checkout writes it back into dataset.yml. */
static int exclusions(const json_t **out, const json_t *top, const char *src, fdl_error *err)
{
	const json_t *x = json_object_get(json_object_get(json_object_get(top, "annotations"), "fdl"), "exclude");
	*out = NULL;
	if (!x)
		return 0;
	size_t i;
	const json_t *p;
	bool ok = json_is_array(x);
	json_array_foreach(x, i, p) ok = ok && json_is_string(p) && *json_string_value(p);
	if (!ok)
		return fdl_fail(err, FDL_EINVALID,
				"%s: annotations.fdl.exclude must be a list of patterns such as \"*._dlt_*\" or "
				"\"staging.*\" (schema.table, shell wildcards)",
				src ? src : "the description");
	*out = x;
	return 0;
}

static bool excluded(const json_t *patterns, const char *schema, const char *name)
{
	char full[512];
	snprintf(full, sizeof full, "%s.%s", schema ? schema : "main", name ? name : "");
	size_t i;
	const json_t *p;
	json_array_foreach(patterns, i, p) if (fnmatch(json_string_value(p), full, 0) == 0) return true;
	return false;
}

/* ---- following renames -------------------------------------------------- */

static const json_t *catalog_table(const json_t *tables, const char *full)
{
	size_t i;
	const json_t *t;
	json_array_foreach(tables, i, t)
	{
		char name[600];
		snprintf(name, sizeof name, "%s.%s", str(t, "schema") ? str(t, "schema") : "main", str(t, "name") ? str(t, "name") : "");
		if (!strcmp(name, full))
			return t;
	}
	return NULL;
}

static bool has_field(const json_t *table, const char *col)
{
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(table, "fields"), i, f) if (str(f, "name") && !strcmp(str(f, "name"), col))
		return true;
	return false;
}

/* Where table `full` (schema.table) and its column `col` (NULL: the table
 * only) went through `renames` (oldest first), into tbuf and cbuf. */
static void follow(char *tbuf, size_t tsize, char *cbuf, size_t csize, const json_t *renames, const char *full,
		   const char *col)
{
	snprintf(tbuf, tsize, "%s", full);
	snprintf(cbuf, csize, "%s", col ? col : "");
	size_t i, j;
	const json_t *step, *c;
	json_array_foreach(renames, i, step)
	{
		json_array_foreach(step, j, c) /* a table's rename first: its columns' name it by its new name */
			if (!strcmp(str(c, "kind") ? str(c, "kind") : "", "rename_table") && str(c, "from") &&
			    !strcmp(str(c, "from"), tbuf) && str(c, "table"))
				snprintf(tbuf, tsize, "%s", str(c, "table"));
		json_array_foreach(step, j, c) if (col && !strcmp(str(c, "kind") ? str(c, "kind") : "", "rename_column") &&
						   str(c, "table") && !strcmp(str(c, "table"), tbuf) && str(c, "from") &&
						   !strcmp(str(c, "from"), cbuf) && str(c, "column"))
		{
			snprintf(cbuf, csize, "%s", str(c, "column"));
			break;
		}
	}
}

static int warn(fdl_strlist *warnings, fdl_error *err, const char *fmt, ...) FDL_PRINTF(3, 4);
static int warn(fdl_strlist *warnings, fdl_error *err, const char *fmt, ...)
{
	if (!warnings)
		return 0;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	return fdl_strlist_add(warnings, line, err);
}

/* A table or column the description names by its name before a rename
 * (DuckLake keeps its id, so `changes` says rename_table or rename_column)
 * gets its description under the new name, and a warning with the file
 * and line that still name the old one, unless the old name is in the
 * catalog again or the new one is described as well. */
static int follow_renames(desc *d, const fdl_dataset_in *in, fdl_error *err)
{
	int rc = 0;
	const char *since = in->renames_from && *in->renames_from ? in->renames_from : "the base version";
	for (size_t k = 0; k < d->ntables && !rc; k++) {
		described *dsc = &d->tables[k];
		json_t *t = dsc->table;
		char old[600], now[600], col[300];
		snprintf(old, sizeof old, "%s.%s", str(t, "schema") ? str(t, "schema") : "main", str(t, "name"));
		follow(now, sizeof now, col, sizeof col, in->renames, old, NULL);
		const json_t *cat = catalog_table(in->catalog_tables, now);
		bool moved = strcmp(now, old) && cat && !catalog_table(in->catalog_tables, old);
		for (size_t o = 0; moved && o < d->ntables; o++) {
			char other[600];
			const json_t *ot = d->tables[o].table;
			snprintf(other, sizeof other, "%s.%s", str(ot, "schema") ? str(ot, "schema") : "main", str(ot, "name"));
			moved = strcmp(other, now) != 0;
		}
		if (moved) {
			json_object_set_new(t, "schema", json_string(str(cat, "schema")));
			json_object_set_new(t, "name", json_string(str(cat, "name")));
			if (dsc->line)
				rc = warn(in->warnings, err,
					  "%s, line %d: describes table %s, renamed to %s since version %s (DuckLake keeps "
					  "the table's id): its description follows the table; rename it there",
					  dsc->src, dsc->line, old, now, since);
		} else {
			cat = catalog_table(in->catalog_tables, old);
			snprintf(now, sizeof now, "%s", old);
		}
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(t, "fields"), i, f)
		{
			const char *name = str(f, "name");
			char tt[600];
			if (rc || !name || !cat || has_field(cat, name))
				continue;
			follow(tt, sizeof tt, col, sizeof col, in->renames, old, name);
			if (!strcmp(col, name) || strcmp(tt, now) || !has_field(cat, col) || has_field(t, col))
				continue;
			int line = field_line(dsc, name);
			if (line)
				rc = warn(in->warnings, err,
					  "%s, line %d: describes column '%s' of %s, renamed to '%s' since version %s "
					  "(DuckLake keeps the column's id): its description follows the column; rename it "
					  "there",
					  dsc->src, line, name, now, col, since);
			json_object_set_new(f, "name", json_string(col));
		}
	}
	return rc;
}

int fdl_dataset_build(json_t **out, const fdl_dataset_in *in, fdl_error *err)
{
	const fdl_desc_files *files = in->files;
	const json_t *catalog_tables = in->catalog_tables, *base = in->base, *known = in->known;
	const char *default_name = in->default_name, *written_sha256 = in->written_sha256;
	desc d = {0};
	int rc = 0;
	/* no folder (a PostgreSQL working catalog): no description files */
	if (files && (rc = desc_load(&d, files, err)))
		return rc;
	if (d.top_src && written_sha256 && *written_sha256) {
		char hex[65];
		fdl_error e;
		d.inherited = fdl_sha256_mem(hex, files->top.text.data, files->top.text.len, &e) == 0 &&
			      !strcmp(hex, written_sha256);
	}
	/* no description file: the base version's description carries over,
	 * as a file does in Git; a commit never drops what nobody removed */
	if (!d.top_src && !d.ntables && base && (rc = desc_from_base(&d, base, err)))
		return rc;
	if (in->renames && (rc = follow_renames(&d, in, err))) {
		desc_free(&d);
		return rc;
	}
	json_t *ds = json_object();
	if (!ds) {
		desc_free(&d);
		return fdl_oom(err);
	}
	if (d.top) {
		const char *k;
		json_t *v;
		json_object_foreach(d.top, k, v) if (strcmp(k, "annotations")) json_object_set(ds, k, v);
	} else {
		set_str(ds, "name", default_name);
		set_str(ds, "title", default_name);
	}
	const json_t *skip = NULL;
	rc = exclusions(&skip, d.top, d.top_src, err);
	for (size_t k = 0; !rc && skip && k < d.ntables; k++)
		if (excluded(skip, str(d.tables[k].table, "schema"), str(d.tables[k].table, "name")))
			rc = fdl_fail(err, FDL_EINVALID, "%s, line %d: describes %s.%s, which annotations.fdl.exclude leaves out",
				      d.tables[k].src, d.tables[k].line,
				      str(d.tables[k].table, "schema") ? str(d.tables[k].table, "schema") : "main",
				      str(d.tables[k].table, "name"));
	json_t *tables = json_array();
	size_t i;
	const json_t *cat;
	json_array_foreach(catalog_tables, i, cat)
	{
		json_t *t = NULL;
		if (rc)
			break;
		if (skip && excluded(skip, str(cat, "schema"), str(cat, "name")))
			continue; /* a pipeline's bookkeeping: in the catalog, not in the description */
		described *dsc = find_described(&d, str(cat, "schema"), str(cat, "name"), err, &rc);
		if (!rc)
			rc = merge_table(&t, cat, dsc, d.inherited, base_table(known, str(cat, "schema"), str(cat, "name")),
					 err);
		if (rc)
			break;
		json_array_append_new(tables, t);
	}
	for (size_t k = 0; !rc && !d.inherited && k < d.ntables; k++)
		if (!d.tables[k].used &&
		    !base_table(known, str(d.tables[k].table, "schema"), str(d.tables[k].table, "name"))) {
			const char *s = str(d.tables[k].table, "schema");
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s, line %d: describes %s.%s, which is not a table or view in the catalog's last "
				      "snapshot",
				      d.tables[k].src, d.tables[k].line, s ? s : "main", str(d.tables[k].table, "name"));
		}
	json_object_set_new(ds, "tables", tables);
	if (d.top && json_object_get(d.top, "annotations"))
		json_object_set(ds, "annotations", json_object_get(d.top, "annotations"));
	desc_free(&d);
	if (rc) {
		json_decref(ds);
		return rc;
	}
	*out = ds;
	return 0;
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
		const char *s = str(t, "schema");
		if (str(t, "name") && !strcmp(str(t, "name"), name) && (!schema || !strcmp(s ? s : "main", schema)))
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
		const char *schema = str(tb, "schema") ? str(tb, "schema") : "main";
		const json_t *ta = by_name(json_object_get(a, "tables"), schema, str(tb, "name"));
		if (rc || !ta)
			continue;
		char full[600];
		snprintf(full, sizeof full, "%s.%s", schema, str(tb, "name"));
		const json_t *pa = by_name(json_object_get(ua, "tables"), schema, str(tb, "name"));
		const json_t *pb = by_name(json_object_get(ub, "tables"), schema, str(tb, "name"));
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
			const json_t *fa = str(fb, "name") ? by_name(json_object_get(ta, "fields"), NULL, str(fb, "name")) : NULL;
			const char *keys[] = {"title", "description", "annotations"};
			for (size_t k = 0; !rc && fa && k < 3; k++)
				rc = desc_change(list, full, str(fb, "name"), keys[k], json_object_get(fa, keys[k]),
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
