#ifndef FDL_INPUTS_H
#define FDL_INPUTS_H

#include "../util/json.h"

/* One `inputs` item from "SOURCE_ID=FILE_OR_URL": source_id, sha256 of the
 * bytes (streamed), retrieved_at (a file's mtime, or now for a URL), url. */
int fdl_input_record(json_t **out, const char *spec, fdl_error *err);

#endif
