/* Working catalogs: the record a checkout leaves (a folder's record file or
 * a PostgreSQL table), their ATTACH for stock DuckDB, their description files. */
#include "work.h"
#include "../catalog/catalog.h"
#include "../layout/dataset.h"

#include <dirent.h>
#include <unistd.h>

#include <stdlib.h>
#include <string.h>

void fdl_work_free(fdl_work *w)
{
	free(w->dir);
	free(w->catalog);
	free(w->repository);
	free(w->branch);
	free(w->data_path);
	free(w->record);
	memset(w, 0, sizeof *w);
}

/* ---- the record of a PostgreSQL working catalog ------------------------------ */

int fdl_work_pg_read(fdl_buf *out, const char *conninfo, fdl_error *err)
{
	int rc = fdl_catalog_pg_record_read(out, conninfo, err);
	if (rc == FDL_ENOTFOUND)
		fdl_fail(err, rc, "PostgreSQL %s holds no fdl working catalog (no public.%s record; run fdl checkout)",
			 *conninfo ? conninfo : "(PG* environment)", FDL_PG_RECORD_TABLE);
	return rc;
}

/* Create the record (old NULL), or replace it only if it still is `old`. */
static int pg_write(const char *conninfo, const char *text, const char *old, fdl_error *err)
{
	int rc = fdl_catalog_pg_record_write(conninfo, text, old, err);
	if (rc == FDL_ECONFLICT)
		fdl_fail(err, FDL_ECONFLICT,
			 "the working catalog's record in PostgreSQL changed meanwhile (another fdl commit "
			 "of the same catalog); run fdl commit again");
	return rc;
}

/* The record's optional fields: ids and sha256s kept when well formed. */
static int work_optional(fdl_work *w, const json_t *j, const char *path, fdl_error *err)
{
	const char *s;
	int64_t n;
	bool present;
	int rc = 0;
	if (!(rc = fdl_json_get_string(&s, j, "description_sha256", false, path, "description_sha256", err)) && s &&
	    strlen(s) == 64)
		memcpy(w->description_sha256, s, 65);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "description_from", false, path, "description_from", err)) &&
	    s && fdl_id_is_valid(s))
		memcpy(w->description_from, s, FDL_ID_LEN + 1);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "names_sha256", false, path, "names_sha256", err)) && s &&
	    strlen(s) == 64)
		memcpy(w->names_sha256, s, 65);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "names_at", false, path, "names_at", err)) && s &&
	    fdl_id_is_valid(s))
		memcpy(w->names_at, s, FDL_ID_LEN + 1);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "template_sha256", false, path, "template_sha256", err)) && s &&
	    strlen(s) == 64)
		memcpy(w->template_sha256, s, 65);
	if (!rc && !(rc = fdl_json_get_int(&n, &present, j, "base_snapshot", false, path, "base_snapshot", err)) &&
	    present)
		w->base_snapshot = n;
	return rc;
}

/* An id field (`what` says which for the message), absent or valid. */
static int work_id(char out[FDL_ID_LEN + 1], const json_t *j, const char *field, const char *what, const char *path,
		   fdl_error *err)
{
	const char *s;
	int rc = fdl_json_get_string(&s, j, field, false, path, field, err);
	if (!rc && s && !fdl_id_is_valid(s))
		rc = fdl_fail(err, FDL_EINVALID, "%s: field '%s' is not %s", path, field, what);
	else if (!rc && s)
		memcpy(out, s, FDL_ID_LEN + 1);
	return rc;
}

int fdl_work_parse(fdl_work *w, const char *data, size_t len, const char *path, fdl_error *err)
{
	json_t *j = NULL;
	const char *s;
	int rc = fdl_json_parse(&j, data, len, path, err);
	if (!rc) { /* null means "no base": the same as absent */
		if (json_is_null(json_object_get(j, "base")))
			json_object_del(j, "base");
		if (json_is_null(json_object_get(j, "base_snapshot")))
			json_object_del(j, "base_snapshot");
		if (json_is_null(json_object_get(j, "pending")))
			json_object_del(j, "pending");
	}
	if (!rc && !(rc = fdl_json_get_string(&s, j, "repository", true, path, "repository", err)))
		w->repository = fdl_strdup(s);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "branch", true, path, "branch", err)))
		w->branch = fdl_strdup(s);
	if (!rc && !(rc = fdl_json_get_string(&s, j, "data_path", true, path, "data_path", err)))
		w->data_path = fdl_strdup(s);
	if (!rc)
		rc = work_id(w->base, j, "base", "a version id", path, err);
	if (!rc)
		rc = work_id(w->id, j, "id", "an id", path, err);
	if (!rc)
		rc = work_id(w->pending, j, "pending", "a version id", path, err);
	if (!rc)
		rc = work_optional(w, j, path, err);
	if (!rc && (!w->repository || !w->branch || !w->data_path))
		rc = fdl_oom(err);
	json_decref(j);
	return rc;
}

int fdl_work_load(fdl_work *w, const char *dir, fdl_error *err)
{
	memset(w, 0, sizeof *w);
	w->base_snapshot = -1;
	w->postgres = !strncmp(dir, FDL_PG_PREFIX, strlen(FDL_PG_PREFIX));
	int rc = w->postgres ? ((w->dir = fdl_strdup(dir)) ? 0 : fdl_oom(err)) : fdl_path_absolute(&w->dir, dir, err);
	if (rc)
		return rc;
	char *path = w->postgres ? fdl_strdup(dir) : fdl_asprintf("%s/%s", w->dir, FDL_WORK_FILE);
	w->catalog = w->postgres ? fdl_strdup(dir + strlen(FDL_PG_PREFIX)) : fdl_asprintf("%s/%s", w->dir, FDL_WORK_CATALOG);
	fdl_buf b = {0};
	if (!path || !w->catalog)
		rc = fdl_oom(err);
	if (!rc)
		rc = w->postgres ? fdl_work_pg_read(&b, w->catalog, err) : fdl_file_read(&b, path, 1 << 20, err);
	if (rc == FDL_ENOTFOUND && !w->postgres)
		rc = fdl_fail(err, FDL_ENOTFOUND, "%s is not a working catalog made by `fdl checkout` (no %s)",
			      w->dir, FDL_WORK_FILE);
	if (!rc)
		rc = fdl_work_parse(w, b.data, b.len, path, err);
	if (!rc && w->postgres && !(w->record = fdl_strdup(b.data)))
		rc = fdl_oom(err);
	fdl_buf_free(&b);
	free(path);
	if (rc)
		fdl_work_free(w);
	return rc;
}

char *fdl_work_template_path(const fdl_work *w)
{
	return w->postgres ? NULL : fdl_asprintf("%s/" FDL_WORK_TEMPLATE, w->dir);
}

int fdl_work_save(fdl_work *w, fdl_error *err)
{
	json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s}", "fdl_work", 1, "repository", w->repository, "branch",
			      w->branch, "catalog", w->postgres ? "postgres" : FDL_WORK_CATALOG, "data_path", w->data_path);
	if (!j)
		return fdl_oom(err);
	if (w->id[0])
		json_object_set_new(j, "id", json_string(w->id));
	json_object_set_new(j, "base", w->base[0] ? json_string(w->base) : json_null());
	json_object_set_new(j, "base_snapshot", w->base_snapshot >= 0 ? json_integer(w->base_snapshot) : json_null());
	if (w->pending[0])
		json_object_set_new(j, "pending", json_string(w->pending));
	if (w->description_sha256[0])
		json_object_set_new(j, "description_sha256", json_string(w->description_sha256));
	if (w->description_from[0])
		json_object_set_new(j, "description_from", json_string(w->description_from));
	if (w->names_sha256[0] && w->names_at[0]) {
		json_object_set_new(j, "names_sha256", json_string(w->names_sha256));
		json_object_set_new(j, "names_at", json_string(w->names_at));
	}
	if (w->template_sha256[0])
		json_object_set_new(j, "template_sha256", json_string(w->template_sha256));
	char *text = NULL;
	size_t len = 0;
	char *path = fdl_asprintf("%s/%s", w->dir, FDL_WORK_FILE);
	int rc = path ? fdl_json_dump(&text, &len, j, err) : fdl_oom(err);
	if (!rc)
		rc = w->postgres ? pg_write(w->catalog, text, w->record, err) : fdl_file_write_atomic(path, text, len, err);
	if (!rc && w->postgres) {
		free(w->record);
		w->record = text;
		text = NULL;
	}
	free(text);
	free(path);
	json_decref(j);
	return rc;
}

/* ---- the repository's record of a working catalog ---------------------------- */

int fdl_work_data_location(char **out, fdl_repo *repo, fdl_error *err)
{
	char *data = fdl_store_local_path(repo->store, repo->data_dir);
	if (data)
		*out = fdl_asprintf("%s/", data);
	else if (fdl_store_can(repo->store, FDL_STORE_BUCKET))
		*out = fdl_strdup(repo->data_url);
	else
		return fdl_fail(err, FDL_EINVALID, "%s: a %s repository is read only; check out from its folder or bucket",
				repo->root, repo->store->ops->name);
	free(data);
	return *out ? 0 : fdl_oom(err);
}

int fdl_work_staging_location(char **out, fdl_repo *repo, const char *id, fdl_error *err)
{
	char *key = fdl_workrec_staging(id);
	char *local = key ? fdl_store_local_path(repo->store, key) : NULL;
	if (local)
		*out = fdl_asprintf("%s/", local);
	else
		*out = key ? fdl_asprintf("%s/%s/", repo->root, key) : NULL;
	free(local);
	free(key);
	return *out ? 0 : fdl_oom(err);
}

/* Where the working catalog is, for people reading the record: a folder on
 * a host, or the PostgreSQL connection string without its password
 * ("password=..." and a URI's "user:secret@"). */
static char *where_is(const fdl_work *w, const char *dir)
{
	if (!w->postgres) {
		char host[256] = "";
		gethostname(host, sizeof host - 1);
		return fdl_asprintf("%s:%s", host, dir ? dir : w->dir);
	}
	fdl_buf b = {0};
	fdl_error e;
	const char *p = w->dir, *scheme = strstr(p, "://");
	const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
	const char *colon = at ? memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) : NULL;
	int rc = 0;
	while (!rc && *p) {
		if (colon && p == colon) { /* the URI's secret */
			p = at;
			continue;
		}
		size_t n = strcspn(p, " &?");
		const char *tok = p;
		bool secret = !strncmp(tok, "password=", 9) && !(colon && p < colon);
		if (colon && p < colon && p + n > colon)
			n = (size_t)(colon - p);
		if (!secret)
			rc = fdl_buf_add(&b, p, n, &e);
		p += n;
		if (!rc && *p && !(colon && p == colon))
			rc = fdl_buf_add(&b, p++, 1, &e);
	}
	if (rc) {
		fdl_buf_free(&b);
		return NULL;
	}
	return fdl_buf_detach(&b);
}

int fdl_work_record_create(fdl_repo *repo, const fdl_work *w, const char *dir, fdl_error *err)
{
	char now[32];
	int rc = w->id[0] ? fdl_time_now_iso(now, err) : 0;
	if (rc || !w->id[0])
		return rc;
	char *where = where_is(w, dir);
	json_t *rec = where ? json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:i}", "fdl_work", 1, "id", w->id,
					"branch", w->branch, "catalog", w->postgres ? "postgres" : "sqlite", "where",
					where, "checked_out_at", now, "used_at", now, "lease_days", FDL_WORK_LEASE_DAYS)
			    : NULL;
	if (rec)
		json_object_set_new(rec, "base", w->base[0] ? json_string(w->base) : json_null());
	rc = rec ? fdl_workrec_create(repo, w->id, rec, err) : fdl_oom(err);
	json_decref(rec);
	free(where);
	return rc;
}

int fdl_work_record_read(fdl_workrec_seen *out, fdl_repo *repo, const fdl_work *w, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	return w->id[0] ? fdl_workrec_read(out, repo, w->id, err) : 0;
}

int fdl_work_record_touch(fdl_repo *repo, const fdl_work *w, fdl_workrec_seen *seen, fdl_error *err)
{
	if (!w->id[0])
		return 0;
	json_t *f = json_pack("{s:s, s:o}", "branch", w->branch, "base", w->base[0] ? json_string(w->base) : json_null());
	int rc = f ? fdl_workrec_touch(repo, w->id, f, seen, err) : fdl_oom(err);
	json_decref(f);
	return rc;
}

int fdl_work_lock(fdl_lockfile *lk, fdl_work *w, const char *work, const char *command, fdl_error *err)
{
	if (w->postgres)
		return 0;
	char *path = fdl_asprintf("%s/%s", w->dir, FDL_WORK_LOCK);
	char *what = fdl_asprintf("the working catalog %s", w->dir);
	int rc = path && what ? fdl_lockfile_take(lk, path, what, command, err) : fdl_oom(err);
	free(path);
	free(what);
	if (rc)
		return rc;
	/* read the record again, now that no other writer can change it */
	fdl_work_free(w);
	if ((rc = fdl_work_load(w, work, err)))
		fdl_lockfile_release(lk);
	return rc;
}

int fdl_work_remove(const char *dir, fdl_error *err)
{
	fdl_work w;
	int rc = fdl_work_load(&w, dir, err);
	if (rc)
		return rc;
	fdl_repo *repo = NULL;
	/* the repository forgets it first (its record, then the files it had
	 * not committed): then nothing is left that names it */
	if (w.id[0] && !(rc = fdl_repo_open(&repo, w.repository, err)))
		rc = fdl_workrec_remove(repo, w.id, err);
	fdl_repo_free(repo);
	if (!rc && w.postgres)
		rc = fdl_catalog_pg_record_drop(w.catalog, err);
	else if (!rc)
		fdl_rm_rf(w.dir);
	fdl_work_free(&w);
	return rc;
}

int fdl_work_attach_sql(char **out, const char *work, const char *alias, fdl_error *err)
{
	fdl_work w;
	int rc = fdl_work_load(&w, work, err);
	if (rc)
		return rc;
	/* data in a bucket: a secret made now from the writer's own AWS
	 * configuration (never stored in the working catalog folder) */
	fdl_store *store = NULL;
	if (w.data_path[0] != '/')
		rc = fdl_store_open(&store, w.repository, err);
	fdl_lake_script s = {.kind = w.postgres ? FDL_CAT_POSTGRES : FDL_CAT_SQLITE,
			     .catalog = w.catalog,
			     .data_path = w.data_path,
			     .alias = alias,
			     .store = store};
	if (!rc)
		rc = fdl_catalog_attach_script(out, &s, err);
	fdl_store_free(store);
	fdl_work_free(&w);
	return rc;
}

int fdl_work_info_read(fdl_work_info **out, const char *work, fdl_error *err)
{
	fdl_work w;
	int rc = fdl_work_load(&w, work, err);
	if (rc)
		return rc;
	fdl_work_info *i = calloc(1, sizeof *i);
	if (i) {
		i->repository = fdl_strdup(w.repository);
		i->branch = fdl_strdup(w.branch);
		i->data_path = fdl_strdup(w.data_path ? w.data_path : "");
		i->catalog = fdl_strdup(w.catalog);
		memcpy(i->base, w.base, sizeof i->base);
	}
	fdl_work_free(&w);
	if (!i || !i->repository || !i->branch || !i->data_path || !i->catalog) {
		fdl_work_info_free(i);
		return fdl_oom(err);
	}
	*out = i;
	return 0;
}

void fdl_work_info_free(fdl_work_info *info)
{
	if (!info)
		return;
	free(info->repository);
	free(info->branch);
	free(info->data_path);
	free(info->catalog);
	free(info);
}

/* ---- the description files of a working folder ------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a > b && !strcmp(s + a - b, suffix);
}

/* Descriptions are small: a file over 64 MiB is refused, not read. */
#define DESC_MAX_BYTES (64u << 20)

static int read_desc(fdl_desc_file *f, const char *dir, const char *name, fdl_error *err)
{
	f->path = fdl_asprintf("%s/%s", dir, name);
	return f->path ? fdl_file_read(&f->text, f->path, DESC_MAX_BYTES, err) : fdl_oom(err);
}

int fdl_work_description(fdl_desc_files *out, const char *dir, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	const char *tops[] = {"dataset.yml", "dataset.yaml", FDL_DATASET_JSON};
	fdl_strlist names = {0};
	DIR *dh = opendir(dir);
	if (!dh)
		return fdl_fail(err, FDL_EIO, "cannot list %s", dir);
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(dh)))
		if (ends_with(e->d_name, ".table.yml") || ends_with(e->d_name, ".table.yaml"))
			rc = fdl_strlist_add(&names, e->d_name, err);
	closedir(dh);
	/* the dataset file, in a fixed order so messages do not depend on readdir */
	const char *top = NULL;
	for (size_t i = 0; i < 3 && !rc; i++) {
		char *p = fdl_asprintf("%s/%s", dir, tops[i]);
		if (!p)
			rc = fdl_oom(err);
		else if (access(p, F_OK) == 0 && top)
			rc = fdl_fail(err, FDL_EINVALID, "%s holds both %s and %s; keep the description in one of them",
				      dir, top, tops[i]);
		else if (access(p, F_OK) == 0)
			top = tops[i];
		free(p);
	}
	if (!rc && top)
		rc = read_desc(&out->top, dir, top, err);
	fdl_strlist_sort(&names);
	if (!rc && names.len && !(out->tables = calloc(names.len, sizeof *out->tables)))
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && i < names.len; i++)
		rc = read_desc(&out->tables[out->ntables++], dir, names.items[i], err);
	fdl_strlist_free(&names);
	if (rc)
		fdl_desc_files_free(out);
	return rc;
}
