/* The previews' files (preview.h, docs/format.md "Previews (fdl)"): their
 * names, their checks on every read, their create-only writes, and their
 * removal with the versions they describe. */
#include "preview.h"
#include "keys.h"

#include <stdlib.h>
#include <string.h>

char *fdl_preview_key(const char *version_id) { return fdl_asprintf(FDL_PREVIEW_DIR "/%s.json", version_id); }

char *fdl_preview_table_key(const char *state_sha)
{
	return fdl_asprintf(FDL_PREVIEW_TABLES_DIR "/%s.json", state_sha);
}

static bool is_sha(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return false;
	return true;
}

bool fdl_preview_key_parse(const char *key, char id[FDL_ID_LEN + 1])
{
	size_t p = strlen(FDL_PREVIEW_DIR "/"), n = strlen(key);
	if (strncmp(key, FDL_PREVIEW_DIR "/", p) || n != p + FDL_ID_LEN + 5 || strcmp(key + n - 5, ".json"))
		return false;
	char tmp[FDL_ID_LEN + 1];
	memcpy(tmp, key + p, FDL_ID_LEN);
	tmp[FDL_ID_LEN] = '\0';
	if (!fdl_id_is_valid(tmp))
		return false;
	memcpy(id, tmp, sizeof tmp);
	return true;
}

bool fdl_preview_table_key_parse(const char *key, char sha[65])
{
	size_t p = strlen(FDL_PREVIEW_TABLES_DIR "/"), n = strlen(key);
	if (strncmp(key, FDL_PREVIEW_TABLES_DIR "/", p) || n != p + 64 + 5 || strcmp(key + n - 5, ".json") ||
	    !is_sha(key + p, 64))
		return false;
	memcpy(sha, key + p, 64);
	sha[64] = '\0';
	return true;
}

/* ---- checks ---------------------------------------------------------- */

static int format_check(const json_t *doc, const char *src, fdl_error *err)
{
	int64_t f = 0;
	int rc = fdl_json_get_int(&f, NULL, doc, "fdl_preview", true, src, "fdl_preview", err);
	if (!rc && f != FDL_PREVIEW_FORMAT)
		rc = fdl_fail(err, FDL_EINVALID, "%s: field 'fdl_preview' is %lld, this fdl reads %d", src, (long long)f,
			      FDL_PREVIEW_FORMAT);
	return rc;
}

/* schema, name (strings), table_id (an integer) of a table's entry. */
static int names_check(const json_t *t, const char *src, const char *field, fdl_error *err)
{
	const char *s;
	int64_t id;
	char f[64];
	snprintf(f, sizeof f, "%s.schema", field);
	int rc = fdl_json_get_string(&s, t, "schema", true, src, f, err);
	snprintf(f, sizeof f, "%s.name", field);
	if (!rc)
		rc = fdl_json_get_string(&s, t, "name", true, src, f, err);
	snprintf(f, sizeof f, "%s.table_id", field);
	if (!rc)
		rc = fdl_json_get_int(&id, NULL, t, "table_id", true, src, f, err);
	return rc;
}

/* Each row an array of one value per column, each a string or null. */
static int rows_check(const json_t *rows, size_t ncols, const char *src, fdl_error *err)
{
	size_t i, j;
	const json_t *r, *v;
	json_array_foreach(rows, i, r)
	{
		if (!json_is_array(r) || json_array_size(r) != ncols)
			return fdl_fail(err, FDL_EINVALID, "%s: field 'rows[%zu]' must be an array of %zu values", src, i,
					ncols);
		json_array_foreach(r, j, v) if (!json_is_string(v) && !json_is_null(v)) return fdl_fail(
			err, FDL_EINVALID, "%s: field 'rows[%zu][%zu]' must be a string or null", src, i, j);
	}
	return 0;
}

/* Each column's statistics: its name, counts as integers, values as text. */
static int stats_check(const json_t *stats, const char *src, fdl_error *err)
{
	size_t i;
	const json_t *s;
	json_array_foreach(stats, i, s)
	{
		const char *name;
		int64_t n;
		char f[64];
		snprintf(f, sizeof f, "stats[%zu].name", i);
		int rc = fdl_json_get_string(&name, s, "name", true, src, f, err);
		snprintf(f, sizeof f, "stats[%zu].nulls", i);
		if (!rc)
			rc = fdl_json_get_int(&n, NULL, s, "nulls", true, src, f, err);
		static const char *const texts[] = {"type", "min", "max"};
		for (size_t k = 0; !rc && k < sizeof texts / sizeof *texts; k++) {
			const json_t *v = json_object_get(s, texts[k]);
			if (v && !json_is_string(v) && !json_is_null(v))
				rc = fdl_fail(err, FDL_EINVALID, "%s: field 'stats[%zu].%s' must be a string or null", src,
					      i, texts[k]);
		}
		if (rc)
			return rc;
	}
	return 0;
}

int fdl_preview_table_parse(json_t **out, const char *data, size_t len, const char *src, fdl_error *err)
{
	json_t *doc = NULL;
	const json_t *cols = NULL, *rows = NULL, *stats = NULL;
	int64_t n;
	int rc = fdl_json_parse(&doc, data, len, src, err);
	if (!rc && !json_is_object(doc))
		rc = fdl_fail(err, FDL_EINVALID, "%s: a table's preview must be a JSON object", src);
	if (!rc)
		rc = format_check(doc, src, err);
	if (!rc)
		rc = names_check(doc, src, "table", err);
	if (!rc)
		rc = fdl_json_get_typed(&cols, doc, "columns", JSON_ARRAY, true, src, "columns", err);
	size_t i;
	const json_t *c;
	json_array_foreach(rc ? NULL : cols, i, c)
	{
		if (!json_is_string(json_object_get(c, "name")) || !json_is_string(json_object_get(c, "type"))) {
			rc = fdl_fail(err, FDL_EINVALID, "%s: field 'columns[%zu]' needs a name and a type (strings)", src,
				      i);
			break;
		}
	}
	if (!rc)
		rc = fdl_json_get_int(&n, NULL, doc, "row_count", true, src, "row_count", err);
	if (!rc)
		rc = fdl_json_get_typed(&rows, doc, "rows", JSON_ARRAY, true, src, "rows", err);
	if (!rc)
		rc = rows_check(rows, json_array_size(cols), src, err);
	if (!rc)
		rc = fdl_json_get_typed(&stats, doc, "stats", JSON_ARRAY, false, src, "stats", err);
	if (!rc && stats)
		rc = stats_check(stats, src, err);
	if (rc) {
		json_decref(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

int fdl_preview_parse(json_t **out, const char *data, size_t len, const char *src, const char *version_id,
		      fdl_error *err)
{
	json_t *doc = NULL;
	const json_t *tables = NULL;
	const char *v = NULL;
	int rc = fdl_json_parse(&doc, data, len, src, err);
	if (!rc && !json_is_object(doc))
		rc = fdl_fail(err, FDL_EINVALID, "%s: a preview must be a JSON object", src);
	if (!rc)
		rc = format_check(doc, src, err);
	if (!rc)
		rc = fdl_json_get_string(&v, doc, "version", true, src, "version", err);
	if (!rc && (!fdl_id_is_valid(v) || (version_id && strcmp(v, version_id))))
		rc = fdl_fail(err, FDL_EINVALID, "%s: field 'version' is %s, expected %s", src, v,
			      version_id ? version_id : "a version id");
	if (!rc)
		rc = fdl_json_get_typed(&tables, doc, "tables", JSON_ARRAY, true, src, "tables", err);
	size_t i;
	const json_t *t;
	json_array_foreach(rc ? NULL : tables, i, t)
	{
		char field[48], sha[65];
		snprintf(field, sizeof field, "tables[%zu]", i);
		const char *key = json_string_value(json_object_get(t, "key"));
		if ((rc = names_check(t, src, field, err)))
			break;
		if (!key || !fdl_preview_table_key_parse(key, sha)) {
			rc = fdl_fail(err, FDL_EINVALID, "%s: field 'tables[%zu].key' must be %s/<sha256>.json", src, i,
				      FDL_PREVIEW_TABLES_DIR);
			break;
		}
		const json_t *file = json_object_get(t, "file");
		if (file && !json_is_object(file)) {
			rc = fdl_fail(err, FDL_EINVALID, "%s: field 'tables[%zu].file' must be an object (its table file)",
				      src, i);
			break;
		}
	}
	if (rc) {
		json_decref(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

/* ---- reading ----------------------------------------------------------- */

typedef int (*parse_fn)(json_t **out, const char *data, size_t len, const char *src, const char *arg,
			fdl_error *err);

static int table_parse(json_t **out, const char *data, size_t len, const char *src, const char *arg, fdl_error *err)
{
	(void)arg;
	return fdl_preview_table_parse(out, data, len, src, err);
}

static int get_parsed(json_t **out, fdl_repo *repo, char *key, parse_fn parse, const char *arg, fdl_error *err)
{
	if (!key)
		return fdl_oom(err);
	fdl_buf b = {0};
	char *src = fdl_asprintf("%s/%s", repo->root, key);
	int rc = src ? fdl_store_get(repo->store, key, FDL_PREVIEW_MAX_BYTES, &b, NULL, err) : fdl_oom(err);
	if (!rc)
		rc = parse(out, b.data, b.len, src, arg, err);
	fdl_buf_free(&b);
	free(src);
	free(key);
	return rc;
}

int fdl_preview_read(json_t **out, fdl_repo *repo, const char *version_id, fdl_error *err)
{
	return get_parsed(out, repo, fdl_preview_key(version_id), fdl_preview_parse, version_id, err);
}

/* The table file of entry `t` merged into it; its names must agree, and
 * the entry's copy of it ("file", when there) must equal it. */
static int load_table(json_t *t, fdl_repo *repo, fdl_error *err)
{
	const char *key = json_string_value(json_object_get(t, "key"));
	const json_t *copy = json_object_get(t, "file");
	json_t *doc = NULL;
	int rc = get_parsed(&doc, repo, fdl_strdup(key), table_parse, NULL, err);
	if (!rc && (!json_equal(json_object_get(doc, "name"), json_object_get(t, "name")) ||
		    !json_equal(json_object_get(doc, "schema"), json_object_get(t, "schema")) ||
		    !json_equal(json_object_get(doc, "table_id"), json_object_get(t, "table_id"))))
		rc = fdl_fail(err, FDL_EINVALID, "%s/%s: it describes another table than the version's preview names",
			      repo->root, key);
	if (!rc && copy && !json_equal(copy, doc))
		rc = fdl_fail(err, FDL_EINVALID, "%s/%s: the version's preview holds another copy of it (field 'file')",
			      repo->root, key);
	if (!rc && copy)
		json_object_del(t, "file");
	if (!rc) {
		json_object_del(doc, "fdl_preview");
		rc = json_object_update(t, doc) ? fdl_oom(err) : 0;
	}
	json_decref(doc);
	return rc;
}

int fdl_preview_load(json_t **out, fdl_repo *repo, const char *version_id, fdl_error *err)
{
	json_t *doc = NULL;
	int rc = fdl_preview_read(&doc, repo, version_id, err);
	size_t i;
	json_t *t;
	json_array_foreach(rc ? NULL : json_object_get(doc, "tables"), i, t)
	{
		if ((rc = load_table(t, repo, err)))
			break;
	}
	if (rc) {
		json_decref(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

/* ---- writing and removing ---------------------------------------------- */

int fdl_preview_table_read(json_t **out, fdl_repo *repo, const char *sha, fdl_error *err)
{
	return get_parsed(out, repo, fdl_preview_table_key(sha), table_parse, NULL, err);
}

static int put_json(fdl_repo *repo, char *key, const json_t *doc, fdl_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = key ? fdl_json_dump_as(&text, &len, doc, true, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_store_put_if_absent(repo->store, key, text, len, err);
	if (rc == FDL_ECONFLICT) /* there already: the same state, the same file */
		rc = 0;
	free(text);
	free(key);
	return rc;
}

int fdl_preview_table_write(fdl_repo *repo, const char *sha, const json_t *table, fdl_error *err)
{
	return put_json(repo, fdl_preview_table_key(sha), table, err);
}

int fdl_preview_write(fdl_repo *repo, const char *version_id, const json_t *doc, bool replace, fdl_error *err)
{
	char *key = replace ? fdl_preview_key(version_id) : NULL;
	int rc = replace && !key ? fdl_oom(err) : 0;
	bool gone;
	if (key) /* none for a moment: a reader then has no preview, never half of one */
		rc = fdl_store_del_owned(repo->store, key, &gone, err);
	return rc ? rc : put_json(repo, fdl_preview_key(version_id), doc, err);
}

static int list_keys(fdl_strlist *out, fdl_repo *repo, fdl_error *err)
{
	int rc = fdl_store_list(repo->store, FDL_PREVIEW_DIR, out, err);
	if (rc == FDL_ENOTFOUND)
		rc = 0;
	fdl_strlist_sort(out);
	return rc;
}

int fdl_preview_list(fdl_strlist *out, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist keys = {0};
	int rc = list_keys(&keys, repo, err);
	char id[FDL_ID_LEN + 1];
	for (size_t i = 0; i < keys.len && !rc; i++)
		if (fdl_preview_key_parse(keys.items[i], id))
			rc = fdl_strlist_add(out, id, err);
	fdl_strlist_free(&keys);
	fdl_strlist_sort(out);
	return rc;
}

/* The table keys the previews of `ids` name (sorted); a preview that
 * cannot be read names none (its tables go unless another names them). */
static int kept_tables(fdl_strlist *out, fdl_repo *repo, const fdl_strlist *ids, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < ids->len && !rc; i++) {
		json_t *doc = NULL;
		fdl_error e;
		if (fdl_preview_read(&doc, repo, ids->items[i], &e))
			continue;
		size_t k;
		json_t *t;
		json_array_foreach(json_object_get(doc, "tables"), k, t)
		if (!rc) rc = fdl_strlist_add(out, json_string_value(json_object_get(t, "key")), err);
		json_decref(doc);
	}
	fdl_strlist_sort(out);
	return rc;
}

int fdl_preview_sweep(fdl_repo *repo, const fdl_strlist *live, size_t *removed, fdl_error *err)
{
	fdl_strlist keys = {0}, kept_ids = {0}, kept = {0};
	size_t n = 0;
	int rc = list_keys(&keys, repo, err);
	char id[FDL_ID_LEN + 1], sha[65];
	/* version files first: a reader then never finds one naming a gone table file */
	for (size_t i = 0; i < keys.len && !rc; i++) {
		if (!fdl_preview_key_parse(keys.items[i], id))
			continue;
		if (fdl_strlist_has_sorted(live, id))
			rc = fdl_strlist_add(&kept_ids, id, err);
		else if (!(rc = fdl_store_del(repo->store, keys.items[i], err)))
			n++;
		if (rc == FDL_ENOTFOUND)
			rc = 0;
	}
	if (!rc)
		rc = kept_tables(&kept, repo, &kept_ids, err);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		if (!fdl_preview_table_key_parse(keys.items[i], sha) || fdl_strlist_has_sorted(&kept, keys.items[i]))
			continue;
		if (!(rc = fdl_store_del(repo->store, keys.items[i], err)))
			n++;
		if (rc == FDL_ENOTFOUND)
			rc = 0;
	}
	fdl_strlist_free(&keys);
	fdl_strlist_free(&kept_ids);
	fdl_strlist_free(&kept);
	if (removed)
		*removed = n;
	return rc;
}
