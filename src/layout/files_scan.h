/* files.json's data files, as fdl verify's default depth reads them
 * (files_scan.c): each table's live data and delete files with their
 * recorded sizes, and the sha256 map, read straight from the text without
 * building a JSON tree (a tree of a 10,000-file files.json costs more than
 * hashing the catalog beside it). */
#ifndef FDL_LAYOUT_FILES_SCAN_H
#define FDL_LAYOUT_FILES_SCAN_H

#include "../util/json.h"

#include <stdbool.h>
#include <stdint.h>

/* Strings are offsets into `text` (NUL-terminated there): fdl_files_str. */
typedef struct fdl_files_live {
	size_t table, path;
	int64_t bytes; /* as recorded; 0 when none */
} fdl_files_live;
typedef struct fdl_files_hash {
	size_t path, sha;
} fdl_files_hash;
typedef struct fdl_files_scan {
	fdl_buf text;
	fdl_files_live *live; /* in files.json's order */
	size_t nlive, caplive;
	fdl_files_hash *map; /* sorted by path */
	size_t nmap, capmap;
	bool has_map; /* files.json has a "sha256" object */
} fdl_files_scan;

#define fdl_files_str(s, off) ((s)->text.data + (off))

/* Read files.json's text: *plain when it is the plain JSON the scan reads;
 * when not (an escape in a string it keeps, a control character, not JSON
 * at all), fdl_files_scan_tree of jansson's parse says what it holds, or
 * why it is not JSON. FDL_ENOMEM when out of memory. */
int fdl_files_scan_text(bool *plain, fdl_files_scan *out, const char *json, size_t len, fdl_error *err);

/* The same from a parsed files.json. */
int fdl_files_scan_tree(fdl_files_scan *out, const json_t *doc, fdl_error *err);

void fdl_files_scan_free(fdl_files_scan *s);

#endif
