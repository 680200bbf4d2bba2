/*
 * Reading any version from anywhere (docs/format.md, "Reading a version"): resolve the
 * ref, check version.json, choose and check the catalog, attach it in
 * DuckDB with DATA_PATH overridden to where the data really is.
 *
 * Round trips to a host or bucket: fdl.json and HEAD are answered from the
 * local cache for a short time and version.json for good (the store's
 * cache, by the layout's rules), catalogs and files.json by sha256 (the
 * layout's checked fetch), so a cold open of a branch costs fdl.json, the
 * ref, version.json and then the catalog, and a warm one only the ref.
 */
#include "../catalog/catalog.h"
#include "../layout/keys.h"
#include "../util/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* DuckLake formats this DuckDB (1.5.x, ducklake 1.0) opens, newest first. */
static const char *const OPENABLE_FORMATS[] = {"1.0", NULL};

/* DuckDB opened beside the caller (the pool's side job) while the version
 * is fetched. */
typedef struct warm_duck {
	fdl_pool_side *side;
	fdl_duck *d;
	int rc;
	fdl_error err;
} warm_duck;

struct fdl_reader {
	fdl_repo *repo;
	fdl_version *v;
	char *catalog;     /* local file */
	char *catalog_key; /* versions/<id>/<path> */
	bool local;
	warm_duck *warm; /* FDL_READER_WARM: joined and taken by the first query */
};

static void warm_run(void *arg)
{
	warm_duck *w = arg;
	w->rc = fdl_duck_new(&w->d, false, &w->err);
}

/* The DuckDB a query runs in: the one opened meanwhile, else a new one. */
static int reader_duck(fdl_reader *r, fdl_duck **d, fdl_error *err)
{
	warm_duck *w = r->warm;
	if (!w)
		return fdl_duck_new(d, false, err);
	r->warm = NULL;
	fdl_pool_side_join(w->side);
	int rc = w->rc;
	if (rc)
		*err = w->err;
	else
		*d = w->d;
	free(w);
	return rc;
}

const fdl_version *fdl_reader_version(const fdl_reader *r) { return r->v; }
const char *fdl_reader_catalog(const fdl_reader *r) { return r->catalog; }
const char *fdl_reader_data_url(const fdl_reader *r) { return r->repo->data_url; }
long fdl_reader_requests(const fdl_reader *r) { return fdl_store_requests(r->repo->store); }

void fdl_reader_free(fdl_reader *r)
{
	if (!r)
		return;
	fdl_duck *d = NULL;
	fdl_error e;
	if (r->warm && !reader_duck(r, &d, &e))
		fdl_duck_free(d);
	fdl_version_free(r->v);
	fdl_repo_free(r->repo);
	free(r->catalog);
	free(r->catalog_key);
	free(r);
}

/* ROOT[@REF]: the last '@' with no '/' after it starts the ref, or one
 * followed by "refs/" (a branch with '/' in its name, in full), so that a
 * folder such as /srv/data@2024/repo is not split. */
int fdl_target_split(char **root, char **ref, const char *target, fdl_error *err)
{
	const char *at = strrchr(target, '@');
	if (at && strchr(at, '/')) {
		const char *full = strstr(target, "@refs/");
		at = full && full > target ? full : NULL;
	}
	if (at == target)
		at = NULL;
	if (at && !at[1])
		return fdl_fail(err, FDL_EINVALID, "'%s' ends with '@' but names no ref after it", target);
	*root = at ? strndup(target, (size_t)(at - target)) : fdl_strdup(target);
	*ref = at ? fdl_strdup(at + 1) : NULL;
	if (!*root || (at && !*ref)) {
		free(*root);
		return fdl_oom(err);
	}
	return 0;
}

/* The reason a version cannot be read any more, from its expired.json
 * (0 when it has none, or the store cannot say). */
static int expired_error(fdl_repo *repo, const char *id, fdl_error *err)
{
	fdl_error e;
	int rc = fdl_version_check_live(repo, id, &e);
	if (rc == FDL_EEXPIRED)
		*err = e;
	return rc == FDL_EEXPIRED ? rc : 0;
}

static int choose_catalog(fdl_reader *r, fdl_error *err)
{
	const fdl_version *v = r->v;
	const char *id = fdl_version_id(v);
	const char *main_format = fdl_version_ducklake_format(v);
	/* catalogs/<format>.duckdb carry no recorded hash in FDL 0.1: look for
	 * one only when the main catalog is not the newest format we open */
	if (strcmp(main_format, OPENABLE_FORMATS[0]) != 0) {
		for (const char *const *f = OPENABLE_FORMATS; *f; f++) {
			char *name = fdl_format_catalog_path(*f);
			char *key = name ? fdl_version_key(id, name) : NULL;
			free(name);
			int64_t size = 0;
			fdl_error e2;
			if (key && fdl_store_head(r->repo->store, key, &size, &e2) == 0) {
				char *local = NULL;
				int rc = fdl_object_fetch_checked(&local, r->repo, key, size, NULL, err);
				if (rc) {
					free(key);
					return rc;
				}
				r->catalog = local;
				r->catalog_key = key;
				return 0;
			}
			free(key);
		}
		bool openable = false;
		for (const char *const *f = OPENABLE_FORMATS; *f; f++)
			openable |= !strcmp(*f, main_format);
		if (!openable)
			return fdl_fail(err, FDL_EINVALID,
					"version %s is in DuckLake format %s and has no " FDL_FORMAT_CATALOGS_DIR
					"/<format>.duckdb this DuckDB (%s, DuckLake 1.0) can open",
					id, main_format, fdl_duck_version());
	}
	r->catalog_key = fdl_version_key(id, fdl_version_catalog_path(v));
	if (!r->catalog_key)
		return fdl_oom(err);
	int rc = fdl_version_fetch_catalog(&r->catalog, r->repo, v, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error e2 = *err;
		rc = expired_error(r->repo, id, err);
		if (!rc) {
			*err = e2;
			rc = FDL_ENOTFOUND;
		}
	}
	return rc;
}

static int reader_open(fdl_reader **out, const char *root, const char *ref, const char *token, unsigned flags,
		       fdl_error *err);

int fdl_reader_open(fdl_reader **out, const char *target, fdl_error *err)
{
	char *root = NULL, *ref = NULL;
	int rc = fdl_target_split(&root, &ref, target, err);
	if (!rc)
		rc = fdl_reader_open_ref(out, root, ref, err);
	free(root);
	free(ref);
	return rc;
}

int fdl_reader_open_flags(fdl_reader **out, const char *target, unsigned flags, fdl_error *err)
{
	char *root = NULL, *ref = NULL;
	int rc = fdl_target_split(&root, &ref, target, err);
	if (!rc)
		rc = reader_open(out, root, ref, NULL, flags, err);
	free(root);
	free(ref);
	return rc;
}

int fdl_reader_open_ref(fdl_reader **out, const char *root, const char *ref, fdl_error *err)
{
	return reader_open(out, root, ref, NULL, 0, err);
}

int fdl_reader_open_token(fdl_reader **out, const char *root, const char *ref, const char *token, fdl_error *err)
{
	return reader_open(out, root, ref, token, 0, err);
}

static int reader_open(fdl_reader **out, const char *root, const char *ref, const char *token, unsigned flags,
		       fdl_error *err)
{
	int rc = 0;
	fdl_reader *r = calloc(1, sizeof *r);
	if (!rc && !r)
		rc = fdl_oom(err);
	/* DuckDB starts (~40 ms) while the version and its catalog arrive */
	if (!rc && (flags & FDL_READER_WARM) && (r->warm = calloc(1, sizeof *r->warm)) &&
	    !(r->warm->side = fdl_pool_side_start(warm_run, r->warm))) {
		free(r->warm);
		r->warm = NULL;
	}
	if (!rc)
		rc = fdl_repo_open_token(&r->repo, root, token, err);
	char id[FDL_ID_LEN + 1];
	if (!rc)
		rc = fdl_ref_resolve(id, r->repo, ref, err);
	if (!rc) {
		r->local = fdl_store_can(r->repo->store, FDL_STORE_LOCAL);
		if (r->local) /* cheap on a folder: say why before anything else */
			rc = expired_error(r->repo, id, err);
	}
	if (!rc)
		rc = fdl_version_read(&r->v, r->repo, id, err);
	if (rc == FDL_ENOTFOUND && r && r->repo && !r->v) {
		fdl_error e2 = *err;
		if (expired_error(r->repo, id, err) == 0)
			*err = e2;
		else
			rc = FDL_EEXPIRED;
	}
	if (!rc)
		rc = choose_catalog(r, err);
	if (rc) {
		fdl_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* The reader's guard, before DuckLake sees the catalog: the one check of
 * what a version may name (fdl_catalog_version_confined). Uses `d`, or a DuckDB of its own
 * when d is NULL. */
static int check_confined(const fdl_reader *r, fdl_duck *d, fdl_error *err)
{
	return fdl_catalog_version_confined(NULL, d, NULL, r->catalog, r->repo->store, r->repo->data_dir,
						  fdl_version_id(r->v), err);
}

/* Attach the version in `d` as `alias`, read only, data where it really
 * is, then confine `d` to the repository's data, the catalog and `extra`
 * (a file the command writes; may be NULL). */
static int reader_attach(fdl_reader *r, fdl_duck *d, const char *alias, const char *extra, fdl_error *err)
{
	int rc = fdl_duck_use_data(d, r->repo->data_url, r->repo->store, err);
	if (!rc)
		rc = check_confined(r, d, err);
	if (!rc)
		rc = fdl_catalog_attach_lake(d, alias, r->catalog, r->repo->data_url, err);
	if (rc)
		fdl_error_prefix(err, "attaching version %s", fdl_version_id(r->v));
	const char *dirs[] = {r->repo->data_url, NULL};
	const char *paths[] = {r->catalog, extra, NULL};
	if (!rc)
		rc = fdl_duck_confine(d, dirs, paths, err);
	return rc;
}

/* DuckDB refused a file outside what the reader allows: a view of the
 * catalog, or the user's own SQL, reached out of the repository. */
static int confined_error(int rc, fdl_error *err)
{
	if (rc == FDL_EDUCKDB && strstr(err->message, "disabled by configuration")) {
		fdl_error_prefix(err, "the query reached outside the repository (fdl reads a version with DuckDB "
				      "confined to the repository's data, so a view in a catalog cannot read your "
				      "files; for your own files use DuckDB itself)");
		err->code = FDL_EINVALID;
		return FDL_EINVALID;
	}
	return rc;
}

int fdl_reader_query(fdl_reader *r, const char *sql, fdl_format fmt, FILE *out, fdl_error *err)
{
	fdl_duck *d = NULL;
	int rc = reader_duck(r, &d, err);
	if (rc)
		return rc;
	rc = reader_attach(r, d, "lake", NULL, err);
	if (!rc)
		rc = fdl_duck_use(d, "lake", err);
	if (!rc)
		rc = confined_error(fdl_duck_stream(d, sql, fmt, out, err), err);
	fdl_duck_free(d);
	return rc;
}

/* ---- the attach statement for stock DuckDB ------------------------------ */

int fdl_reader_attach_sql(char **out, const fdl_reader *r, const char *alias, fdl_error *err)
{
	return fdl_reader_attach_sql_token(out, r, alias, false, err);
}

int fdl_reader_attach_sql_token(char **out, const fdl_reader *r, const char *alias, int show_token, fdl_error *err)
{
	/* the SQL is only printed if the catalog passes the reader's guard */
	int rc = check_confined(r, NULL, err);
	/* a local catalog is attached in place; a remote one straight from the
	 * host (DuckDB reads it over HTTP), after fdl checked its hash */
	char *where = rc ? NULL : r->local ? fdl_strdup(r->catalog) : fdl_asprintf("%s/%s", r->repo->root, r->catalog_key);
	char *comment = rc ? NULL
			   : fdl_asprintf("version %s (seq %lld) of %s", fdl_version_id(r->v),
					  (long long)fdl_version_seq(r->v), r->repo->root);
	if (!rc && (!where || !comment))
		rc = fdl_oom(err);
	fdl_lake_script s = {.comment = comment,
			     .kind = FDL_CAT_DUCKDB,
			     .catalog = where,
			     .data_path = r->repo->data_url,
			     .alias = alias,
			     .store = r->repo->store,
			     .show_token = show_token != 0};
	if (!rc)
		rc = fdl_catalog_attach_script(out, &s, err);
	free(comment);
	free(where);
	return rc;
}

/* ---- plain Parquet: files.json ----------------------------------------- */

/* What the catalog says files.json should: for a version without one, or a
 * files.json written before fdl recorded how its tables read. */
static int catalog_files_doc(json_t **out, fdl_reader *r, fdl_error *err)
{
	fdl_duck *d = NULL;
	fdl_data_files files = {0};
	int rc = fdl_duck_new(&d, false, err);
	if (rc)
		return rc;
	fdl_listing *l = NULL;
	rc = fdl_catalog_attach_raw(d, "fdl_v", r->catalog, FDL_CAT_DUCKDB, true, err);
	if (!rc)
		rc = fdl_listing_read(&l, d, "fdl_v", true, err);
	if (!rc)
		rc = fdl_listing_live(l, &files, err);
	if (!rc)
		rc = fdl_catalog_files_json(out, d, "fdl_v", l, &files, err);
	fdl_listing_free(l);
	fdl_data_files_free(&files);
	fdl_duck_free(d);
	return rc;
}

static int files_doc(json_t **out, const char **source, fdl_reader *r, fdl_error *err)
{
	int rc = fdl_version_load_json(out, r->repo, r->v, "files", err);
	if (rc || *out) {
		*source = FDL_FILES_JSON;
		return rc;
	}
	*source = "catalog";
	return catalog_files_doc(out, r, err);
}

static int find_table(const json_t **out, char **key_out, const json_t *doc, const char *table, fdl_error *err)
{
	char *key = strchr(table, '.') ? fdl_strdup(table) : fdl_asprintf("main.%s", table);
	const json_t *t = key ? json_object_get(json_object_get(doc, "tables"), key) : NULL;
	if (!t) {
		int rc = fdl_fail(err, FDL_ENOTFOUND, "no table %s in this version", key ? key : table);
		free(key);
		return rc;
	}
	*out = t;
	*key_out = key;
	return 0;
}

int fdl_reader_table_files(char **out, fdl_reader *r, const char *table, fdl_error *err)
{
	json_t *doc = NULL;
	const char *source = NULL;
	int rc = files_doc(&doc, &source, r, err);
	const json_t *t = NULL;
	char *key = NULL;
	if (!rc)
		rc = find_table(&t, &key, doc, table, err);
	if (!rc) {
		json_t *res = json_pack("{s:s, s:s, s:O}", "table", key, "source", source, "files",
					json_object_get(t, "files"));
		if (res && json_object_get(t, "renamed_columns"))
			json_object_set(res, "renamed_columns", json_object_get(t, "renamed_columns"));
		rc = res ? fdl_json_dump(out, NULL, res, err) : fdl_oom(err);
		json_decref(res);
	}
	free(key);
	json_decref(doc);
	return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* Why the data files as published are not the table (docs/format.md, the
 * section on files.json): deleted rows, columns that changed since a file
 * was written, or what no plain reader reads right. */
static int as_published_check(const json_t *t, const char *key, fdl_error *err)
{
	size_t i;
	const json_t *f;
	const char *dot = strchr(key, '.');
	int slen = dot ? (int)(dot - key) : 4;
	const char *table = dot ? dot + 1 : key;
	const char *why = json_string_value(json_object_get(t, "unreadable"));
	if (why)
		return fdl_fail(err, FDL_EINVALID,
				"table %s cannot be read as plain Parquet: %s. Use --apply to export through DuckLake",
				key, why);
	json_array_foreach(json_object_get(t, "files"), i, f) if (json_object_get(f, "deletes")) return fdl_fail(
		err, FDL_EINVALID,
		"table %s has rows deleted through delete files (%s); its data files as published still hold "
		"them. Export into one FILE.parquet (deletes applied), or rewrite its data files without the "
		"deleted rows in the working catalog and commit: CALL ducklake_rewrite_data_files('lake', "
		"'%s', schema => '%.*s', delete_threshold => 0)",
		key, json_string_value(json_object_get(json_object_get(f, "deletes"), "path")), table, slen,
		dot ? key : "main");
	if (json_is_true(json_object_get(t, "renamed_columns")) || json_is_true(json_object_get(t, "schema_changed")))
		return fdl_fail(err, FDL_EINVALID,
				"table %s had a column renamed, added, retyped or re-added after some of its data files "
				"were written; those files keep the columns they were written with, so as published they "
				"are not the table. Export into one FILE.parquet (columns mapped by field id)",
				key);
	return 0;
}

/* One FILE.parquet is written whole or not at all: DuckDB writes a
 * temporary file of fdl's beside it (named by its writer, swept when that
 * process died), the one path a confined DuckDB may write, and fdl renames
 * it over FILE.parquet; DuckDB's own temporary file beside an existing
 * one (tmp_FILE.parquet) is outside the confinement (issue 62). */
static int export_begin(fdl_atomic_file *a, const char *to, fdl_error *err)
{
	char *abs = NULL;
	int rc = fdl_path_absolute(&abs, to, err);
	if (!rc)
		rc = fdl_atomic_begin(a, abs, err);
	free(abs);
	return rc;
}

static int export_end(fdl_atomic_file *a, int rc, fdl_error *err)
{
	if (rc) {
		fdl_atomic_abort(a);
		return rc;
	}
	return fdl_atomic_commit(a, err);
}

static int export_applied(fdl_reader *r, const char *key, const char *to, fdl_error *err)
{
	if (!ends_with(to, ".parquet"))
		return fdl_fail(err, FDL_EINVALID, "--apply writes one file: give --to FILE.parquet");
	fdl_atomic_file a;
	int rc = export_begin(&a, to, err);
	if (rc)
		return rc;
	fdl_duck *d = NULL;
	rc = fdl_duck_new(&d, false, err);
	if (!rc)
		rc = reader_attach(r, d, "lake", a.tmp, err);
	if (!rc)
		rc = fdl_catalog_export_table(d, "lake", key, a.tmp, err);
	fdl_duck_free(d);
	return export_end(&a, rc, err);
}

/* Copy one file of the table (data_dir/path) to dir/<its name>, checked
 * against the size `source` records; *dst gets the local path. */
static int fetch_part(char **dst, fdl_reader *r, const json_t *f, const char *dir, const char *source, fdl_error *err)
{
	const char *path = json_string_value(json_object_get(f, "path"));
	int rc = fdl_path_check_relative(path, FDL_FILES_JSON " path", err);
	if (rc)
		return rc;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *skey = fdl_asprintf("%s/%s", r->repo->data_dir, path);
	*dst = fdl_asprintf("%s/%s", dir, base);
	rc = skey && *dst ? fdl_store_get_file(r->repo->store, skey, *dst, err) : fdl_oom(err);
	struct stat st;
	if (!rc && stat(*dst, &st) == 0 && (int64_t)st.st_size != json_integer_value(json_object_get(f, "bytes")))
		rc = fdl_fail(err, FDL_EINVALID, "%s/%s is %lld bytes; %s says %lld", r->repo->root, skey,
			      (long long)st.st_size, source, (long long)json_integer_value(json_object_get(f, "bytes")));
	free(skey);
	return rc;
}

/* The table as DuckLake returns it, into one Parquet file: its data and
 * delete files fetched into tmpdir, read by files.json's facts. */
static int export_read(fdl_reader *r, const json_t *t, const char *tmpdir, const char *to, const char *source,
		       fdl_error *err)
{
	const json_t *files = json_object_get(t, "files");
	size_t n = json_array_size(files);
	fdl_plain_file *parts = calloc(n ? n : 1, sizeof *parts);
	int rc = parts ? 0 : fdl_oom(err);
	for (size_t i = 0; i < n && !rc; i++) {
		const json_t *f = json_array_get(files, i), *del = json_object_get(f, "deletes");
		char *data = NULL, *dels = NULL;
		rc = fetch_part(&data, r, f, tmpdir, source, err);
		if (!rc && del)
			rc = fetch_part(&dels, r, del, tmpdir, source, err);
		parts[i].data = data;
		parts[i].deletes = dels;
	}
	fdl_duck *d = NULL;
	fdl_atomic_file a;
	if (!rc && !(rc = export_begin(&a, to, err))) {
		rc = fdl_duck_new(&d, false, err);
		if (!rc)
			rc = fdl_catalog_read_plain(d, t, parts, n, a.tmp, err);
		fdl_duck_free(d);
		rc = export_end(&a, rc, err);
	}
	for (size_t i = 0; parts && i < n; i++) {
		free((char *)parts[i].data);
		free((char *)parts[i].deletes);
	}
	free(parts);
	return rc;
}

/* The data files as published, one file each, into the folder `to`. */
static int export_as_published(fdl_reader *r, const json_t *t, const char *to, const char *source, fdl_error *err)
{
	int rc = fdl_mkdir_p(to, err);
	size_t i;
	const json_t *f;
	json_array_foreach(json_object_get(t, "files"), i, f)
	{
		char *dst = NULL;
		if (!rc)
			rc = fetch_part(&dst, r, f, to, source, err);
		free(dst);
	}
	return rc;
}

int fdl_reader_export(fdl_reader *r, const char *table, const char *to, int apply, fdl_error *err)
{
	json_t *doc = NULL;
	const char *source = NULL;
	const json_t *t = NULL;
	char *key = NULL, *tmpdir = NULL;
	/* the catalog is right where files.json disagrees: a version whose
	 * catalog leads out of the repository is not read at all */
	int rc = apply ? 0 : check_confined(r, NULL, err);
	if (!rc)
		rc = files_doc(&doc, &source, r, err);
	if (!rc)
		rc = find_table(&t, &key, doc, table, err);
	if (!rc && apply) {
		rc = export_applied(r, key, to, err);
		goto out;
	}
	if (!rc && !json_object_get(t, "columns")) {
		/* files.json from before fdl recorded how a table reads: the
		 * catalog says it */
		json_decref(doc);
		doc = NULL;
		source = "catalog";
		free(key);
		key = NULL;
		rc = catalog_files_doc(&doc, r, err);
		if (!rc)
			rc = find_table(&t, &key, doc, table, err);
	}
	if (!rc && json_array_size(json_object_get(t, "files")) == 0)
		rc = fdl_fail(err, FDL_ENOTFOUND, "table %s has no data files; nothing to export", key);
	if (rc)
		goto out;
	if (!ends_with(to, ".parquet")) {
		rc = as_published_check(t, key, err);
		if (!rc)
			rc = export_as_published(r, t, to, source, err);
		goto out;
	}
	rc = fdl_tempdir(&tmpdir, "export", err);
	if (!rc)
		rc = export_read(r, t, tmpdir, to, source, err);
	if (rc)
		fdl_error_prefix(err, "exporting %s", key);
out:
	if (tmpdir) {
		fdl_rm_rf(tmpdir);
		free(tmpdir);
	}
	free(key);
	json_decref(doc);
	return rc;
}
