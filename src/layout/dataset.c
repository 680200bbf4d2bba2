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

#include <dirent.h>
#include <unistd.h>
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
		if (!known)
			return fdl_fail(err, FDL_EINVALID,
					"%s, line %d: key '%s' in %s is not defined by the FDL spec (put tool-specific "
					"information under 'annotations')",
					src, n->key_lines[i], k, where);
	}
	json_t *o = json_object();
	if (!o)
		return fdl_fail(err, FDL_ERROR, "out of memory");
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
			rc = fdl_fail(err, FDL_ERROR, "out of memory");
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
	return *out ? 0 : fdl_fail(err, FDL_ERROR, "out of memory");
}

/* ---- loading the description files ---------------------------------- */

typedef struct described {
	json_t *table; /* converted table item */
	char *src;
	int line;
	bool used;
} described;

typedef struct desc {
	json_t *top; /* converted dataset (without tables) or NULL */
	char *top_src;
	described *tables;
	size_t ntables;
} desc;

static void desc_free(desc *d)
{
	json_decref(d->top);
	free(d->top_src);
	for (size_t i = 0; i < d->ntables; i++) {
		json_decref(d->tables[i].table);
		free(d->tables[i].src);
	}
	free(d->tables);
	memset(d, 0, sizeof *d);
}

static int add_table(desc *d, json_t *t, const char *src, int line, fdl_error *err)
{
	described *p = realloc(d->tables, (d->ntables + 1) * sizeof *p);
	if (!p) {
		json_decref(t);
		return fdl_fail(err, FDL_ERROR, "out of memory");
	}
	d->tables = p;
	p[d->ntables++] = (described){t, fdl_strdup(src), line, false};
	return 0;
}

static int load_file(fdl_ynode **out, const char *path, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_file_read(&b, path, 64u << 20, err);
	if (!rc)
		rc = fdl_yaml_load(out, b.data, b.len, path, err);
	fdl_buf_free(&b);
	return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a > b && !strcmp(s + a - b, suffix);
}

static int desc_load(desc *d, const char *dir, fdl_error *err)
{
	memset(d, 0, sizeof *d);
	const char *tops[] = {"dataset.yml", "dataset.yaml", "dataset.json"};
	fdl_strlist table_files = {0};
	DIR *dh = opendir(dir);
	if (!dh)
		return fdl_fail(err, FDL_EIO, "cannot list %s", dir);
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(dh)))
		if (ends_with(e->d_name, ".table.yml") || ends_with(e->d_name, ".table.yaml"))
			rc = fdl_strlist_add(&table_files, e->d_name, err);
	/* the dataset file, in a fixed order so messages do not depend on readdir */
	for (size_t i = 0; i < 3 && !rc; i++) {
		char *p = fdl_asprintf("%s/%s", dir, tops[i]);
		if (p && access(p, F_OK) == 0) {
			if (d->top_src) {
				rc = fdl_fail(err, FDL_EINVALID,
					      "%s holds both %s and %s; keep the description in one of them", dir,
					      strrchr(d->top_src, '/') + 1, tops[i]);
				free(p);
			} else
				d->top_src = p;
		} else
			free(p);
	}
	closedir(dh);
	fdl_strlist_sort(&table_files);
	fdl_ynode *root = NULL;
	if (!rc && d->top_src && !(rc = load_file(&root, d->top_src, err))) {
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
				rc = add_table(d, t, d->top_src, tables->items[i]->line, err);
		}
	}
	fdl_ynode_free(root);
	for (size_t i = 0; !rc && i < table_files.len; i++) {
		char *path = fdl_asprintf("%s/%s", dir, table_files.items[i]);
		fdl_ynode *tn = NULL;
		json_t *t = NULL;
		rc = path ? load_file(&tn, path, err) : fdl_fail(err, FDL_ERROR, "out of memory");
		if (!rc)
			rc = convert_map(&t, tn, TABLE, path, "the table", err);
		if (!rc)
			rc = add_table(d, t, path, tn->line, err);
		fdl_ynode_free(tn);
		free(path);
	}
	fdl_strlist_free(&table_files);
	if (rc)
		desc_free(d);
	return rc;
}

/* ---- merging with the catalog ---------------------------------------- */

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

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
static int merge_table(json_t **out, const json_t *cat, const described *dsc, fdl_error *err)
{
	const json_t *w = dsc ? dsc->table : NULL;
	bool view = str(cat, "kind") != NULL;
	const char *src = dsc ? dsc->src : "";
	json_t *t = json_object();
	if (!t)
		return fdl_fail(err, FDL_ERROR, "out of memory");
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
		size_t i;
		const json_t *k;
		json_array_foreach(json_object_get(w, "primary_key"), i, k)
		{
			bool found = false;
			size_t j;
			const json_t *f;
			json_array_foreach(fields_cat, j, f) found |= !strcmp(str(f, "name"), json_string_value(k));
			if (!found && !view) {
				json_decref(t);
				return fdl_fail(err, FDL_EINVALID,
						"%s, line %d: primary_key of %s.%s names column '%s', which the table "
						"does not have",
						src, dsc->line, str(cat, "schema"), str(cat, "name"), json_string_value(k));
			}
		}
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
			if (!found) {
				json_decref(fields);
				json_decref(t);
				return fdl_fail(err, FDL_EINVALID,
						"%s, line %d: %s.%s has no column '%s' in the catalog's last snapshot", src,
						dsc->line, str(cat, "schema"), str(cat, "name"), str(f, "name"));
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

int fdl_dataset_build(json_t **out, const char *work_dir, const json_t *catalog_tables, const char *default_name,
		      fdl_error *err)
{
	desc d = {0};
	int rc = 0;
	/* no folder (a PostgreSQL working catalog): no description files */
	if (work_dir && (rc = desc_load(&d, work_dir, err)))
		return rc;
	json_t *ds = json_object();
	if (!ds) {
		desc_free(&d);
		return fdl_fail(err, FDL_ERROR, "out of memory");
	}
	if (d.top) {
		const char *k;
		json_t *v;
		json_object_foreach(d.top, k, v) if (strcmp(k, "annotations")) json_object_set(ds, k, v);
	} else {
		set_str(ds, "name", default_name);
		set_str(ds, "title", default_name);
	}
	json_t *tables = json_array();
	size_t i;
	const json_t *cat;
	json_array_foreach(catalog_tables, i, cat)
	{
		json_t *t = NULL;
		described *dsc = find_described(&d, str(cat, "schema"), str(cat, "name"), err, &rc);
		if (!rc)
			rc = merge_table(&t, cat, dsc, err);
		if (rc)
			break;
		json_array_append_new(tables, t);
	}
	for (size_t k = 0; !rc && k < d.ntables; k++)
		if (!d.tables[k].used) {
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
