/* One table's snapshot in a version's Iceberg view (docs/format.md
 * "Iceberg views"): its data files and DuckLake's delete files rewritten as
 * position deletes, grouped into manifests by the version that added them
 * (named by their sha256, so snapshots share them), and its manifest list. */
#include "iceberg_int.h"
#include "../util/avro.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The first version of the chain whose snapshot has a row that began at
 * `begin`: the version that added it. */
static const ice_version *born(const ice_run *r, int64_t begin)
{
	for (size_t i = 0; i < r->nchain; i++)
		if (r->chain[i].snap >= begin)
			return &r->chain[i];
	return &r->chain[r->nchain - 1];
}

/* ---- writing ---------------------------------------------------------- */

/* An existing `key` where this run writes `data`: kept when it holds
 * those bytes, written over otherwise (a file is named by its sha256, so a
 * file under the name with other bytes was planted or damaged, and a
 * reader must not be led by it). */
static int keep_or_replace(ice_run *r, const char *key, const void *data, size_t len, fdl_error *err)
{
	fdl_buf b = {0};
	char etag[FDL_ETAG_MAX] = "";
	int rc = fdl_store_get(r->repo->store, key, len + 1, &b, etag, err);
	if (rc == FDL_EINVALID || (!rc && (b.len != len || memcmp(b.data, data, len)))) {
		fdl_error_clear(err);
		rc = fdl_store_put_if_match(r->repo->store, key, data, len, etag[0] ? etag : NULL, err);
		if (!rc)
			r->written++;
	}
	fdl_buf_free(&b);
	return rc;
}

/* Create `key` unless this run knows it is there; an existing one is kept
 * when it holds the same bytes (keep_or_replace). */
static int put_new(ice_run *r, const char *key, const void *data, size_t len, fdl_error *err)
{
	int64_t seen;
	if (fdl_strmap_get(r->known, key, &seen))
		return 0;
	int rc = fdl_store_put_if_absent(r->repo->store, key, data, len, err);
	if (rc == FDL_EEXISTS) {
		fdl_error_clear(err);
		rc = keep_or_replace(r, key, data, len, err);
	} else if (!rc)
		r->written++;
	return rc ? rc : fdl_strmap_put(r->known, key, 1, err);
}

/* Write an Avro file under its sha256; *uri gets where it is. */
static int put_avro(char **uri, ice_run *r, const fdl_buf *b, fdl_error *err)
{
	char sha[65];
	int rc = fdl_sha256_mem(sha, b->data, b->len, err);
	char *key = rc ? NULL : fdl_iceberg_manifest_key(r->lid, sha);
	if (!rc && !key)
		rc = fdl_oom(err);
	if (!rc)
		rc = put_new(r, key, b->data, b->len, err);
	if (!rc && !(*uri = ice_uri_of(r, key)))
		rc = fdl_oom(err);
	free(key);
	return rc;
}

/* The position-delete file of DuckLake delete file x as of DuckLake
 * snapshot `snap`: its URI, size and positions, written first when it is
 * not there yet. A partial file (rows of several snapshots) read before its
 * last snapshot keeps the rows up to `snap`: <path>.upto-<snap>.parquet. */
static int delete_file(char **uri, int64_t *bytes, int64_t *rows, ice_run *r, const fdl_lake_delete *x,
		       const fdl_lake_file *f, int64_t snap, fdl_error *err)
{
	int64_t upto = x->partial_max >= 0 && x->partial_max > snap ? snap : -1;
	char *name = upto >= 0 ? fdl_asprintf("%s.upto-%lld.parquet", x->path, (long long)upto) : fdl_strdup(x->path);
	char *key = name ? fdl_iceberg_deletes_key(r->lid, name) : NULL;
	int rc = key ? 0 : fdl_oom(err);
	const json_t *known = rc ? NULL : json_object_get(r->deletes, name);
	if (!rc && known) {
		*bytes = json_integer_value(json_array_get(known, 0));
		*rows = json_integer_value(json_array_get(known, 1));
	} else if (!rc) {
		if (!r->tmpdir)
			rc = fdl_tempdir(&r->tmpdir, "iceberg", err);
		char *src = rc ? NULL : fdl_asprintf("%s%s", r->repo->data_url, x->path);
		char *data_uri = rc ? NULL : fdl_asprintf("%s/%s/%s", r->location, r->repo->data_dir, f->path);
		char *dst = rc ? NULL : fdl_asprintf("%s/d%lld.parquet", r->tmpdir, (long long)x->id);
		struct stat st;
		if (!rc && (!src || !data_uri || !dst))
			rc = fdl_oom(err);
		if (!rc)
			rc = fdl_catalog_iceberg_deletes(r->duck, src, data_uri, upto, dst, rows, err);
		if (!rc && stat(dst, &st) != 0)
			rc = fdl_fail(err, FDL_EIO, "%s: not written", dst);
		*bytes = rc ? 0 : (int64_t)st.st_size;
		if (!rc)
			rc = fdl_store_put_file_if_absent(r->repo->store, key, dst, err);
		if (rc == FDL_EEXISTS) { /* written before: keep that one, with its size */
			fdl_error_clear(err);
			rc = fdl_store_head(r->repo->store, key, bytes, err);
		} else if (!rc)
			r->written++;
		if (!rc)
			json_object_set_new(r->deletes, name, json_pack("[I, I]", (json_int_t)*bytes, (json_int_t)*rows));
		free(src);
		free(data_uri);
		free(dst);
	}
	if (!rc && !(*uri = ice_uri_of(r, key)))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_strmap_put(r->known, key, 1, err);
	free(key);
	free(name);
	return rc;
}

/* ---- one snapshot ----------------------------------------------------- */

/* The Iceberg spec of a DuckLake partition under `schema`: identity of an
 * int, long or string column, and DuckLake's year (the calendar year) of a
 * date or timestamp as Iceberg's year (years since 1970); anything else,
 * or no partition, is spec 0, unpartitioned. */
static int spec_of(fdl_ice_spec *s, const fdl_lake_partition *p, const json_t *schema, fdl_error *err)
{
	memset(s, 0, sizeof *s);
	s->fields = json_array();
	if (!s->fields)
		return fdl_oom(err);
	for (size_t k = 0; p && k < p->ncols && k < 8; k++) {
		const char *type = json_string_value(fdl_ice_field_type(schema, p->column_ids[k]));
		const char *name = NULL;
		size_t i;
		const json_t *f;
		json_array_foreach(json_object_get(schema, "fields"), i, f)
		if (json_integer_value(json_object_get(f, "id")) == p->column_ids[k]) name =
			json_string_value(json_object_get(f, "name"));
		bool ident = type && name && !strcmp(p->transforms[k], "identity") &&
			     (!strcmp(type, "int") || !strcmp(type, "long") || !strcmp(type, "string"));
		bool year = type && name && !strcmp(p->transforms[k], "year") &&
			    (!strcmp(type, "date") || !strcmp(type, "timestamp"));
		if (!ident && !year) {
			json_array_clear(s->fields);
			s->n = 0;
			return 0;
		}
		char *pname = fdl_asprintf("%s%s", name, year ? "_year" : "");
		json_t *field = pname ? json_pack("{s:s, s:s, s:I, s:I}", "name", pname, "transform", year ? "year" : "identity",
						  "source-id", (json_int_t)p->column_ids[k], "field-id",
						  (json_int_t)(1000 + p->id * 16 + (int64_t)k))
				      : NULL;
		free(pname);
		if (!field)
			return fdl_oom(err);
		json_array_append_new(s->fields, field);
		s->key_index[s->n] = k;
		s->result_type[s->n] = year ? "int" : type;
		s->year[s->n++] = year;
	}
	if (p && s->n == p->ncols && s->n)
		s->id = (int)(p->id + 1);
	else {
		json_array_clear(s->fields);
		s->n = 0;
	}
	return 0;
}

static const fdl_lake_partition *partition_by_id(const fdl_lake *l, int64_t id)
{
	for (size_t i = 0; id >= 0 && i < l->npartitions; i++)
		if (l->partitions[i].id == id)
			return &l->partitions[i];
	return NULL;
}

typedef struct ice_item {
	fdl_ice_entry e;
	int spec;
	int64_t group;
	char *uri;
} ice_item;

static int item_cmp(const void *a, const void *b)
{
	const ice_item *x = a, *y = b;
	if (x->e.is_delete != y->e.is_delete)
		return x->e.is_delete ? 1 : -1;
	if (x->spec != y->spec)
		return x->spec < y->spec ? -1 : 1;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(x->uri, y->uri);
}

/* Items that go in one manifest: same content, spec and group. */
static int item_cmp_group(const ice_item *x, const ice_item *y)
{
	return x->e.is_delete != y->e.is_delete || x->spec != y->spec || x->group != y->group;
}

/* Files added by a version in a complete block of ICE_BLOCK versions share
 * one manifest (group -1 - block); the newer ones have one each (group =
 * the version's seq). */
static int64_t group_of(int64_t seq, int64_t at)
{
	int64_t block = (seq - 1) / ICE_BLOCK;
	return (block + 1) * ICE_BLOCK <= at ? -1 - block : seq;
}

typedef struct snap_files {
	ice_item *items;
	size_t len;
	fdl_ice_spec specs[16]; /* by DuckLake partition met, [0] unpartitioned */
	int64_t spec_pid[16];
	size_t nspecs;
} snap_files;

static void snap_files_free(snap_files *s)
{
	for (size_t i = 0; i < s->len; i++)
		free(s->items[i].uri);
	free(s->items);
	for (size_t i = 0; i < s->nspecs; i++)
		json_decref(s->specs[i].fields);
}

/* The spec (index in s->specs) of a data file. */
static int spec_index(size_t *out, snap_files *s, const ice_run *r, const fdl_lake_file *f, const json_t *schema,
		      fdl_error *err)
{
	int64_t pid = f->partition_id;
	for (size_t i = 0; i < s->nspecs; i++)
		if (s->spec_pid[i] == pid) {
			*out = i;
			return 0;
		}
	if (s->nspecs == 16) {
		*out = 0; /* too many partitionings: the rest unpartitioned */
		return 0;
	}
	int rc = spec_of(&s->specs[s->nspecs], partition_by_id(r->lake, pid), schema, err);
	if (!rc) {
		s->spec_pid[s->nspecs] = pid;
		*out = s->nspecs++;
	}
	return rc;
}

static int add_item(snap_files *s, const ice_item *it, fdl_error *err)
{
	ice_item *p = realloc(s->items, (s->len + 1) * sizeof *p);
	if (!p)
		return fdl_oom(err);
	s->items = p;
	s->items[s->len++] = *it;
	return 0;
}

/* Every data and delete file of table tid live at version c. */
static int collect(snap_files *s, ice_run *r, int64_t tid, const ice_version *c, const json_t *schema, fdl_error *err)
{
	const fdl_lake *l = r->lake;
	int rc = spec_of(&s->specs[0], NULL, schema, err);
	s->spec_pid[0] = -1;
	s->nspecs = rc ? 0 : 1;
	for (size_t i = 0; i < l->nfiles && !rc; i++) {
		const fdl_lake_file *f = &l->files[i];
		if (f->table_id != tid || !ice_live_at(f->begin, f->end, c->snap))
			continue;
		size_t sp = 0;
		const ice_version *b = born(r, f->begin);
		ice_item it = {.e = {.data = f, .rows = f->rows, .bytes = f->bytes, .seq = b->seq, .snapshot = b->sid}};
		rc = spec_index(&sp, s, r, f, schema, err);
		it.spec = (int)sp;
		it.group = group_of(it.e.seq, c->seq);
		if (!rc && !(it.uri = fdl_asprintf("%s/%s/%s", r->location, r->repo->data_dir, f->path)))
			rc = fdl_oom(err);
		it.e.uri = it.uri;
		if (!rc && (rc = add_item(s, &it, err)))
			free(it.uri);
	}
	size_t ndata = s->len;
	for (size_t i = 0; i < l->ndeletes && !rc; i++) {
		const fdl_lake_delete *x = &l->deletes[i];
		if (x->table_id != tid || !ice_live_at(x->begin, x->end, c->snap))
			continue;
		const ice_item *d = NULL;
		for (size_t k = 0; k < ndata && !d; k++)
			if (s->items[k].e.data->id == x->data_file_id)
				d = &s->items[k];
		if (!d)
			continue; /* its data file is gone at this snapshot */
		const ice_version *b = born(r, x->begin);
		ice_item it = {.e = {.data = d->e.data, .data_uri = d->uri, .is_delete = true, .seq = b->seq,
				     .snapshot = b->sid},
			       .spec = d->spec};
		it.group = group_of(it.e.seq, c->seq);
		rc = delete_file(&it.uri, &it.e.bytes, &it.e.rows, r, x, d->e.data, c->snap, err);
		it.e.uri = it.uri;
		if (!rc && (rc = add_item(s, &it, err)))
			free(it.uri);
	}
	return rc;
}

/* What the manifest of these entries holds, as the sha256 (hex) of their
 * files (URI, sequence, snapshot, size, rows) under the table's schema id and the
 * spec: a data file's statistics never change, so the same signature is
 * the same manifest. */
static int manifest_sig(char hex[65], const fdl_ice_entry *e, size_t n, const json_t *schema, const fdl_ice_spec *spec,
			fdl_error *err)
{
	fdl_buf sig = {0};
	char *spec_text = json_dumps(spec->fields, JSON_COMPACT);
	int rc = spec_text ? fdl_buf_printf(&sig, err, "%d %s", (int)json_integer_value(json_object_get(schema, "schema-id")),
					    spec_text)
			   : fdl_oom(err);
	for (size_t i = 0; i < n && !rc; i++)
		rc = fdl_buf_printf(&sig, err, " %s:%lld:%lld:%lld:%lld", e[i].uri, (long long)e[i].seq,
				    (long long)e[i].snapshot, (long long)e[i].bytes, (long long)e[i].rows);
	if (!rc)
		rc = fdl_sha256_mem(hex, sig.data, sig.len, err);
	free(spec_text);
	fdl_buf_free(&sig);
	return rc;
}

/* The manifest of signature `sig` made before, in this run or (the same
 * file, still in the view) by the parent's: its [uri, bytes], NULL when
 * there is none. */
static const json_t *manifest_known(const ice_run *r, const char *sig)
{
	const json_t *hit = r->mcache ? json_object_get(r->mcache, sig) : NULL;
	const char *uri = json_string_value(json_array_get(hit, 0));
	size_t skip = strlen(r->location) + 1;
	int64_t seen;
	return uri && strlen(uri) > skip && fdl_strmap_get(r->known, uri + skip, &seen) ? hit : NULL;
}

/* The manifest of these entries, written unless made before. */
static int manifest_of(fdl_ice_listed *m, ice_run *r, const fdl_ice_entry *e, size_t n, const json_t *schema,
		       const fdl_ice_spec *spec, const char *sig, fdl_error *err)
{
	fdl_buf b = {0};
	const json_t *hit = manifest_known(r, sig);
	if (hit) {
		m->uri = fdl_strdup(json_string_value(json_array_get(hit, 0)));
		m->length = json_integer_value(json_array_get(hit, 1));
		return m->uri ? 0 : fdl_oom(err);
	}
	int rc = !r->mcache && !(r->mcache = json_object()) ? fdl_oom(err) : 0;
	if (!rc)
		rc = fdl_ice_manifest(&b, e, n, schema, spec, err);
	if (!rc)
		rc = put_avro(&m->uri, r, &b, err);
	m->length = (int64_t)b.len;
	if (!rc)
		json_object_set_new(r->mcache, sig, json_pack("[s, I]", m->uri, (json_int_t)m->length));
	fdl_buf_free(&b);
	return rc;
}

/* The statistics of the data files of the groups whose manifest is new,
 * when the lake was read without them. */
static int stats_for_new(ice_run *r, const snap_files *s, const size_t *ends, char (*sigs)[65], size_t ngroups,
			 fdl_error *err)
{
	if (r->lake->stats_read)
		return 0;
	int64_t *ids = calloc(s->len ? s->len : 1, sizeof *ids);
	size_t n = 0;
	if (!ids)
		return fdl_oom(err);
	for (size_t g = 0, i = 0; g < ngroups; i = ends[g++]) {
		bool known = manifest_known(r, sigs[g]) != NULL;
		for (size_t k = i; !known && k < ends[g]; k++)
			if (!s->items[k].e.is_delete)
				ids[n++] = s->items[k].e.data->id;
	}
	int rc = n ? fdl_catalog_lake_read_stats(r->lake, r->duck, "fdl_ice", ids, n, err) : 0;
	free(ids);
	return rc;
}

/* Write the manifests of s (sorted) and list them; `record` (may be NULL)
 * gets each one's signature -> [uri, length]. */
static int write_manifests(fdl_ice_listed **out, size_t *n, snap_files *s, ice_run *r, const json_t *schema,
			   json_t *record, fdl_error *err)
{
	int rc = 0;
	if (s->len) /* a snapshot whose tables hold no file: items may be NULL */
		qsort(s->items, s->len, sizeof *s->items, item_cmp);
	size_t cap = s->len ? s->len : 1, ngroups = 0;
	*out = calloc(cap, sizeof **out);
	*n = 0;
	fdl_ice_entry *ents = calloc(cap, sizeof *ents);
	size_t *ends = calloc(cap, sizeof *ends);
	char(*sigs)[65] = calloc(cap, sizeof *sigs);
	if (!*out || !ents || !ends || !sigs)
		rc = fdl_oom(err);
	for (size_t i = 0; i < s->len && !rc; i = ends[ngroups++]) { /* the groups and what each holds */
		size_t j = i;
		while (j < s->len && !item_cmp_group(&s->items[i], &s->items[j])) {
			ents[j] = s->items[j].e;
			j++;
		}
		ends[ngroups] = j;
		rc = manifest_sig(sigs[ngroups], ents + i, j - i, schema, &s->specs[s->items[i].spec], err);
	}
	if (!rc)
		rc = stats_for_new(r, s, ends, sigs, ngroups, err);
	for (size_t g = 0, i = 0; g < ngroups && !rc; i = ends[g++]) {
		fdl_ice_listed *m = &(*out)[(*n)++];
		m->min_seq = INT64_MAX;
		for (size_t k = i; k < ends[g]; k++) {
			m->rows += s->items[k].e.rows;
			if (s->items[k].e.seq > m->seq) { /* the newest version adding to it added it */
				m->seq = s->items[k].e.seq;
				m->added_snapshot = s->items[k].e.snapshot;
			}
			m->min_seq = s->items[k].e.seq < m->min_seq ? s->items[k].e.seq : m->min_seq;
		}
		const fdl_ice_spec *spec = &s->specs[s->items[i].spec];
		rc = manifest_of(m, r, ents + i, ends[g] - i, schema, spec, sigs[g], err);
		if (!rc && record)
			rc = json_object_set_new(record, sigs[g], json_pack("[s, I]", m->uri, (json_int_t)m->length))
				     ? fdl_oom(err)
				     : 0;
		m->files = (int64_t)(ends[g] - i);
		m->spec_id = spec->id;
		m->deletes = s->items[i].e.is_delete;
	}
	free(ents);
	free(ends);
	free(sigs);
	return rc;
}

/* The snapshot of table tid at version c: its manifests and manifest list
 * written, *out its entry of metadata.json's snapshots. */
int fdl_ice_snapshot(json_t **out, ice_run *r, int64_t tid, const ice_version *c, int64_t parent,
		     const json_t *schema, json_t *specs, json_t *names, fdl_error *err)
{
	snap_files s = {0};
	fdl_ice_listed *m = NULL;
	size_t n = 0;
	fdl_buf list = {0};
	char *list_uri = NULL;
	int rc = collect(&s, r, tid, c, schema, err);
	if (!rc)
		rc = write_manifests(&m, &n, &s, r, schema, names ? r->msigs : NULL, err);
	for (size_t i = 0; names && i < n && !rc; i++) /* the keys of this snapshot's manifests */
		json_array_append_new(names, json_string(m[i].uri + strlen(r->location) + 1));
	if (!rc)
		rc = fdl_ice_manifest_list(&list, m, n, c->sid, parent, c->seq, err);
	if (!rc)
		rc = put_avro(&list_uri, r, &list, err);
	for (size_t i = 0; i < s.nspecs && !rc; i++) {
		char id[32];
		snprintf(id, sizeof id, "%d", s.specs[i].id);
		json_object_set_new(specs, id, json_pack("{s:i, s:O}", "spec-id", s.specs[i].id, "fields", s.specs[i].fields));
	}
	int64_t rows = 0, files = 0;
	for (size_t i = 0; i < s.len; i++)
		if (!s.items[i].e.is_delete) {
			rows += s.items[i].e.rows;
			files++;
		}
	if (!rc) {
		char nrows[32], nfiles[32], seq[32];
		snprintf(nrows, sizeof nrows, "%lld", (long long)rows);
		snprintf(nfiles, sizeof nfiles, "%lld", (long long)files);
		snprintf(seq, sizeof seq, "%lld", (long long)c->seq);
		*out = json_pack("{s:I, s:I, s:I, s:s, s:{s:s, s:s, s:s, s:s, s:s}, s:I}", "snapshot-id", (json_int_t)c->sid,
				 "sequence-number", (json_int_t)c->seq, "timestamp-ms", (json_int_t)c->ms, "manifest-list",
				 list_uri, "summary", "operation", "overwrite", "fdl.version", c->id, "fdl.seq", seq,
				 "total-data-files", nfiles, "total-records", nrows, "schema-id",
				 json_integer_value(json_object_get(schema, "schema-id")));
		if (*out && parent >= 0)
			json_object_set_new(*out, "parent-snapshot-id", json_integer(parent));
		if (!*out)
			rc = fdl_oom(err);
	}
	for (size_t i = 0; m && i < n; i++)
		free(m[i].uri);
	free(m);
	free(list_uri);
	fdl_buf_free(&list);
	snap_files_free(&s);
	return rc;
}
