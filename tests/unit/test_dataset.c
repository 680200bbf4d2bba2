/* dataset.c's own rules, without a catalog or DuckDB: unknown keys refused
 * with file and line, name and title required, a description merged with
 * the catalog's tables, a table or column described but not in the catalog
 * refused, a view's kind kept, and without a description the folder's name. */
#include "test.h"
#include "../../src/layout/dataset.h"
#include "../../src/util/util.h"
#include "../../src/ops/work.h"

#include <stdlib.h>

static json_t *catalog(void)
{
	return json_loads("[{\"schema\":\"main\",\"name\":\"t\",\"rows\":3,\"fields\":["
			  "{\"name\":\"a\",\"type\":\"int32\",\"nullable\":true}]},"
			  "{\"schema\":\"main\",\"name\":\"v\",\"kind\":\"view\",\"sql\":\"SELECT 1\"}]",
			  0, NULL);
}

/* fdl_dataset_build of the description files in `dir`, as a commit reads them. */
static int build_dir(json_t **out, const char *dir, const json_t *cat, const json_t *base, const json_t *known,
		     fdl_error *err)
{
	fdl_desc_files f;
	int rc = fdl_work_description(&f, dir, err);
	if (!rc)
		rc = fdl_dataset_build(out, &(fdl_dataset_in){.files = &f, .catalog_tables = cat, .default_name = "folder",
							      .base = base, .known = known},
				       err);
	fdl_desc_files_free(&f);
	return rc;
}

static int build_with(json_t **out, const char *yml, fdl_error *err)
{
	char *dir = t_tempdir(), path[4200];
	snprintf(path, sizeof path, "%s/dataset.yml", dir);
	int rc = yml ? fdl_file_write_atomic(path, yml, strlen(yml), err) : 0;
	json_t *cat = catalog();
	if (!rc)
		rc = build_dir(out, dir, cat, NULL, NULL, err);
	json_decref(cat);
	fdl_rm_rf(dir);
	free(dir);
	return rc;
}

/* What a base version described and the catalog dropped since goes away;
 * with no description file, the base's description carries over. */
static void carry_over_rules(t_ctx *t)
{
	fdl_error err;
	json_t *ds = NULL, *cat = catalog();
	json_t *base = json_loads("{\"name\":\"p\",\"title\":\"P\",\"licenses\":[\"CC0-1.0\"],\"tables\":["
				  "{\"schema\":\"main\",\"name\":\"t\",\"title\":\"T\",\"rows\":9,\"fields\":["
				  "{\"name\":\"a\",\"title\":\"A\",\"type\":\"int64\"},{\"name\":\"old\",\"title\":\"O\"}]},"
				  "{\"schema\":\"main\",\"name\":\"gone\",\"description\":\"d\"}]}",
				  0, NULL);
	char *dir = t_tempdir(), path[4200];
	/* no file: carried over, the dropped table and column left out */
	CHECK(t, build_dir(&ds, dir, cat, base, base, &err) == 0);
	CHECK(t, ds && json_array_size(json_object_get(ds, "licenses")) == 1);
	json_t *t0 = ds ? json_array_get(json_object_get(ds, "tables"), 0) : NULL;
	CHECK(t, t0 && !strcmp(json_string_value(json_object_get(t0, "title")), "T"));
	CHECK(t, t0 && json_integer_value(json_object_get(t0, "rows")) == 3); /* the catalog's, not the base's */
	CHECK(t, t0 && json_array_size(json_object_get(t0, "fields")) == 1);
	CHECK(t, ds && json_array_size(json_object_get(ds, "tables")) == 2); /* t and the view v */
	json_decref(ds);
	ds = NULL;
	/* a file naming what the base described: dropped; what it never did: refused */
	const char *yml = "name: p\ntitle: P\ntables:\n  - name: gone\n";
	snprintf(path, sizeof path, "%s/dataset.yml", dir);
	CHECK(t, fdl_file_write_atomic(path, yml, strlen(yml), &err) == 0);
	CHECK(t, build_dir(&ds, dir, cat, base, base, &err) == 0);
	json_decref(ds);
	ds = NULL;
	CHECK(t, build_dir(&ds, dir, cat, base, NULL, &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "main.gone");
	/* the user part: no rows, no types, nothing undescribed */
	json_t *u = fdl_dataset_user_part(base);
	json_t *ut = u ? json_array_get(json_object_get(u, "tables"), 0) : NULL;
	CHECK(t, ut && !json_object_get(ut, "rows"));
	CHECK(t, ut && !json_object_get(json_array_get(json_object_get(ut, "fields"), 0), "type"));
	json_decref(u);
	json_decref(base);
	json_decref(cat);
	fdl_rm_rf(dir);
	free(dir);
}

static void text_rules(t_ctx *t)
{
	fdl_error err;
	json_t *j = NULL;
	const char *bad = "name: x\ntitle: y\ncolour: red\n";
	CHECK(t, fdl_dataset_check_text(&j, bad, strlen(bad), "dataset.yml", 0, &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "dataset.yml, line 3");
	CHECK_CONTAINS(t, err.message, "colour");
	/* a mistyped key: the one it most likely meant */
	const char *typo = "name: x\ntitle: y\nlicences: [CC-BY-4.0]\n";
	CHECK(t, fdl_dataset_check_text(&j, typo, strlen(typo), "dataset.yml", 0, &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "did you mean 'licenses'?");
	const char *ftypo = "name: t\nfields:\n  - name: a\n    desciption: d\n";
	CHECK(t, fdl_dataset_check_text(&j, ftypo, strlen(ftypo), "t.table.yml", 1, &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "t.table.yml, line 4");
	CHECK_CONTAINS(t, err.message, "did you mean 'description'?");
	const char *untitled = "name: x\n";
	CHECK(t, fdl_dataset_check_text(&j, untitled, strlen(untitled), "dataset.yml", 0, &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "title");
	const char *ok = "name: x\ntitle: y\nlicenses: [CC-BY-4.0]\nannotations: {tool: {k: 1}}\n";
	CHECK(t, fdl_dataset_check_text(&j, ok, strlen(ok), "dataset.yml", 0, &err) == 0);
	CHECK(t, j && !strcmp(json_string_value(json_array_get(json_object_get(j, "licenses"), 0)), "CC-BY-4.0"));
	json_decref(j);
}

static void merge_rules(t_ctx *t)
{
	fdl_error err;
	json_t *ds = NULL;
	/* no description: the folder's name, every catalog table and view */
	CHECK(t, build_with(&ds, NULL, &err) == 0);
	CHECK(t, ds && !strcmp(json_string_value(json_object_get(ds, "title")), "folder"));
	CHECK(t, ds && json_array_size(json_object_get(ds, "tables")) == 2);
	json_decref(ds);
	ds = NULL;
	/* described: kept, merged with what the catalog knows */
	const char *yml = "name: pop\ntitle: Population\ntables:\n  - name: t\n    description: one row\n"
			  "    fields:\n      - name: a\n        title: A\n";
	CHECK(t, build_with(&ds, yml, &err) == 0);
	json_t *t0 = ds ? json_array_get(json_object_get(ds, "tables"), 0) : NULL;
	CHECK(t, t0 && !strcmp(json_string_value(json_object_get(t0, "description")), "one row"));
	json_t *a = t0 ? json_array_get(json_object_get(t0, "fields"), 0) : NULL;
	CHECK(t, a && !strcmp(json_string_value(json_object_get(a, "type")), "int32"));
	CHECK(t, a && !strcmp(json_string_value(json_object_get(a, "title")), "A"));
	json_t *v = ds ? json_array_get(json_object_get(ds, "tables"), 1) : NULL;
	CHECK(t, v && !strcmp(json_string_value(json_object_get(v, "kind")), "view"));
	json_decref(ds);
	ds = NULL;
	/* a table the catalog does not have is refused, naming file and line */
	CHECK(t, build_with(&ds, "name: p\ntitle: P\ntables:\n  - name: gone\n", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "main.gone");
	CHECK_CONTAINS(t, err.message, "line");
	/* so is a column it does not have */
	CHECK(t, build_with(&ds, "name: p\ntitle: P\ntables:\n  - name: t\n    fields:\n      - name: zz\n", &err) ==
		 FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "zz");
	/* a view described as a table */
	CHECK(t, build_with(&ds, "name: p\ntitle: P\ntables:\n  - name: v\n    kind: table\n", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "view");
}

const t_case dataset_tests[] = {
	{"dataset: description files are checked key by key, name and title required", text_rules},
	{"dataset: merged with the catalog; what it does not have is refused", merge_rules},
	{"dataset: the base's description carries over; what it described and the catalog dropped goes",
	 carry_over_rules},
	{NULL, NULL},
};
