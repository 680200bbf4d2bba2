/* fdl iceberg: a version's Iceberg view (docs/format.md "Iceberg views").
 *
 * Every live table of the version becomes an Iceberg v2 table whose
 * snapshots are the live versions of its first-parent history that hold
 * it (snapshot id and sequence number = the version's seq), over the
 * repository's own data files, DuckLake's delete files rewritten as
 * position deletes, all read from the version's one frozen catalog (it
 * keeps every earlier snapshot's rows). Manifests group the files by the
 * version that added them (64 versions to a manifest once a block of 64 is
 * complete) and are named by their sha256, so snapshots share them and a
 * new version writes what it changed. */
#include "iceberg.h"
#include "../layout/hindex.h"
#include "../util/avro.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define ICE_BLOCK 64 /* versions to a merged manifest */
#define ICE_WHOLE 1  /* view_build: build the view from the history instead */

typedef struct ice_version {
	char id[FDL_ID_LEN + 1];
	int64_t seq, snap, ms;
	bool live;
} ice_version;

typedef struct ice_run {
	fdl_repo *repo;
	char *location;
	char lid[FDL_ICEBERG_LID_LEN + 1];
	char *view_dir; /* iceberg/<lid>/versions/<id> */
	fdl_duck *duck;
	fdl_lake *lake;
	char *catalog;
	ice_version *chain; /* ascending seq; the last is the version viewed */
	size_t nchain;
	fdl_tag *tags;
	size_t ntags;
	fdl_strmap *known; /* keys written or found in this run (or a rebuild's) */
	fdl_strmap own_known;
	json_t *deletes;  /* {"<DuckLake delete path>": [bytes, positions]} */
	json_t *notices;
	json_t *tables;  /* view.json's tables */
	json_t *parent;  /* the first parent's view.json, when it has one: a commit builds on it */
	json_t *mcache;  /* a manifest's entries and schema -> [uri, bytes]: made once per run */
	bool whole;      /* build from the history even when the parent has a view */
	bool liveness;   /* chain[].live is known */
	char *tmpdir;
	int64_t written;
} ice_run;

static void run_free(ice_run *r)
{
	fdl_lake_free(r->lake);
	fdl_duck_free(r->duck);
	free(r->catalog);
	free(r->location);
	free(r->view_dir);
	free(r->chain);
	fdl_tag_list_free(r->tags);
	fdl_strmap_free(&r->own_known);
	json_decref(r->deletes);
	json_decref(r->notices);
	json_decref(r->tables);
	json_decref(r->parent);
	json_decref(r->mcache);
	if (r->tmpdir)
		fdl_rm_rf(r->tmpdir);
	free(r->tmpdir);
}

/* ---- the history ------------------------------------------------------ */

static int64_t iso_ms(const char *iso)
{
	struct tm tm = {0};
	if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return (int64_t)timegm(&tm) * 1000;
}

/* Whether each version of the chain still has its catalog (no expired.json). */
static int chain_liveness(ice_run *r, fdl_error *err)
{
	const char **keys = calloc(r->nchain ? r->nchain : 1, sizeof *keys);
	int64_t *sizes = calloc(r->nchain ? r->nchain : 1, sizeof *sizes);
	int rc = keys && sizes ? 0 : fdl_oom(err);
	for (size_t i = 0; i < r->nchain && !rc; i++)
		if (!(keys[i] = fdl_version_key(r->chain[i].id, FDL_EXPIRED_JSON)))
			rc = fdl_oom(err);
	if (!rc)
		rc = fdl_store_head_many(r->repo->store, keys, r->nchain, sizes, err);
	for (size_t i = 0; i < r->nchain && !rc; i++)
		r->chain[i].live = sizes[i] == FDL_HEAD_ABSENT;
	r->liveness = !rc;
	for (size_t i = 0; keys && i < r->nchain; i++)
		free((char *)keys[i]);
	free(keys);
	free(sizes);
	return rc;
}

static int read_chain(ice_run *r, const char *id, fdl_error *err)
{
	fdl_hist h;
	int rc = fdl_history_read(&h, r->repo, NULL, id, -1, true, err);
	char end[FDL_ID_LEN + 1];
	if (rc == FDL_ENOTFOUND && h.len) /* the older part was withdrawn with its version.json */
		rc = fdl_history_withdrawn_end(end, r->repo, &h, id, err);
	if (!rc && !(r->chain = calloc(h.len ? h.len : 1, sizeof *r->chain)))
		rc = fdl_oom(err);
	for (size_t i = 0; i < h.len && !rc; i++) {
		const fdl_hentry *e = &h.items[h.len - 1 - i];
		ice_version *c = &r->chain[r->nchain++];
		memcpy(c->id, e->id, sizeof c->id);
		c->seq = e->seq;
		c->snap = json_integer_value(json_object_get(json_object_get(e->doc, "ducklake"), "snapshot_id"));
		c->ms = iso_ms(json_string_value(json_object_get(e->doc, "created_at")));
		if (i && c->ms <= r->chain[i - 1].ms) /* Iceberg's snapshot log goes forward */
			c->ms = r->chain[i - 1].ms + 1;
	}
	fdl_hist_free(&h);
	return rc;
}

/* The chain from the first parent's view.json ([[seq, snapshot, ms, id]]
 * oldest first) and v: no history to read. 1 when it has none usable. */
static int chain_from_parent(ice_run *r, const fdl_version *v, fdl_error *err)
{
	const json_t *chain = json_object_get(r->parent, "chain");
	size_t n = json_array_size(chain);
	const json_t *last = json_array_get(chain, n - 1);
	if (!n || json_integer_value(json_array_get(last, 0)) != fdl_version_seq(v) - 1 ||
	    strcmp(json_string_value(json_array_get(last, 3)) ? json_string_value(json_array_get(last, 3)) : "",
		   fdl_version_parent(v, 0)))
		return 1;
	if (!(r->chain = calloc(n + 1, sizeof *r->chain)))
		return fdl_oom(err);
	for (size_t i = 0; i <= n; i++) {
		ice_version *c = &r->chain[r->nchain++];
		const json_t *e = json_array_get(chain, i);
		const char *id = i < n ? json_string_value(json_array_get(e, 3)) : fdl_version_id(v);
		if (!id || !fdl_id_is_valid(id))
			return 1;
		memcpy(c->id, id, sizeof c->id);
		c->seq = i < n ? json_integer_value(json_array_get(e, 0)) : fdl_version_seq(v);
		c->snap = i < n ? json_integer_value(json_array_get(e, 1)) : fdl_version_snapshot_id(v);
		c->ms = i < n ? json_integer_value(json_array_get(e, 2)) : iso_ms(fdl_version_created_at(v));
		c->live = true;
		if (i && (c->seq <= r->chain[i - 1].seq || c->snap < r->chain[i - 1].snap))
			return 1;
		if (i && c->ms <= r->chain[i - 1].ms)
			c->ms = r->chain[i - 1].ms + 1;
	}
	return 0;
}

/* The seq of the first version of the chain whose snapshot has a row that
 * began at `begin`: the version that added it. */
static int64_t born(const ice_run *r, int64_t begin)
{
	for (size_t i = 0; i < r->nchain; i++)
		if (r->chain[i].snap >= begin)
			return r->chain[i].seq;
	return r->chain[r->nchain - 1].seq;
}

/* ---- writing ---------------------------------------------------------- */

static char *uri_of(const ice_run *r, const char *key)
{
	return fdl_asprintf("%s/%s", r->location, key);
}

/* Create `key` unless this run knows it is there; an existing one is kept
 * (the same name holds the same bytes). */
static int put_new(ice_run *r, const char *key, const void *data, size_t len, fdl_error *err)
{
	int64_t seen;
	if (fdl_strmap_get(r->known, key, &seen))
		return 0;
	int rc = fdl_store_put_if_absent(r->repo->store, key, data, len, err);
	if (rc == FDL_EEXISTS) {
		fdl_error_clear(err);
		rc = 0;
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
	if (!rc && !(*uri = uri_of(r, key)))
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
	if (!rc && !(*uri = uri_of(r, key)))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_strmap_put(r->known, key, 1, err);
	free(key);
	free(name);
	return rc;
}

/* ---- one snapshot ----------------------------------------------------- */

static bool live_at(int64_t begin, int64_t end, int64_t snap)
{
	return begin <= snap && snap < end;
}

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
		if (f->table_id != tid || !live_at(f->begin, f->end, c->snap))
			continue;
		size_t sp = 0;
		ice_item it = {.e = {.data = f, .rows = f->rows, .bytes = f->bytes, .seq = born(r, f->begin)}};
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
		if (x->table_id != tid || !live_at(x->begin, x->end, c->snap))
			continue;
		const ice_item *d = NULL;
		for (size_t k = 0; k < ndata && !d; k++)
			if (s->items[k].e.data->id == x->data_file_id)
				d = &s->items[k];
		if (!d)
			continue; /* its data file is gone at this snapshot */
		ice_item it = {.e = {.data = d->e.data, .data_uri = d->uri, .is_delete = true, .seq = born(r, x->begin)},
			       .spec = d->spec};
		it.group = group_of(it.e.seq, c->seq);
		rc = delete_file(&it.uri, &it.e.bytes, &it.e.rows, r, x, d->e.data, c->snap, err);
		it.e.uri = it.uri;
		if (!rc && (rc = add_item(s, &it, err)))
			free(it.uri);
	}
	return rc;
}

/* The manifest of these entries: written once per run, the same entries
 * under the same schema and spec found again by what they are. */
static int manifest_of(fdl_ice_listed *m, ice_run *r, const fdl_ice_entry *e, size_t n, const json_t *schema,
		       const fdl_ice_spec *spec, fdl_error *err)
{
	fdl_buf sig = {0}, b = {0};
	char *spec_text = json_dumps(spec->fields, JSON_COMPACT);
	/* the entries' files belong to one table, whose schema-id names its schema */
	int rc = spec_text ? fdl_buf_printf(&sig, err, "%d %s", (int)json_integer_value(json_object_get(schema, "schema-id")),
					    spec_text)
			   : fdl_oom(err);
	for (size_t i = 0; i < n && !rc; i++)
		rc = fdl_buf_printf(&sig, err, " %s:%lld:%lld:%lld", e[i].uri, (long long)e[i].seq, (long long)e[i].bytes,
				    (long long)e[i].rows);
	free(spec_text);
	if (!rc && !r->mcache && !(r->mcache = json_object()))
		rc = fdl_oom(err);
	const json_t *hit = rc ? NULL : json_object_get(r->mcache, sig.data);
	if (hit) {
		m->uri = fdl_strdup(json_string_value(json_array_get(hit, 0)));
		m->length = json_integer_value(json_array_get(hit, 1));
		rc = m->uri ? 0 : fdl_oom(err);
	} else if (!rc) {
		rc = fdl_ice_manifest(&b, e, n, schema, spec, err);
		if (!rc)
			rc = put_avro(&m->uri, r, &b, err);
		m->length = (int64_t)b.len;
		if (!rc)
			json_object_set_new(r->mcache, sig.data, json_pack("[s, I]", m->uri, (json_int_t)m->length));
	}
	fdl_buf_free(&sig);
	fdl_buf_free(&b);
	return rc;
}

/* Write the manifests of s (sorted) and list them. */
static int write_manifests(fdl_ice_listed **out, size_t *n, snap_files *s, ice_run *r, const json_t *schema,
			   fdl_error *err)
{
	int rc = 0;
	qsort(s->items, s->len, sizeof *s->items, item_cmp);
	*out = calloc(s->len ? s->len : 1, sizeof **out);
	*n = 0;
	if (!*out)
		return fdl_oom(err);
	fdl_ice_entry *ents = calloc(s->len ? s->len : 1, sizeof *ents);
	if (!ents)
		return fdl_oom(err);
	for (size_t i = 0; i < s->len && !rc;) {
		size_t j = i;
		fdl_ice_listed *m = &(*out)[(*n)++];
		m->min_seq = INT64_MAX;
		while (j < s->len && !item_cmp_group(&s->items[i], &s->items[j])) {
			ents[j - i] = s->items[j].e;
			m->rows += s->items[j].e.rows;
			m->seq = s->items[j].e.seq > m->seq ? s->items[j].e.seq : m->seq;
			m->min_seq = s->items[j].e.seq < m->min_seq ? s->items[j].e.seq : m->min_seq;
			j++;
		}
		const fdl_ice_spec *spec = &s->specs[s->items[i].spec];
		rc = manifest_of(m, r, ents, j - i, schema, spec, err);
		m->files = (int64_t)(j - i);
		m->spec_id = spec->id;
		m->deletes = s->items[i].e.is_delete;
		m->added_snapshot = m->seq;
		i = j;
	}
	free(ents);
	return rc;
}

/* The snapshot of table tid at version c: its manifests and manifest list
 * written, *out its entry of metadata.json's snapshots. */
static int snapshot(json_t **out, ice_run *r, int64_t tid, const ice_version *c, int64_t parent, const json_t *schema,
		    json_t *specs, json_t *names, fdl_error *err)
{
	snap_files s = {0};
	fdl_ice_listed *m = NULL;
	size_t n = 0;
	fdl_buf list = {0};
	char *list_uri = NULL;
	int rc = collect(&s, r, tid, c, schema, err);
	if (!rc)
		rc = write_manifests(&m, &n, &s, r, schema, err);
	for (size_t i = 0; names && i < n && !rc; i++) /* the keys of this snapshot's manifests */
		json_array_append_new(names, json_string(m[i].uri + strlen(r->location) + 1));
	if (!rc)
		rc = fdl_ice_manifest_list(&list, m, n, c->seq, parent, c->seq, err);
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
		char nrows[32], nfiles[32];
		snprintf(nrows, sizeof nrows, "%lld", (long long)rows);
		snprintf(nfiles, sizeof nfiles, "%lld", (long long)files);
		*out = json_pack("{s:I, s:I, s:I, s:s, s:{s:s, s:s, s:s, s:s}, s:I}", "snapshot-id", (json_int_t)c->seq,
				 "sequence-number", (json_int_t)c->seq, "timestamp-ms", (json_int_t)c->ms, "manifest-list",
				 list_uri, "summary", "operation", "overwrite", "fdl.version", c->id, "total-data-files",
				 nfiles, "total-records", nrows, "schema-id",
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

/* ---- one table -------------------------------------------------------- */

static bool table_at(const fdl_lake *l, int64_t tid, int64_t snap)
{
	for (size_t i = 0; i < l->ntables; i++)
		if (l->tables[i].id == tid && live_at(l->tables[i].begin, l->tables[i].end, snap))
			return true;
	return false;
}

/* A version Iceberg cannot show: a live file at its snapshot holds rows of
 * later snapshots too (DuckLake's merged files), which DuckLake filters by
 * row and Iceberg cannot. */
static bool expressible(const fdl_lake *l, int64_t tid, int64_t snap)
{
	for (size_t i = 0; i < l->nfiles; i++) {
		const fdl_lake_file *f = &l->files[i];
		if (f->table_id == tid && live_at(f->begin, f->end, snap) &&
		    ((f->partial_max >= 0 && f->partial_max > snap) || f->mapped || f->encrypted))
			return false;
	}
	for (size_t i = 0; i < l->ndeletes; i++) {
		const fdl_lake_delete *x = &l->deletes[i];
		if (x->table_id == tid && live_at(x->begin, x->end, snap) && x->encrypted)
			return false;
	}
	return true;
}

/* The schema's id among `schemas`, added when new. */
static int schema_id(json_t *schemas, json_t *schema)
{
	size_t i;
	json_t *s;
	json_array_foreach(schemas, i, s)
	{
		json_t *copy = json_deep_copy(s);
		json_object_del(copy, "schema-id");
		bool same = json_equal(copy, schema);
		json_decref(copy);
		if (same)
			return (int)i;
	}
	return -1;
}

typedef struct table_meta {
	json_t *snapshots, *log, *schemas, *specs, *refs;
	json_t *manifests; /* keys of the version's own snapshot's manifests */
	json_t *doc;       /* the parent's metadata.json, whose arrays these are */
	int64_t max_id, last;
	int current_schema;
} table_meta;

/* The snapshot of chain[i], appended. */
static int table_snapshot(table_meta *t, ice_run *r, int64_t tid, const char *key, size_t i, fdl_error *err)
{
	int rc = 0;
	{
		const ice_version *c = &r->chain[i];
		bool viewed = i == r->nchain - 1;
		json_t *schema = NULL, *snap = NULL;
		rc = fdl_ice_schema(&schema, &t->max_id, r->lake, tid, c->snap, key, viewed ? r->notices : NULL, err);
		int sid = rc ? 0 : schema_id(t->schemas, schema);
		if (!rc && sid < 0) {
			sid = (int)json_array_size(t->schemas);
			json_object_set_new(schema, "schema-id", json_integer(sid));
			json_array_append(t->schemas, schema);
		} else if (!rc)
			json_object_set_new(schema, "schema-id", json_integer(sid));
		if (!rc)
			rc = snapshot(&snap, r, tid, c, t->last, schema, t->specs, viewed ? t->manifests : NULL, err);
		json_decref(schema);
		if (!rc) {
			json_array_append_new(t->snapshots, snap);
			json_array_append_new(t->log, json_pack("{s:I, s:I}", "timestamp-ms", (json_int_t)c->ms,
								"snapshot-id", (json_int_t)c->seq));
			t->last = c->seq;
			t->current_schema = sid;
		}
	}
	return rc;
}

/* Every snapshot of the table, oldest first. */
static int table_snapshots(table_meta *t, ice_run *r, int64_t tid, const char *key, fdl_error *err)
{
	int rc = r->liveness ? 0 : chain_liveness(r, err);
	t->last = -1;
	for (size_t i = 0; i < r->nchain && !rc; i++) {
		const ice_version *c = &r->chain[i];
		if (i < r->nchain - 1 && (!c->live || !table_at(r->lake, tid, c->snap)))
			continue;
		if (i < r->nchain - 1 && !expressible(r->lake, tid, c->snap)) {
			char why[160];
			snprintf(why, sizeof why, "version %lld is not a snapshot: a live data file then held rows of later "
				 "snapshots too (a merged file), which Iceberg cannot filter", (long long)c->seq);
			json_t *n = json_pack("{s:s, s:s, s:s, s:s}", "table", key, "column", "", "type", "", "reason", why);
			rc = n ? json_array_append_new(r->notices, n) : fdl_oom(err);
			continue;
		}
		rc = table_snapshot(t, r, tid, key, i, err);
	}
	return rc;
}

/* The parent's view of the table (its metadata.json, checked: every
 * manifest list in this view's tree), as the start of this one: 1 when it
 * cannot be used. */
static int table_from_parent(table_meta *t, ice_run *r, const fdl_lake_table *tb, const json_t *pt, fdl_error *err)
{
	const char *rel = json_string_value(json_object_get(pt, "metadata"));
	const char *pid = json_string_value(json_object_get(r->parent, "version"));
	if (!rel || !pid || json_integer_value(json_object_get(pt, "table_id")) != tb->id ||
	    strcmp(json_string_value(json_object_get(pt, "uuid")) ? json_string_value(json_object_get(pt, "uuid")) : "",
		   tb->uuid))
		return 1;
	char *dir = fdl_iceberg_view_dir(r->lid, pid), *key = dir ? fdl_asprintf("%s/%s", dir, rel) : NULL;
	fdl_buf b = {0};
	int rc = key && fdl_path_check_relative(key, "a view's metadata", err) == 0
			 ? fdl_store_get(r->repo->store, key, FDL_META_MAX_BYTES, &b, NULL, err)
			 : 1;
	json_t *doc = NULL;
	if (!rc && fdl_json_parse(&doc, b.data, b.len, key, err))
		rc = 1;
	char *prefix = fdl_asprintf("%s/" FDL_ICEBERG_DIR "/%s/manifests/", r->location, r->lid);
	size_t i;
	json_t *x;
	json_array_foreach(rc ? NULL : json_object_get(doc, "snapshots"), i, x)
	{
		const char *ml = json_string_value(json_object_get(x, "manifest-list"));
		if (!prefix || !ml || strncmp(ml, prefix, strlen(prefix)) || strstr(ml, "/../") ||
		    !json_is_integer(json_object_get(x, "snapshot-id")))
			rc = 1;
	}
	if (!rc && (!json_is_array(json_object_get(doc, "schemas")) || !json_is_array(json_object_get(doc, "snapshot-log")) ||
		    !json_is_array(json_object_get(doc, "partition-specs")) || !json_array_size(json_object_get(doc, "snapshots")) ||
		    strcmp(json_string_value(json_object_get(doc, "table-uuid")) ? json_string_value(json_object_get(doc, "table-uuid")) : "", tb->uuid)))
		rc = 1;
	if (!rc) {
		t->doc = doc;
		doc = NULL;
		t->snapshots = json_incref(json_object_get(t->doc, "snapshots"));
		t->log = json_incref(json_object_get(t->doc, "snapshot-log"));
		t->schemas = json_incref(json_object_get(t->doc, "schemas"));
		t->max_id = json_integer_value(json_object_get(t->doc, "last-column-id"));
		json_array_foreach(json_object_get(t->doc, "partition-specs"), i, x)
		{
			char id[32];
			snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(x, "spec-id")));
			json_object_set(t->specs, id, x);
		}
		t->last = json_integer_value(json_object_get(json_array_get(t->snapshots, json_array_size(t->snapshots) - 1),
							     "snapshot-id"));
		json_array_foreach(json_object_get(pt, "manifests"), i, x) /* known to be there */
		{
			if (json_is_string(x) && fdl_strmap_put(r->known, json_string_value(x), 1, err))
				rc = -1;
		}
	}
	if (rc > 0)
		fdl_error_clear(err);
	json_decref(doc);
	fdl_buf_free(&b);
	free(prefix);
	free(dir);
	free(key);
	return rc;
}

/* fdl's tags on versions that are snapshots of this table. */
static void tag_refs(table_meta *t, const ice_run *r)
{
	for (size_t i = 0; i < r->ntags; i++) {
		if (!strcmp(r->tags[i].name, "main"))
			continue; /* Iceberg's main is the table's current snapshot */
		for (size_t k = 0; k < r->nchain; k++) {
			size_t j;
			json_t *s;
			json_array_foreach(t->snapshots, j, s)
			if (!strcmp(r->chain[k].id, r->tags[i].target) &&
			    json_integer_value(json_object_get(s, "snapshot-id")) == r->chain[k].seq)
				json_object_set_new(t->refs, r->tags[i].name,
						    json_pack("{s:I, s:s}", "snapshot-id", (json_int_t)r->chain[k].seq, "type", "tag"));
		}
	}
}

int fdl_ice_replace(fdl_store *store, const char *key, const char *text, size_t len, int64_t *written,
		    fdl_error *err)
{
	fdl_buf old = {0};
	char etag[FDL_ETAG_MAX] = "";
	int rc = fdl_store_get(store, key, FDL_META_MAX_BYTES, &old, etag, err);
	bool exists = rc != FDL_ENOTFOUND;
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		rc = 0;
	}
	bool same = !rc && exists && old.len == len && !memcmp(old.data, text, len);
	fdl_buf_free(&old);
	if (!rc && !same)
		rc = fdl_store_put_if_match(store, key, text, len, exists ? etag : NULL, err);
	if (!rc && !same && written)
		(*written)++;
	return rc;
}

/* Write `key` with `text` unless it already holds exactly that. */
static int put_text(ice_run *r, const char *key, const char *text, size_t len, fdl_error *err)
{
	int rc = fdl_strmap_put(r->known, key, 1, err);
	return rc ? rc : fdl_ice_replace(r->repo->store, key, text, len, &r->written, err);
}

static json_t *metadata_json(const table_meta *t, const ice_run *r, const fdl_lake_table *tb, const char *table_dir)
{
	const ice_version *v = &r->chain[r->nchain - 1];
	char *loc = uri_of(r, table_dir);
	json_t *specs = json_array();
	int64_t last_pid = 999;
	const char *k;
	json_t *s;
	json_object_foreach(t->specs, k, s)
	{
		json_array_append(specs, s);
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(s, "fields"), i, f)
		if (json_integer_value(json_object_get(f, "field-id")) > last_pid) last_pid =
			json_integer_value(json_object_get(f, "field-id"));
	}
	json_t *last = json_array_get(t->snapshots, json_array_size(t->snapshots) - 1);
	json_t *m = json_pack("{s:i, s:s, s:s, s:I, s:I, s:I, s:i, s:O, s:i, s:o, s:I, s:i, s:[{s:i, s:[]}],"
			      " s:{s:s, s:s, s:s}, s:I, s:O, s:O, s:O, s:[]}",
			      "format-version", 2, "table-uuid", tb->uuid, "location", loc ? loc : "",
			      "last-sequence-number", (json_int_t)v->seq, "last-updated-ms", (json_int_t)v->ms,
			      "last-column-id", (json_int_t)t->max_id, "current-schema-id",
			      (int)json_integer_value(json_object_get(last, "schema-id")), "schemas", t->schemas,
			      "default-spec-id", 0, "partition-specs", specs, "last-partition-id", (json_int_t)last_pid,
			      "default-sort-order-id", 0, "sort-orders", "order-id", 0, "fields", "properties", "fdl.version",
			      v->id, "fdl.location", r->location, "fdl.note",
			      "an fdl view of one version: read only, rewritten by fdl", "current-snapshot-id",
			      (json_int_t)v->seq, "refs", t->refs, "snapshots", t->snapshots, "snapshot-log", t->log,
			      "metadata-log");
	free(loc);
	return m;
}

static int table_view(ice_run *r, const fdl_lake_table *tb, fdl_error *err)
{
	char *key = fdl_asprintf("%s.%s", tb->schema, tb->name);
	char *sseg = fdl_iceberg_segment(tb->schema, tb->schema_id), *tseg = fdl_iceberg_segment(tb->name, tb->id);
	char *dir = sseg && tseg ? fdl_asprintf("%s/%s/%s", r->view_dir, sseg, tseg) : NULL;
	/* <table dir>/metadata/<seq>-<id>.metadata.json: the names Iceberg's own
	 * writers use, where Trino's register_table looks */
	const ice_version *v = &r->chain[r->nchain - 1];
	char *mkey = dir ? fdl_asprintf("%s/metadata/%05lld-%s.metadata.json", dir, (long long)v->seq, v->id) : NULL;
	table_meta t = {.specs = json_object(), .refs = json_object(), .manifests = json_array()};
	int rc = key && mkey && t.specs && t.refs && t.manifests ? 0 : fdl_oom(err);
	const json_t *pt = json_object_get(json_object_get(r->parent, "tables"), key);
	int from = rc || !pt ? 1 : table_from_parent(&t, r, tb, pt, err);
	if (from < 0)
		rc = from;
	else if (from == 0 && !rc) /* the parent's view, and this version's snapshot */
		rc = table_snapshot(&t, r, tb->id, key, r->nchain - 1, err);
	else if (!rc && r->lake->live_only)
		rc = ICE_WHOLE; /* the history is needed, and was not read */
	else if (!rc) {
		json_object_clear(t.specs);
		t.snapshots = json_array();
		t.log = json_array();
		t.schemas = json_array();
		rc = t.snapshots && t.log && t.schemas ? table_snapshots(&t, r, tb->id, key, err) : fdl_oom(err);
	}
	if (!rc) {
		tag_refs(&t, r);
		json_object_set_new(t.refs, "main", json_pack("{s:I, s:s}", "snapshot-id", (json_int_t)t.last, "type", "branch"));
	}
	json_t *m = rc ? NULL : metadata_json(&t, r, tb, dir);
	char *text = NULL;
	size_t len = 0;
	if (!rc)
		rc = m ? fdl_json_dump(&text, &len, m, err) : fdl_oom(err);
	if (!rc)
		rc = put_text(r, mkey, text, len, err);
	if (!rc)
		json_object_set_new(r->tables, key,
				    json_pack("{s:s, s:s, s:I, s:O, s:s, s:s, s:I}", "metadata", mkey + strlen(r->view_dir) + 1,
					      "uuid", tb->uuid, "table_id", (json_int_t)tb->id, "manifests", t.manifests, "schema",
					      tb->schema, "name", tb->name, "schema_id", (json_int_t)tb->schema_id));
	if (rc && rc != ICE_WHOLE)
		fdl_error_prefix(err, "the Iceberg view of %s", key ? key : "a table");
	json_decref(m);
	free(text);
	json_decref(t.snapshots);
	json_decref(t.log);
	json_decref(t.schemas);
	json_decref(t.specs);
	json_decref(t.refs);
	json_decref(t.manifests);
	json_decref(t.doc);
	free(key);
	free(sseg);
	free(tseg);
	free(dir);
	free(mkey);
	return rc;
}

/* ---- one version ------------------------------------------------------ */

static int open_catalog(ice_run *r, const fdl_version *v, bool live_only, fdl_error *err)
{
	int rc = fdl_version_fetch_catalog(&r->catalog, r->repo, v, err);
	if (!rc)
		rc = fdl_duck_new(&r->duck, false, err);
	if (!rc)
		rc = fdl_duck_use_data(r->duck, r->repo->data_url, r->repo->store, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(r->duck, "fdl_ice", r->catalog, FDL_CAT_DUCKDB, true, err);
	if (!rc)
		rc = fdl_catalog_check_confined(r->duck, "fdl_ice", NULL, err);
	if (!rc)
		rc = fdl_catalog_lake_read(&r->lake, r->duck, "fdl_ice", live_only, err);
	return rc;
}

static int write_view_json(ice_run *r, fdl_error *err)
{
	const ice_version *v = &r->chain[r->nchain - 1];
	json_t *chain = json_array();
	for (size_t i = 0; chain && i < r->nchain; i++)
		json_array_append_new(chain, json_pack("[I, I, I, s]", (json_int_t)r->chain[i].seq,
						       (json_int_t)r->chain[i].snap, (json_int_t)r->chain[i].ms, r->chain[i].id));
	json_t *doc = chain ? json_pack("{s:i, s:s, s:I, s:s, s:O, s:O, s:O, s:o}", "fdl_iceberg", 1, "version", v->id,
					"seq", (json_int_t)v->seq, "location", r->location, "tables", r->tables, "deletes",
					r->deletes, "notices", r->notices, "chain", chain)
			    : NULL;
	char *text = NULL, *key = fdl_asprintf("%s/" FDL_ICEBERG_VIEW_JSON, r->view_dir);
	size_t len = 0;
	int rc = doc && key ? fdl_json_dump(&text, &len, doc, err) : fdl_oom(err);
	if (!rc)
		rc = put_text(r, key, text, len, err);
	json_decref(doc);
	free(text);
	free(key);
	return rc;
}

/* The first parent's view.json for this location, when it has one that
 * says what it is (r->parent stays NULL otherwise); its known delete files
 * are this view's too. */
static int parent_view(ice_run *r, const fdl_version *v, fdl_error *err)
{
	const char *pid = fdl_version_parent(v, 0);
	char *dir = pid ? fdl_iceberg_view_dir(r->lid, pid) : NULL;
	char *key = dir ? fdl_asprintf("%s/" FDL_ICEBERG_VIEW_JSON, dir) : NULL;
	fdl_buf b = {0};
	fdl_error e;
	json_t *doc = NULL;
	if (key && fdl_store_get(r->repo->store, key, FDL_META_MAX_BYTES, &b, NULL, &e) == 0 &&
	    fdl_json_parse(&doc, b.data, b.len, key, &e) == 0 &&
	    json_integer_value(json_object_get(doc, "fdl_iceberg")) == 1 &&
	    !strcmp(json_string_value(json_object_get(doc, "version")) ? json_string_value(json_object_get(doc, "version")) : "", pid) &&
	    !strcmp(json_string_value(json_object_get(doc, "location")) ? json_string_value(json_object_get(doc, "location")) : "", r->location) &&
	    json_is_object(json_object_get(doc, "tables")) && json_is_object(json_object_get(doc, "deletes"))) {
		r->parent = doc;
		doc = NULL;
		json_object_update(r->deletes, json_object_get(r->parent, "deletes"));
	}
	json_decref(doc);
	fdl_buf_free(&b);
	free(dir);
	free(key);
	(void)err;
	return 0;
}

/* The view of version v (live) for r->location. */
static int view_build(ice_run *r, const fdl_version *v, fdl_error *err)
{
	const char *id = fdl_version_id(v);
	int rc = fdl_iceberg_location_id(r->lid, r->location, err);
	r->deletes = json_object();
	r->notices = json_array();
	r->tables = json_object();
	if (!rc && !(r->view_dir = fdl_iceberg_view_dir(r->lid, id)))
		rc = fdl_oom(err);
	if (!rc && (!r->deletes || !r->notices || !r->tables))
		rc = fdl_oom(err);
	if (!rc && !r->whole)
		rc = parent_view(r, v, err);
	int from = rc || !r->parent ? 1 : chain_from_parent(r, v, err);
	if (from > 0) { /* no usable parent view: the whole history */
		json_decref(r->parent);
		r->parent = NULL;
		free(r->chain);
		r->chain = NULL;
		r->nchain = 0;
		rc = rc ? rc : read_chain(r, id, err);
	} else if (from < 0)
		rc = from;
	if (!rc && (!r->nchain || strcmp(r->chain[r->nchain - 1].id, id)))
		rc = fdl_fail(err, FDL_EINVALID, "the history of %s does not end at it", id);
	if (!rc) /* built on the parent's view, this version's snapshot needs only its live files */
		rc = open_catalog(r, v, r->parent != NULL, err);
	if (!rc)
		rc = fdl_tag_list(&r->tags, &r->ntags, r->repo, err);
	for (size_t i = 0; !rc && i < r->lake->ntables; i++)
		if (r->lake->tables[i].end == FDL_LAKE_LIVE)
			rc = table_view(r, &r->lake->tables[i], err);
	if (!rc)
		rc = write_view_json(r, err);
	if (rc && rc != ICE_WHOLE)
		fdl_error_prefix(err, "writing the Iceberg view of version %s", id);
	return rc;
}

/* ---- the report ------------------------------------------------------- */

static const char *str_or_empty(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

int fdl_ice_notices_of(fdl_iceberg_notice **out, size_t *count, const json_t *list, fdl_error *err)
{
	size_t n = json_array_size(list), i;
	*count = 0;
	if (!(*out = n ? calloc(n, sizeof **out) : NULL) && n)
		return fdl_oom(err);
	const json_t *t;
	json_array_foreach(list, i, t)
	{
		fdl_iceberg_notice *x = &(*out)[(*count)++];
		if (!(x->table = fdl_strdup(str_or_empty(t, "table"))) || !(x->column = fdl_strdup(str_or_empty(t, "column"))) ||
		    !(x->type = fdl_strdup(str_or_empty(t, "type"))) || !(x->reason = fdl_strdup(str_or_empty(t, "reason"))))
			return fdl_oom(err);
	}
	return 0;
}

void fdl_ice_notices_free(fdl_iceberg_notice *notices, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(notices[i].table);
		free(notices[i].column);
		free(notices[i].type);
		free(notices[i].reason);
	}
	free(notices);
}

static int report_of(fdl_iceberg_report **out, const ice_run *r, fdl_error *err)
{
	fdl_iceberg_report *p = calloc(1, sizeof *p);
	size_t nt = json_object_size(r->tables);
	if (!p || (nt && !(p->tables = calloc(nt, sizeof *p->tables))) ||
	    fdl_ice_notices_of(&p->notices, &p->notice_count, r->notices, err)) {
		fdl_iceberg_report_free(p);
		return fdl_oom(err);
	}
	p->version = fdl_strdup(r->chain[r->nchain - 1].id);
	p->location = fdl_strdup(r->location);
	p->files_written = r->written;
	const char *k;
	json_t *t;
	json_object_foreach(r->tables, k, t)
	{
		fdl_iceberg_table *x = &p->tables[p->table_count++];
		x->name = fdl_strdup(k);
		x->metadata = fdl_asprintf("%s/%s/%s", r->location, r->view_dir,
					   json_string_value(json_object_get(t, "metadata")));
	}
	*out = p;
	return 0;
}

void fdl_iceberg_report_free(fdl_iceberg_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->table_count; i++) {
		free(r->tables[i].name);
		free(r->tables[i].metadata);
	}
	fdl_ice_notices_free(r->notices, r->notice_count);
	free(r->tables);
	free(r->version);
	free(r->location);
	free(r);
}

int fdl_iceberg_report_json(char **out, const fdl_iceberg_report *r, fdl_error *err)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < r->table_count; i++)
		json_object_set_new(o, r->tables[i].name, json_string(r->tables[i].metadata));
	size_t len;
	int rc = o ? fdl_json_dump(out, &len, o, err) : fdl_oom(err);
	json_decref(o);
	return rc;
}

/* ---- the operation ---------------------------------------------------- */

/* How a view is written: `known` (NULL: the run's own) collects every key
 * the view uses; `whole` builds it from the history, not the parent's view. */
typedef struct ice_opts {
	fdl_strmap *known;
	bool whole;
} ice_opts;

static int write_for(fdl_iceberg_report **out, fdl_repo *repo, const char *id, const char *location,
		     const ice_opts *o, fdl_error *err)
{
	ice_run r = {.repo = repo};
	r.known = o && o->known ? o->known : &r.own_known;
	r.whole = o && o->whole;
	fdl_version *v = NULL;
	int rc = fdl_version_check_live(repo, id, err);
	if (!rc)
		rc = fdl_version_read(&v, repo, id, err);
	if (!rc)
		rc = location ? fdl_iceberg_location_check(&r.location, location, err)
			      : fdl_iceberg_own_location(&r.location, repo, err);
	if (!rc)
		rc = view_build(&r, v, err);
	if (rc == ICE_WHOLE) { /* a table the parent's view could not start: again, from the history */
		char *location_again = r.location;
		r.location = NULL;
		run_free(&r);
		r = (ice_run){.repo = repo, .location = location_again, .whole = true};
		r.known = o && o->known ? o->known : &r.own_known;
		rc = view_build(&r, v, err);
	}
	if (!rc)
		rc = fdl_iceberg_views_add(repo, r.location, false, err);
	if (!rc && out)
		rc = report_of(out, &r, err);
	fdl_version_free(v);
	run_free(&r);
	return rc;
}

int fdl_ice_view_write(fdl_repo *repo, const char *id, const char *location, fdl_strmap *known, fdl_error *err)
{
	ice_opts o = {.known = known};
	return write_for(NULL, repo, id, location, &o, err);
}

int fdl_iceberg_write(fdl_iceberg_report **out, fdl_repo *repo, const char *ref, const char *location, fdl_error *err)
{
	char id[FDL_ID_LEN + 1];
	int rc = fdl_ref_resolve(id, repo, ref, err);
	return rc ? rc : write_for(out, repo, id, location, NULL, err);
}

int fdl_iceberg_after_commit(fdl_repo *repo, const char *branch, const char *id, fdl_error *err)
{
	json_t *views = NULL;
	int rc = fdl_iceberg_views_read(&views, repo, err);
	size_t i;
	json_t *v;
	json_array_foreach(rc ? NULL : json_object_get(views, "views"), i, v)
	{
		const char *location = json_string_value(json_object_get(v, "location"));
		rc = write_for(NULL, repo, id, location, NULL, err);
		if (!rc && fdl_iceberg_view_has_catalog(v))
			rc = fdl_ice_catalog_sync_branch(repo, location, branch, err);
		if (rc)
			break;
	}
	json_decref(views);
	return rc;
}

/* ---- after versions or files went ------------------------------------- */

/* Every branch tip and tag target that is live. */
static int live_tips(fdl_strlist *out, fdl_repo *repo, fdl_error *err)
{
	fdl_branch *b = NULL;
	fdl_tag *t = NULL;
	size_t nb = 0, nt = 0;
	int rc = fdl_branch_list(&b, &nb, repo, err);
	if (!rc)
		rc = fdl_tag_list(&t, &nt, repo, err);
	for (size_t i = 0; i < nb + nt && !rc; i++) {
		const char *id = i < nb ? b[i].tip : t[i - nb].target;
		fdl_error e;
		if (!fdl_strlist_has_sorted(out, id) && fdl_version_check_live(repo, id, &e) == 0) {
			rc = fdl_strlist_add(out, id, err);
			fdl_strlist_sort(out);
		}
	}
	fdl_branch_list_free(b);
	fdl_tag_list_free(t);
	return rc;
}

/* The views of every live branch tip and tag target for `location`, built
 * from their histories as they now are, and nothing else under
 * iceberg/<lid>/: a view of another version (written again on demand) and
 * every file no rebuilt view uses go. */
static int rebuild_location(fdl_repo *repo, const char *location, bool catalog, fdl_error *err)
{
	fdl_strmap keep = {0};
	fdl_strlist tips = {0}, keys = {0};
	char lid[FDL_ICEBERG_LID_LEN + 1];
	ice_opts o = {.known = &keep, .whole = true};
	int rc = fdl_iceberg_location_id(lid, location, err);
	if (!rc)
		rc = live_tips(&tips, repo, err);
	for (size_t i = 0; i < tips.len && !rc; i++)
		rc = write_for(NULL, repo, tips.items[i], location, &o, err);
	if (!rc && catalog) /* of the refs as they are now: it keeps what it leads to */
		rc = fdl_ice_catalog_sync(NULL, repo, location, &keep, err);
	char *dir = rc ? NULL : fdl_asprintf(FDL_ICEBERG_DIR "/%s", lid);
	if (!rc)
		rc = dir ? fdl_store_list(repo->store, dir, &keys, err) : fdl_oom(err);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		int64_t seen;
		if (!fdl_strmap_get(&keep, keys.items[i], &seen))
			rc = fdl_store_del_owned(repo->store, fdl_strdup(keys.items[i]), NULL, err);
	}
	if (!rc)
		rc = fdl_store_prune(repo->store, dir, err);
	free(dir);
	fdl_strlist_free(&tips);
	fdl_strlist_free(&keys);
	fdl_strmap_free(&keep);
	return rc;
}

int fdl_iceberg_after_removal(fdl_repo *repo, fdl_error *err)
{
	json_t *views = NULL;
	int rc = fdl_iceberg_views_read(&views, repo, err);
	size_t i;
	json_t *v;
	json_array_foreach(rc ? NULL : json_object_get(views, "views"), i, v)
	{
		if ((rc = rebuild_location(repo, json_string_value(json_object_get(v, "location")),
					   fdl_iceberg_view_has_catalog(v), err)))
			break;
	}
	json_decref(views);
	return rc;
}

int fdl_iceberg_after_clone(fdl_repo *src, const char *dst_root, fdl_error *err)
{
	json_t *views = NULL;
	fdl_repo *dst = NULL;
	char *location = NULL;
	int rc = fdl_iceberg_views_read(&views, src, err);
	if (rc || !json_array_size(json_object_get(views, "views"))) {
		json_decref(views);
		return rc;
	}
	bool catalog = false; /* the copy has a catalog when the source has one */
	size_t i;
	const json_t *v;
	json_array_foreach(json_object_get(views, "views"), i, v) catalog = catalog || fdl_iceberg_view_has_catalog(v);
	rc = fdl_repo_open(&dst, dst_root, err);
	if (!rc)
		rc = fdl_iceberg_own_location(&location, dst, err);
	if (!rc)
		rc = fdl_iceberg_views_add(dst, location, catalog, err);
	if (!rc)
		rc = rebuild_location(dst, location, catalog, err);
	free(location);
	fdl_repo_free(dst);
	json_decref(views);
	return rc;
}

int fdl_iceberg_after_refs(fdl_repo *repo, fdl_error *err)
{
	json_t *views = NULL;
	fdl_branch *b = NULL;
	size_t nb = 0;
	int rc = fdl_iceberg_views_read(&views, repo, err);
	if (!rc && json_array_size(json_object_get(views, "views")))
		rc = fdl_branch_list(&b, &nb, repo, err);
	size_t i;
	json_t *v;
	json_array_foreach(rc ? NULL : json_object_get(views, "views"), i, v)
	{
		const char *location = json_string_value(json_object_get(v, "location"));
		char lid[FDL_ICEBERG_LID_LEN + 1];
		rc = fdl_iceberg_location_id(lid, location, err);
		for (size_t k = 0; k < nb && !rc; k++) {
			char *dir = fdl_iceberg_view_dir(lid, b[k].tip);
			char *key = dir ? fdl_asprintf("%s/" FDL_ICEBERG_VIEW_JSON, dir) : NULL;
			int64_t size;
			fdl_error e;
			if (key && fdl_store_head(repo->store, key, &size, &e) == 0) /* a tip with a view: its tags */
				rc = write_for(NULL, repo, b[k].tip, location, NULL, err);
			free(dir);
			free(key);
		}
		if (!rc && fdl_iceberg_view_has_catalog(v)) /* a namespace per ref */
			rc = fdl_ice_catalog_sync(NULL, repo, location, NULL, err);
		if (rc)
			break;
	}
	fdl_branch_list_free(b);
	json_decref(views);
	return rc;
}

int fdl_iceberg_enable(fdl_repo *repo, const char *location, fdl_error *err)
{
	char *loc = NULL;
	fdl_strlist tips = {0};
	int rc = location ? fdl_iceberg_location_check(&loc, location, err) : fdl_iceberg_own_location(&loc, repo, err);
	if (!rc)
		rc = fdl_iceberg_views_add(repo, loc, false, err);
	if (!rc)
		rc = live_tips(&tips, repo, err);
	for (size_t i = 0; i < tips.len && !rc; i++)
		rc = write_for(NULL, repo, tips.items[i], loc, NULL, err);
	fdl_strlist_free(&tips);
	free(loc);
	return rc;
}
