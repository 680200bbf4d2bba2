#ifndef FDL_QUERY_H
#define FDL_QUERY_H

#include "duck.h"

/* Run one SQL statement and stream its rows to `out` (fdl_format from
 * fdl.h: table, CSV with a header, or one JSON object per line). */
int fdl_duck_stream(fdl_duck *d, const char *sql, fdl_format fmt, FILE *out, fdl_error *err);

#endif
