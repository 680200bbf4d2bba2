/* fdl checkout: a new working catalog holding a branch's tip. */
#include "../catalog/catalog.h"
#include "work.h"
#include "../layout/dataset.h"
#include "../layout/keys.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int dir_is_empty_or_absent(const char *dir, bool *existed, fdl_error *err)
{
	*existed = false;
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return fdl_fail(err, errno == ENOTDIR ? FDL_EEXISTS : FDL_EIO, "cannot use %s as a working catalog "
				"folder: %s", dir, strerror(errno));
	}
	*existed = true;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			rc = fdl_fail(err, FDL_EEXISTS, "%s is not empty (it holds %s); refusing to check out there",
				      dir, e->d_name);
			break;
		}
	closedir(d);
	return rc;
}

/* The base version's description, to edit, as Git checks out a file:
 * WORK/dataset.yml, with what the catalog adds left out. Its sha256 goes in
 * the record: unedited, the next commit carries it over as it was, and a
 * table or column dropped meanwhile simply leaves it. */
int fdl_checkout_description(fdl_work *w, fdl_repo *repo, fdl_error *err)
{
	fdl_version *v = NULL;
	char *path = NULL;
	json_t *ds = NULL, *mine = NULL;
	fdl_buf yml = {0};
	int rc = fdl_version_read(&v, repo, w->base, err);
	if (!rc)
		rc = fdl_version_load_json(&ds, repo, v, "dataset", err);
	if ((rc == FDL_ENOTFOUND && v) || (!rc && !ds)) { /* older than dataset.json: nothing to give */
		fdl_error_clear(err);
		rc = 0;
		goto out;
	}
	if (!rc && !(mine = fdl_dataset_user_part(ds)))
		rc = fdl_oom(err);
	char header[400];
	snprintf(header, sizeof header,
		 "# The description of this dataset as version %s published it (its\n"
		 "# " FDL_DATASET_JSON ", without what the catalog adds). Edit it and commit: what you\n"
		 "# leave as it is carries over; a key you delete is removed.\n",
		 w->base);
	if (!rc)
		rc = fdl_dataset_yaml(&yml, mine, header, err);
	if (!rc && !(path = fdl_asprintf("%s/dataset.yml", w->dir)))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_file_write_atomic(path, yml.data, yml.len, err);
	if (!rc)
		rc = fdl_sha256_mem(w->description_sha256, yml.data, yml.len, err);
	if (!rc)
		memcpy(w->description_from, w->base, sizeof w->description_from);
	/* the files as written name what the base has (renames: freeze.c) */
	fdl_desc_files files = {0};
	if (!rc)
		rc = fdl_work_description(&files, w->dir, err);
	if (!rc)
		rc = fdl_desc_files_sha256(w->names_sha256, &files, err);
	if (!rc)
		memcpy(w->names_at, w->base, sizeof w->names_at);
	fdl_desc_files_free(&files);
out:
	fdl_buf_free(&yml);
	json_decref(ds);
	json_decref(mine);
	free(path);
	fdl_version_free(v);
	return rc;
}

/* A fresh folder beside `final` (same file system, so it can be renamed
 * into place): ".<name>.fdl-<what>-<random>". */
int fdl_checkout_sibling(char **out, const char *final, const char *what, fdl_error *err)
{
	const char *slash = strrchr(final, '/');
	char *parent = slash && slash != final ? strndup(final, (size_t)(slash - final)) : fdl_strdup("/");
	if (!parent)
		return fdl_oom(err);
	int rc = fdl_mkdir_p(parent, err);
	fdl_uuid7_gen gen = {0};
	char id[FDL_ID_LEN + 1];
	if (!rc)
		rc = fdl_uuid7_next(&gen, id, err);
	char *tmp = rc ? NULL : fdl_asprintf("%s/.%s.fdl-%s-%s", parent, slash ? slash + 1 : final, what, id + 24);
	if (!rc && !tmp)
		rc = fdl_oom(err);
	if (!rc && mkdir(tmp, 0777) != 0)
		rc = fdl_fail(err, FDL_EIO, "cannot make a folder beside %s: %s", final,
			      strerror(errno));
	free(parent);
	if (rc) {
		free(tmp);
		return rc;
	}
	*out = tmp;
	return 0;
}

/* A PostgreSQL target must hold no DuckLake catalog yet; FDL_ENOCHANGE when
 * it already is this repository's working catalog on this branch (adopt). */
static int pg_target_free(const fdl_work *w, fdl_repo *repo, fdl_error *err)
{
	fdl_buf rec = {0};
	fdl_error e;
	int rc = fdl_work_pg_read(&rec, w->catalog, &e);
	if (rc == 0) {
		json_t *j = json_loadb(rec.data, rec.len, 0, NULL);
		const char *r = json_string_value(json_object_get(j, "repository"));
		const char *b = json_string_value(json_object_get(j, "branch"));
		rc = r && b && !strcmp(r, repo->root) && !strcmp(b, w->branch)
			     ? FDL_ENOCHANGE
			     : fdl_fail(err, FDL_EEXISTS, "%s is already the working catalog of %s (branch %s)", w->dir,
					r ? r : "?", b ? b : "?");
		json_decref(j);
		fdl_buf_free(&rec);
		return rc;
	}
	fdl_buf_free(&rec);
	if (rc != FDL_ENOTFOUND)
		return fdl_fail(err, e.code, "%s", e.message);
	/* no record: refuse a schema that already holds a DuckLake catalog */
	fdl_duck *d = NULL;
	if ((rc = fdl_duck_new_lean(&d, FDL_DUCK_SQLITE_LAKE, err)))
		return rc;
	rc = fdl_catalog_attach_raw(d, "fdl_probe", w->catalog, FDL_CAT_POSTGRES, true, err);
	bool lake = false;
	if (!rc)
		rc = fdl_catalog_is_lake(d, "fdl_probe", FDL_CAT_POSTGRES, &lake, err);
	if (!rc && lake)
		rc = fdl_fail(err, FDL_EEXISTS, "%s already holds a DuckLake catalog that fdl did not check out; refusing "
			      "to overwrite it", w->dir);
	fdl_duck_free(d);
	return rc;
}

/* A second checkout of a PostgreSQL working catalog: the repository's
 * record of it is refreshed, nothing else changes. */
static int adopt(fdl_repo *repo, const char *work, fdl_error *err)
{
	fdl_work w;
	int rc = fdl_work_load(&w, work, err);
	if (!rc)
		rc = fdl_work_record_touch(repo, &w, NULL, err);
	fdl_work_free(&w);
	return rc;
}

/* `path` with its parent folder resolved (symlinks followed), when that
 * folder exists; NULL otherwise. */
static char *resolved(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *parent = slash && slash != path ? strndup(path, (size_t)(slash - path)) : NULL;
	char *real = parent ? realpath(parent, NULL) : NULL;
	char *out = real ? fdl_asprintf("%s%s", real, slash) : NULL;
	free(parent);
	free(real);
	return out;
}

static bool inside(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;
	return path && n && !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* A working folder inside the repository's data folder (or fdl's work/
 * area) would be taken for data: fdl gc and DuckLake's clean-up look there. */
static int outside_repository_data(fdl_repo *repo, const char *final, fdl_error *err)
{
	const char *areas[] = {repo->data_dir, FDL_WORK_AREA};
	char *real_final = resolved(final);
	int rc = 0;
	for (size_t i = 0; i < 2 && !rc; i++) {
		char *dir = fdl_store_local_path(repo->store, areas[i]);
		char *real = dir ? realpath(dir, NULL) : NULL;
		if (inside(final, dir) || inside(final, real) || inside(real_final, dir) || inside(real_final, real))
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s is inside the repository's %s folder (%s), where fdl gc and DuckLake's "
				      "clean-up delete files; put the working catalog somewhere else",
				      final, i ? "work" : "data", dir);
		free(real);
		free(dir);
	}
	free(real_final);
	return rc;
}

/* The branch a checkout works on: a branch name, refs/heads/<b>, or HEAD. */
static int checkout_branch(char **out, fdl_repo *repo, const char *ref, fdl_error *err)
{
	if (!ref || !strcmp(ref, FDL_HEAD_KEY))
		return fdl_repo_head_branch(out, repo, err);
	if (fdl_id_is_valid(ref) || fdl_ref_kind_of(ref) == FDL_REF_TAG)
		return fdl_fail(err, FDL_EINVALID,
				"--ref %s: a working catalog commits to a branch; give a branch name (create one at "
				"that version first)",
				ref);
	const char *name = fdl_ref_kind_of(ref) == FDL_REF_BRANCH ? fdl_ref_short(ref, NULL) : ref;
	int rc = fdl_ref_name_check(name, err);
	if (rc)
		return rc;
	*out = fdl_strdup(name);
	return *out ? 0 : fdl_oom(err);
}

/* --ref names a branch that does not exist: refused (a typo must not start
 * an unrelated branch), with the branch it most likely meant and the way
 * to ask for a new one. HEAD's own branch before its first version is the
 * exception: an empty repository is checked out that way. */
static int missing_branch(fdl_repo *repo, const char *branch, fdl_error *err)
{
	char *head = NULL;
	int rc = fdl_repo_head_branch(&head, repo, err);
	bool unborn_head = !rc && !strcmp(head, branch);
	free(head);
	if (rc || unborn_head)
		return rc;
	char *tag = fdl_ref_key(FDL_REF_TAG, branch), id[FDL_ID_LEN + 1];
	bool is_tag = false;
	fdl_error e;
	if (!tag || fdl_ref_read(repo, tag, id, &is_tag, NULL, &e))
		is_tag = false;
	free(tag);
	if (is_tag)
		return fdl_fail(err, FDL_EINVALID,
				"--ref %s is a tag, and a working catalog commits to a branch: start one from it with "
				"--new-branch NAME --from %s",
				branch, branch);
	fdl_branch *list = NULL;
	size_t n = 0;
	const char *names[256], *meant = NULL;
	if (!fdl_branch_list(&list, &n, repo, &e)) {
		for (size_t i = 0; i < n && i < 256; i++)
			names[i] = list[i].name;
		meant = fdl_closest(branch, names, n < 256 ? n : 256);
	}
	rc = fdl_fail(err, FDL_ENOTFOUND,
		      "no branch '%s' in %s%s%s%s; nothing was made. To start a new branch, give --new-branch %s "
		      "(from HEAD, or --from REF) or --orphan %s (empty)",
		      branch, repo->root, meant ? " (did you mean '" : "", meant ? meant : "", meant ? "'?)" : "", branch,
		      branch);
	fdl_branch_list_free(list);
	return rc;
}

/* A new branch's start passes the one check of what a version may name
 * (fdl_catalog_version_confined) before the branch is made: a refused checkout makes nothing.
 * One that does not resolve is choose_branch's to report. */
static int start_confined(fdl_repo *repo, const char *start, fdl_error *err)
{
	char id[FDL_ID_LEN + 1];
	fdl_error e;
	fdl_version *v = NULL;
	char *catalog = NULL;
	if (fdl_ref_resolve(id, repo, start, &e) || fdl_version_check_live(repo, id, &e))
		return 0;
	int rc = fdl_version_read(&v, repo, id, err);
	if (!rc)
		rc = fdl_version_fetch_catalog(&catalog, repo, v, err);
	if (!rc)
		rc = fdl_catalog_version_confined(NULL, NULL, NULL, catalog, repo->store, repo->data_dir,
						  fdl_version_id(v), err);
	free(catalog);
	fdl_version_free(v);
	return rc;
}

/* Which branch the working catalog commits to, and its tip: an existing
 * branch (or HEAD's unborn one), or a new one as asked. A new branch from
 * a version is created here, as `git checkout -b` creates it. */
static int choose_branch(fdl_work *w, char **key, fdl_repo *repo, const fdl_checkout_options *opts, fdl_error *err)
{
	int create = opts ? opts->create : 0;
	bool exists = false;
	int rc = checkout_branch(&w->branch, repo, opts ? opts->ref : NULL, err);
	if (!rc)
		rc = fdl_ref_branch_key(key, w->branch, err);
	if (!rc)
		rc = fdl_ref_read(repo, *key, w->base, &exists, NULL, err);
	if (!rc && exists && create)
		return fdl_fail(err, FDL_EEXISTS, "branch %s already exists; work on it with --ref %s", w->branch,
				w->branch);
	if (!rc && !exists && !create)
		rc = missing_branch(repo, w->branch, err);
	if (!rc && create == FDL_CHECKOUT_NEW)
		rc = start_confined(repo, opts->start, err);
	if (!rc && create == FDL_CHECKOUT_NEW)
		rc = fdl_branch_create(repo, w->branch, opts->start, err);
	if (!rc && create == FDL_CHECKOUT_NEW)
		rc = fdl_ref_read(repo, *key, w->base, &exists, NULL, err);
	if (!rc && !exists)
		w->base[0] = '\0';
	if (!rc && !exists) /* a new branch, which its first commit creates */
		rc = fdl_ref_name_free(repo, w->branch, true, err);
	return rc;
}

/* The working catalog's data files that a version published are recorded
 * by their place in the data folder, and a PostgreSQL one gets the trigger
 * that keeps DuckLake from deleting them (a SQLite one gets it once no
 * DuckDB holds the file: fdl_checkout). */
static int keep_published(fdl_duck *d, fdl_repo *repo, const fdl_work *w, const char *alias, fdl_error *err)
{
	if (!w->id[0]) /* a working catalog from before, rebased: it writes into the data folder itself */
		return 0;
	char *data = NULL;
	int rc = fdl_work_data_location(&data, repo, err);
	if (!rc)
		rc = fdl_catalog_paths_absolute(d, alias, data, -1, true, true, err);
	if (!rc && w->postgres)
		rc = fdl_catalog_keep_published_pg(d, "fdl_work", err);
	free(data);
	return rc;
}

int fdl_checkout_seed(fdl_duck *d, fdl_repo *repo, fdl_work *w, fdl_error *err)
{
	fdl_cat_kind kind = w->postgres ? FDL_CAT_POSTGRES : FDL_CAT_SQLITE;
	const char *alias = w->postgres ? "fdl_work." FDL_PG_SCHEMA : "fdl_work";
	int rc = fdl_catalog_create(d, w->catalog, kind, w->data_path, err);
	if (rc)
		return rc;
	if ((rc = fdl_catalog_attach_raw(d, "fdl_work", w->catalog, kind, false, err)))
		return rc;
	if (!w->base[0]) {
		/* An empty branch: a fresh catalog that never inlines rows. */
		rc = fdl_catalog_meta_add(d, alias, "data_inlining_row_limit", "0", err);
		if (!rc)
			rc = keep_published(d, repo, w, alias, err);
		fdl_catalog_detach(d, "fdl_work", NULL);
		return rc;
	}
	fdl_version *v = NULL;
	char *frozen = NULL;
	rc = fdl_version_read(&v, repo, w->base, err);
	if (!rc)
		rc = fdl_version_fetch_catalog(&frozen, repo, v, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(d, "fdl_src", frozen, FDL_CAT_DUCKDB, true, err);
	if (!rc) {
		/* what the version names, checked before the working catalog
		 * takes it over and DuckLake reads its files from there */
		fdl_copy_options o = {.upto = -1, .data_path = w->data_path, .no_inlining = true};
		rc = fdl_catalog_version_confined(NULL, d, "fdl_src", frozen, repo->store, repo->data_dir,
						  fdl_version_id(v), err);
		if (!rc && (rc = fdl_catalog_copy(d, "fdl_src", alias, &o, err)))
			fdl_error_prefix(err, "seeding the working catalog from version %s", w->base);
		fdl_catalog_detach(d, "fdl_src", NULL);
	}
	if (!rc)
		rc = keep_published(d, repo, w, alias, err);
	if (!rc)
		w->base_snapshot = fdl_version_snapshot_id(v);
	fdl_catalog_detach(d, "fdl_work", NULL);
	free(frozen);
	fdl_version_free(v);
	return rc;
}

/* The empty catalog a full freeze copies instead of loading DuckLake
 * (FDL_WORK_TEMPLATE), made while DuckLake is loaded here anyway; its
 * sha256 goes into the record. */
static int write_template(fdl_duck *d, fdl_work *w, fdl_error *err)
{
	char *path = fdl_work_template_path(w);
	int64_t n = 0;
	int rc = path ? fdl_catalog_template_write(d, path, w->data_path, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_sha256_file(w->template_sha256, &n, path, err);
	if (rc)
		fdl_error_prefix(err, "writing %s", path ? path : FDL_WORK_TEMPLATE);
	free(path);
	return rc;
}

int fdl_checkout(fdl_repo *repo, const char *work, const fdl_checkout_options *opts, fdl_error *err)
{
	if (opts && fdl_options_check(opts->version, FDL_CHECKOUT_OPTIONS_VERSION, "fdl_checkout", "fdl_checkout_options",
				      err))
		return FDL_EINVALID;
	fdl_work w = {0};
	w.base_snapshot = -1;
	bool existed = false, made = false;
	char *key = NULL;
	char *final = NULL;
	int rc = opts && opts->create && (!opts->ref || !*opts->ref)
			 ? fdl_fail(err, FDL_EINVALID, "a new branch needs a name")
			 : 0;
	if (!rc && opts && opts->create == FDL_CHECKOUT_ORPHAN && opts->start)
		rc = fdl_fail(err, FDL_EINVALID, "an orphan branch starts empty, from no version");
	/* what only reads comes first: a refused checkout makes nothing */
	if (!rc && !(opts && opts->create == FDL_CHECKOUT_NEW))
		rc = choose_branch(&w, &key, repo, opts, err);
	/* a tip withdrawn (or expired) has no catalog to start from: say so */
	if (!rc && w.base[0] && (rc = fdl_version_check_live(repo, w.base, err)) == FDL_EEXPIRED)
		fdl_error_prefix(err, "the tip of branch %s: nothing to check out (move the branch to a live "
				      "version first)",
				 w.branch);
	if (!rc) { /* a repository on a plain host is read only */
		char *data = NULL;
		rc = fdl_work_data_location(&data, repo, err);
		free(data);
	}
	/* DuckDB writes new data files into the working catalog's own folder
	 * in the repository, work/<id>/ (a folder in place, a bucket through
	 * httpfs); a commit publishes them into the data folder */
	if (!rc)
		rc = fdl_uuid7_next(&repo->ids, w.id, err);
	if (!rc)
		rc = fdl_work_staging_location(&w.data_path, repo, w.id, err);
	w.postgres = !strncmp(work, FDL_PG_PREFIX, strlen(FDL_PG_PREFIX));
	if (!rc && w.postgres) {
		w.dir = fdl_strdup(work);
		w.catalog = fdl_strdup(work + strlen(FDL_PG_PREFIX));
		w.repository = fdl_strdup(repo->root);
		if (!w.dir || !w.catalog || !w.repository)
			rc = fdl_oom(err);
		else
			rc = pg_target_free(&w, repo, err);
		if (rc == FDL_ENOCHANGE) { /* already this repository's working catalog: adopt it */
			free(key);
			fdl_work_free(&w);
			return adopt(repo, work, err);
		}
	} else if (!rc) {
		/* Built in a fresh sibling folder and renamed into place at the
		 * end (rename replaces an empty folder, never a full one): two
		 * checkouts into one folder cannot mix, and a failed one removes
		 * only the folder it made. */
		rc = fdl_path_absolute(&final, work, err);
		if (!rc)
			rc = outside_repository_data(repo, final, err);
		if (!rc)
			rc = dir_is_empty_or_absent(final, &existed, err);
		if (!rc)
			rc = fdl_checkout_sibling(&w.dir, final, "checkout", err);
		made = !rc;
		if (!rc) {
			w.catalog = fdl_asprintf("%s/%s", w.dir, FDL_WORK_CATALOG);
			w.repository = fdl_strdup(repo->root);
			if (!w.catalog || !w.repository)
				rc = fdl_oom(err);
		}
	}
	/* a new branch from a version is created once the folder is known to
	 * be usable: the one write a checkout makes to the repository */
	if (!rc && opts && opts->create == FDL_CHECKOUT_NEW)
		rc = choose_branch(&w, &key, repo, opts, err);
	fdl_duck *d = NULL;
	/* metadata only: a copy of the version's catalog and a new template */
	if (!rc && !(rc = fdl_duck_new_lean(&d, FDL_DUCK_SQLITE_LAKE, err))) {
		rc = fdl_duck_use_store(d, repo->store, err);
		if (!rc)
			rc = fdl_checkout_seed(d, repo, &w, err);
		if (!rc && !w.postgres)
			rc = write_template(d, &w, err);
		fdl_duck_free(d);
	}
	if (!rc && !w.postgres) /* no DuckDB holds the file any more */
		rc = fdl_catalog_keep_published_sqlite(w.catalog, err);
	if (!rc && !w.postgres && w.base[0])
		rc = fdl_checkout_description(&w, repo, err);
	/* the repository knows it before anything can be written into its
	 * folder, so gc keeps that folder */
	bool recorded = false;
	if (!rc)
		recorded = !(rc = fdl_work_record_create(repo, &w, final, err));
	if (!rc)
		rc = fdl_work_save(&w, err);
	if (!rc && made && rename(w.dir, final) != 0) {
		int e = errno;
		rc = e == ENOTEMPTY || e == EEXIST || e == ENOTDIR
			     ? fdl_fail(err, FDL_EEXISTS,
					"%s is not empty any more (another checkout, or something else, wrote there "
					"meanwhile); refusing to check out there",
					final)
			     : fdl_fail(err, FDL_EIO, "cannot move the new working catalog into %s: %s", final,
					strerror(e));
	}
	/* Leave nothing half-made behind, and touch nothing we did not make. */
	if (rc && made)
		fdl_rm_rf(w.dir);
	if (rc && recorded) {
		fdl_error ignore;
		fdl_workrec_remove(repo, w.id, &ignore);
	}
	(void)existed;
	free(final);
	free(key);
	fdl_work_free(&w);
	return rc;
}
