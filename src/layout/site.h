/* The dataset's pages for people and crawlers (fdl's addition, docs/format.md
 * "Pages, Croissant and Data Package (fdl)"): derived files outside
 * versions/, written again whenever wanted. Their names live here:
 *
 *   index.html                          the repository's page (HEAD's branch tip)
 *   site/site.json                      the record that the repository has pages
 *   site/<id>/index.html                a version's page, with its JSON-LD
 *   site/<id>/croissant.json            its Croissant 1.1 description
 *   site/<id>/datapackage.json          its Frictionless Data Package
 */
#ifndef FDL_LAYOUT_SITE_H
#define FDL_LAYOUT_SITE_H

#include "layout.h"

#define FDL_SITE_DIR "site"
#define FDL_SITE_RECORD "site/site.json"
#define FDL_SITE_HOME "index.html"
#define FDL_SITE_PAGE "index.html"
#define FDL_SITE_CROISSANT "croissant.json"
#define FDL_SITE_DATAPACKAGE "datapackage.json"
/* fdl.json's setting: the address the repository is published at */
#define FDL_SITE_PUBLIC_URL "public_url"

/* site/<id>/<name> (name NULL: the folder, no slash). Caller frees. */
char *fdl_site_key(const char *id, const char *name);
/* Whether `key` is one of the pages' files (home, record, a version's). */
bool fdl_site_key_is(const char *key);
/* A version's file: its id and name ("index.html", ...); false otherwise. */
bool fdl_site_key_parse(const char *key, char id[FDL_ID_LEN + 1], const char **name);
/* From the version's page (site/<id>/) to the repository's root. */
#define FDL_SITE_UP "../../"

/* Whether the repository has pages (site/site.json exists). */
int fdl_site_enabled(bool *on, fdl_repo *repo, fdl_error *err);
/* Say it has (create-only; one already there is fine). */
int fdl_site_enable(fdl_repo *repo, fdl_error *err);
/* The public address from fdl.json (NULL: none), without a trailing '/'. */
const char *fdl_site_public_url(const fdl_repo *repo);
/* Check an address for the setting: http(s)://host[/path], no query, no
 * fragment, no quote or space; the trailing '/' dropped. Caller frees. */
int fdl_site_url_check(char **out, const char *url, fdl_error *err);

/* Write `key` with `text` unless it holds exactly that already. */
int fdl_site_put(fdl_repo *repo, const char *key, const char *text, size_t len, fdl_error *err);
/* Remove a version's files (any already gone is fine). */
int fdl_site_remove(fdl_repo *repo, const char *id, fdl_error *err);
/* The ids of every version folder under site/. */
int fdl_site_list(fdl_strlist *ids, fdl_repo *repo, fdl_error *err);

#endif
