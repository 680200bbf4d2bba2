/* What an Iceberg view of a version needs from its frozen DuckLake
 * catalog (attached raw), read in a few queries into plain structs: every
 * table, column, data and delete file and partition row of the catalog's
 * whole history (each with its begin and end snapshot, so the state at any
 * earlier snapshot is known), the column statistics, the snapshots' times;
 * and the rewrite of a DuckLake delete file as an Iceberg position-delete
 * file. The operation is src/ops/iceberg.c; the format docs/iceberg.md. */
#ifndef FDL_CATALOG_ICEBERG_H
#define FDL_CATALOG_ICEBERG_H

#include "catalog.h"

#define FDL_LAKE_LIVE INT64_MAX /* end_snapshot of a row still live */

typedef struct fdl_lake_table {
	int64_t id, begin, end, schema_id;
	char *uuid, *name, *schema; /* schema: the schema's name at `begin` */
} fdl_lake_table;

typedef struct fdl_lake_column {
	int64_t id, table_id, begin, end, order, parent; /* parent -1: top level */
	char *name, *type;                               /* DuckLake's type name */
	char *initial_default;                           /* NULL: none */
} fdl_lake_column;

typedef struct fdl_lake_stat {
	int64_t column_id, values, nulls; /* -1: not recorded */
	char *min, *max;                  /* as DuckLake records them; NULL: none */
	int contains_nan;                 /* 1, 0, -1 unknown */
	bool has_epoch;                   /* date/time types: min/max as Iceberg's integers */
	int64_t min_epoch, max_epoch;
} fdl_lake_stat;

typedef struct fdl_lake_file {
	int64_t id, table_id, begin, end, rows, bytes;
	int64_t partition_id; /* -1: none */
	int64_t partial_max;  /* -1: none (a file of one snapshot's rows) */
	bool mapped;          /* added with a name mapping, no field ids */
	bool encrypted;
	char *path; /* relative to data_dir, resolved and checked */
	fdl_lake_stat *stats;
	size_t nstats;
	char **parts; /* partition values by key index (NULL items: null) */
	size_t nparts;
} fdl_lake_file;

typedef struct fdl_lake_delete {
	int64_t id, table_id, data_file_id, begin, end, rows, bytes;
	int64_t partial_max; /* -1: none; else its rows carry their snapshot (up to this one) */
	bool encrypted;
	char *path;
} fdl_lake_delete;

typedef struct fdl_lake_partition {
	int64_t id, table_id, begin, end;
	size_t ncols;
	int64_t *column_ids; /* by key index */
	char **transforms;
} fdl_lake_partition;

typedef struct fdl_lake {
	fdl_lake_table *tables;
	size_t ntables;
	fdl_lake_column *columns; /* by table, column_order, begin */
	size_t ncolumns;
	fdl_lake_file *files; /* by table, file_order, id */
	size_t nfiles;
	fdl_lake_delete *deletes;
	size_t ndeletes;
	fdl_lake_partition *partitions;
	size_t npartitions;
	int64_t *snapshot_ids, *snapshot_ms; /* ascending */
	size_t nsnapshots;
	bool live_only; /* files, deletes, stats and partition values of live files only */
	bool stats_read; /* every file's statistics read (else: those fdl_catalog_lake_read_stats read) */
} fdl_lake;

/* Read all of it from the catalog attached raw as `alias` (with
 * live_only, of the data and delete files only the live ones: what a view
 * built on its parent's needs; without `stats`, no file's statistics yet).
 * Paths are checked to be relative and clean (fdl_catalog_check_confined's
 * rule). */
int fdl_catalog_lake_read(fdl_lake **out, fdl_duck *d, const char *alias, bool live_only, bool stats,
			  fdl_error *err);
/* The statistics of the data files `ids` (n of them) whose statistics are
 * not read yet: the files of the manifests a view writes anew. */
int fdl_catalog_lake_read_stats(fdl_lake *l, fdl_duck *d, const char *alias, const int64_t *ids, size_t n,
				fdl_error *err);
void fdl_lake_free(fdl_lake *l);

/* Write the DuckLake delete file `src` (a path or URL DuckDB reads) as an
 * Iceberg position-delete file at the local path `dst`: file_path (field
 * id 2147483546) = data_uri for every row, pos (2147483545) ascending;
 * with upto >= 0 (a file whose rows carry their snapshot, DuckLake's
 * partial delete files) only the rows of snapshots up to `upto`. *rows
 * gets how many positions it holds. */
int fdl_catalog_iceberg_deletes(fdl_duck *d, const char *src, const char *data_uri, int64_t upto, const char *dst,
				int64_t *rows, fdl_error *err);


/* ---- reading a view back (fdl verify), with DuckDB's avro extension ---- */

/* The manifests a manifest list (a path or URL DuckDB reads) names. */
int fdl_catalog_iceberg_list(fdl_strlist *out, fdl_duck *d, const char *list, fdl_error *err);

typedef struct fdl_ice_read {
	int status, content;      /* content 0 data, 1 position deletes */
	char *path, *referenced;  /* referenced: a delete's data file (NULL: not said) */
	int64_t bytes, rows;
} fdl_ice_read;

/* The entries of a manifest; free with fdl_ice_reads_free. */
int fdl_catalog_iceberg_manifest(fdl_ice_read **out, size_t *n, fdl_duck *d, const char *manifest, fdl_error *err);
void fdl_ice_reads_free(fdl_ice_read *e, size_t n);

/* Whether two Parquet files hold the same `pos` values (an Iceberg
 * position-delete file and the DuckLake delete file it was made from). */
int fdl_catalog_positions_equal(bool *same, fdl_duck *d, const char *a, const char *b, fdl_error *err);

#endif
