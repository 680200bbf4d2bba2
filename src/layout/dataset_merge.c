/* dataset.json's merge (docs/format.md, "dataset.json"): the publisher's
 * description with what the frozen catalog knows (rows, types,
 * nullability, comments), renames followed; fdl_dataset_build. */
#include "dataset_int.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- merging with the catalog ---------------------------------------- */


static described *find_described(desc *d, const char *schema, const char *name, fdl_error *err, int *rc)
{
	described *hit = NULL;
	for (size_t i = 0; i < d->ntables; i++) {
		const char *s = fdl__ds_str(d->tables[i].table, "schema");
		if (strcmp(s ? s : "main", schema) || strcmp(fdl__ds_str(d->tables[i].table, "name"), name))
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

/* A described table's primary_key into t, when its columns exist (one the
 * catalog dropped drops the key, when lenient or the base had it). */
static int merge_primary_key(json_t *t, const json_t *w, const json_t *cat, const described *dsc, bool view,
			     bool lenient, const json_t *bt, fdl_error *err)
{
	const json_t *fields_cat = json_object_get(cat, "fields");
	const char *src = dsc ? dsc->src : "";
	size_t i;
	const json_t *k;
	json_array_foreach(json_object_get(w, "primary_key"), i, k)
	{
		bool found = false;
		size_t j;
		const json_t *f;
		json_array_foreach(fields_cat, j, f) found |= !strcmp(fdl__ds_str(f, "name"), json_string_value(k));
		if (!found && !view && (lenient || fdl__ds_base_has_field(bt, json_string_value(k))))
			return 0; /* the key is gone */
		if (!found && !view)
			return fdl_fail(err, FDL_EINVALID,
					"%s, line %d: primary_key of %s.%s names column '%s', which the table "
					"does not have",
					src, dsc->line, fdl__ds_str(cat, "schema"), fdl__ds_str(cat, "name"), json_string_value(k));
	}
	copy_key(t, w, "primary_key");
	return 0;
}

/* One table: the described item merged with the catalog's facts. */
static int merge_table(json_t **out, const json_t *cat, const described *dsc, bool lenient, const json_t *bt,
		       fdl_error *err)
{
	const json_t *w = dsc ? dsc->table : NULL;
	bool view = fdl__ds_str(cat, "kind") != NULL;
	if (lenient && w && fdl__ds_str(w, "kind") && strcmp(fdl__ds_str(w, "kind"), view ? "view" : "table"))
		w = NULL; /* a table that became a view (or back): its old description goes */
	const char *src = dsc ? dsc->src : "";
	json_t *t = json_object();
	if (!t)
		return fdl_oom(err);
	set_str(t, "schema", fdl__ds_str(cat, "schema"));
	set_str(t, "name", fdl__ds_str(cat, "name"));
	if (view)
		set_str(t, "kind", "view");
	if (w) {
		const char *kind = fdl__ds_str(w, "kind");
		if (kind && strcmp(kind, view ? "view" : "table")) {
			json_decref(t);
			return fdl_fail(err, FDL_EINVALID, "%s, line %d: %s.%s is a %s in the catalog, not a %s", src,
					dsc->line, fdl__ds_str(cat, "schema"), fdl__ds_str(cat, "name"), view ? "view" : "table", kind);
		}
		copy_key(t, w, "title");
	}
	const char *wd = w ? fdl__ds_str(w, "description") : NULL;
	set_str(t, "description", wd ? wd : fdl__ds_str(cat, "description"));
	const json_t *fields_cat = json_object_get(cat, "fields");
	if (w) {
		int rc = merge_primary_key(t, w, cat, dsc, view, lenient, bt, err);
		if (rc) {
			json_decref(t);
			return rc;
		}
		copy_key(t, w, "depends_on");
	}
	if (view)
		set_str(t, "sql", fdl__ds_str(cat, "sql"));
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
						src, fdl__ds_str(f, "name"), fdl__ds_str(cat, "schema"), fdl__ds_str(cat, "name"));
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
			json_array_foreach(fields_cat, j, c) found |= !strcmp(fdl__ds_str(c, "name"), fdl__ds_str(f, "name"));
			if (!found && !lenient && !fdl__ds_base_has_field(bt, fdl__ds_str(f, "name"))) {
				json_decref(fields);
				json_decref(t);
				return fdl_fail(err, FDL_EINVALID,
						"%s, line %d: %s.%s has no column '%s' in the catalog's last snapshot", src,
						fdl__ds_field_line(dsc, fdl__ds_str(f, "name")), fdl__ds_str(cat, "schema"), fdl__ds_str(cat, "name"),
						fdl__ds_str(f, "name"));
			}
		}
		const json_t *c;
		json_array_foreach(fields_cat, i, c)
		{
			const json_t *d = NULL;
			size_t j;
			json_t *x;
			json_array_foreach(wf, j, x) if (!strcmp(fdl__ds_str(x, "name"), fdl__ds_str(c, "name"))) d = x;
			json_t *o = json_object();
			set_str(o, "name", fdl__ds_str(c, "name"));
			if (d)
				copy_key(o, d, "title");
			const char *dd = d ? fdl__ds_str(d, "description") : NULL;
			set_str(o, "description", dd ? dd : fdl__ds_str(c, "description"));
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
		snprintf(name, sizeof name, "%s.%s", fdl__ds_str(t, "schema") ? fdl__ds_str(t, "schema") : "main", fdl__ds_str(t, "name") ? fdl__ds_str(t, "name") : "");
		if (!strcmp(name, full))
			return t;
	}
	return NULL;
}

static bool has_field(const json_t *table, const char *col)
{
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(table, "fields"), i, f) if (fdl__ds_str(f, "name") && !strcmp(fdl__ds_str(f, "name"), col))
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
			if (!strcmp(fdl__ds_str(c, "kind") ? fdl__ds_str(c, "kind") : "", "rename_table") && fdl__ds_str(c, "from") &&
			    !strcmp(fdl__ds_str(c, "from"), tbuf) && fdl__ds_str(c, "table"))
				snprintf(tbuf, tsize, "%s", fdl__ds_str(c, "table"));
		json_array_foreach(step, j, c) if (col && !strcmp(fdl__ds_str(c, "kind") ? fdl__ds_str(c, "kind") : "", "rename_column") &&
						   fdl__ds_str(c, "table") && !strcmp(fdl__ds_str(c, "table"), tbuf) && fdl__ds_str(c, "from") &&
						   !strcmp(fdl__ds_str(c, "from"), cbuf) && fdl__ds_str(c, "column"))
		{
			snprintf(cbuf, csize, "%s", fdl__ds_str(c, "column"));
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
		snprintf(old, sizeof old, "%s.%s", fdl__ds_str(t, "schema") ? fdl__ds_str(t, "schema") : "main", fdl__ds_str(t, "name"));
		follow(now, sizeof now, col, sizeof col, in->renames, old, NULL);
		const json_t *cat = catalog_table(in->catalog_tables, now);
		bool moved = strcmp(now, old) && cat && !catalog_table(in->catalog_tables, old);
		for (size_t o = 0; moved && o < d->ntables; o++) {
			char other[600];
			const json_t *ot = d->tables[o].table;
			snprintf(other, sizeof other, "%s.%s", fdl__ds_str(ot, "schema") ? fdl__ds_str(ot, "schema") : "main", fdl__ds_str(ot, "name"));
			moved = strcmp(other, now) != 0;
		}
		if (moved) {
			json_object_set_new(t, "schema", json_string(fdl__ds_str(cat, "schema")));
			json_object_set_new(t, "name", json_string(fdl__ds_str(cat, "name")));
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
			const char *name = fdl__ds_str(f, "name");
			char tt[600];
			if (rc || !name || !cat || has_field(cat, name))
				continue;
			follow(tt, sizeof tt, col, sizeof col, in->renames, old, name);
			if (!strcmp(col, name) || strcmp(tt, now) || !has_field(cat, col) || has_field(t, col))
				continue;
			int line = fdl__ds_field_line(dsc, name);
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
	if (files && (rc = fdl__ds_desc_load(&d, files, err)))
		return rc;
	if (d.top_src && written_sha256 && *written_sha256) {
		char hex[65];
		fdl_error e;
		d.inherited = fdl_sha256_mem(hex, files->top.text.data, files->top.text.len, &e) == 0 &&
			      !strcmp(hex, written_sha256);
	}
	/* no description file: the base version's description carries over,
	 * as a file does in Git; a commit never drops what nobody removed */
	if (!d.top_src && !d.ntables && base && (rc = fdl__ds_desc_from_base(&d, base, err)))
		return rc;
	if (in->renames && (rc = follow_renames(&d, in, err))) {
		fdl__ds_desc_free(&d);
		return rc;
	}
	json_t *ds = json_object();
	if (!ds) {
		fdl__ds_desc_free(&d);
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
		if (excluded(skip, fdl__ds_str(d.tables[k].table, "schema"), fdl__ds_str(d.tables[k].table, "name")))
			rc = fdl_fail(err, FDL_EINVALID, "%s, line %d: describes %s.%s, which annotations.fdl.exclude leaves out",
				      d.tables[k].src, d.tables[k].line,
				      fdl__ds_str(d.tables[k].table, "schema") ? fdl__ds_str(d.tables[k].table, "schema") : "main",
				      fdl__ds_str(d.tables[k].table, "name"));
	json_t *tables = json_array();
	size_t i;
	const json_t *cat;
	json_array_foreach(catalog_tables, i, cat)
	{
		json_t *t = NULL;
		if (rc)
			break;
		if (skip && excluded(skip, fdl__ds_str(cat, "schema"), fdl__ds_str(cat, "name")))
			continue; /* a pipeline's bookkeeping: in the catalog, not in the description */
		described *dsc = find_described(&d, fdl__ds_str(cat, "schema"), fdl__ds_str(cat, "name"), err, &rc);
		if (!rc)
			rc = merge_table(&t, cat, dsc, d.inherited, fdl__ds_base_table(known, fdl__ds_str(cat, "schema"), fdl__ds_str(cat, "name")),
					 err);
		if (rc)
			break;
		json_array_append_new(tables, t);
	}
	for (size_t k = 0; !rc && !d.inherited && k < d.ntables; k++)
		if (!d.tables[k].used &&
		    !fdl__ds_base_table(known, fdl__ds_str(d.tables[k].table, "schema"), fdl__ds_str(d.tables[k].table, "name"))) {
			const char *s = fdl__ds_str(d.tables[k].table, "schema");
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s, line %d: describes %s.%s, which is not a table or view in the catalog's last "
				      "snapshot",
				      d.tables[k].src, d.tables[k].line, s ? s : "main", fdl__ds_str(d.tables[k].table, "name"));
		}
	json_object_set_new(ds, "tables", tables);
	if (d.top && json_object_get(d.top, "annotations"))
		json_object_set(ds, "annotations", json_object_get(d.top, "annotations"));
	fdl__ds_desc_free(&d);
	if (rc) {
		json_decref(ds);
		return rc;
	}
	*out = ds;
	return 0;
}
