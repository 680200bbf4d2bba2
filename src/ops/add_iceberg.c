/*
 * fdl add --iceberg: the current snapshot of an Iceberg table (v2) that
 * another engine wrote becomes the contents of a table of a working
 * catalog (docs/decisions.md, "fdl add --iceberg"). Its data files are
 * registered where they lie, under the table's folder in the working
 * catalog's own folder (the rules of fdl add); its position deletes become
 * DuckLake deletes; a table added before changes by the files that
 * changed: files gone from the snapshot leave, new ones come, new deletes
 * are carried. All of it is one DuckLake transaction, checked against the
 * snapshot's row count before it commits.
 */
#include "add.h"
#include "report.h"
#include "../iceberg/iceberg.h"
#include "../layout/iceberg.h"
#include "../util/strmap.h"

#include <sys/stat.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct ice_job {
	char *meta;           /* the metadata.json read */
	fdl_ice_source src;
	fdl_ice_entries e;
	fdl_strlist types;    /* the schema's types as DuckDB writes them */
	fdl_strlist local;    /* e.data as local paths */
	fdl_strlist dels;     /* e.pos_deletes as local paths */
	fdl_strlist duck;     /* DuckLake's name of each data file */
	fdl_strlist added;    /* the new data files (absolute) */
	fdl_strlist gone;     /* DuckLake's names of files no longer in the snapshot */
	fdl_strlist removed;  /* the same, relative to the table's folder */
	int64_t deleted, records;
} ice_job;

static void ice_free(ice_job *ij)
{
	free(ij->meta);
	fdl_ice_source_free(&ij->src);
	fdl_ice_entries_free(&ij->e);
	fdl_strlist_free(&ij->types);
	fdl_strlist_free(&ij->local);
	fdl_strlist_free(&ij->dels);
	fdl_strlist_free(&ij->duck);
	fdl_strlist_free(&ij->added);
	fdl_strlist_free(&ij->gone);
	fdl_strlist_free(&ij->removed);
}

/* A path the manifests name ("file:/x", "file:///x" or "/x") as a local
 * path; anything else is refused. */
static int local_path(char **out, const char *uri, fdl_error *err)
{
	const char *p = uri;
	if (!strncmp(p, "file://", 7))
		p += 7;
	else if (!strncmp(p, "file:", 5))
		p += 5;
	if (*p != '/')
		return fdl_fail(err, FDL_EINVALID, "%s: fdl add --iceberg reads tables on this machine's file system "
				"(file: paths), not this location. Nothing was added", uri);
	return (*out = fdl_strdup(p)) ? 0 : fdl_oom(err);
}

/* METADATA as given: a metadata.json, or the table's folder, whose
 * metadata/version-hint.text (Hadoop's catalog) names the current one. */
static int metadata_file(ice_job *ij, const char *given, fdl_error *err)
{
	char *path = NULL;
	int rc = local_path(&path, given, err);
	struct stat st;
	if (!rc && stat(path, &st))
		rc = fdl_fail(err, FDL_ENOTFOUND, "%s: %s", given, strerror(errno));
	if (rc || !S_ISDIR(st.st_mode)) {
		ij->meta = path;
		return rc;
	}
	fdl_buf hint = {0};
	char *hint_path = fdl_asprintf("%s/" FDL_ICEBERG_HADOOP_HINT, path);
	rc = hint_path ? fdl_file_read(&hint, hint_path, 64, err) : fdl_oom(err);
	long long v = -1;
	char end = 0;
	if (!rc && (sscanf(hint.data ? hint.data : "", "%lld%c", &v, &end) < 1 || v < 0 || (end && end != '\n')))
		rc = fdl_fail(err, FDL_EINVALID, "%s holds no version number. Nothing was added", hint_path);
	if (!rc && !(ij->meta = fdl_asprintf("%s/" FDL_ICEBERG_HADOOP_METADATA, path, v)))
		rc = fdl_oom(err);
	if (rc)
		fdl_error_prefix(err, "%s is a folder: the Iceberg table's", given);
	fdl_buf_free(&hint);
	free(hint_path);
	free(path);
	return rc;
}

/* Equality deletes and files of other formats are refused, by name. */
static int refuse_entries(const ice_job *ij, fdl_error *err)
{
	const fdl_ice_entries *e = &ij->e;
	if (e->eq_deletes.len)
		return fdl_fail(err, FDL_EINVALID,
				"%s: the snapshot has %zu equality delete file%s (%s%s); DuckLake deletes rows by "
				"position only, so fdl add --iceberg refuses them (rewrite the table's deletes, e.g. "
				"Spark's rewrite_position_delete_files or rewrite_data_files, first). Nothing was added",
				ij->meta, e->eq_deletes.len, e->eq_deletes.len == 1 ? "" : "s", e->eq_deletes.items[0],
				e->eq_deletes.len > 1 ? ", ..." : "");
	if (e->other.len)
		return fdl_fail(err, FDL_EINVALID,
				"%s: %s is not a Parquet data or position delete file (fdl add --iceberg registers "
				"Parquet only). Nothing was added",
				ij->meta, e->other.items[0]);
	return 0;
}

/* The table's columns are the schema's: its names, and its types as
 * DuckDB writes them (for a table that exists, both must match). */
static int table_columns(add_job *j, ice_job *ij, fdl_error *err)
{
	int rc = fdl_catalog_canonical_types(j->d, &ij->src.types, &ij->types, err);
	if (!rc && ij->types.len != ij->src.names.len)
		rc = fdl_fail(err, FDL_EDUCKDB, "DuckDB described %zu types of %zu", ij->types.len, ij->src.names.len);
	for (size_t i = 0; !rc && i < ij->src.names.len; i++) {
		rc = fdl_strlist_add(&j->names, ij->src.names.items[i], err);
		if (!rc)
			rc = fdl_strlist_add(&j->types, ij->types.items[i], err);
	}
	if (rc || !j->shape.table_exists)
		return rc;
	bool same = j->shape.names.len == j->names.len;
	for (size_t i = 0; same && i < j->names.len; i++)
		same = !strcmp(j->shape.names.items[i], j->names.items[i]) &&
		       !strcmp(j->shape.types.items[i], j->types.items[i]);
	for (size_t i = 0; !same && i < j->names.len; i++) {
		size_t k = 0;
		while (k < j->shape.names.len && strcmp(j->shape.names.items[k], j->names.items[i]))
			k++;
		if (k == j->shape.names.len || strcmp(j->shape.types.items[k], j->types.items[i]))
			return fdl_fail(err, FDL_EINVALID,
					"%s: column %s (%s) of the Iceberg table is %s in table %s.%s; fdl add --iceberg "
					"makes a table's contents the snapshot's only when their columns are the same. "
					"Nothing was added",
					ij->meta, j->names.items[i], j->types.items[i],
					k == j->shape.names.len ? "not a column" : j->shape.types.items[k], j->schema,
					j->table);
	}
	if (!same)
		return fdl_fail(err, FDL_EINVALID, "%s: table %s.%s has columns the Iceberg table does not have (or "
				"another order). Nothing was added", ij->meta, j->schema, j->table);
	return 0;
}

/* A file DuckLake has, by its place under the table's folder: staged in
 * the working catalog's folder or published in the data folder (NULL:
 * neither). */
static const char *place_of(const char *path, const char *staged, const char *published)
{
	size_t s = strlen(staged), p = strlen(published);
	return !strncmp(path, staged, s) ? path + s : !strncmp(path, published, p) ? path + p : NULL;
}

/* The table's live files by their place (value: index in `have`). */
static int places(fdl_strmap *m, const fdl_strlist *have, const char *staged, const char *published, fdl_error *err)
{
	int rc = 0;
	for (size_t k = 0; !rc && k < have->len; k++) {
		const char *place = place_of(have->items[k], staged, published);
		if (place)
			rc = fdl_strmap_put(m, place, (int64_t)k, err);
	}
	return rc;
}

/* Snapshot data file i: under the table's folder (j->rel, in the
 * manifests' order), and DuckLake's name of it: the file it already has
 * (marked used), else the new one. */
static int match_one(add_job *j, ice_job *ij, size_t i, const fdl_strmap *m, const fdl_strlist *have, bool *used,
		     const char *staged, fdl_error *err)
{
	char *p = NULL;
	int rc = local_path(&p, ij->e.data.items[i], err);
	if (!rc)
		rc = fdl_strlist_add(&ij->local, p, err);
	if (!rc)
		rc = fdl_add_job_file(j, p, err);
	free(p);
	if (rc)
		return rc;
	int64_t k;
	ij->records += ij->e.records[i];
	if (fdl_strmap_get(m, j->rel.items[i], &k)) {
		used[k] = true;
		return fdl_strlist_add(&ij->duck, have->items[k], err);
	}
	char *abs = fdl_asprintf("%s%s", staged, j->rel.items[i]);
	rc = abs ? fdl_strlist_add(&ij->duck, abs, err) : fdl_oom(err);
	if (!rc)
		rc = fdl_strlist_add(&ij->added, abs, err);
	free(abs);
	return rc;
}

/* Each snapshot data file matched; the table's files the snapshot has not
 * go. */
static int match_files(add_job *j, ice_job *ij, fdl_error *err)
{
	fdl_strlist have = {0};
	fdl_strmap m = {0};
	char *data = NULL;
	int rc = fdl_work_data_location(&data, j->repo, err);
	if (!rc)
		rc = fdl_catalog_table_files(j->d, ADD_ALIAS, j->schema, j->table, j->w.data_path, &have, err);
	char *published = rc ? NULL : fdl_asprintf("%s%s", data, j->folder); /* data ends in '/' */
	char *staged = rc ? NULL : fdl_asprintf("%s/", j->dir);
	bool *used = rc ? NULL : calloc(have.len ? have.len : 1, sizeof *used);
	if (!rc && (!published || !staged || !used))
		rc = fdl_oom(err);
	if (!rc)
		rc = places(&m, &have, staged, published, err);
	for (size_t i = 0; !rc && i < ij->e.data.len; i++)
		rc = match_one(j, ij, i, &m, &have, used, staged, err);
	for (size_t k = 0; !rc && k < have.len; k++) {
		const char *place = used[k] ? NULL : place_of(have.items[k], staged, published);
		if (!used[k])
			rc = fdl_strlist_add(&ij->gone, have.items[k], err);
		if (!rc && !used[k])
			rc = fdl_strlist_add(&ij->removed, place ? place : have.items[k], err);
	}
	fdl_strmap_free(&m);
	free(used);
	free(published);
	free(staged);
	free(data);
	fdl_strlist_free(&have);
	return rc;
}

/* Which column of the schema a file's column is: by its field id, else by
 * its name; -1 when neither (a column dropped since it was written). */
static ssize_t schema_column(const ice_job *ij, const char *name, const char *id)
{
	char *end;
	long long v = *id ? strtoll(id, &end, 10) : -1;
	for (size_t i = 0; i < ij->src.names.len; i++)
		if (*id ? ij->src.ids[i] == v : !strcmp(ij->src.names.items[i], name))
			return (ssize_t)i;
	return -1;
}

/* A new data file: Parquet, each column the schema's (by field id) with
 * the schema's name and type. */
static int check_file(add_job *j, ice_job *ij, const char *path, fdl_error *err)
{
	fdl_strlist names = {0}, types = {0}, fnames = {0}, ids = {0};
	int64_t rows = 0;
	int rc = fdl_catalog_parquet_columns(j->d, path, &names, &types, &rows, err);
	if (!rc)
		rc = fdl_catalog_parquet_field_ids(j->d, path, &fnames, &ids, err);
	if (!rc && fnames.len != names.len)
		rc = fdl_fail(err, FDL_EDUCKDB, "%s: %zu columns in its schema, %zu read", path, fnames.len, names.len);
	for (size_t c = 0; !rc && c < names.len; c++) {
		ssize_t at = schema_column(ij, fnames.items[c], ids.items[c]);
		if (at < 0)
			continue;
		if (strcmp(names.items[c], j->names.items[at]))
			rc = fdl_fail(err, FDL_EINVALID, "%s: field %s is column %s in the file, %s in the Iceberg "
					  "table (renamed since it was written; fdl add --iceberg registers files whose "
					  "columns have the table's names). Nothing was added",
				      path, ids.items[c], names.items[c], j->names.items[at]);
		else if (strcmp(types.items[c], j->types.items[at]))
			rc = fdl_fail(err, FDL_EINVALID, "%s: column %s is %s in the file, %s in table %s.%s. Nothing "
					  "was added", path, names.items[c], types.items[c], j->types.items[at],
				      j->schema, j->table);
	}
	j->rows += rows;
	fdl_strlist_free(&names);
	fdl_strlist_free(&types);
	fdl_strlist_free(&fnames);
	fdl_strlist_free(&ids);
	return rc;
}

/* Each new file checked and hashed into fdl add's record. */
static int check_new(add_job *j, ice_job *ij, fdl_error *err)
{
	json_t *added = NULL;
	int rc = fdl_work_added_read(&added, &j->w, err);
	if (!rc && !added && !(added = json_object()))
		rc = fdl_oom(err);
	size_t n = strlen(j->dir) + 1;
	for (size_t i = 0; !rc && i < ij->added.len; i++) {
		const char *path = ij->added.items[i];
		char hex[65];
		int64_t bytes;
		char *skey = fdl_asprintf("%s%s", j->key, path + n);
		char *key = fdl_asprintf("%s%s", j->folder, path + n);
		rc = skey && key ? check_file(j, ij, path, err) : fdl_oom(err);
		if (!rc)
			rc = fdl_store_sha256(j->repo->store, skey, hex, &bytes, err);
		if (!rc && json_object_set_new(added, key, json_string(hex)))
			rc = fdl_oom(err);
		free(skey);
		free(key);
	}
	if (!rc && ij->added.len)
		rc = fdl_work_added_save(&j->w, added, err);
	json_decref(added);
	return rc;
}

static int position_deletes(ice_job *ij, fdl_error *err)
{
	for (size_t i = 0; i < ij->e.pos_deletes.len; i++) {
		char *p = NULL;
		int rc = local_path(&p, ij->e.pos_deletes.items[i], err);
		if (!rc)
			rc = fdl_strlist_add(&ij->dels, p, err);
		free(p);
		if (rc)
			return rc;
	}
	return 0;
}

/* The record: this table's metadata, snapshot and files. */
static int remember(add_job *j, ice_job *ij, fdl_error *err)
{
	json_t *rec = NULL;
	int rc = fdl_work_iceberg_read(&rec, &j->w, err);
	if (!rc && !rec && !(rec = json_object()))
		rc = fdl_oom(err);
	json_t *files = rc ? NULL : json_array();
	for (size_t i = 0; files && i < j->rel.len; i++) {
		char *key = fdl_asprintf("%s%s", j->folder, j->rel.items[i]);
		if (!key || json_array_append_new(files, json_string(key)))
			rc = fdl_oom(err);
		free(key);
	}
	char *name = fdl_asprintf("%s.%s", j->schema, j->table);
	json_t *t = files && name ? json_pack("{s:s, s:I, s:I, s:o}", "metadata", ij->meta, "snapshot",
					      (json_int_t)ij->src.snapshot, "sequence", (json_int_t)ij->src.sequence,
					      "files", files)
				  : NULL;
	if (!rc && (!t || json_object_set_new(rec, name, t)))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_work_iceberg_save(&j->w, rec, err);
	json_decref(rec);
	free(name);
	return rc;
}

static int apply(add_job *j, ice_job *ij, fdl_error *err)
{
	fdl_ice_batch b = {.schema = j->schema, .table = j->table, .data_path = j->w.data_path,
			   .create = !j->shape.table_exists, .schema_exists = j->shape.schema_exists,
			   .names = &j->names, .types = &j->types, .added = &ij->added, .gone = &ij->gone,
			   .pos_deletes = &ij->dels, .ice = &ij->e.data, .duck = &ij->duck};
	int rc = fdl_catalog_ice_deleted(j->d, &b, &ij->deleted, err);
	b.expect_rows = ij->records - ij->deleted;
	if (!rc)
		rc = fdl_catalog_ice_apply(j->d, ADD_ALIAS, &b, err);
	return rc;
}

static int report(fdl_add_report **out, add_job *j, ice_job *ij, fdl_error *err)
{
	fdl_add_report *r = calloc(1, sizeof *r);
	if (!r || !(r->table = fdl_asprintf("%s.%s", j->schema, j->table))) {
		free(r);
		return fdl_oom(err);
	}
	r->created = !j->shape.table_exists;
	r->rows = ij->records - ij->deleted;
	r->bytes = j->bytes;
	r->iceberg = 1;
	r->iceberg_snapshot = ij->src.snapshot;
	r->deleted_rows = ij->deleted;
	fdl_strlist newer = {0};
	size_t n = strlen(j->dir) + 1;
	int rc = 0;
	for (size_t i = 0; !rc && i < ij->added.len; i++)
		rc = fdl_strlist_add(&newer, ij->added.items[i] + n, err);
	fdl_strarray_take(&r->files, &newer);
	fdl_strarray_take(&r->removed, &ij->removed);
	fdl_strlist_free(&newer);
	if (rc)
		fdl_add_report_free(r);
	else
		*out = r;
	return rc;
}

static int run(add_job *j, ice_job *ij, const char *metadata, fdl_error *err)
{
	int rc = j->bucket ? fdl_fail(err, FDL_EINVALID, "fdl add --iceberg works on a repository on a folder; %s is a "
					   "bucket", j->repo->root)
			   : 0;
	if (!rc)
		rc = metadata_file(ij, metadata, err);
	if (!rc)
		rc = fdl_ice_source_read(&ij->src, ij->meta, err);
	if (!rc && ij->src.snapshot >= 0)
		rc = fdl_catalog_ice_entries(j->d, ij->meta, &ij->e, err);
	if (!rc)
		rc = refuse_entries(ij, err);
	if (!rc)
		rc = table_columns(j, ij, err);
	if (!rc)
		rc = match_files(j, ij, err);
	if (!rc)
		rc = position_deletes(ij, err);
	if (!rc)
		rc = check_new(j, ij, err);
	if (!rc)
		rc = apply(j, ij, err);
	if (!rc)
		rc = remember(j, ij, err);
	return rc;
}

int fdl_add_iceberg(fdl_add_report **out, const char *work, const char *table, const char *metadata, fdl_error *err)
{
	*out = NULL;
	add_job j = {.iceberg = true};
	ice_job ij = {0};
	fdl_lockfile lk = {.fd = -1};
	int rc = fdl_work_load(&j.w, work, err);
	if (!rc)
		rc = fdl_work_lock(&lk, &j.w, work, "fdl add", err);
	if (!rc)
		rc = fdl_add_job_open(&j, work, table, true, err);
	if (!rc)
		rc = fdl_work_record_touch(j.repo, &j.w, NULL, err);
	if (!rc)
		rc = run(&j, &ij, metadata, err);
	if (!rc)
		rc = report(out, &j, &ij, err);
	ice_free(&ij);
	fdl_lockfile_release(&lk);
	fdl_add_job_free(&j);
	return rc;
}
