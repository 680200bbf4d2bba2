/* Iceberg views inside libfdl (src/ops/iceberg*.c): the hooks commit,
 * clone, verify and the lifecycle call, and what the view's files share.
 * The format: docs/format.md "Iceberg views"; the reasons:
 * docs/decisions.md "Iceberg views". */
#ifndef FDL_OPS_ICEBERG_H
#define FDL_OPS_ICEBERG_H

#include "../catalog/iceberg.h"
#include "../layout/iceberg.h"

/* ---- hooks (each a no-op on a repository without iceberg/views.json) ---- */

/* After a commit moved `branch` to `id`: the version's view for every
 * location views.json names, and the branch's namespaces in each catalog.
 * Best effort for the caller: the view is derived, and a failure leaves
 * the repository as correct as before. */
int fdl_iceberg_after_commit(fdl_repo *repo, const char *branch, const char *id, fdl_error *err);
/* The same beside the caller, on a thread of its own with its own handle
 * on the repository (*out NULL and nothing started when it has no views),
 * reading through a connection of its own to `share`'s database (NULL: a
 * DuckDB of its own); the caller goes on with `repo` and `share` and joins
 * before it frees either. The join returns the hook's result. */
typedef struct fdl_iceberg_job fdl_iceberg_job;
int fdl_iceberg_after_commit_start(fdl_iceberg_job **out, fdl_repo *repo, const char *branch, const char *id,
				   fdl_duck *share, fdl_error *err);
int fdl_iceberg_after_commit_join(fdl_iceberg_job *job, fdl_error *err);
/* After versions left (expired, withdrawn) or data files went (gc): the
 * views of every live branch tip and tag target are written again from
 * their histories as they now are, and every other file of the views is
 * deleted (a view of another version is written again on demand), so no
 * view leads a reader to data that is gone. */
int fdl_iceberg_after_removal(fdl_repo *repo, fdl_error *err);
/* After a clone of a repository that has views: the copy's own views (its
 * location), for its branch tips and tags. */
int fdl_iceberg_after_clone(fdl_repo *src, const char *dst_root, fdl_error *err);
/* After a tag or branch was made or deleted: the views of the branch tips
 * that have one written again, with the tags as they now are. */
int fdl_iceberg_after_refs(fdl_repo *repo, fdl_error *err);
/* What fdl verify says about the views ("key\tmessage" findings). */
int fdl_iceberg_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, fdl_error *err);

/* ---- shared by iceberg*.c ---- */

/* Write `key` with `text` unless it already holds exactly that (a
 * compare-and-swap on what was read: FDL_ECONFLICT when another writer got
 * there first); *written (may be NULL) counts a write. */
int fdl_ice_replace(fdl_store *store, const char *key, const char *text, size_t len, int64_t *written,
		    fdl_error *err);
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
 * ones to nested; 1 when it is not a list fdl writes (then the whole
 * catalog is written again), an error only for memory. */
int fdl_ice_namespaces_old(json_t *keep, json_t *nested, const char *data, size_t len, const char *name,
			   const char *key, fdl_error *err);
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
 * (date and time types: as `epoch`, days or microseconds). 1 (and nothing
 * written) when it has none here. */
int fdl_ice_bound(fdl_buf *out, const char *type, const char *text, bool has_epoch, int64_t epoch, bool upper,
		  fdl_error *err);

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

#endif
