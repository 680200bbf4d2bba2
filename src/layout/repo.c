/* fdl.json, init and open. */
#include "keys.h"

#include <stdlib.h>
#include <string.h>

int fdl_config_check(const json_t *cfg, const char *source, fdl_error *err)
{
	const char *s;
	int rc = 0;
	if (!json_is_object(cfg))
		return fdl_fail(err, FDL_EINVALID, "%s: expected a JSON object", source);
	if ((rc = fdl_json_get_string(&s, cfg, "fdl", true, source, "fdl", err)))
		return rc;
	if ((rc = fdl_json_get_string(&s, cfg, "data_dir", true, source, "data_dir", err)))
		return rc;
	if ((rc = fdl_path_check_relative(s, "fdl.json field 'data_dir'", err)))
		return fdl_error_prefix(err, "%s", source);
	const json_t *formats;
	if ((rc = fdl_json_get_typed(&formats, cfg, "formats", JSON_ARRAY, false, source, "formats", err)))
		return rc;
	size_t i;
	const json_t *f;
	json_array_foreach(formats, i, f)
	{
		char field[64];
		snprintf(field, sizeof field, "formats[%zu].ducklake", i);
		if (!json_is_object(f))
			return fdl_fail(err, FDL_EINVALID, "%s: field 'formats[%zu]' is not an object", source, i);
		if ((rc = fdl_json_get_string(&s, f, "ducklake", true, source, field, err)))
			return rc;
	}
	return 0;
}

bool fdl_config_same_layout(const json_t *a, const json_t *b)
{
	return json_equal(json_object_get(a, "fdl"), json_object_get(b, "fdl")) &&
	       json_equal(json_object_get(a, "data_dir"), json_object_get(b, "data_dir"));
}

int fdl_repo_from_store(fdl_repo **out, fdl_store *store, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_store_get(store, FDL_CONFIG_FILE, FDL_META_MAX_BYTES, &b, NULL, err);
	if (rc == FDL_ENOTFOUND)
		return fdl_fail(err, FDL_ENOTFOUND, "%s is not an fdl repository (no fdl.json)", store->url);
	if (rc)
		return rc;
	char *source = fdl_asprintf("%s/fdl.json", store->url);
	json_t *cfg = NULL;
	rc = fdl_json_parse(&cfg, b.data, b.len, source ? source : "fdl.json", err);
	fdl_buf_free(&b);
	if (!rc)
		rc = fdl_config_check(cfg, source ? source : "fdl.json", err);
	free(source);
	if (rc) {
		json_decref(cfg);
		return rc;
	}
	fdl_repo *r = calloc(1, sizeof *r);
	if (!r) {
		json_decref(cfg);
		return fdl_oom(err);
	}
	r->store = store;
	r->root = store->url;
	r->config = cfg;
	r->data_dir = fdl_strdup(json_string_value(json_object_get(cfg, "data_dir")));
	size_t n = strlen(r->data_dir);
	while (n > 1 && r->data_dir[n - 1] == '/')
		r->data_dir[--n] = '\0';
	r->data_url = fdl_asprintf("%s/%s/", r->root, r->data_dir);
	if (!r->data_dir || !r->data_url) {
		r->store = NULL;
		fdl_repo_free(r);
		return fdl_oom(err);
	}
	*out = r;
	return 0;
}

/* What a remote store may answer from the local cache, and how long. What
 * never changes is the layout's one answer (fdl_key_classify); of that,
 * what is read by its key and stays for good is kept for good: a version's
 * version.json (no expiry removes it) and a history pack (named by the
 * sha256 of its bytes). A version's other files are removed by expiry and
 * read by their sha256 (objects/, fetch.c), never by key. fdl.json and
 * HEAD are kept FDL_CACHE_TTL seconds (default 60); refs and the rest of
 * what moves never (they are what moves). */
static long cache_ttl(const char *key)
{
	char id[FDL_ID_LEN + 1];
	const char *rest = NULL;
	size_t n = strlen(key), packs = strlen(FDL_HISTORY_DIR "/packs/");
	switch (fdl_key_classify(NULL, key)) {
	case FDL_KEY_IMMUTABLE:
		if (fdl_version_key_parse(key, id, &rest))
			return strcmp(rest, FDL_VERSION_JSON) ? -1 : 0;
		if (!strncmp(key, FDL_HISTORY_DIR "/packs/", packs) && n == packs + 70 && !strcmp(key + n - 6, ".jsonl"))
			return 0;
		return -1;
	case FDL_KEY_MOVING:
		if (!strcmp(key, FDL_CONFIG_FILE) || !strcmp(key, "HEAD")) {
			const char *t = getenv("FDL_CACHE_TTL");
			long v = t ? strtol(t, NULL, 10) : 60;
			return v > 0 ? v : -1;
		}
		return -1;
	default:
		return -1;
	}
}

int fdl_layout_store_open(fdl_store **out, const char *root, fdl_error *err)
{
	int rc = fdl_store_open(out, root, err);
	if (!rc)
		(*out)->cache_ttl = cache_ttl;
	return rc;
}

bool fdl_repo_set_cached(fdl_repo *repo, bool on)
{
	bool was = repo->store->cache_ttl != NULL;
	repo->store->cache_ttl = on ? cache_ttl : NULL;
	return was;
}

int fdl_repo_open(fdl_repo **out, const char *root, fdl_error *err)
{
	return fdl_repo_open_token(out, root, NULL, err);
}

int fdl_repo_open_token(fdl_repo **out, const char *root, const char *token, fdl_error *err)
{
	fdl_store *store;
	int rc = fdl_layout_store_open(&store, root, err);
	if (!rc && token && (rc = fdl_store_http_set_token(store, token, err)))
		fdl_store_free(store);
	if (rc)
		return rc;
	rc = fdl_repo_from_store(out, store, err);
	if (rc)
		fdl_store_free(store);
	return rc;
}

void fdl_repo_free(fdl_repo *repo)
{
	if (!repo)
		return;
	json_decref(repo->config);
	free(repo->data_dir);
	free(repo->data_url);
	fdl_store_free(repo->store);
	free(repo);
}

const char *fdl_repo_root(const fdl_repo *repo) { return repo->root; }
const char *fdl_repo_data_dir(const fdl_repo *repo) { return repo->data_dir; }
const char *fdl_repo_data_url(const fdl_repo *repo) { return repo->data_url; }

/* Is `path` the folder `dir` or inside it? */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

int fdl_repo_init(const char *root, const fdl_init_options *opts, fdl_error *err)
{
	if (opts && fdl_options_check(opts->version, FDL_INIT_OPTIONS_VERSION, "fdl_repo_init", "fdl_init_options", err))
		return FDL_EINVALID;
	const char *branch = opts && opts->branch ? opts->branch : "main";
	const char *data_dir = opts && opts->data_dir ? opts->data_dir : "data";
	int rc = 0;
	char *branch_key = NULL;
	if ((rc = fdl_ref_branch_key(&branch_key, branch, err)))
		return rc;
	if ((rc = fdl_path_check_relative(data_dir, "--data-dir", err)) ||
	    under(data_dir, FDL_VERSIONS_DIR) || under(data_dir, FDL_REFS_DIR)) {
		free(branch_key);
		return rc ? rc
			  : fdl_fail(err, FDL_EINVALID, "--data-dir '%s' would mix data with the repository's own "
							FDL_VERSIONS_DIR "/ or " FDL_REFS_DIR "/",
				     data_dir);
	}

	fdl_store *store;
	if ((rc = fdl_store_open(&store, root, err))) {
		free(branch_key);
		return rc;
	}
	fdl_strlist existing = {0};
	rc = fdl_store_list(store, "", &existing, err);
	if (!rc && existing.len) {
		int64_t sz;
		fdl_error ignore;
		if (fdl_store_head(store, FDL_CONFIG_FILE, &sz, &ignore) == 0)
			rc = fdl_fail(err, FDL_EEXISTS, "%s is already an fdl repository", store->url);
		else
			rc = fdl_fail(err, FDL_EEXISTS,
				      "%s is not empty and is not an fdl repository (it holds %s); refusing to "
				      "init there",
				      store->url, existing.items[0]);
	}
	fdl_strlist_free(&existing);
	/* a bucket whose server ignores conditional writes is refused here,
	 * before anything is written */
	if (!rc)
		rc = fdl_store_check_conditional(store, err);

	json_t *cfg = NULL;
	char *text = NULL, *head = NULL;
	size_t len = 0;
	if (!rc) {
		cfg = json_pack("{s:s, s:s, s:[{s:s, s:s}], s:{s:n, s:n}}", "fdl", FDL_SPEC_VERSION, "data_dir",
				data_dir, "formats", "ducklake", FDL_DEFAULT_FORMAT, "duckdb",
				FDL_DEFAULT_FORMAT_DUCKDB, "retention", "days", "keep");
		if (!cfg)
			rc = fdl_oom(err);
	}
	if (!rc)
		rc = fdl_json_dump(&text, &len, cfg, err);
	/* HEAD first, fdl.json last: a folder is a repository only once
	 * fdl.json exists, so a failed init leaves no half repository. */
	if (!rc) {
		head = fdl_asprintf("ref: %s\n", branch_key);
		rc = head ? fdl_store_put_if_absent(store, "HEAD", head, strlen(head), err)
			  : fdl_oom(err);
	}
	if (!rc) {
		/* Local stores get the folders a user expects to see. */
		char *dirs[] = {fdl_store_local_path(store, fdl_ref_dir(FDL_REF_BRANCH)),
				fdl_store_local_path(store, fdl_ref_dir(FDL_REF_TAG)),
				fdl_store_local_path(store, FDL_VERSIONS_DIR), fdl_store_local_path(store, data_dir)};
		for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
			if (dirs[i] && !rc)
				rc = fdl_mkdir_p(dirs[i], err);
			free(dirs[i]);
		}
	}
	if (!rc)
		rc = fdl_store_put_if_absent(store, FDL_CONFIG_FILE, text, len, err);
	free(head);
	free(text);
	json_decref(cfg);
	free(branch_key);
	fdl_store_free(store);
	return rc;
}

/* Set fdl.json's `field` (under `parent` when not NULL) to `value` (taken;
 * JSON null unsets), by compare-and-swap, keeping every other field. */
int fdl_config_set_field(fdl_repo *repo, const char *parent, const char *field, json_t *value, fdl_error *err)
{
	fdl_buf b = {0};
	char etag[FDL_ETAG_MAX] = "", *text = NULL;
	size_t len = 0;
	json_t *cfg = NULL;
	int rc = value ? fdl_store_get(repo->store, FDL_CONFIG_FILE, FDL_META_MAX_BYTES, &b, etag, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_json_parse(&cfg, b.data, b.len, FDL_CONFIG_FILE, err);
	if (!rc)
		rc = fdl_config_check(cfg, FDL_CONFIG_FILE, err);
	json_t *in = rc || !parent ? cfg : json_object_get(cfg, parent);
	if (!rc && parent && !json_is_object(in)) {
		in = json_pack("{s:n, s:n}", "days", "keep");
		rc = !in || json_object_set_new(cfg, parent, in) ? fdl_oom(err) : 0;
	}
	if (!rc && json_is_null(value) && !parent)
		json_object_del(in, field); /* one already absent is fine */
	else if (!rc && json_object_set(in, field, value))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_json_dump(&text, &len, cfg, err);
	/* compare-and-swap: another change of fdl.json meanwhile is not lost */
	if (!rc && (rc = fdl_store_put_if_match(repo->store, FDL_CONFIG_FILE, text, len, etag, err)) == FDL_ECONFLICT &&
	    !strstr(err->message, "locked"))
		rc = fdl_fail(err, FDL_ECONFLICT, "%s/fdl.json changed while it was being written; run it again",
			      repo->root);
	if (!rc) {
		json_decref(repo->config);
		repo->config = json_incref(cfg);
	}
	json_decref(value);
	free(text);
	json_decref(cfg);
	fdl_buf_free(&b);
	return rc;
}

int fdl_repo_retention_set(fdl_repo *repo, const char *key, const char *value, fdl_error *err)
{
	const char *field = !strcmp(key, "retention.days") ? "days" : !strcmp(key, "retention.keep") ? "keep" : NULL;
	if (!field)
		return fdl_fail(err, FDL_EINVALID, "'%s' is not a setting fdl config knows: retention.days or retention.keep",
				key);
	char *end = NULL;
	long long n = value ? strtoll(value, &end, 10) : -1;
	if (value && (!*value || *end || n < 0 || n > 1000000000))
		return fdl_fail(err, FDL_EINVALID, "%s must be a whole number (0 or more), or none for forever; not '%s'",
				key, value);
	return fdl_config_set_field(repo, "retention", field, value ? json_integer(n) : json_null(), err);
}

static int json_int_or(int64_t *out, const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	*out = json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
	return json_is_integer(v) || !v || json_is_null(v) ? 0 : -1;
}

int fdl_repo_retention(int64_t *days, int64_t *keep, const fdl_repo *repo, fdl_error *err)
{
	const json_t *ret = json_object_get(repo->config, "retention");
	if (json_int_or(days, ret, "days") || json_int_or(keep, ret, "keep") || *days < -1 || *keep < -1)
		return fdl_fail(err, FDL_EINVALID, "%s/fdl.json: retention.days and retention.keep must be integers or "
				"null", repo->root);
	return 0;
}
