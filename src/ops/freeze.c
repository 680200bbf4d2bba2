/*
 * Freezing a working catalog: copy its latest snapshot's metadata into a
 * new DuckDB catalog file (nothing after the snapshot, no inlined rows, the
 * published data path, every path relative to it), list the data files it
 * added that are still in the working catalog's own folder (commit
 * publishes them), check that the others are in the repository's data
 * folder and that the base's files the working catalog let go of still
 * are, and derive files.json, dataset.json and the changes from the base
 * version. Writes nothing to the repository.
 */
#include "freeze.h"
#include "derived.h"
#include "hashes.h"
#include "preview.h"
#include "../layout/dataset.h"
#include "../util/pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


/* The frozen catalog's metadata tables, while it is being written. */
#define FROZEN FDL_DUCKLAKE_META_PREFIX "fdl_new"

void fdl_frozen_free(frozen *f)
{
	fdl_ref_moved_join(f->derived);
	json_decref(f->files_json);
	free(f->files_text);
	fdl_buf_free(&f->hashes_text);
	json_decref(f->dataset_json);
	json_decref(f->changes);
	free(f->catalog_file);
	fdl_version_free(f->base);
	json_decref(f->base_dataset);
	fdl_strlist_free(&f->all_files);
	fdl_strmap_free(&f->all_sizes);
	fdl_strlist_free(&f->warnings);
	fdl_strlist_free(&f->staged);
	fdl_strmap_free(&f->staged_sizes);
	fdl_duck_free(f->duck);
	memset(f, 0, sizeof *f);
}

bool fdl_frozen_unchanged(const frozen *f)
{
	return f->same_snapshot && f->base_dataset && json_equal(f->base_dataset, f->dataset_json);
}

/* Every data and delete file the frozen catalog references must exist
 * under data_dir with the size the catalog records. Only the files added
 * since the base version (`added`, sorted; NULL: all, for a first version)
 * are looked at: the base's own were checked when it was committed, never
 * change, and are not deleted while a live version references them (gc; a
 * withdrawn base is refused before). On a bucket this is one HEAD per new
 * file, not per file of the dataset; on a folder one stat each, a folder
 * at a time. */
typedef struct wanted {
	char *key;
	const char *path, *table;
	int64_t bytes;
} wanted;

static int wanted_cmp(const void *a, const void *b)
{
	return strcmp(((const wanted *)a)->key, ((const wanted *)b)->key);
}

static int check_data_files(fdl_repo *repo, const fdl_data_files *files, const fdl_strlist *added, fdl_error *err)
{
	wanted *w = calloc(2 * files->len + 1, sizeof *w);
	const char **keys = calloc(2 * files->len + 1, sizeof *keys);
	int64_t *have = calloc(2 * files->len + 1, sizeof *have);
	size_t n = 0;
	int rc = w && keys && have ? 0 : fdl_oom(err);
	for (size_t i = 0; !rc && i < files->len; i++) {
		const fdl_data_file *f = &files->items[i];
		for (int k = 0; !rc && k < 2; k++) {
			const char *path = k ? f->delete_path : f->path;
			if (!path || (added && !fdl_strlist_has_sorted(added, path)))
				continue;
			w[n] = (wanted){fdl_asprintf("%s/%s", repo->data_dir, path), path, f->table_key,
					k ? f->delete_bytes : f->bytes};
			rc = w[n].key ? 0 : fdl_oom(err);
			n += !rc;
		}
	}
	if (!rc && n) {
		qsort(w, n, sizeof *w, wanted_cmp);
		for (size_t i = 0; i < n; i++)
			keys[i] = w[i].key;
		rc = fdl_store_head_many(repo->store, keys, n, have, err);
	}
	for (size_t i = 0; !rc && i < n; i++) {
		if (have[i] == FDL_HEAD_ABSENT)
			rc = fdl_fail(err, FDL_EINVALID,
				      "table %s references %s, which is not in the repository's data folder (%s/%s)",
				      w[i].table, w[i].path, repo->root, w[i].key);
		else if (have[i] == FDL_HEAD_NOT_FILE)
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s/%s is a symlink or not a regular file; fdl follows no symlink inside a "
				      "repository",
				      repo->root, w[i].key);
		else if (w[i].bytes > 0 && have[i] != w[i].bytes)
			rc = fdl_fail(err, FDL_EINVALID, "%s/%s is %lld bytes; the catalog records %lld", repo->root,
				      w[i].key, (long long)have[i], (long long)w[i].bytes);
	}
	for (size_t i = 0; w && i < n; i++)
		free(w[i].key);
	free(w);
	free(keys);
	free(have);
	return rc;
}

/* A table whose live data files are mostly small (over 50 under 1 MiB,
 * and more than half of them) costs every reader a request per file over
 * HTTP and a footer each: the committer is told, with the call that
 * merges them. `files` is in table order. */
#define SMALL_FILE_BYTES (1 << 20)
#define SMALL_FILES_WARN 50

static int small_files(fdl_strlist *warnings, const fdl_data_files *files, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < files->len;) {
		size_t j = i, small = 0;
		for (; j < files->len && files->items[j].table_id == files->items[i].table_id; j++)
			small += files->items[j].bytes < SMALL_FILE_BYTES;
		if (small > SMALL_FILES_WARN && 2 * small > j - i) {
			char *msg = fdl_asprintf(
				"table %s: %zu of its %zu data files are under 1 MiB; every reader fetches and opens each "
				"one. Merge them: CALL ducklake_merge_adjacent_files('<catalog alias>') in DuckDB on the "
				"working catalog, or commit with fdl commit --compact",
				files->items[i].table_key, small, j - i);
			rc = msg ? fdl_strlist_add(warnings, msg, err) : fdl_oom(err);
			free(msg);
		}
		i = j;
	}
	return rc;
}

/* What runs beside DuckDB's write of the frozen file: the new data files
 * looked at, then (commit: `hash`) files.json's sha256 of them and its
 * text, which at 10,000 files take as long as that write. */
typedef struct side_job {
	fdl_repo *repo;
	const fdl_data_files *files;
	const fdl_strlist *added;
	frozen *out;
	const fdl_work *w;
	bool hash;
	int rc;
	fdl_error err;
} side_job;

static void side_run(void *arg)
{
	side_job *j = arg;
	j->rc = check_data_files(j->repo, j->files, j->added, &j->err);
	if (j->rc || !j->hash || fdl_frozen_unchanged(j->out))
		return; /* nothing to publish: nothing to hash */
	/* a new file is read where it still is: the working catalog's folder */
	char *staging = j->w->id[0] ? fdl_workrec_staging(j->w->id) : NULL;
	if (j->w->id[0] && !staging)
		j->rc = fdl_oom(&j->err);
	else
		j->rc = fdl_data_hashes_add(j->out, j->repo, j->w, staging, &j->err);
	free(staging);
}

/* A base version that expired or was withdrawn since the checkout may have
 * lost data files the working catalog still references. */
static int base_is_live(fdl_repo *repo, const fdl_work *w, fdl_error *err)
{
	int rc = w->base[0] ? fdl_version_check_live(repo, w->base, err) : 0;
	if (rc == FDL_EEXPIRED)
		fdl_error_prefix(err, "the base version went after this working catalog was checked out; its data may "
				      "be gone: check out again and redo the change");
	return rc;
}

/* A working catalog another DuckLake migrated (DuckDB 2.0 ships DuckLake
 * 1.1, which migrates a 1.0 catalog when asked to, by AUTOMATIC_MIGRATION
 * or ducklake_default_version): its tables are not those of the format the
 * repository publishes, which readers on DuckDB 1.5 open. Refused before
 * anything is copied, saying how to stay on 1.0. */
static int newer_format(const fdl_work *w, const char *format, fdl_error *err)
{
	return fdl_fail(err, FDL_EINVALID,
			"the working catalog %s is DuckLake format %s (its ducklake_metadata says version %s), "
			"not %s: a newer DuckLake (DuckDB 2.0 ships 1.1) migrated it, and fdl publishes format %s, "
			"which readers on DuckDB 1.5 open. Nothing was published. Check out again (fdl checkout) "
			"and redo the change with DuckDB 1.5, or with DuckDB 2.0 attaching without "
			"AUTOMATIC_MIGRATION and without SET ducklake_default_version = '%s': DuckDB 2.0 writes a "
			"1.0 catalog as it is",
			w->catalog, format, format, FDL_DEFAULT_FORMAT, FDL_DEFAULT_FORMAT, format);
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* Another version's dataset.json (checked), to carry its description
 * over; NULL for a version written before dataset.json was required. */
static int description_of(json_t **out, fdl_repo *repo, const char *id, fdl_error *err)
{
	fdl_version *v = NULL;
	int rc = fdl_version_read(&v, repo, id, err);
	*out = NULL;
	if (!rc)
		rc = fdl_version_load_json(out, repo, v, "dataset", err);
	fdl_version_free(v);
	return rc;
}

/* The base version and its dataset.json, read once for the whole commit. */
static int read_base(frozen *out, fdl_repo *repo, const fdl_work *w, fdl_error *err)
{
	if (!w->base[0])
		return 0;
	int rc = fdl_version_read(&out->base, repo, w->base, err);
	if (!rc)
		rc = fdl_version_load_json(&out->base_dataset, repo, out->base, "dataset", err);
	if (rc)
		fdl_error_prefix(err, "reading the base version");
	return rc;
}

/* Never silent: the data files the base version references that the
 * working catalog no longer does (DuckLake let go of them: a rewrite, a
 * merge, expired snapshots) must still be in the data folder, which a
 * working catalog made before fdl kept DuckLake off published files (or
 * one whose trigger someone dropped) cannot promise. One look at each.
 * `now`: the new catalog's files (sorted). */
static int base_files_kept(fdl_duck *d, fdl_repo *repo, const fdl_work *w, const char *base_alias,
			   const fdl_strlist *now, fdl_error *err)
{
	fdl_strlist base = {0}, gone = {0};
	int rc = fdl_catalog_all_files(&base, d, base_alias, -1, err);
	fdl_strlist_sort(&base);
	for (size_t i = 0; i < base.len && !rc; i++)
		if ((i == 0 || strcmp(base.items[i], base.items[i - 1])) && !fdl_strlist_has_sorted(now, base.items[i]))
		{
			char *key = fdl_asprintf("%s/%s", repo->data_dir, base.items[i]);
			rc = key ? fdl_strlist_add(&gone, key, err) : fdl_oom(err);
			free(key);
		}
	int64_t *sizes = gone.len ? calloc(gone.len, sizeof *sizes) : NULL;
	if (!rc && gone.len && !sizes)
		rc = fdl_oom(err);
	if (!rc && gone.len)
		rc = fdl_store_head_many(repo->store, (const char *const *)gone.items, gone.len, sizes, err);
	for (size_t i = 0; i < gone.len && !rc; i++)
		if (sizes[i] == FDL_HEAD_ABSENT)
			rc = fdl_fail(err, FDL_EINVALID,
				      "%s/%s, which version %s (and every version sharing it) needs, is gone from the "
				      "data folder: DuckLake deleted it (ducklake_cleanup_old_files, "
				      "ducklake_delete_orphaned_files or a CHECKPOINT, run in a working catalog made "
				      "before fdl kept DuckLake off published files%s). Nothing was published. Put the "
				      "file back from a copy of the repository (fdl clone makes one), or withdraw the "
				      "versions that need it (fdl verify --all names them; fdl withdraw)",
				      repo->root, gone.items[i], w->base,
				      w->id[0] ? ", or one whose fdl_keep_published trigger was dropped" : ": check out again");
	free(sizes);
	fdl_strlist_free(&base);
	fdl_strlist_free(&gone);
	return rc;
}

/* The changes from the base version, and its files still kept: its frozen
 * catalog attached as fdl_base already (the incremental freeze, `sn`),
 * else fetched (checked) and attached for this. None to compute when the
 * incremental freeze found the schema the same; none gone when it carried
 * the base's file rows as they were, resolved through the same schema and
 * table rows. */
static int changes_since_base(frozen *out, fdl_duck *d, fdl_repo *repo, const fdl_work *w, const fdl_since *sn,
			      const char *alias, fdl_error *err)
{
	char *path = NULL;
	int rc = 0;
	if (!sn) {
		rc = fdl_version_fetch_catalog(&path, repo, out->base, err);
		if (!rc)
			rc = fdl_catalog_attach_raw(d, "fdl_parent", path, FDL_CAT_DUCKDB, true, err);
	}
	bool attached = !rc && !sn;
	bool same_schema = sn && fdl_since_schema_same(sn);
	const char *parent = sn ? "fdl_base" : "fdl_parent";
	if (!rc)
		rc = same_schema ? ((out->changes = json_array()) ? 0 : fdl_oom(err))
				 : fdl_catalog_changes(&out->changes, d, parent, alias, err);
	if (rc)
		fdl_error_prefix(err, "comparing with the base version %s", w->base);
	if (!rc && !(same_schema && fdl_since_files_carried(sn)))
		rc = base_files_kept(d, repo, w, parent, &out->all_files, err);
	if (attached)
		fdl_catalog_detach(d, "fdl_parent", NULL);
	free(path);
	return rc;
}

/* The schema changes since the version the description was written for,
 * oldest first (fdl_dataset_in.renames): those of each version after it up
 * to the base (their version.json `changes`), then the base's to the new
 * catalog. NULL on a first version, or when that version is not on the
 * base's first-parent chain within 1,000 steps (then the base's alone). */
static int renames_since(json_t **out, const frozen *fz, fdl_repo *repo, const char *from, fdl_error *err)
{
	*out = NULL;
	if (!fz->base || !fz->changes)
		return 0;
	json_t *steps = json_array();
	int rc = steps ? 0 : fdl_oom(err);
	char at[FDL_ID_LEN + 1] = "";
	const char *p = fdl_version_parent(fz->base, 0);
	if (p)
		snprintf(at, sizeof at, "%s", p);
	json_t *older = json_array();
	if (!older)
		rc = fdl_oom(err);
	if (!rc && from && *from && strcmp(from, fdl_version_id(fz->base))) {
		json_array_append(older, json_object_get(fdl_version_json(fz->base), "changes"));
		for (int n = 0; !rc && at[0] && strcmp(at, from) && n < 1000; n++) {
			fdl_version *v = NULL;
			if ((rc = fdl_version_read(&v, repo, at, err)))
				break;
			json_array_insert(older, 0, json_object_get(fdl_version_json(v), "changes"));
			p = fdl_version_parent(v, 0);
			snprintf(at, sizeof at, "%s", p ? p : "");
			fdl_version_free(v);
		}
		if (!rc && strcmp(at, from))
			json_array_clear(older); /* not an ancestor: the base's changes alone */
	}
	if (!rc) {
		json_array_extend(steps, older);
		json_array_append(steps, fz->changes);
		*out = steps;
		steps = NULL;
	}
	json_decref(older);
	json_decref(steps);
	return rc;
}

/* dataset.json: the description in WORK (or carried over from the base)
 * merged with the catalog's tables, following renames since it was
 * written. The base's description carries over; what it, or the version
 * whose description checkout wrote, described may since have been dropped. */
static int build_description(frozen *out, fdl_repo *repo, const fdl_work *w, const json_t *tables, fdl_error *err)
{
	int rc = 0;
	json_t *base_ds = NULL, *from_ds = NULL, *known = NULL, *renames = NULL;
	base_ds = json_incref(out->base_dataset);
	if (w->description_from[0] && strcmp(w->description_from, w->base))
		rc = description_of(&from_ds, repo, w->description_from, err);
	json_t *all = json_array();
	for (int k = 0; all && k < 2; k++) {
		json_t *t = json_object_get(k ? from_ds : base_ds, "tables");
		if (json_is_array(t))
			json_array_extend(all, t);
	}
	if (!rc && !(known = all ? json_pack("{s:o}", "tables", all) : NULL))
		rc = fdl_oom(err);
	else if (rc)
		json_decref(all);
	fdl_desc_files described = {0};
	if (!rc && !w->postgres)
		rc = fdl_work_description(&described, w->dir, err);
	out->described = described.top.path || described.ntables;
	if (!rc && out->described)
		rc = fdl_desc_files_sha256(out->desc_sha256, &described, err);
	/* description files name what they named when they were last changed:
	 * as the version a commit last took them at, or checkout wrote them
	 * from, while they stay the same; else as the base */
	const char *from = out->described && w->names_at[0] && !strcmp(out->desc_sha256, w->names_sha256)
				   ? w->names_at
				   : w->base;
	if (!rc)
		rc = renames_since(&renames, out, repo, from, err);
	if (!rc) {
		fdl_dataset_in in = {.files = w->postgres ? NULL : &described,
				     .catalog_tables = tables,
				     .default_name = basename_of(repo->root),
				     .base = base_ds,
				     .known = known,
				     .written_sha256 = w->description_sha256,
				     .renames = renames,
				     .renames_from = from,
				     .warnings = &out->warnings};
		rc = fdl_dataset_build(&out->dataset_json, &in, err);
	}
	fdl_desc_files_free(&described);
	json_decref(renames);
	json_decref(base_ds);
	json_decref(from_ds);
	json_decref(known);
	return rc;
}

/* The files the frozen catalog holds that are in the working catalog's own
 * folder, and the published ones made relative to the data path again.
 * When the incremental freeze (`sn`) carried the base's file rows, they
 * are relative already: only those begun after the base's snapshot `b`
 * are looked at, in the tables that have any. */
static int staged_files(frozen *out, fdl_duck *d, fdl_repo *repo, const char *work, int64_t upto, const char *alias,
			const fdl_since *sn, int64_t b, fdl_error *err)
{
	int rc = fdl_catalog_staged_files(&out->staged, &out->staged_sizes, out->staged_kinds, d, work, upto, err);
	fdl_strlist_sort(&out->staged);
	bool carried = sn && fdl_since_files_carried(sn);
	bool which[2] = {!carried || fdl_since_grown(sn, "ducklake_data_file"),
			 !carried || fdl_since_grown(sn, "ducklake_delete_file")};
	/* the new rows are mostly the staged files, relative already */
	if (!rc && carried && (which[0] || which[1]))
		rc = fdl_catalog_paths_absolute_after(d, alias, b, which, err);
	if (!rc && (which[0] || which[1]))
		rc = fdl_catalog_paths_relative(d, alias, repo->data_url, carried ? b : -1, which[0], which[1], err);
	return rc;
}

static const char *work_alias(const fdl_work *w)
{
	return w->postgres ? "fdl_work." FDL_PG_SCHEMA : "fdl_work";
}

/* A DuckDB with what the freeze needs: the working catalog's scanner, and
 * DuckLake (and the store's access, which its ATTACH of a bucket's data
 * path checks) for a full freeze, whose new catalog DuckLake creates. The
 * preview the commit computes in this database once the version is written
 * reads tables from their data files and needs no DuckLake (loading it
 * cost a one-row commit ~9 ms of CPU; a table only DuckLake reads right
 * gets a DuckDB of its own, preview.c).
 * Extensions load before any other statement. */
static int open_session(fdl_duck **d, fdl_repo *repo, const fdl_work *w, bool lake, fdl_error *err)
{
	const char *scanner = w->postgres ? "postgres_scanner" : "sqlite_scanner";
	const char *exts[] = {scanner, lake ? "ducklake" : NULL, NULL};
	/* a commit's statements read and write metadata, never data: DuckDB's
	 * worker threads only add hand-offs, and what its allocator keeps
	 * cached was 20 of the 116 MiB a commit held at 10,000 snapshots */
	int rc = fdl_duck_new_lean(d, exts, err);
	if (!rc && lake && (rc = fdl_duck_use_store(*d, repo->store, err))) {
		fdl_duck_free(*d);
		*d = NULL;
	}
	return rc;
}

static int attach_work(fdl_duck *d, const fdl_work *w, fdl_error *err)
{
	return fdl_catalog_attach_raw(d, "fdl_work", w->catalog, w->postgres ? FDL_CAT_POSTGRES : FDL_CAT_SQLITE, true,
				      err);
}

/* The base version's frozen catalog (fetched and checked: in place in a
 * folder, else from the read cache), attached as "fdl_base" and read for
 * the incremental freeze, before the working catalog is attached. */
static int read_since_base(fdl_since **sn, fdl_duck *d, fdl_repo *repo, const frozen *out, const fdl_work *w,
			   fdl_error *err)
{
	char *base = NULL;
	int rc = fdl_version_fetch_catalog(&base, repo, out->base, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(d, "fdl_base", base, FDL_CAT_DUCKDB, true, err);
	free(base);
	return rc ? rc : fdl_since_base(sn, d, "fdl_base", w->base_snapshot, err);
}

/* The incremental freeze into a new "fdl_new"; *done false (and the new
 * file removed) when the full freeze must run instead. FDL_TRACE says
 * which, and why. */
static int freeze_since(bool *done, fdl_since *sn, frozen *out, fdl_duck *d, const fdl_work *w,
			const fdl_copy_options *o, fdl_error *err)
{
	*done = false;
	bool created = false;
	int rc = 0;
	if (!fdl_since_why(sn)[0]) {
		rc = fdl_catalog_create_plain(d, out->catalog_file, "fdl_new", err);
		created = !rc;
	}
	if (!rc)
		rc = fdl_since_copy(sn, d, work_alias(w), "fdl_new", o, err);
	if (!rc && !fdl_since_why(sn)[0]) {
		*done = true;
		const fdl_strlist *whole = fdl_since_whole(sn);
		fdl_buf list = {0};
		for (size_t i = 0; i < whole->len; i++)
			fdl_buf_printf(&list, NULL, "%s%s", i ? ", " : "; copied whole (rows up to the base changed): ",
				       whole->items[i]);
		char added[80] = "no snapshot since";
		if (o->upto > w->base_snapshot)
			snprintf(added, sizeof added, "snapshots %lld..%lld added", (long long)w->base_snapshot + 1,
				 (long long)o->upto);
		fdl_duck_trace(d, "freeze: incremental from version %s (%s%s)", w->base, added, list.data ? list.data : "");
		fdl_buf_free(&list);
	} else if (!rc) {
		fdl_duck_trace(d, "freeze: full (%s)", fdl_since_why(sn));
		if (created) {
			fdl_catalog_detach(d, "fdl_new", NULL);
			remove(out->catalog_file);
		}
	}
	return rc;
}

/* The working catalog's snapshot, read once: everything after it is cut,
 * so writers may go on writing (PostgreSQL) while this runs. */
static int read_snapshot(fdl_catalog_info *winfo, frozen *out, fdl_duck *d, const fdl_work *w, fdl_error *err)
{
	int rc = fdl_catalog_info_read(d, work_alias(w), winfo, err);
	fdl_test_pause("freeze-snapshot"); /* tests: a writer goes past the snapshot here */
	if (!rc && strcmp(winfo->format, FDL_DEFAULT_FORMAT))
		rc = newer_format(w, winfo->format, err);
	out->same_snapshot = !rc && w->base_snapshot >= 0 && winfo->last_snapshot == w->base_snapshot;
	out->untouched = !rc && !w->base[0] && w->base_snapshot < 0 && winfo->last_snapshot == winfo->first_snapshot;
	if (!rc && winfo->last_snapshot < w->base_snapshot)
		rc = fdl_fail(err, FDL_EINVALID,
			      "the working catalog's latest snapshot (%lld) is older than its base version's (%lld)",
			      (long long)winfo->last_snapshot, (long long)w->base_snapshot);
	return rc;
}

/* The full freeze, in a session with DuckLake: the new catalog stays
 * attached through DuckLake while its metadata rows are written, so the
 * file is written once, at the detach. */
static int freeze_full(fdl_duck *d, frozen *out, fdl_repo *repo, const fdl_work *w, const fdl_copy_options *o,
		       fdl_error *err)
{
	int rc = fdl_catalog_create_attached(d, out->catalog_file, "fdl_new", repo->data_url, err);
	if (!rc && (rc = fdl_catalog_copy(d, work_alias(w), FROZEN, o, err)))
		fdl_catalog_detach(d, "fdl_new", NULL);
	return rc;
}

/* The working folder's template (FDL_WORK_TEMPLATE) when it can serve: a
 * regular file (not a symlink) with the sha256 checkout recorded, so
 * exactly the catalog DuckLake wrote; else NULL and, when there is a
 * template, why it is not used. NULL for PostgreSQL. */
static char *template_of(const fdl_work *w, char why[200])
{
	struct stat st;
	char *path = fdl_work_template_path(w), hex[65];
	int64_t n = 0;
	fdl_error e;
	why[0] = '\0';
	if (path && (lstat(path, &st) || !S_ISREG(st.st_mode))) {
		if (!lstat(path, &st))
			snprintf(why, 200, "%s is not a regular file", FDL_WORK_TEMPLATE);
	} else if (path && !w->template_sha256[0])
		snprintf(why, 200, "%s records no sha256 of it", FDL_WORK_FILE);
	else if (path && (fdl_sha256_file(hex, &n, path, &e) || strcmp(hex, w->template_sha256)))
		snprintf(why, 200, "it changed since checkout wrote it");
	else
		return path;
	free(path);
	return NULL;
}

/* The full freeze without DuckLake: the new catalog made from the working
 * folder's template, then filled as freeze_full fills it. *used false
 * (nothing made, FDL_TRACE says why) when the template cannot serve. */
static int freeze_template(bool *used, fdl_duck *d, frozen *out, const fdl_work *w, const char *tmpl,
			   const char *format, const fdl_copy_options *o, fdl_error *err)
{
	fdl_error why;
	*used = !fdl_catalog_create_from(d, out->catalog_file, "fdl_new", tmpl, format, &why);
	if (!*used) {
		fdl_duck_trace(d, "freeze: the template is not used (%s)", why.message);
		return 0;
	}
	int rc = fdl_catalog_copy(d, work_alias(w), "fdl_new", o, err);
	if (rc)
		fdl_catalog_detach(d, "fdl_new", NULL);
	return rc;
}

/* The frozen catalog, left attached as "fdl_new" (written at its detach):
 * incremental from the base when it can be, else in full. *alias names
 * its metadata tables; *sn is the incremental freeze's state (NULL when
 * it was not tried); *d may be replaced by a session with DuckLake. */
static int freeze_catalog(frozen *out, fdl_duck **d, fdl_repo *repo, const fdl_work *w, fdl_since **sn,
			  const char **alias, fdl_catalog_info *winfo, fdl_error *err)
{
	const char *mode = getenv("FDL_FREEZE");
	bool full_only = mode && !strcmp(mode, "full");
	bool since = out->base && w->base_snapshot >= 0 && !full_only;
	/* the template is looked at (and hashed) only for a full freeze */
	char why[200] = "";
	char *tmpl = since ? NULL : template_of(w, why);
	int rc = open_session(d, repo, w, !since && !tmpl, err);
	if (!rc && since)
		rc = read_since_base(sn, *d, repo, out, w, err);
	if (!rc)
		rc = attach_work(*d, w, err);
	if (!rc)
		rc = read_snapshot(winfo, out, *d, w, err);
	fdl_copy_options o = {.upto = rc ? -1 : winfo->last_snapshot, .data_path = repo->data_url,
			      .refuse_inlined = true, .src_sqlite = !w->postgres};
	bool done = false, plain = false;
	if (!rc && since && !(rc = freeze_since(&done, *sn, out, *d, w, &o, err)) && !done)
		fdl_catalog_detach(*d, "fdl_base", NULL);
	if (!rc && !done && !since)
		fdl_duck_trace(*d, "freeze: full (%s)", !out->base ? "a first version"
							: full_only ? "FDL_FREEZE=full"
								    : "the working catalog records no base snapshot");
	if (!rc && !done && since)
		tmpl = template_of(w, why);
	if (!rc && !done && why[0])
		fdl_duck_trace(*d, "freeze: the template is not used (%s)", why);
	if (!rc && !done && tmpl)
		rc = freeze_template(&plain, *d, out, w, tmpl, winfo->format, &o, err);
	if (!rc && !done && !plain && (since || tmpl)) {
		/* DuckLake must be loaded before any other statement: a new
		 * session, once nothing runs beside this one */
		fdl_since_free(*sn);
		*sn = NULL;
		fdl_duck_free(*d);
		*d = NULL;
		rc = open_session(d, repo, w, true, err);
		if (!rc)
			rc = attach_work(*d, w, err);
	}
	if (!rc && !done && !plain)
		rc = freeze_full(*d, out, repo, w, &o, err);
	*alias = done || plain ? "fdl_new" : FROZEN;
	if (!done) {
		fdl_since_free(*sn);
		*sn = NULL;
	}
	free(tmpl);
	return rc;
}

/* The new files (sorted; may repeat) less those still in the working
 * catalog's folder (`staged`), which commit looks at there when it
 * publishes them: the rest must be in the data folder. */
static int keep_unstaged(fdl_strlist *added, const fdl_strlist *staged, fdl_error *err)
{
	fdl_strlist in_data = {0};
	int rc = 0;
	for (size_t i = 0; !rc && i < added->len; i++)
		if (!fdl_strlist_has_sorted(staged, added->items[i]) &&
		    (i == 0 || strcmp(added->items[i], added->items[i - 1])))
			rc = fdl_strlist_add(&in_data, added->items[i], err);
	fdl_strlist_free(added);
	*added = in_data;
	return rc;
}

/* The version's preview starts through the seam, from the catalog as it
 * is still attached (alias, until DETACHING) and files.json's tables,
 * beside the rest of the freeze, the detach that writes the catalog and
 * the version's own writes. */
static void preview_beside(frozen *out, fdl_repo *repo, const fdl_work *w, fdl_duck *d, const char *alias)
{
	char *staging = NULL;
	fdl_error ignore; /* without it, the new files are read once published */
	if (w->id[0] && out->staged.len && fdl_work_staging_location(&staging, repo, w->id, &ignore))
		staging = NULL;
	fdl_move_frozen f = {.share = d,
			     .alias = alias,
			     .catalog_file = out->catalog_file,
			     .tables = json_object_get(out->files_json, "tables"),
			     .parent = out->base ? fdl_version_id(out->base) : NULL,
			     .staged = &out->staged,
			     .staging = staging};
	fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_FROZEN, .frozen = &f, .job = &out->derived, .preview = true},
		      NULL);
	free(staging);
}

int fdl_freeze(frozen *out, fdl_repo *repo, const fdl_work *w, const char *tmpdir, bool hash, fdl_error *err)
{
	fdl_duck *d = NULL;
	int rc = read_base(out, repo, w, err);
	/* before the base's catalog is fetched: a withdrawn one is gone */
	if (!rc)
		rc = base_is_live(repo, w, err);
	out->preview = hash && !rc && fdl__preview_wanted(repo, w->base); /* the one decision of a commit */
	if (!rc && !(out->catalog_file = fdl_asprintf("%s/" FDL_CATALOG_FILE, tmpdir)))
		rc = fdl_oom(err);
	fdl_catalog_info winfo;
	fdl_data_files files = {0};
	fdl_listing *listing = NULL; /* the new catalog's files, live and all */
	fdl_since *sn = NULL; /* the incremental freeze's, when it was the one */
	const char *nalias = FROZEN;
	if (!rc)
		rc = freeze_catalog(out, &d, repo, w, &sn, &nalias, &winfo, err);
	bool attached = !rc;
	if (!rc && w->id[0])
		rc = staged_files(out, d, repo, work_alias(w), winfo.last_snapshot, nalias, sn, w->base_snapshot, err);
	if (!rc)
		rc = fdl_catalog_info_read(d, nalias, &out->info, err);
	if (!rc) {
		/* snapshots added since the parent; none for a new description
		 * alone, written as the one frozen snapshot: [first, last] must
		 * hold first <= last (docs/decisions.md) */
		out->info.first_snapshot = w->base_snapshot >= 0 ? w->base_snapshot + 1 : winfo.first_snapshot;
		if (out->info.first_snapshot > out->info.last_snapshot)
			out->info.first_snapshot = out->info.last_snapshot;
		rc = fdl_listing_read(&listing, d, nalias, true, err);
	}
	if (!rc)
		rc = fdl_listing_live(listing, &files, err);
	fdl_strlist added = {0};
	if (!rc)
		rc = small_files(&out->warnings, &files, err);
	/* every file (what files.json's sha256 covers: fdl_data_hashes_add),
	 * and from the same rows those added since the base; a first version:
	 * every file is new (and with no record of the working catalog's own
	 * folder, all of them are looked at) */
	bool listed = w->base_snapshot >= 0 || w->id[0];
	if (!rc)
		rc = fdl_listing_all(listing, &out->all_files, &out->all_sizes, listed ? &added : NULL,
				     w->base_snapshot >= 0 ? w->base_snapshot + 1 : -1, err);
	fdl_strlist_sort(&out->all_files);
	fdl_strlist_sort(&added);
	if (!rc && w->id[0])
		rc = keep_unstaged(&added, &out->staged, err);
	if (!rc)
		rc = fdl_catalog_files_json(&out->files_json, d, nalias, listing, &files, err);
	if (!rc && out->preview) /* beside what follows, reading the catalog until its detach */
		preview_beside(out, repo, w, d, nalias);
	fdl_listing_free(listing);
	listing = NULL;
	json_t *tables = NULL;
	if (!rc)
		rc = fdl_catalog_tables_json(&tables, d, nalias, &files, err);
	if (!rc && w->base[0])
		rc = changes_since_base(out, d, repo, w, sn, nalias, err);
	if (!rc) /* after the changes: a description follows the renames among them */
		rc = build_description(out, repo, w, tables, err);
	json_decref(tables);
	/* the base's catalog is read: its buffers go before the checkpoint
	 * below needs its own (2 MB and more at 10,000 snapshots) */
	if (sn)
		fdl_catalog_detach(d, "fdl_base", NULL);
	/* DuckDB writes the frozen file while the new data files are looked
	 * at and hashed: the store is not used by this thread until the other
	 * one is joined, which reads `out` but what the detach below writes
	 * (out->info.storage), and DuckDB only for its trace */
	if (!rc)
		out->duck = d; /* commit settles the working catalog's files in it */
	side_job job = {repo, &files, listed ? &added : NULL, out, w, hash, 0, {0}};
	fdl_pool_side *side = rc ? NULL : fdl_pool_side_start(side_run, &job);
	if (!rc && !side)
		side_run(&job);
	if (attached) { /* checkpoints the frozen file: its one write */
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_DETACHING, .job = &out->derived}, NULL);
		int drc = fdl_catalog_detach(d, "fdl_new", rc ? NULL : err);
		if (!rc && drc)
			rc = fdl_error_prefix(err, "writing the frozen catalog %s", out->catalog_file);
		/* DuckLake raises the tag of the file it created: read it once
		 * written; a plain file's (incremental, or from the template) was
		 * read with the info */
		if (!rc && !strcmp(nalias, FROZEN))
			rc = fdl_catalog_storage(d, out->catalog_file, out->info.storage, err);
	}
	fdl_pool_side_join(side);
	if (job.rc && !rc) {
		*err = job.err;
		rc = job.rc;
	}
	fdl_strlist_free(&added);
	fdl_data_files_free(&files);
	fdl_since_free(sn);
	if (rc) {
		fdl_ref_moved_join(out->derived); /* before its database goes */
		out->derived = NULL;
		out->duck = NULL;
		fdl_duck_free(d);
	}
	return rc;
}

