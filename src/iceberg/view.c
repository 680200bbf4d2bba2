/* fdl iceberg: a version's Iceberg view (docs/format.md "Iceberg views").
 *
 * Every live table of the version becomes an Iceberg v2 table whose
 * snapshots are the live versions of its first-parent history that hold
 * it (sequence number = the version's seq, snapshot id derived from its
 * id: fdl_iceberg_snapshot_id), over the
 * repository's own data files, DuckLake's delete files rewritten as
 * position deletes, all read from the version's one frozen catalog (it
 * keeps every earlier snapshot's rows). Manifests group the files by the
 * version that added them (64 versions to a manifest once a block of 64 is
 * complete) and are named by their sha256, so snapshots share them and a
 * new version writes what it changed.
 *
 * This file builds a version's view: the history, each table's
 * metadata.json, view.json, the report and the operation; one table's
 * snapshot and its manifests are iceberg_snapshot.c's, the hooks that keep
 * views following the repository iceberg_hooks.c's. */
#include "iceberg_int.h"
#include "../layout/hindex.h"
#include "../layout/keys.h"
#include "../util/avro.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>


static void run_free(ice_run *r)
{
	fdl_lake_free(r->lake);
	if (r->duck && r->share && r->catalog) { /* the database stays: leave it as found */
		fdl_error ignore;
		fdl_catalog_detach(r->duck, "fdl_ice", &ignore);
	}
	fdl_duck_free(r->duck);
	free(r->catalog);
	free(r->location);
	free(r->view_dir);
	free(r->chain);
	fdl_refs_free(&r->refs);
	fdl_strmap_free(&r->own_known);
	fdl_strmap_free(&r->confined);
	json_decref(r->deletes);
	json_decref(r->notices);
	json_decref(r->tables);
	json_decref(r->parent);
	json_decref(r->mcache);
	json_decref(r->msigs);
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
 * oldest first) and v: no history to read. *usable unset when it has none
 * usable. */
static int chain_from_parent(bool *usable, ice_run *r, const fdl_version *v, fdl_error *err)
{
	const json_t *chain = json_object_get(r->parent, "chain");
	size_t n = json_array_size(chain);
	const json_t *last = json_array_get(chain, n - 1);
	*usable = false;
	if (!n || json_integer_value(json_array_get(last, 0)) != fdl_version_seq(v) - 1 ||
	    strcmp(json_string_value(json_array_get(last, 3)) ? json_string_value(json_array_get(last, 3)) : "",
		   fdl_version_parent(v, 0)))
		return 0;
	if (!(r->chain = calloc(n + 1, sizeof *r->chain)))
		return fdl_oom(err);
	for (size_t i = 0; i <= n; i++) {
		ice_version *c = &r->chain[r->nchain++];
		const json_t *e = json_array_get(chain, i);
		const char *id = i < n ? json_string_value(json_array_get(e, 3)) : fdl_version_id(v);
		if (!id || !fdl_id_is_valid(id))
			return 0;
		memcpy(c->id, id, sizeof c->id);
		c->seq = i < n ? json_integer_value(json_array_get(e, 0)) : fdl_version_seq(v);
		c->snap = i < n ? json_integer_value(json_array_get(e, 1)) : fdl_version_snapshot_id(v);
		c->ms = i < n ? json_integer_value(json_array_get(e, 2)) : iso_ms(fdl_version_created_at(v));
		c->live = true;
		if (i && (c->seq <= r->chain[i - 1].seq || c->snap < r->chain[i - 1].snap))
			return 0;
		if (i && c->ms <= r->chain[i - 1].ms)
			c->ms = r->chain[i - 1].ms + 1;
	}
	*usable = true;
	return 0;
}

/* Each version's snapshot id, from its id. */
static int chain_ids(ice_run *r, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < r->nchain && !rc; i++)
		rc = fdl_iceberg_snapshot_id(&r->chain[i].sid, r->chain[i].id, err);
	return rc;
}

/* ---- one table -------------------------------------------------------- */

static bool table_at(const fdl_lake *l, int64_t tid, int64_t snap)
{
	for (size_t i = 0; i < l->ntables; i++)
		if (l->tables[i].id == tid && ice_live_at(l->tables[i].begin, l->tables[i].end, snap))
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
		if (f->table_id == tid && ice_live_at(f->begin, f->end, snap) &&
		    ((f->partial_max >= 0 && f->partial_max > snap) || f->mapped || f->encrypted))
			return false;
	}
	for (size_t i = 0; i < l->ndeletes; i++) {
		const fdl_lake_delete *x = &l->deletes[i];
		if (x->table_id == tid && ice_live_at(x->begin, x->end, snap) && x->encrypted)
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
	json_t *properties; /* beside fdl's own: FDL_ICE_ROWWISE when it is needed */
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
			rc = fdl_ice_snapshot(&snap, r, tid, c, t->last, schema, t->specs, viewed ? t->manifests : NULL, err);
		json_decref(schema);
		if (!rc) {
			json_array_append_new(t->snapshots, snap);
			json_array_append_new(t->log, json_pack("{s:I, s:I}", "timestamp-ms", (json_int_t)c->ms,
								"snapshot-id", (json_int_t)c->sid));
			t->last = c->sid;
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

/* Whether a parent view's metadata.json is one fdl wrote for this table:
 * each snapshot's manifest list under `prefix` (no "/../"), its current
 * snapshot `current`, its arrays there, the table's uuid. */
bool fdl_ice_parent_meta_ok(const json_t *doc, const char *prefix, int64_t current, const char *uuid)
{
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(doc, "snapshots"), i, x)
	{
		const char *ml = json_string_value(json_object_get(x, "manifest-list"));
		if (!ml || strncmp(ml, prefix, strlen(prefix)) || strstr(ml, "/../") ||
		    !json_is_integer(json_object_get(x, "snapshot-id")))
			return false;
	}
	const char *tu = json_string_value(json_object_get(doc, "table-uuid"));
	return json_integer_value(json_object_get(doc, "current-snapshot-id")) == current &&
	       json_is_array(json_object_get(doc, "schemas")) && json_is_array(json_object_get(doc, "snapshot-log")) &&
	       json_is_array(json_object_get(doc, "partition-specs")) && json_array_size(json_object_get(doc, "snapshots")) &&
	       !strcmp(tu ? tu : "", uuid);
}

/* The parent's view of the table (its metadata.json, checked: every
 * manifest list in this view's tree), as the start of this one: *usable
 * when it can be used (one it cannot read or check, it cannot: err
 * cleared). */
static int table_from_parent(bool *usable, table_meta *t, ice_run *r, const fdl_lake_table *tb, const json_t *pt,
			     fdl_error *err)
{
	const char *rel = json_string_value(json_object_get(pt, "metadata"));
	const char *pid = json_string_value(json_object_get(r->parent, "version"));
	*usable = false;
	if (!rel || !pid || json_integer_value(json_object_get(pt, "table_id")) != tb->id ||
	    strcmp(json_string_value(json_object_get(pt, "uuid")) ? json_string_value(json_object_get(pt, "uuid")) : "",
		   tb->uuid))
		return 0;
	char *dir = fdl_iceberg_view_dir(r->lid, pid), *key = dir ? fdl_asprintf("%s/%s", dir, rel) : NULL;
	char *prefix = fdl_iceberg_manifests_uri(r->location, r->lid);
	int rc = dir && key && prefix ? 0 : fdl_oom(err);
	fdl_buf b = {0};
	json_t *doc = NULL;
	bool ok = !rc && !fdl_path_check_relative(key, "a view's metadata", err) &&
		  !fdl_store_get(r->repo->store, key, FDL_META_MAX_BYTES, &b, NULL, err) &&
		  !fdl_json_parse(&doc, b.data, b.len, key, err) &&
		  /* its current snapshot is the parent's (a snapshot id derived from its id) */
		  r->nchain >= 2 && fdl_ice_parent_meta_ok(doc, prefix, r->chain[r->nchain - 2].sid, tb->uuid);
	if (!rc && !ok)
		fdl_error_clear(err);
	if (ok) /* what it leads to, read as it is: it may have been planted */
		rc = fdl_ice_tree_confined(&ok, r, doc, err);
	size_t i;
	json_t *x;
	if (!rc && ok) {
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
		json_array_foreach(json_object_get(pt, "manifests"), i, x) /* known to be there, and checked */
		{
			int64_t was;
			if (!rc && json_is_string(x) && fdl_strmap_get(&r->confined, json_string_value(x), &was))
				rc = fdl_strmap_put(r->known, json_string_value(x), 1, err);
		}
	}
	*usable = !rc && ok;
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
	for (size_t i = 0; i < r->refs.names.len; i++) {
		fdl_ref_kind kind;
		const char *name = fdl_ref_short(r->refs.names.items[i], &kind);
		if (kind != FDL_REF_TAG || !strcmp(name, "main"))
			continue; /* Iceberg's main is the table's current snapshot */
		for (size_t k = 0; k < r->nchain; k++) {
			size_t j;
			json_t *s;
			json_array_foreach(t->snapshots, j, s)
			if (!strcmp(r->chain[k].id, r->refs.ids[i]) &&
			    json_integer_value(json_object_get(s, "snapshot-id")) == r->chain[k].sid)
				json_object_set_new(t->refs, name,
						    json_pack("{s:I, s:s}", "snapshot-id", (json_int_t)r->chain[k].sid, "type", "tag"));
		}
	}
}

/* Write `key` with `text` unless it already holds exactly that. */
static int put_text(ice_run *r, const char *key, const char *text, size_t len, fdl_error *err)
{
	int rc = fdl_strmap_put(r->known, key, 1, err);
	return rc ? rc : fdl_store_replace_if_changed(r->repo->store, key, text, len, &r->written, err);
}

static json_t *metadata_json(const table_meta *t, const ice_run *r, const fdl_lake_table *tb, const char *table_dir)
{
	const ice_version *v = &r->chain[r->nchain - 1];
	char *loc = ice_uri_of(r, table_dir);
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
			      " s:O, s:I, s:O, s:O, s:O, s:[]}",
			      "format-version", 2, "table-uuid", tb->uuid, "location", loc ? loc : "",
			      "last-sequence-number", (json_int_t)v->seq, "last-updated-ms", (json_int_t)v->ms,
			      "last-column-id", (json_int_t)t->max_id, "current-schema-id",
			      (int)json_integer_value(json_object_get(last, "schema-id")), "schemas", t->schemas,
			      "default-spec-id", 0, "partition-specs", specs, "last-partition-id", (json_int_t)last_pid,
			      "default-sort-order-id", 0, "sort-orders", "order-id", 0, "fields", "properties", t->properties,
			      "current-snapshot-id", (json_int_t)v->sid, "refs", t->refs, "snapshots", t->snapshots,
			      "snapshot-log", t->log,
			      "metadata-log");
	free(loc);
	return m;
}

static int table_view(ice_run *r, const fdl_lake_table *tb, fdl_error *err)
{
	char *key = fdl_asprintf("%s.%s", tb->schema, tb->name);
	char *sseg = fdl_iceberg_segment(tb->schema, tb->schema_id), *tseg = fdl_iceberg_segment(tb->name, tb->id);
	char *dir = sseg && tseg ? fdl_asprintf("%s/%s/%s", r->view_dir, sseg, tseg) : NULL;
	const ice_version *v = &r->chain[r->nchain - 1];
	char *mkey = dir ? fdl_iceberg_metadata_key(dir, v->seq, v->id) : NULL;
	table_meta t = {.specs = json_object(), .refs = json_object(), .manifests = json_array()};
	int rc = key && mkey && t.specs && t.refs && t.manifests ? 0 : fdl_oom(err);
	const json_t *pt = json_object_get(json_object_get(r->parent, "tables"), key);
	bool from_parent = false;
	if (!rc && pt)
		rc = table_from_parent(&from_parent, &t, r, tb, pt, err);
	if (!rc && from_parent) /* the parent's view, and this version's snapshot */
		rc = table_snapshot(&t, r, tb->id, key, r->nchain - 1, err);
	else if (!rc && r->lake->live_only)
		r->again = true; /* the history is needed, and was not read: view_build starts again */
	else if (!rc) {
		json_object_clear(t.specs);
		t.snapshots = json_array();
		t.log = json_array();
		t.schemas = json_array();
		rc = t.snapshots && t.log && t.schemas ? table_snapshots(&t, r, tb->id, key, err) : fdl_oom(err);
	}
	if (!rc && !r->again) {
		tag_refs(&t, r);
		json_object_set_new(t.refs, "main", json_pack("{s:I, s:s}", "snapshot-id", (json_int_t)t.last, "type", "branch"));
		t.properties = json_pack("{s:s, s:s, s:s}", "fdl.version", v->id, "fdl.location", r->location, "fdl.note",
					 "an fdl view of one version: read only, rewritten by fdl");
		if (t.properties && fdl_ice_widened_from_int(r->lake, tb->id)) /* every snapshot: time travel too */
			json_object_set_new(t.properties, FDL_ICE_ROWWISE, json_string("false"));
		json_t *last = json_array_get(t.snapshots, json_array_size(t.snapshots) - 1);
		if (t.properties)
			fdl_ice_name_mapping(t.properties, t.schemas,
				     json_integer_value(json_object_get(last, "schema-id")));
	}
	json_t *m = rc || r->again ? NULL : metadata_json(&t, r, tb, dir);
	char *text = NULL;
	size_t len = 0;
	if (!rc && !r->again)
		rc = m ? fdl_json_dump_as(&text, &len, m, true, err) : fdl_oom(err); /* it grows with the history */
	if (!rc && !r->again)
		rc = put_text(r, mkey, text, len, err);
	if (!rc && !r->again)
		json_object_set_new(r->tables, key,
				    json_pack("{s:s, s:s, s:I, s:O, s:s, s:s, s:I}", "metadata", mkey + strlen(r->view_dir) + 1,
					      "uuid", tb->uuid, "table_id", (json_int_t)tb->id, "manifests", t.manifests, "schema",
					      tb->schema, "name", tb->name, "schema_id", (json_int_t)tb->schema_id));
	if (rc)
		fdl_error_prefix(err, "the Iceberg view of %s", key ? key : "a table");
	json_decref(m);
	free(text);
	json_decref(t.snapshots);
	json_decref(t.log);
	json_decref(t.schemas);
	json_decref(t.specs);
	json_decref(t.refs);
	json_decref(t.properties);
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
	if (!rc) /* its tables are read raw: no extension needed */
		rc = r->share ? fdl_duck_new_sharing(&r->duck, r->share, err) : fdl_duck_new_loading(&r->duck, NULL, err);
	if (!rc)
		rc = fdl_duck_use_data(r->duck, r->repo->data_url, r->repo->store, err);
	if (!rc)
		rc = fdl_catalog_attach_raw(r->duck, "fdl_ice", r->catalog, FDL_CAT_DUCKDB, true, err);
	/* every path the view names passes the one check of what a version
	 * may name (fdl_catalog_version_confined: relative and clean, and no
	 * symlink on the way to a file); a catalog the commit at hand froze skips it */
	if (!rc && !r->share)
		rc = fdl_catalog_version_confined(NULL, r->duck, "fdl_ice", r->catalog, r->repo->store, r->repo->data_dir,
						  fdl_version_id(v), err);
	if (!rc)
		rc = fdl_catalog_lake_read(&r->lake, r->duck, "fdl_ice", live_only, !live_only, err);
	return rc;
}

static int write_view_json(ice_run *r, fdl_error *err)
{
	const ice_version *v = &r->chain[r->nchain - 1];
	json_t *chain = json_array();
	for (size_t i = 0; chain && i < r->nchain; i++)
		json_array_append_new(chain, json_pack("[I, I, I, s]", (json_int_t)r->chain[i].seq,
						       (json_int_t)r->chain[i].snap, (json_int_t)r->chain[i].ms, r->chain[i].id));
	json_t *doc = chain ? json_pack("{s:i, s:s, s:I, s:s, s:O, s:O, s:O, s:o, s:O}", "fdl_iceberg",
					FDL_ICEBERG_VIEW_FORMAT, "version", v->id,
					"seq", (json_int_t)v->seq, "location", r->location, "tables", r->tables, "deletes",
					r->deletes, "notices", r->notices, "chain", chain, "manifest_sigs", r->msigs)
			    : NULL;
	char *text = NULL, *key = fdl_asprintf("%s/" FDL_ICEBERG_VIEW_JSON, r->view_dir);
	size_t len = 0;
	int rc = doc && key ? fdl_json_dump_as(&text, &len, doc, true, err) : fdl_oom(err);
	if (!rc)
		rc = put_text(r, key, text, len, err);
	json_decref(doc);
	free(text);
	free(key);
	return rc;
}

/* The parent's manifests by signature (view.json's manifest_sigs), each
 * under this location's manifests/: a snapshot made of the same files uses
 * them again (one is used only once the parent's view of its table showed
 * it there: iceberg_snapshot.c). Anything else there is left alone. */
static void parent_manifests(ice_run *r)
{
	char *prefix = fdl_iceberg_manifests_uri(r->location, r->lid);
	const char *sig;
	json_t *v;
	if (!r->mcache)
		r->mcache = json_object();
	json_object_foreach(prefix && r->mcache ? json_object_get(r->parent, "manifest_sigs") : NULL, sig, v)
	{
		const char *uri = json_string_value(json_array_get(v, 0));
		if (strlen(sig) == 64 && json_array_size(v) == 2 && uri && !strncmp(uri, prefix, strlen(prefix)) &&
		    !strstr(uri, "/..") && json_is_integer(json_array_get(v, 1)))
			json_object_set(r->mcache, sig, v);
	}
	free(prefix);
}

/* The first parent's view.json for this location, when it has one that
 * says what it is, of this format (r->parent stays NULL otherwise: an older
 * view's snapshot ids are seqs, and its older snapshots' schemas may lack
 * a column widened later, so the view is built from the history); its
 * known delete files are this view's too. */
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
	    json_integer_value(json_object_get(doc, "fdl_iceberg")) == FDL_ICEBERG_VIEW_FORMAT &&
	    !strcmp(json_string_value(json_object_get(doc, "version")) ? json_string_value(json_object_get(doc, "version")) : "", pid) &&
	    !strcmp(json_string_value(json_object_get(doc, "location")) ? json_string_value(json_object_get(doc, "location")) : "", r->location) &&
	    json_is_object(json_object_get(doc, "tables")) && json_is_object(json_object_get(doc, "deletes"))) {
		r->parent = doc;
		doc = NULL;
		json_object_update(r->deletes, json_object_get(r->parent, "deletes"));
		parent_manifests(r);
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
	r->msigs = json_object();
	if (!rc && !(r->view_dir = fdl_iceberg_view_dir(r->lid, id)))
		rc = fdl_oom(err);
	if (!rc && (!r->deletes || !r->notices || !r->tables || !r->msigs))
		rc = fdl_oom(err);
	if (!rc && !r->whole)
		rc = parent_view(r, v, err);
	bool from_parent = false;
	if (!rc && r->parent)
		rc = chain_from_parent(&from_parent, r, v, err);
	if (!rc && !from_parent) { /* no usable parent view: the whole history */
		json_decref(r->parent);
		r->parent = NULL;
		free(r->chain);
		r->chain = NULL;
		r->nchain = 0;
		rc = read_chain(r, id, err);
	}
	if (!rc && (!r->nchain || strcmp(r->chain[r->nchain - 1].id, id)))
		rc = fdl_fail(err, FDL_EINVALID, "the history of %s does not end at it", id);
	if (!rc)
		rc = chain_ids(r, err);
	if (!rc) /* built on the parent's view, this version's snapshot needs only its live files */
		rc = open_catalog(r, v, r->parent != NULL, err);
	if (!rc)
		rc = fdl_refs_all(&r->refs, r->repo, true, err);
	for (size_t i = 0; !rc && !r->again && i < r->lake->ntables; i++)
		if (r->lake->tables[i].end == FDL_LAKE_LIVE)
			rc = table_view(r, &r->lake->tables[i], err);
	if (!rc && !r->again)
		rc = write_view_json(r, err);
	if (rc)
		fdl_error_prefix(err, "writing the Iceberg view of version %s", id);
	return rc;
}

/* ---- the report ------------------------------------------------------- */

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
		if (!(x->table = fdl_strdup(fdl_ice_str(t, "table"))) || !(x->column = fdl_strdup(fdl_ice_str(t, "column"))) ||
		    !(x->type = fdl_strdup(fdl_ice_str(t, "type"))) || !(x->reason = fdl_strdup(fdl_ice_str(t, "reason"))))
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

int fdl_ice_write_for(fdl_iceberg_report **out, fdl_repo *repo, const char *id, const char *location,
		      const ice_opts *o, fdl_error *err)
{
	ice_run r = {.repo = repo, .share = o ? o->share : NULL};
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
	if (!rc && r.again) { /* a table the parent's view could not start: again, from the history */
		char *location_again = r.location;
		r.location = NULL;
		run_free(&r);
		r = (ice_run){.repo = repo, .location = location_again, .whole = true, .share = o ? o->share : NULL};
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
	return fdl_ice_write_for(NULL, repo, id, location, &o, err);
}

int fdl_iceberg_write(fdl_iceberg_report **out, fdl_repo *repo, const char *ref, const char *location, fdl_error *err)
{
	char id[FDL_ID_LEN + 1];
	int rc = fdl_ref_resolve(id, repo, ref, err);
	return rc ? rc : fdl_ice_write_for(out, repo, id, location, NULL, err);
}
