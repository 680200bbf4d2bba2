/* What the writer of a version's Iceberg view shares among its files
 * (iceberg.c builds a version's view, iceberg_snapshot.c one table's
 * snapshot and its manifests, iceberg_hooks.c keeps the views following
 * commits, expiry, clones and refs). Internal to src/ops/iceberg*.c. */
#ifndef FDL_OPS_ICEBERG_RUN_H
#define FDL_OPS_ICEBERG_RUN_H

#include "iceberg.h"

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
	fdl_tag *tags;
	size_t ntags;
	fdl_strmap *known; /* keys written or found in this run (or a rebuild's) */
	fdl_strmap own_known;
	json_t *deletes;  /* {"<DuckLake delete path>": [bytes, positions]} */
	json_t *notices;
	json_t *tables;  /* view.json's tables */
	json_t *parent;  /* the first parent's view.json, when it has one: a commit builds on it */
	json_t *mcache;  /* a manifest's signature -> [uri, bytes]: made once per run, or by the parent's view */
	json_t *msigs;   /* the viewed version's manifests, signature -> [uri, bytes]: view.json's manifest_sigs */
	bool whole;      /* build from the history even when the parent has a view */
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

#endif
