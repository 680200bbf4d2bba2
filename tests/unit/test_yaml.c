#include "test.h"
#include "../../src/util/yaml.h"

#include <stdlib.h>

static void lines_and_types(t_ctx *t)
{
	const char *y = "name: p\ncount: 12\nratio: 1.5\nflag: true\nnothing:\nquoted: \"12\"\nlist:\n  - a\n  - {k: v}\n";
	fdl_ynode *n = NULL;
	fdl_error err;
	CHECK(t, fdl_yaml_load(&n, y, strlen(y), "d.yml", &err) == 0);
	if (!n)
		return;
	int line = 0;
	const fdl_ynode *v = fdl_ynode_get(n, "list", &line);
	CHECK(t, v && v->kind == FDL_Y_SEQ && v->n == 2 && line == 7);
	CHECK(t, v && v->items[1]->line == 9);
	json_t *j = fdl_ynode_to_json(n);
	CHECK(t, json_integer_value(json_object_get(j, "count")) == 12);
	CHECK(t, json_real_value(json_object_get(j, "ratio")) == 1.5);
	CHECK(t, json_is_true(json_object_get(j, "flag")));
	CHECK(t, json_is_null(json_object_get(j, "nothing")));
	CHECK(t, json_is_string(json_object_get(j, "quoted")));
	CHECK(t, !strcmp(json_string_value(json_object_get(j, "name")), "p"));
	json_decref(j);
	fdl_ynode_free(n);
}

static void json_is_read_too(t_ctx *t)
{
	const char *y = "{\"name\": \"p\", \"n\": [1, 2.5, null, true, \"x\\u00e9\"]}";
	fdl_ynode *n = NULL;
	fdl_error err;
	CHECK(t, fdl_yaml_load(&n, y, strlen(y), "d.json", &err) == 0);
	json_t *j = n ? fdl_ynode_to_json(n) : NULL;
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	CHECK(t, s && !strcmp(s, "{\"name\":\"p\",\"n\":[1,2.5,null,true,\"x\xc3\xa9\"]}"));
	free(s);
	json_decref(j);
	fdl_ynode_free(n);
}

static void refusals(t_ctx *t)
{
	fdl_ynode *n = NULL;
	fdl_error err;
	const char *dup = "a: 1\nb: 2\na: 3\n";
	CHECK(t, fdl_yaml_load(&n, dup, strlen(dup), "d.yml", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "d.yml, line 3");
	CHECK_CONTAINS(t, err.message, "'a' appears twice");
	const char *bad = "a: [1, 2\n";
	CHECK(t, fdl_yaml_load(&n, bad, strlen(bad), "d.yml", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "d.yml, line");
	CHECK(t, fdl_yaml_load(&n, "", 0, "d.yml", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "empty");
	/* a billion-laughs style alias bomb stays bounded: aliases are copied,
	 * but a small document cannot nest beyond the depth limit */
	char deep[30000];
	size_t k = 0;
	for (int i = 0; i < 10005 && k < sizeof deep - 2; i++)
		deep[k++] = '[';
	deep[k] = '\0';
	CHECK(t, fdl_yaml_load(&n, deep, k, "d.yml", &err) == FDL_EINVALID);
	CHECK(t, n == NULL);
}

const t_case yaml_tests[] = {
	{"yaml: lines and typed scalars", lines_and_types},
	{"yaml: JSON is read as YAML", json_is_read_too},
	{"yaml: duplicates, syntax errors, empty, deep nesting", refusals},
	{NULL, NULL},
};
