/* The previews (fdl's addition, docs/format.md "Previews (fdl)"): each
 * version's tables as a page shows them before any query, their first
 * rows and their column statistics over every row, computed by DuckDB at
 * commit (or by fdl preview for older versions). Derived, never the truth:
 * the tree can be deleted and written again. Names and records live here:
 *
 *   previews/<version id>.json         one version's preview: its tables,
 *                                      each naming its table file and
 *                                      holding a copy of it ("file"), so a
 *                                      page reads a version's preview in
 *                                      one request
 *   previews/tables/<sha256>.json      one table's preview, named by the
 *                                      sha256 of the table's state (format,
 *                                      table id, names, columns, live files):
 *                                      a table the commit left as it was
 *                                      has the same name, so it is reused
 *
 * Every value in them is text as DuckDB prints it (or JSON null): a page
 * shows them as text, never as markup. */
#ifndef FDL_LAYOUT_PREVIEW_H
#define FDL_LAYOUT_PREVIEW_H

#include "layout.h"

#define FDL_PREVIEW_DIR "previews"
#define FDL_PREVIEW_TABLES_DIR "previews/tables"
/* "fdl_preview" of both files */
#define FDL_PREVIEW_FORMAT 1
/* the first rows a table's preview holds (the page's first page) */
#define FDL_PREVIEW_ROWS 20
/* the largest preview file read */
#define FDL_PREVIEW_MAX_BYTES (16 << 20)

/* Keys (caller frees; NULL when out of memory): */
char *fdl_preview_key(const char *version_id);      /* previews/<id>.json */
char *fdl_preview_table_key(const char *state_sha); /* previews/tables/<sha>.json */
/* The version id a key of previews/<id>.json names (false: not one). */
bool fdl_preview_key_parse(const char *key, char id[FDL_ID_LEN + 1]);
/* The state sha a key of previews/tables/<sha>.json names (false: not one). */
bool fdl_preview_table_key_parse(const char *key, char sha[65]);

/* Version `version_id`'s preview, with each table's own file read and
 * checked into its entry: {"fdl_preview": 1, "version": id, "tables":
 * [{"schema", "name", "table_id", "key", "columns", "row_count", "rows",
 * "stats"}]} (docs/format.md says each field). FDL_ENOTFOUND when the
 * version has no preview (or a table file is missing: an incomplete
 * preview is none); FDL_EINVALID, naming the file and field, when one is
 * not as docs/format.md says. Caller json_decrefs. */
int fdl_preview_load(json_t **out, fdl_repo *repo, const char *version_id, fdl_error *err);
/* The version's own file only, checked (its tables name their keys). */
int fdl_preview_read(json_t **out, fdl_repo *repo, const char *version_id, fdl_error *err);
/* The checks of fdl_preview_read and of one table file, on bytes (`src`
 * names them in messages); `version_id` NULL: not compared. */
int fdl_preview_parse(json_t **out, const char *data, size_t len, const char *src, const char *version_id,
		      fdl_error *err);
int fdl_preview_table_parse(json_t **out, const char *data, size_t len, const char *src, fdl_error *err);

/* The table file of state `sha`, read and checked; FDL_ENOTFOUND when it
 * is not there. */
int fdl_preview_table_read(json_t **out, fdl_repo *repo, const char *sha, fdl_error *err);
/* Write one table's preview (create-only; one already there is kept: the
 * same state gives the same file). */
int fdl_preview_table_write(fdl_repo *repo, const char *sha, const json_t *table, fdl_error *err);
/* Write the version's file (create-only, or in place of the one there when
 * `replace`), after every table file it names. */
int fdl_preview_write(fdl_repo *repo, const char *version_id, const json_t *doc, bool replace, fdl_error *err);

/* Every version id that has a preview file (sorted). */
int fdl_preview_list(fdl_strlist *out, fdl_repo *repo, fdl_error *err);
/* Delete the previews of the versions not in `live` (sorted), then every
 * table file no remaining preview names: a withdrawn version's rows go
 * with it. *removed (may be NULL) counts the files deleted. */
int fdl_preview_sweep(fdl_repo *repo, const fdl_strlist *live, size_t *removed, fdl_error *err);

#endif
