/* previews/<id>.json and previews/tables/<sha256>.json: what a page, fdl
 * verify, fdl preview and fdl clone read from a repository, someone
 * else's included. The first byte chooses the parser (even: a version's
 * preview, odd: a table's); the rest is the file. */
#include "fuzz.h"
#include "../../src/layout/preview.h"

/* An accepted version file: each table's key is the one its sha names (no
 * other spelling, so no path outside previews/tables/), its copy an object. */
static void version_file(const char *data, size_t size)
{
	json_t *doc = NULL;
	fdl_error err;
	if (fdl_preview_parse(&doc, data, size, "previews/x.json", NULL, &err))
		return;
	if (!fdl_id_is_valid(json_string_value(json_object_get(doc, "version"))))
		abort();
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(doc, "tables"), i, t)
	{
		const char *key = json_string_value(json_object_get(t, "key"));
		char sha[65];
		if (!key || !fdl_preview_table_key_parse(key, sha))
			abort();
		char *again = fdl_preview_table_key(sha);
		if (!again || strcmp(again, key) || fdl_path_check_relative(key, "a table file", &err))
			abort();
		free(again);
		const json_t *file = json_object_get(t, "file");
		if (file && !json_is_object(file))
			abort();
	}
	json_decref(doc);
}

/* An accepted table file: one value per column in every row, each text or
 * null, and a name for every column's statistics. */
static void table_file(const char *data, size_t size)
{
	json_t *doc = NULL;
	fdl_error err;
	if (fdl_preview_table_parse(&doc, data, size, "previews/tables/x.json", &err))
		return;
	size_t ncols = json_array_size(json_object_get(doc, "columns")), i, j;
	json_t *r, *v;
	json_array_foreach(json_object_get(doc, "rows"), i, r)
	{
		if (json_array_size(r) != ncols)
			abort();
		json_array_foreach(r, j, v) if (!json_is_string(v) && !json_is_null(v)) abort();
	}
	json_array_foreach(json_object_get(doc, "stats"), i, v) if (!json_is_string(json_object_get(v, "name"))) abort();
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		table_file((const char *)data + 1, size - 1);
	else
		version_file((const char *)data + 1, size - 1);
	return 0;
}
