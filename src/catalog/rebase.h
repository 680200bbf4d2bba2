/* What rebase.c (the plan and the conflicts) and replay.c (the replay)
 * share: their SQL templates, whose {names} stand for the two aliases and
 * the plan's numbers, and which DuckLake tables a replay knows. Included by
 * those two files only. */
#ifndef FDL_CATALOG_REBASE_H
#define FDL_CATALOG_REBASE_H

#include "duck.h"

/* Expand `tmpl` into out: {W} the working catalog, {N} the new one, {b}
 * base, {t} tip, {dS} d_snapshot, {cb} catalog_from, {dC} d_catalog, {fb}
 * file_from, {dF} d_file, {dV} d_version; {A} and {S} the `alias` and
 * `side` given (NULL when the template has none). */
int fdl_rebase_sql(fdl_buf *out, const fdl_rebase_plan *p, const char *tmpl, const char *alias, const char *side,
		   fdl_error *err);
/* Expand and run a statement; expand and run a query of one BIGINT (NULL: 0). */
int fdl_rebase_exec(fdl_duck *d, const fdl_rebase_plan *p, const char *tmpl, fdl_error *err);
int fdl_rebase_int(fdl_duck *d, const fdl_rebase_plan *p, int64_t *out, const char *tmpl, fdl_error *err);
/* Add one conflict to p->conflicts. */
int fdl_rebase_add_conflict(fdl_rebase_plan *p, const char *table, const char *kind, const char *detail, fdl_error *err);
/* Run an expanded query of (table, kind, detail) rows and add each as a
 * conflict. */
int fdl_rebase_conflicts_from(fdl_duck *d, fdl_rebase_plan *p, const char *tmpl, fdl_error *err);

/* How the replay treats a DuckLake metadata table. */
typedef enum {
	REBASE_UNKNOWN,   /* not a table of the formats fdl knows: refused */
	REBASE_VERSIONED, /* begin_snapshot (and end_snapshot) rows */
	REBASE_SNAPSHOT,  /* one row per snapshot_id */
	REBASE_FILE,      /* rows of a data file, by data_file_id */
	REBASE_CHILD,     /* rows of a catalog object, by its id column */
	REBASE_STATS,     /* the table statistics: merged */
	REBASE_META,      /* ducklake_metadata: options */
	REBASE_INLINED,   /* inlined rows and deletes: refused when not empty */
	REBASE_IGNORED,   /* what a working catalog keeps for itself, not replayed */
} fdl_rebase_kind;
/* The kind of table `name`; for REBASE_CHILD *key is its id column. */
fdl_rebase_kind fdl_rebase_table_kind(const char *name, const char **key);

#endif
