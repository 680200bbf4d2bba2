/* Building the public reports (fdl.h: fdl_*_report, fdl_diff,
 * fdl_snapshot_list) inside libfdl. Their _free and _json functions are in
 * report.c, one formatter per report. */
#ifndef FDL_REPORT_H
#define FDL_REPORT_H

#include "../util/json.h"

/* Move a string list into a report's array (l is left empty). */
void fdl_strarray_take(fdl_strarray *out, fdl_strlist *l);
void fdl_strarray_clear(fdl_strarray *a);
json_t *fdl_strarray_json(const fdl_strarray *a);

/* Append a finding ("where", "what") to a growable array. */
int fdl_findings_add(fdl_finding **items, size_t *count, const char *where, const char *what, fdl_error *err);

/* Free what a verify report holds and zero it, not the struct itself (the
 * per-version parts verify merges). */
void fdl_verify_report_free_fields(fdl_verify_report *r);

/* A version touched by expire or withdraw, appended with its removed files
 * (taken from `removed`). */
int fdl_removals_add(fdl_version_removal **items, size_t *count, const char *id, fdl_strlist *removed,
		     fdl_error *err);

#endif
