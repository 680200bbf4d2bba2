/* What the Iceberg wing's files share (the .c files of src/iceberg/ only; the rest of
 * libfdl includes iceberg.h): a run writing a version's view, the REST
 * catalog, schemas, bounds and manifests. */
#ifndef FDL_ICEBERG_INT_H
#define FDL_ICEBERG_INT_H

#include "iceberg.h"
#include "../catalog/iceberg.h"
#include "../layout/iceberg.h"

/* ---- shared by the wing's files ---- */

/* The report's notices from [{"table", "column", "type", "reason"}] (a
 * missing string is ""): *out holds json_array_size(list) of them, *count
 * how many were filled (all, or those before running out of memory). */
int fdl_ice_notices_of(fdl_iceberg_notice **out, size_t *count, const json_t *list, fdl_error *err);
void fdl_ice_notices_free(fdl_iceberg_notice *notices, size_t count);
/* The view of live version `id` for `location`, built on its parent's view
 * when it can be; `known` (may be NULL) gets every key the view uses. */
int fdl_ice_view_write(fdl_repo *repo, const char *id, const char *location, fdl_strmap *known, fdl_error *err);

/* The REST catalog of a location (iceberg_catalog.c). */
typedef struct fdl_ice_catalog {
	json_t *namespaces; /* [{"namespace": [levels], "ref", "version", "tables"}] */
	json_t *notices;    /* [{"table", "column", "type", "reason"}]: refs and names left out or renamed */
	int64_t written;
} fdl_ice_catalog;
/* Bring the catalog of `location` to the refs and views as they are now:
 * the view of a ref's version written when it has none, every resource
 * that differs written, every other file of the catalog deleted, again
 * while the refs move. `known` (may be NULL) gets every key it uses;
 * `out` (may be NULL) what it holds (the caller frees its JSON). */
int fdl_ice_catalog_sync(fdl_ice_catalog *out, fdl_repo *repo, const char *location, fdl_strmap *known,
			 fdl_error *err);
/* The same after a commit moved `branch`: its namespaces and the list of
 * namespaces only (the whole catalog when it has none yet). */
int fdl_ice_catalog_sync_branch(fdl_repo *repo, const char *location, const char *branch, fdl_error *err);
/* An old v1/namespaces list's bytes, read back before a branch's pass: the
 * namespaces not of branch `name` appended to keep, its [name, schema]
 * ones to nested; *foreign when it is not a list fdl writes (then the
 * whole catalog is written again); an error only for memory. namespaces.c. */
int fdl_ice_namespaces_old(bool *foreign, json_t *keep, json_t *nested, const char *data, size_t len,
			   const char *name, const char *key, fdl_error *err);
/* fdl verify's findings about the catalog of `location`: a file that leads
 * to a file not in `present` (the keys under iceberg/<lid>/) or to a
 * version that is not live is a problem; one behind the refs, missing or
 * left over, a warning. Reads only. */
int fdl_ice_catalog_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, const char *location,
			  const fdl_strmap *present, fdl_error *err);

/* A DuckLake type as Iceberg: the type's JSON name ("long",
 * "decimal(10,2)"), or NULL with *why saying why it cannot be; *engines
 * names a reader that cannot read it although Iceberg can say it (NULL:
 * none). */
const char *fdl_ice_primitive(const char *ducklake_type, const char **why, const char **engines);

/* Table `tid`'s schema at DuckLake snapshot `snap` as an Iceberg struct
 * (fields only; the caller adds schema-id), columns Iceberg cannot hold
 * left out and each named in `notices` (NULL: not told; an array of {table, column, type,
 * reason}) under `key` ("schema.table"). *max_id gets the highest field id. */
int fdl_ice_schema(json_t **out, int64_t *max_id, const fdl_lake *l, int64_t tid, int64_t snap, const char *key,
		   json_t *notices, fdl_error *err);
/* Whether a top-level column of table `tid` became an Iceberg long after
 * being an int in its history: Spark's vectorized Parquet reader (Iceberg
 * 1.10, apache/iceberg#16341) fails on the older files, which its row
 * reader reads right, so the table's view turns vectorized reads off
 * (FDL_ICE_ROWWISE) and fdl_ice_schema names each such column. */
bool fdl_ice_widened_from_int(const fdl_lake *l, int64_t tid);
#define FDL_ICE_ROWWISE "read.parquet.vectorization.enabled"
#define FDL_ICE_SPARK_WIDENED                                                                                  \
	"widened from an int: Spark's vectorized Parquet reader (Iceberg 1.10) fails on the files written "   \
	"before (apache/iceberg#16341), so the view sets " FDL_ICE_ROWWISE "=false and Spark reads the table " \
	"row by row; a session setting spark.sql.iceberg.vectorization.enabled=true overrides it and fails"

/* The Iceberg type (JSON) of field `column_id` in a struct made by
 * fdl_ice_schema (NULL: not there). */
const json_t *fdl_ice_field_type(const json_t *schema, int64_t column_id);

/* The single-value binary encoding (the Iceberg spec's Appendix D) of a
 * value DuckLake recorded as text for a column of Iceberg type `type`
 * (date and time types: as `epoch`, days or microseconds). *none (and
 * nothing written) when it has none here. */
int fdl_ice_bound(bool *none, fdl_buf *out, const char *type, const char *text, bool has_epoch, int64_t epoch,
		  bool upper, fdl_error *err);

/* One file of a manifest. */
typedef struct fdl_ice_entry {
	const fdl_lake_file *data;     /* the data file (for a delete: the one it deletes from) */
	const char *uri;               /* the file's URI */
	const char *data_uri;          /* a delete's data file's URI */
	int64_t rows, bytes, seq;      /* a delete: positions, its rewritten size */
	int64_t snapshot;              /* the snapshot id of the version that added it (seq: its seq) */
	bool is_delete;
} fdl_ice_entry;

/* A partition spec for manifests: its id and fields (JSON array of
 * {source-id, field-id, name, transform}), with each field's DuckLake
 * partition key index and Iceberg result type. */
typedef struct fdl_ice_spec {
	int id;
	json_t *fields;
	size_t n;
	size_t key_index[8];
	const char *result_type[8];
	bool year[8]; /* DuckLake's calendar year -> Iceberg's years since 1970 */
} fdl_ice_spec;

/* A manifest (Avro) of `n` entries, all data or all deletes, written with
 * `schema` (the table's Iceberg schema, with its schema-id) and `spec`. */
int fdl_ice_manifest(fdl_buf *out, const fdl_ice_entry *e, size_t n, const json_t *schema, const fdl_ice_spec *spec,
		     fdl_error *err);

/* One manifest as a manifest list names it. */
typedef struct fdl_ice_listed {
	char *uri;
	int64_t length, seq, min_seq, files, rows;
	int64_t added_snapshot; /* the snapshot id of the version of `seq` */
	int spec_id;
	bool deletes;
} fdl_ice_listed;

/* A manifest list (Avro) for snapshot `snapshot` (parent -1: none). */
int fdl_ice_manifest_list(fdl_buf *out, const fdl_ice_listed *m, size_t n, int64_t snapshot, int64_t parent,
			  int64_t seq, fdl_error *err);

/* The string member `k` of object o, "" when missing or not a string. */
static inline const char *fdl_ice_str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* ---- a run writing one version's view (view.c, snapshot.c, hooks.c) ---- */

#define ICE_BLOCK 64 /* versions to a merged manifest */

typedef struct ice_version {
	char id[FDL_ID_LEN + 1];
	int64_t seq, snap, ms;
	int64_t sid; /* its Iceberg snapshot id (fdl_iceberg_snapshot_id) */
	bool live;
} ice_version;

typedef struct ice_run {
	fdl_repo *repo;
	char *location;
	char lid[FDL_ICEBERG_LID_LEN + 1];
	char *view_dir; /* iceberg/<lid>/versions/<id> */
	fdl_duck *duck;
	fdl_duck *share; /* a database to open a connection on (a commit's own), not one of the run's own */
	fdl_lake *lake;
	char *catalog;
	ice_version *chain; /* ascending seq; the last is the version viewed */
	size_t nchain;
	fdl_refs refs; /* every ref with its tip: the tags name snapshots */
	fdl_strmap *known; /* keys written or found in this run (or a rebuild's) */
	fdl_strmap own_known;
	fdl_strmap confined; /* the parent's manifests found to lead only inside (fdl_ice_tree_confined) */
	bool avro;           /* DuckDB's avro extension loaded in duck, to read them */
	json_t *deletes;  /* {"<DuckLake delete path>": [bytes, positions]} */
	json_t *notices;
	json_t *tables;  /* view.json's tables */
	json_t *parent;  /* the first parent's view.json, when it has one: a commit builds on it */
	json_t *mcache;  /* a manifest's signature -> [uri, bytes]: made once per run, or by the parent's view */
	json_t *msigs;   /* the viewed version's manifests, signature -> [uri, bytes]: view.json's manifest_sigs */
	bool whole;      /* build from the history even when the parent has a view */
	bool again;      /* a table the parent's view could not start: the view again, from the history */
	bool liveness;   /* chain[].live is known */
	char *tmpdir;
	int64_t written;
} ice_run;

/* How a view is written: `known` (NULL: the run's own) collects every key
 * the view uses; `whole` builds it from the history, not the parent's view;
 * `share` (may be NULL) a DuckDB whose database the run uses instead of
 * starting one. */
typedef struct ice_opts {
	fdl_strmap *known;
	bool whole;
	fdl_duck *share; /* a DuckDB to share (its database, a connection of the run's own) */
} ice_opts;

/* The URL of `key` under the view's location. Caller frees. */
static inline char *ice_uri_of(const ice_run *r, const char *key)
{
	return fdl_asprintf("%s/%s", r->location, key);
}

/* A row that began at `begin` and ended at `end` is live at `snap`. */
static inline bool ice_live_at(int64_t begin, int64_t end, int64_t snap)
{
	return begin <= snap && snap < end;
}

/* Whether a table's view by the parent (its metadata.json, `doc`) leads
 * only where a view of this repository may: each snapshot's manifest list
 * and every manifest it names under the view's manifests/, every data file
 * a manifest names under the repository's data folder, relative and clean,
 * and on a store of local files reached with no symlink on the way
 * (fdl_store_files_confined, the rule of fdl_catalog_version_confined), every
 * delete file in the view's tree. The files are read as they are, not as
 * view.json says: *confined when it may be built on; when not (a file
 * elsewhere, or a tree that cannot be read: err cleared) the table's view
 * is built from the history. An error only for memory. trust.c. */
int fdl_ice_tree_confined(bool *confined, ice_run *r, const json_t *doc, fdl_error *err);

/* The snapshot of table tid at version c: its manifests and manifest list
 * written, *out its entry of metadata.json's snapshots (iceberg_snapshot.c). */
/* Whether a parent view's metadata.json, read back, is one fdl wrote for
 * the table (its manifest lists under `prefix`, its current snapshot
 * `current`, table-uuid `uuid`): else the view is built from scratch. */
bool fdl_ice_parent_meta_ok(const json_t *doc, const char *prefix, int64_t current, const char *uuid);
int fdl_ice_snapshot(json_t **out, ice_run *r, int64_t tid, const ice_version *c, int64_t parent,
		     const json_t *schema, json_t *specs, json_t *names, fdl_error *err);
/* Write version id's view at `location` (iceberg.c); *out, when not NULL,
 * its report; o NULL: the run's own keys, built on the parent's view. */
int fdl_ice_write_for(fdl_iceberg_report **out, fdl_repo *repo, const char *id, const char *location,
		      const ice_opts *o, fdl_error *err);

/* Iceberg's name mapping (schema.name-mapping.default in `properties`) of
 * the schema in `schemas` whose id is `id`: every field id by its name,
 * nested ones too (a list's "element", a map's "key" and "value"), how a
 * reader finds the columns of a data file written without field ids
 * (Spark's Parquet, which fdl add registers). Left out when memory runs
 * out: readers then fall back to positions. */
void fdl_ice_name_mapping(json_t *properties, const json_t *schemas, json_int_t id);

#endif
