/* Building the public reports (fdl.h: fdl_*_report, fdl_diff,
 * fdl_snapshot_list) inside libfdl. Their _free and _json functions are in
 * report.c, one formatter per report. */
#ifndef FDL_REPORT_H
#define FDL_REPORT_H

#include "../util/json.h"

#include <stdarg.h>

/* Move a string list into a report's array (l is left empty). */
void fdl_strarray_take(fdl_strarray *out, fdl_strlist *l);
void fdl_strarray_clear(fdl_strarray *a);
json_t *fdl_strarray_json(const fdl_strarray *a);

/* Room for one more item at items[count] (zeroed); NULL when out of memory. */
void *fdl_report_grow(void **items, size_t count, size_t size, fdl_error *err);

/* Append a finding ("where", "what") to a growable array. */
int fdl_findings_add(fdl_finding **items, size_t *count, const char *where, const char *what, fdl_error *err);
/* The same, "what" formatted from fmt and ap, without a leading "where: "
 * (messages from below often start with the file already: named once). */
int fdl_findings_addv(fdl_finding **items, size_t *count, const char *where, const char *fmt, va_list ap,
		      fdl_error *err) FDL_PRINTF(4, 0);

/* Free what a verify report holds and zero it, not the struct itself (the
 * per-version parts verify merges). */
void fdl_verify_report_free_fields(fdl_verify_report *r);

/* One version's findings and good signatures (`part`, emptied) after
 * those already in `to`; FDL_ENOMEM when out of memory (no message). */
int fdl_verify_report_merge(fdl_verify_report *to, fdl_verify_report *part);

/* A version touched by expire or withdraw, appended with its removed files
 * (taken from `removed`). */
int fdl_removals_add(fdl_version_removal **items, size_t *count, const char *id, fdl_strlist *removed,
		     fdl_error *err);

/* A live version that still returns rows a withdrawal takes away. */
int fdl_withdraw_left_add(fdl_withdraw_report *r, const char *id, const char *from, const char *table, int64_t rows,
			  fdl_error *err);
/* Rows a named version added to a table (the clean-up's). */
int fdl_withdraw_added_add(fdl_withdraw_report *r, const char *from, const char *table, int64_t rows, fdl_error *err);

#endif
