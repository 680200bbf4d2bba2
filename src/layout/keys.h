/* The repository's key space, named only here (and in the layout files
 * that include this): refs, version folders and their files, the format
 * catalogs, the history index, the Iceberg views, fdl's own working area.
 * Code outside src/layout/ builds and reads keys through these, never by
 * spelling a literal (docs/architecture.md; `make docs-check` looks). */
#ifndef FDL_KEYS_H
#define FDL_KEYS_H

#include "layout.h"

#define FDL_REFS_HEADS "refs/heads/"
#define FDL_REFS_TAGS "refs/tags/"
#define FDL_VERSIONS_DIR "versions"
#define FDL_HISTORY_DIR "history"
#define FDL_FORMAT_CATALOGS_DIR "catalogs" /* inside a version folder */

/* ---- refs ---- */

typedef enum fdl_ref_kind { FDL_REF_NONE = 0, FDL_REF_BRANCH, FDL_REF_TAG } fdl_ref_kind;

/* The name a ref key gives ("refs/heads/main" -> "main", kind BRANCH;
 * "refs/tags/v1" -> "v1", TAG); anything else is returned as is with kind
 * NONE (kind may be NULL). Points into `key`. */
const char *fdl_ref_short(const char *key, fdl_ref_kind *kind);
/* The kind of a ref key, by its prefix alone. */
fdl_ref_kind fdl_ref_kind_of(const char *key);
/* "refs/heads/<name>" or "refs/tags/<name>" (unchecked: check the name
 * first, fdl_name_is_valid; fdl_ref_branch_key checks). Caller frees. */
char *fdl_ref_key(fdl_ref_kind kind, const char *name);

/* ---- version folders ---- */

/* "versions/<id>" (no slash at the end): a version folder's prefix for
 * listing. Caller frees. */
char *fdl_version_dir_key(const char *id);
/* The URL or path of a version's file under a root: "<root>/versions/<id>/<name>"
 * (for messages and for local paths of a folder store). Caller frees. */
char *fdl_version_url(const char *root, const char *id, const char *name);
/* A key inside a version folder: its id (into `id`) and the path inside
 * the folder (*rest, pointing into key; "" for the folder itself). False
 * when key is not "versions/<valid id>" or below it. */
bool fdl_version_key_parse(const char *key, char id[FDL_ID_LEN + 1], const char **rest);

/* "catalogs/<format>.duckdb": another format's catalog inside a version
 * folder (docs/format.md, "Other formats"). Caller frees. */
char *fdl_format_catalog_path(const char *format);
/* Is `path` (relative to the version folder) such a catalog: one plain
 * name under catalogs/, ending .duckdb, no step up. */
bool fdl_is_format_catalog_path(const char *path);

/* Which files of a version folder an expiry or a withdrawal removes: the
 * catalog and files.json that version.json records (for a version whose
 * version.json is unreadable, v NULL, the format's default names), and
 * every other format's catalog. Nothing else: version.json, dataset.json,
 * expired.json and the signature stay. */
bool fdl_version_removable(const fdl_version *v, const char *path);
/* May `path` be in a version folder at all (version.json, its signature,
 * expired.json, the files version.json records, the format catalogs)? */
bool fdl_version_file_allowed(const fdl_version *v, const char *path);

/* ---- what a key is ---- */

typedef enum fdl_key_class {
	FDL_KEY_OTHER = 0, /* not part of the layout */
	FDL_KEY_IMMUTABLE, /* a version's file, a history pack: same bytes forever */
	FDL_KEY_MOVING,    /* fdl.json, HEAD, refs, history pointers, the ref list, view pointers */
	FDL_KEY_DATA,      /* under the data folder (immutable too, but not fdl's to name) */
	FDL_KEY_TEMPORARY, /* fdl's working area (work/), a write on its way (.tmp-) */
	FDL_KEY_LOCK,      /* a lock file */
} fdl_key_class;
/* One answer for the read cache, the server's Cache-Control and gc:
 * what a key of `repo` (NULL: the data folder unknown) is. */
fdl_key_class fdl_key_classify(const fdl_repo *repo, const char *key);

/* ---- HEAD ---- */

/* What HEAD holds when it names `branch`: "ref: refs/heads/<branch>\n"
 * (Git's syntax; fdl_head_parse reads it back). Caller frees. */
char *fdl_head_content(const char *branch);

/* ---- added with the key-space cleanup (issue 37) ---- */

#define FDL_REFS_DIR "refs" /* every ref, for listing */
#define FDL_HEAD_KEY "HEAD" /* the default branch (fdl_head_content, fdl_head_parse) */
/* The folder that holds refs of `kind`, for listing: "refs/heads" (BRANCH,
 * NONE) or "refs/tags" (TAG). */
const char *fdl_ref_dir(fdl_ref_kind kind);
/* The branch or tag name a ref spec starts from (the grammar
 * fdl_ref_resolve reads): "main", "refs/heads/main", "main:12", "main~2",
 * "main:3^" -> "main";
 * *len bytes from the returned pointer, which points into spec. NULL for
 * what starts from HEAD ("", "HEAD", "@", ":3", "HEAD:3", "HEAD~1") and for a
 * version id. A seq alone ("12") is returned as it stands: only the
 * lookup tells a seq from a name. */
const char *fdl_ref_spec_name(const char *spec, size_t *len);
/* fdl_key_classify for a repository known by its data folder alone (the
 * server, which opens files, not a repository; NULL: unknown). */
fdl_key_class fdl_key_classify_in(const char *data_dir, const char *key);

#endif
