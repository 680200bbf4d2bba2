/* The Iceberg views (fdl's addition, docs/format.md "Iceberg views"):
 * every version as Iceberg v2 tables over the repository's own data files,
 * a derived tree outside versions/ that can be deleted and written again at
 * any time. The names of its files, and its two small records, live here:
 *
 *   iceberg/views.json                       the locations that have views
 *   iceberg/<lid>/versions/<id>/view.json    one version's view: its tables,
 *                                            notices, what commits build on
 *                                            (written last: the view is whole)
 *   iceberg/<lid>/versions/<id>/<schema>/<table>/metadata/<seq>-<id>.metadata.json
 *   iceberg/<lid>/manifests/<sha256>.avro    manifests and manifest lists,
 *                                            named by the sha256 of their bytes
 *   iceberg/<lid>/deletes/<path>             position-delete files, one per
 *                                            DuckLake delete file at <path>
 *                                            under data_dir
 *   iceberg/<lid>/catalog/v1/...             the static Iceberg REST catalog:
 *                                            one file per GET of the protocol
 *                                            (namespaces = branches and tags)
 *
 * <lid> is the location's id: the first 16 hex digits of the sha256 of the
 * absolute URI the view is written for (Iceberg records absolute paths). */
#ifndef FDL_LAYOUT_ICEBERG_H
#define FDL_LAYOUT_ICEBERG_H

#include "layout.h"

#define FDL_ICEBERG_DIR "iceberg"
#define FDL_ICEBERG_VIEWS "iceberg/views.json"
#define FDL_ICEBERG_VIEW_JSON "view.json"
#define FDL_ICEBERG_LID_LEN 16
/* The folders of iceberg/<lid>/ beside versions/ */
#define FDL_ICEBERG_MANIFESTS "manifests"
#define FDL_ICEBERG_DELETES "deletes"
#define FDL_ICEBERG_CATALOG "catalog"

/* An Iceberg table another engine keeps with a Hadoop catalog (fdl add
 * --iceberg reads it): the file naming its current version, and that
 * version's metadata file (a printf format of the number), both relative
 * to the table's folder. */
#define FDL_ICEBERG_HADOOP_HINT "metadata/version-hint.text"
#define FDL_ICEBERG_HADOOP_METADATA "metadata/v%lld.metadata.json"

/* The URI a repository's own view is written for: file://<path> for a
 * folder, the s3:// root for a bucket; FDL_EINVALID for a store fdl cannot
 * write (a static host: pass a location). Caller frees. */
int fdl_iceberg_own_location(char **out, fdl_repo *repo, fdl_error *err);
/* A location given by a user, checked (file://, s3://, http(s):// with
 * nothing after the path, no trailing '/') and normalised. Caller frees. */
int fdl_iceberg_location_check(char **out, const char *uri, fdl_error *err);
/* The location's id (FDL_ICEBERG_LID_LEN hex digits). */
int fdl_iceberg_location_id(char lid[FDL_ICEBERG_LID_LEN + 1], const char *location, fdl_error *err);

/* The format of view.json (its "fdl_iceberg"): 2 since snapshot ids are
 * derived from version ids; a view of an older format (1: snapshot id =
 * seq) is read and verified, never built upon, and written again by the
 * hooks that touch it. */
#define FDL_ICEBERG_VIEW_FORMAT 2
/* The Iceberg snapshot id of version `version_id` in every view of every
 * table: the first 16 hex digits of the sha256 of the id (its 36
 * characters) as a number, its top two bits set to 01, so that it is
 * positive, unique for ever (no version id is used twice, whatever the
 * seq) and never a seq, which older views used. */
int fdl_iceberg_snapshot_id(int64_t *out, const char *version_id, fdl_error *err);

/* A schema or table name as one path segment: itself when it is
 * [A-Za-z0-9][A-Za-z0-9_-]* (at most 100 bytes), else "_<id>". Caller frees. */
char *fdl_iceberg_segment(const char *name, int64_t id);

/* Keys (caller frees; NULL when out of memory): */
char *fdl_iceberg_view_dir(const char *lid, const char *version_id);          /* iceberg/<lid>/versions/<id> */
char *fdl_iceberg_manifest_key(const char *lid, const char *sha256);          /* .../manifests/<sha>.avro */
char *fdl_iceberg_deletes_key(const char *lid, const char *data_path);        /* .../deletes/<path> */
char *fdl_iceberg_manifests_dir(const char *lid);                            /* iceberg/<lid>/manifests */
/* <location>/iceberg/<lid>/manifests/: where a view's manifest lists are, as Iceberg names them */
char *fdl_iceberg_manifests_uri(const char *location, const char *lid);
/* <table dir>/metadata/<seq>-<id>.metadata.json: the names Iceberg's own
 * writers use, where Trino's register_table looks */
char *fdl_iceberg_metadata_key(const char *table_dir, int64_t seq, const char *version_id);
/* Whether `rel` (a key below iceberg/<lid>/) is in its folder `dir`
 * (FDL_ICEBERG_MANIFESTS, _DELETES, _CATALOG). */
bool fdl_iceberg_rel_in(const char *rel, const char *dir);

/* iceberg/views.json: {"fdl_iceberg": 1, "views": [{"id", "location",
 * "catalog"}]} ("catalog": true when the location has a REST catalog).
 * *out is an empty list when the file does not exist. */
int fdl_iceberg_views_read(json_t **out, fdl_repo *repo, fdl_error *err);
/* views.json's bytes (`src` names them in messages), checked: each view a
 * location and the id it gives. */
int fdl_iceberg_views_parse(json_t **out, const char *data, size_t len, const char *src, fdl_error *err);
/* Add `location` to views.json, with its catalog on when `catalog`
 * (compare-and-swap; nothing when it is there as asked). */
int fdl_iceberg_views_add(fdl_repo *repo, const char *location, bool catalog, fdl_error *err);
/* Whether an entry of views.json has a catalog. */
bool fdl_iceberg_view_has_catalog(const json_t *entry);

/* ---- the REST catalog (iceberg/<lid>/catalog/) ----
 * Each resource of the protocol's read path is one file at its path under
 * the catalog's root: v1/config, v1/namespaces, v1/namespaces/<ns>,
 * v1/namespaces/<ns>/tables, v1/namespaces/<ns>/tables/<table>. <ns> is
 * the namespace's levels joined by the unit separator (0x1F), as clients
 * send it (%1F), a static host decodes it and looks for that name. On a
 * file system a path that is both a resource and a folder (the namespace
 * list, a namespace, its table list) is a folder holding index.html, which
 * any static host answers for the folder; on a bucket, whose keys can be
 * both and whose endpoint serves keys, never index documents, it is the
 * plain key. */
#define FDL_ICEBERG_CATALOG_INDEX "index.html"
/* iceberg/<lid>/catalog (caller frees). */
char *fdl_iceberg_catalog_dir(const char *lid);
/* The key of resource `path` ("v1/namespaces") under iceberg/<lid>/catalog/:
 * "<path>/index.html" when `index` and the resource is also a folder
 * (`folder`), else "<path>". Caller frees. */
char *fdl_iceberg_catalog_key(const char *lid, const char *path, bool folder, bool index);
/* Whether this repository's catalog uses index.html folders (every store
 * but a bucket). */
bool fdl_iceberg_catalog_index(fdl_repo *repo);
/* Whether a branch or tag name can be a namespace: A-Z a-z 0-9 . _ - and
 * '/' only (a '/' stays one: clients send %2F, hosts decode it to a
 * folder), no part between '/' named "tables" or "index.html". */
bool fdl_iceberg_namespace_ok(const char *ref);
/* A DuckLake schema or table name in the catalog: itself when it is
 * [A-Za-z0-9][A-Za-z0-9._-]* (at most 100 bytes) and not "index.html",
 * else "_<id>". Caller frees. */
char *fdl_iceberg_catalog_name(const char *name, int64_t id);

#endif
