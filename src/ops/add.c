/*
 * fdl add: Parquet files another engine wrote become new data of a table
 * of a working catalog, registered where they lie (docs/decisions.md,
 * "fdl add"). The files must already be in the repository: under the
 * table's folder in the working catalog's own folder, work/<id>/, which
 * is its DATA_PATH; the commit that publishes them puts them into the data
 * folder as it does every file DuckDB wrote there (a hard link on a
 * folder). Nothing outside the repository is referenced, nothing is
 * copied. Everything is checked before anything is registered, and the
 * registration is one DuckLake transaction.
 */
#include "work.h"
#include "report.h"
#include "add.h"
#include "../catalog/catalog.h"

#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fdl_add_job_free(add_job *j)
{
	fdl_duck_free(j->d);
	fdl_repo_free(j->repo);
	fdl_work_free(&j->w);
	fdl_add_shape_free(&j->shape);
	free(j->schema);
	free(j->table);
	free(j->folder);
	free(j->dir);
	free(j->realdir);
	free(j->key);
	fdl_strlist_free(&j->rel);
	fdl_strlist_free(&j->keys);
	fdl_strlist_free(&j->names);
	fdl_strlist_free(&j->types);
}

/* A name DuckLake gives a folder of its own name ("<name>/"), which
 * --create needs to know the new table's folder before it exists. */
static bool plain_name(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(s);
}

int fdl_add_job_open(add_job *j, const char *work, const char *table, bool create, fdl_error *err)
{
	const char *dot = strchr(table, '.');
	j->schema = dot ? fdl_asprintf("%.*s", (int)(dot - table), table) : fdl_strdup("main");
	j->table = fdl_strdup(dot ? dot + 1 : table);
	if (!j->schema || !j->table)
		return fdl_oom(err);
	if (!*j->schema || !*j->table)
		return fdl_fail(err, FDL_EINVALID, "\"%s\" is no table name ([SCHEMA.]TABLE expected)", table);
	int rc = 0;
	if (j->w.postgres)
		rc = fdl_fail(err, FDL_EINVALID, "fdl add works on a working folder; %s is a PostgreSQL working catalog",
			      work);
	if (!rc && !j->w.id[0])
		rc = fdl_fail(err, FDL_EINVALID, "%s was checked out before fdl kept records of working catalogs; check "
				  "it out again", work);
	if (!rc)
		rc = fdl_repo_open(&j->repo, j->w.repository, err);
	j->bucket = !rc && fdl_store_can(j->repo->store, FDL_STORE_BUCKET);
	if (!rc && !j->bucket && !fdl_store_can(j->repo->store, FDL_STORE_LOCAL))
		rc = fdl_fail(err, FDL_EINVALID, "fdl add registers files of a repository on a folder or a bucket; %s "
				  "is neither", j->repo->root);
	static const char *const plain[] = {"sqlite_scanner", "ducklake", NULL},
				 *const iceberg[] = {"sqlite_scanner", "ducklake", "avro", "iceberg", NULL};
	if (!rc)
		rc = fdl_duck_new_loading(&j->d, j->iceberg ? iceberg : plain, err);
	if (!rc)
		rc = fdl_duck_use_data(j->d, j->w.data_path, j->repo->store, err);
	if (!rc)
		rc = fdl_catalog_attach_work(j->d, ADD_ALIAS, j->w.catalog, FDL_CAT_SQLITE, j->w.data_path, err);
	if (!rc)
		rc = fdl_catalog_add_shape(j->d, ADD_ALIAS, j->schema, j->table, &j->shape, err);
	if (rc)
		return rc;
	if (j->shape.table_exists)
		j->folder = fdl_strdup(j->shape.folder);
	else if (!create)
		return fdl_fail(err, FDL_ENOTFOUND, "%s has no table %s.%s (--create makes it from the files)", work,
				j->schema, j->table);
	else if (!plain_name(j->table) || (!j->shape.schema_exists && !plain_name(j->schema)))
		return fdl_fail(err, FDL_EINVALID,
				"--create makes tables named with letters, digits and '_' only (a folder of the same "
				"name), not %s.%s; create the table with DuckDB first",
				j->schema, j->table);
	else
		j->folder = j->shape.schema_exists ? fdl_asprintf("%s%s/", j->shape.schema_folder, j->table)
						   : fdl_asprintf("%s/%s/", j->schema, j->table);
	size_t n = j->folder ? strlen(j->w.data_path) : 0;
	j->dir = j->folder ? fdl_asprintf("%.*s/%.*s", (int)(n && j->w.data_path[n - 1] == '/' ? n - 1 : n),
					  j->w.data_path, (int)strlen(j->folder) - 1, j->folder)
			   : NULL;
	char *staging = fdl_workrec_staging(j->w.id);
	j->key = staging && j->folder ? fdl_asprintf("%s/%s", staging, j->folder) : NULL;
	free(staging);
	if (!j->dir || !j->key)
		return fdl_oom(err);
	j->realdir = j->bucket ? NULL : realpath(j->dir, NULL);
	return 0;
}

/* ---- the files named --------------------------------------------------------- */

int fdl_add_refuse_outside(const add_job *j, const char *path, fdl_error *err)
{
	return fdl_fail(err, FDL_EINVALID,
			"%s is not under %s/, the folder of table %s.%s in the working catalog's own folder of the "
			"repository; fdl add registers files only where they lie there, so that no version names a "
			"file outside the repository (fdl add --folder prints it; write the files there). Nothing "
			"was added",
			path, j->dir, j->schema, j->table);
}

int fdl_add_job_file(add_job *j, const char *path, fdl_error *err)
{
	struct stat st;
	if (lstat(path, &st))
		return fdl_fail(err, errno == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode))
		return fdl_fail(err, FDL_EINVALID, "%s is %s; fdl add takes regular files (it follows no symlink)", path,
				S_ISLNK(st.st_mode) ? "a symlink" : "not a regular file");
	char *real = realpath(path, NULL);
	size_t n = j->realdir ? strlen(j->realdir) : 0;
	int rc = real ? 0 : fdl_fail(err, FDL_EIO, "%s: %s", path, strerror(errno));
	if (!rc && (!j->realdir || strncmp(real, j->realdir, n) || real[n] != '/'))
		rc = fdl_add_refuse_outside(j, path, err);
	if (!rc)
		rc = fdl_strlist_add(&j->rel, real + n + 1, err);
	if (!rc)
		j->bytes += (int64_t)st.st_size;
	free(real);
	return rc;
}

/* A folder, recursively, leaving out names that start with '.' or '_'
 * (Hadoop's hidden files: Spark's _SUCCESS, its .crc files). */
static int add_dir(add_job *j, const char *path, int depth, fdl_error *err)
{
	if (depth > 32)
		return fdl_fail(err, FDL_EINVALID, "%s: folders nested too deep", path);
	DIR *dir = opendir(path);
	if (!dir)
		return fdl_fail(err, FDL_EIO, "%s: %s", path, strerror(errno));
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(dir))) {
		if (e->d_name[0] == '.' || e->d_name[0] == '_')
			continue;
		char *sub = fdl_asprintf("%s/%s", path, e->d_name);
		struct stat st;
		if (!sub)
			rc = fdl_oom(err);
		else if (lstat(sub, &st))
			rc = fdl_fail(err, FDL_EIO, "%s: %s", sub, strerror(errno));
		else if (S_ISDIR(st.st_mode))
			rc = add_dir(j, sub, depth + 1, err);
		else
			rc = fdl_add_job_file(j, sub, err);
		free(sub);
	}
	closedir(dir);
	return rc;
}

/* ---- a bucket's keys ---- */

/* Whether a key below the table's folder is one a listing leaves out: a
 * name under it that starts with '.' or '_'. */
static bool hidden_below(const char *rel)
{
	for (const char *p = rel; *p; p++)
		if ((p == rel || p[-1] == '/') && (*p == '.' || *p == '_'))
			return true;
	return false;
}

static int add_key(add_job *j, const char *url, const char *key, fdl_error *err)
{
	size_t n = strlen(j->key);
	int64_t bytes = 0;
	int rc = fdl_path_check_relative(key, url, err);
	if (!rc && strncmp(key, j->key, n))
		rc = fdl_add_refuse_outside(j, url, err);
	if (!rc && (rc = fdl_store_head(j->repo->store, key, &bytes, err)) == FDL_ENOTFOUND)
		rc = fdl_fail(err, FDL_ENOTFOUND, "%s: no such object", url);
	if (!rc)
		rc = fdl_strlist_add(&j->rel, key + n, err);
	if (!rc)
		j->bytes += bytes;
	return rc;
}

/* An s3:// URL in the repository's bucket: an object, or a prefix read
 * recursively (hidden names left out). */
static int add_url(add_job *j, const char *arg, fdl_error *err)
{
	size_t n = strlen(j->repo->root);
	if (strncmp(arg, j->repo->root, n) || arg[n] != '/')
		return fdl_add_refuse_outside(j, arg, err);
	if (strpbrk(arg, "*?["))
		return fdl_fail(err, FDL_EINVALID, "%s: a pattern is read on a folder; in a bucket name a prefix", arg);
	const char *key = arg + n + 1;
	int64_t bytes;
	if (key[0] && key[strlen(key) - 1] != '/' && !fdl_store_head(j->repo->store, key, &bytes, err))
		return add_key(j, arg, key, err);
	fdl_error_clear(err);
	/* the prefix as a key (no '/' at its end), listed as a folder */
	size_t len = strlen(key);
	char *prefix = fdl_asprintf("%.*s", (int)(len && key[len - 1] == '/' ? len - 1 : len), key);
	fdl_strlist keys = {0};
	int rc = prefix ? fdl_path_check_relative(prefix, arg, err) : fdl_oom(err);
	size_t n_prefix = prefix ? strlen(prefix) : 0;
	if (!rc && strncmp(prefix, j->key, n_prefix) && strncmp(j->key, prefix, strlen(j->key)))
		rc = fdl_add_refuse_outside(j, arg, err);
	if (!rc)
		rc = fdl_store_list(j->repo->store, prefix, &keys, err);
	if (!rc && !keys.len)
		rc = fdl_fail(err, FDL_ENOTFOUND, "%s: no such object or prefix", arg);
	for (size_t i = 0; !rc && i < keys.len; i++)
		if (!hidden_below(keys.items[i] + n_prefix + 1))
			rc = add_key(j, arg, keys.items[i], err);
	fdl_strlist_free(&keys);
	free(prefix);
	return rc;
}

static int add_arg(add_job *j, const char *arg, fdl_error *err)
{
	if (j->bucket)
		return add_url(j, arg, err);
	struct stat st;
	if (strpbrk(arg, "*?[") && lstat(arg, &st)) {
		glob_t g;
		int grc = glob(arg, 0, NULL, &g);
		int rc = grc == GLOB_NOMATCH ? fdl_fail(err, FDL_ENOTFOUND, "%s matches no file", arg)
			 : grc		    ? fdl_fail(err, FDL_EIO, "%s: the pattern could not be read", arg)
					    : 0;
		for (size_t i = 0; !rc && i < g.gl_pathc; i++)
			rc = add_arg(j, g.gl_pathv[i], err);
		if (grc != GLOB_NOMATCH)
			globfree(&g);
		return rc;
	}
	if (!lstat(arg, &st) && S_ISDIR(st.st_mode))
		return add_dir(j, arg, 0, err);
	return fdl_add_job_file(j, arg, err);
}

/* Sorted, each once. */
static void dedupe(fdl_strlist *l)
{
	fdl_strlist_sort(l);
	size_t k = 0;
	for (size_t i = 0; i < l->len; i++) {
		if (k && !strcmp(l->items[k - 1], l->items[i]))
			free(l->items[i]);
		else
			l->items[k++] = l->items[i];
	}
	l->len = k;
}

/* ---- partition folders ------------------------------------------------------- */

/* The `col=value` folders of one file into keys (and values, if not NULL). */
static int folders_of(const add_job *j, const char *rel, fdl_strlist *keys, fdl_strlist *values, fdl_error *err)
{
	const char *p = rel, *slash;
	int rc = 0;
	while (!rc && (slash = strchr(p, '/'))) {
		const char *eq = memchr(p, '=', (size_t)(slash - p));
		if (!eq || eq == p)
			return fdl_fail(err, FDL_EINVALID,
					"%s/%s: folder \"%.*s\" is not a partition folder (col=value); fdl add reads the "
					"folders under a table's folder as its identity partitions. Nothing was added",
					j->dir, rel, (int)(slash - p), p);
		char *k = fdl_asprintf("%.*s", (int)(eq - p), p);
		char *v = fdl_asprintf("%.*s", (int)(slash - eq - 1), eq + 1);
		rc = k && v ? fdl_strlist_add(keys, k, err) : fdl_oom(err);
		if (!rc && values)
			rc = fdl_strlist_add(values, v, err);
		free(k);
		free(v);
		p = slash + 1;
	}
	return rc;
}

/* Every file under the same partition columns, in the same order. */
static int partition_keys(add_job *j, fdl_error *err)
{
	int rc = folders_of(j, j->rel.items[0], &j->keys, NULL, err);
	for (size_t i = 1; !rc && i < j->rel.len; i++) {
		fdl_strlist k = {0};
		rc = folders_of(j, j->rel.items[i], &k, NULL, err);
		bool same = !rc && k.len == j->keys.len;
		for (size_t c = 0; same && c < k.len; c++)
			same = !strcmp(k.items[c], j->keys.items[c]);
		if (!rc && !same)
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s/%s is under other partition folders than %s/%s; the files of one fdl add "
				      "share their partition columns. Nothing was added",
				      j->dir, j->rel.items[i], j->dir, j->rel.items[0]);
		fdl_strlist_free(&k);
	}
	return rc;
}

/* A partition column's type for --create, from the values its folders
 * hold: INTEGER or BIGINT when every one is a whole number, else VARCHAR. */
static const char *key_type(const add_job *j, size_t key)
{
	bool whole = true, small = true;
	fdl_error ignore;
	for (size_t i = 0; whole && i < j->rel.len; i++) {
		fdl_strlist k = {0}, v = {0};
		if (folders_of(j, j->rel.items[i], &k, &v, &ignore) || v.len <= key) {
			whole = false;
		} else {
			const char *s = v.items[key];
			char *end;
			errno = 0;
			long long x = strtoll(s, &end, 10);
			whole = *s && !*end && !errno && strspn(s, "-0123456789") == strlen(s);
			small = small && x >= INT32_MIN && x <= INT32_MAX;
		}
		fdl_strlist_free(&k);
		fdl_strlist_free(&v);
	}
	return whole ? (small ? "INTEGER" : "BIGINT") : "VARCHAR";
}

/* ---- what each file holds ---------------------------------------------------- */

static bool is_parquet(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char head[4], tail[4];
	struct stat st;
	bool ok = fd >= 0 && !fstat(fd, &st) && st.st_size >= 12 && pread(fd, head, 4, 0) == 4 &&
		  pread(fd, tail, 4, st.st_size - 4) == 4 && !memcmp(head, "PAR1", 4) && !memcmp(tail, "PAR1", 4);
	if (fd >= 0)
		close(fd);
	return ok;
}

static ssize_t index_of(const fdl_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->len; i++)
		if (!strcmp(l->items[i], s))
			return (ssize_t)i;
	return -1;
}

/* One file's columns against the table's: each of its columns the table's
 * with the same type, each column of the table but a partition column in
 * it. */
static int check_columns(const add_job *j, const char *path, const fdl_strlist *names, const fdl_strlist *types,
			 fdl_error *err)
{
	for (size_t i = 0; i < names->len; i++) {
		ssize_t at = index_of(&j->names, names->items[i]);
		if (at < 0)
			return fdl_fail(err, FDL_EINVALID, "%s: column %s (%s) is not a column of table %s.%s. Nothing "
					"was added", path, names->items[i], types->items[i], j->schema, j->table);
		if (strcmp(types->items[i], j->types.items[at]))
			return fdl_fail(err, FDL_EINVALID, "%s: column %s is %s in the file, %s in table %s.%s. "
					"Nothing was added", path, names->items[i], types->items[i],
					j->types.items[at], j->schema, j->table);
	}
	for (size_t i = 0; i < j->names.len; i++)
		if (index_of(names, j->names.items[i]) < 0 && index_of(&j->keys, j->names.items[i]) < 0)
			return fdl_fail(err, FDL_EINVALID, "%s has no column %s (%s) of table %s.%s. Nothing was added",
					path, j->names.items[i], j->types.items[i], j->schema, j->table);
	return 0;
}

/* The table's columns as they will be: the table's, or for --create the
 * first file's and then each partition column it does not hold. */
static int table_columns(add_job *j, const char *first, fdl_error *err)
{
	if (j->shape.table_exists) {
		for (size_t i = 0; i < j->shape.names.len; i++) {
			int rc = fdl_strlist_add(&j->names, j->shape.names.items[i], err);
			if (!rc)
				rc = fdl_strlist_add(&j->types, j->shape.types.items[i], err);
			if (rc)
				return rc;
		}
		for (size_t k = 0; k < j->keys.len; k++)
			if (index_of(&j->names, j->keys.items[k]) < 0)
				return fdl_fail(err, FDL_EINVALID, "the partition folders name column %s, which table "
						"%s.%s does not have. Nothing was added", j->keys.items[k], j->schema,
						j->table);
		return 0;
	}
	int64_t rows;
	int rc = fdl_catalog_parquet_columns(j->d, first, &j->names, &j->types, &rows, err);
	for (size_t k = 0; !rc && k < j->keys.len; k++)
		if (index_of(&j->names, j->keys.items[k]) < 0) {
			rc = fdl_strlist_add(&j->names, j->keys.items[k], err);
			if (!rc)
				rc = fdl_strlist_add(&j->types, key_type(j, k), err);
		}
	return rc;
}

/* Each file Parquet with the table's columns; their sha256 into `added`. */
static int check_files(add_job *j, fdl_strlist *abs, json_t *added, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < j->rel.len; i++) {
		char *path = fdl_asprintf("%s/%s", j->dir, j->rel.items[i]);
		rc = path ? fdl_strlist_add(abs, path, err) : fdl_oom(err);
		if (!rc && !j->bucket && !is_parquet(path))
			rc = fdl_fail(err, FDL_EINVALID, "%s is not a Parquet file (no PAR1 at its start and end). Nothing "
					  "was added", path);
		if (!rc && i == 0)
			rc = table_columns(j, path, err);
		fdl_strlist names = {0}, types = {0};
		int64_t rows = 0;
		if (!rc)
			rc = fdl_catalog_parquet_columns(j->d, path, &names, &types, &rows, err);
		if (!rc)
			rc = check_columns(j, path, &names, &types, err);
		j->rows += rows;
		char hex[65];
		int64_t bytes;
		char *skey = rc ? NULL : fdl_asprintf("%s%s", j->key, j->rel.items[i]);
		if (!rc)
			rc = skey ? fdl_store_sha256(j->repo->store, skey, hex, &bytes, err) : fdl_oom(err);
		free(skey);
		char *key = rc ? NULL : fdl_asprintf("%s%s", j->folder, j->rel.items[i]);
		if (!rc && !key)
			rc = fdl_oom(err);
		if (!rc && (json_object_get(added, key) || fdl_strlist_has_sorted(&j->shape.known, key)))
			rc = fdl_fail(err, FDL_EEXISTS, "%s is a file of table %s.%s already (added before, or written "
					  "by DuckDB into the working catalog); fdl add registers a file once. Nothing "
					  "was added", path, j->schema, j->table);
		if (!rc && json_object_set_new(added, key, json_string(hex)))
			rc = fdl_oom(err);
		free(key);
		free(path);
		fdl_strlist_free(&names);
		fdl_strlist_free(&types);
	}
	return rc;
}

/* ---- the operation ------------------------------------------------------------ */

static int register_files(add_job *j, const fdl_strlist *abs, bool create, fdl_error *err)
{
	json_t *added = NULL;
	int rc = fdl_work_added_read(&added, &j->w, err);
	if (!rc && !added && !(added = json_object()))
		rc = fdl_oom(err);
	if (!rc)
		rc = check_files(j, (fdl_strlist *)abs, added, err);
	/* the hashes first: a file registered always has its record */
	if (!rc)
		rc = fdl_work_added_save(&j->w, added, err);
	json_decref(added);
	fdl_add_batch b = {.schema = j->schema, .table = j->table, .data_path = j->w.data_path,
			   .create = create && !j->shape.table_exists, .schema_exists = j->shape.schema_exists,
			   .names = &j->names, .types = &j->types, .keys = &j->keys, .files = abs};
	if (!rc)
		rc = fdl_catalog_add_files(j->d, ADD_ALIAS, &b, err);
	return rc;
}

static int report(fdl_add_report **out, add_job *j, bool created, fdl_error *err)
{
	fdl_add_report *r = calloc(1, sizeof *r);
	if (!r || !(r->table = fdl_asprintf("%s.%s", j->schema, j->table))) {
		free(r);
		return fdl_oom(err);
	}
	r->created = created;
	r->rows = j->rows;
	r->bytes = j->bytes;
	fdl_strarray_take(&r->partition, &j->keys);
	fdl_strarray_take(&r->files, &j->rel);
	*out = r;
	return 0;
}

int fdl_add(fdl_add_report **out, const char *work, const char *table, const char *const *paths, size_t npaths,
	    const fdl_add_options *opts, fdl_error *err)
{
	*out = NULL;
	fdl_add_options defaults = FDL_ADD_OPTIONS_INIT;
	if (!opts)
		opts = &defaults;
	int orc = fdl_options_check(opts->version, FDL_ADD_OPTIONS_VERSION, "fdl_add", "fdl_add_options", err);
	if (orc)
		return orc;
	if (!npaths)
		return fdl_fail(err, FDL_EINVALID, "fdl add needs files, folders or patterns to add");
	add_job j = {0};
	fdl_lockfile lk = {.fd = -1};
	fdl_strlist abs = {0};
	int rc = fdl_work_load(&j.w, work, err);
	if (!rc)
		rc = fdl_work_lock(&lk, &j.w, work, "fdl add", err);
	if (!rc)
		rc = fdl_add_job_open(&j, work, table, opts->create, err);
	if (!rc)
		rc = fdl_work_record_touch(j.repo, &j.w, NULL, err);
	for (size_t i = 0; !rc && i < npaths; i++)
		rc = add_arg(&j, paths[i], err);
	if (!rc) {
		dedupe(&j.rel);
		if (!j.rel.len)
			rc = fdl_fail(err, FDL_ENOTFOUND, "no file to add under %s", paths[0]);
	}
	if (!rc)
		rc = partition_keys(&j, err);
	if (!rc)
		rc = register_files(&j, &abs, opts->create, err);
	if (!rc)
		rc = report(out, &j, opts->create && !j.shape.table_exists, err);
	fdl_strlist_free(&abs);
	fdl_lockfile_release(&lk);
	fdl_add_job_free(&j);
	return rc;
}

int fdl_add_folder(char **out, const char *work, const char *table, fdl_error *err)
{
	add_job j = {0};
	int rc = fdl_work_load(&j.w, work, err);
	if (!rc)
		rc = fdl_add_job_open(&j, work, table, true, err);
	if (!rc)
		*out = fdl_asprintf("%s/", j.dir);
	if (!rc && !*out)
		rc = fdl_oom(err);
	fdl_add_job_free(&j);
	return rc;
}
