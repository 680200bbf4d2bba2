/* The landing card (card.c; its file: src/layout/card.h) kept current
 * by the seam (derived.c), by fdl preview and a clone's copy (preview.c),
 * and checked by fdl verify. */
#ifndef FDL_OPS_CARD_H
#define FDL_OPS_CARD_H

#include "../layout/layout.h"

/* _refresh: the card written again from HEAD's branch, its tip's files
 * and preview (unchanged bytes are not written); deleted when the branch has no tip, its tip is gone or has no
 * preview, or the card cannot be made; fails only when a card that must go
 * cannot be deleted (the caller decides whether that fails it). _drop:
 * deleted when it shows one of `going` (or cannot be read), before their
 * expired.json; the caller's to fail on. _check: what fdl verify says of
 * it: one that cannot be read is a problem, one of a gone version or of
 * another tip than HEAD's (a ref move cut short before it) a warning. */
int fdl__card_refresh(fdl_repo *repo, fdl_error *err);
int fdl__card_drop(fdl_repo *repo, const fdl_strlist *going, fdl_error *err);
int fdl__card_check(fdl_strlist *problems, fdl_strlist *warnings, fdl_repo *repo, fdl_error *err);

#endif
