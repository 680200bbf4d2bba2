/* The pages wing (src/site/): a dataset's pages for people without
 * JavaScript and for crawlers, and the descriptions ML and open-data tools
 * load: each version's static HTML with schema.org JSON-LD, its Croissant
 * 1.1 file and its Frictionless Data Package, and the repository's page.
 * The one header the rest of libfdl includes; a ref move reaches the hooks
 * through src/ops/derived.c alone. The names: src/layout/site.h; the
 * format: docs/format.md "Pages, Croissant and Data Package (fdl)". */
#ifndef FDL_SITE_SITE_H
#define FDL_SITE_SITE_H

#include "../layout/layout.h"

typedef enum fdl_site_file {
	FDL_SITE_FILE_HOME,        /* index.html: the repository's page */
	FDL_SITE_FILE_PAGE,        /* site/<id>/index.html */
	FDL_SITE_FILE_CROISSANT,   /* site/<id>/croissant.json */
	FDL_SITE_FILE_DATAPACKAGE, /* site/<id>/datapackage.json */
} fdl_site_file;

/* One file as text into `out` (appended): of version `id` (HOME: NULL,
 * HEAD's branch tip). `base` is the repository's address, absolute with a
 * trailing '/' (fdl serve's own); NULL: fdl.json's public_url, or else
 * addresses relative to the file. FDL_EEXPIRED for a version's Croissant
 * or Data Package once its files.json is gone. */
int fdl_site_render(fdl_buf *out, fdl_repo *repo, const char *id, fdl_site_file what, const char *base,
		    fdl_error *err);

/* Write a version's three files (an expired one: its page, saying so),
 * then the repository's page. */
int fdl_site_write(fdl_repo *repo, const char *id, fdl_error *err);
/* The repository's page alone. */
int fdl_site_write_home(fdl_repo *repo, fdl_error *err);

/* ---- hooks (each a no-op on a repository without site/site.json) ---- */

/* After a commit moved a branch to `id`: the version's files, the home. */
int fdl_site_after_commit(fdl_repo *repo, const char *id, fdl_error *err);
/* After version `id` expired or was withdrawn: its Croissant and Data
 * Package removed (they would lead to data that is gone), its page and
 * the home written again. */
int fdl_site_after_gone(fdl_repo *repo, const char *id, fdl_error *err);
/* Before versions `ids` expire or are withdrawn (before their
 * expired.json): their files removed, and the home when it shows one of
 * them, so that no crash leaves their first rows on a page (the pages of
 * a gone version are written again after, without rows). */
int fdl_site_before_gone(fdl_repo *repo, const fdl_strlist *ids, fdl_error *err);
/* After versions left or refs changed (gc, clone, branch, tag): every
 * version folder under site/ whose version is gone or missing removed,
 * the home written again. */
int fdl_site_after_refs(fdl_repo *repo, fdl_error *err);

#endif
