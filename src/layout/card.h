/* The landing card (fdl's addition, docs/format.md "The landing card
 * (fdl)"): what a page needs to draw HEAD's tip, in one file at a fixed
 * name, so that a reader asks for it beside HEAD and the ref, in one round
 * trip. Derived, never the truth: a reader uses it only when the ref it
 * read itself names the same tip (else it reads the tip's own files).
 *
 *   previews/HEAD.json   {"fdl_card": 1, "head": "<HEAD's branch>",
 *                         "tip": "<its version id>",
 *                         "data_dir": "<fdl.json's data_dir>",
 *                         "version": <the tip's version.json>,
 *                         "dataset": <its dataset.json, when it has one>,
 *                         "files": <its files.json, when it has one and it
 *                                   is at most FDL_CARD_FILES_MAX bytes>,
 *                         "preview": <previews/<tip>.json>}
 *
 * Written after every move of HEAD's branch when its tip has a preview
 * (else none), deleted before its tip expires or is withdrawn (no crash
 * leaves a gone version's rows in it). */
#ifndef FDL_LAYOUT_CARD_H
#define FDL_LAYOUT_CARD_H

#include "layout.h"

#define FDL_CARD_KEY "previews/HEAD.json"
/* "fdl_card" */
#define FDL_CARD_FORMAT 1
/* the largest files.json copied into the card (a larger one is read by
 * the page on its own) */
#define FDL_CARD_FILES_MAX (256 << 10)

/* The card as stored, checked: its format, head, tip, and a version
 * record of that tip. FDL_ENOTFOUND when there is none. */
int fdl_card_read(json_t **out, fdl_repo *repo, fdl_error *err);
int fdl_card_parse(json_t **out, const char *data, size_t len, const char *src, fdl_error *err);
/* Write `doc` as the card unless it already holds the same bytes. */
int fdl_card_write(fdl_repo *repo, const json_t *doc, fdl_error *err);
/* Delete the card; none there is fine. */
int fdl_card_delete(fdl_repo *repo, fdl_error *err);

#endif
