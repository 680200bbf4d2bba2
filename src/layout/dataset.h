/* dataset.json: the publisher's description merged with the catalog. */
#ifndef FDL_DATASET_H
#define FDL_DATASET_H

#include "../util/json.h"

/* A working folder's description files, as its reader (work.c) found
 * them: the dataset file (dataset.yml, dataset.yaml or dataset.json; at
 * most one) and every <table>.table.yml / .table.yaml, sorted by name. Each
 * path is kept for messages. */
typedef struct fdl_desc_file {
	char *path;
	fdl_buf text;
} fdl_desc_file;
typedef struct fdl_desc_files {
	fdl_desc_file top; /* path NULL: no dataset file */
	fdl_desc_file *tables;
	size_t ntables;
} fdl_desc_files;
void fdl_desc_files_free(fdl_desc_files *f);
/* One sha256 over every description file (names and bytes): whether any
 * of them changed. */
int fdl_desc_files_sha256(char hex[65], const fdl_desc_files *f, fdl_error *err);

/* Build the dataset.json a commit writes: the working folder's description
 * files `files` (NULL: no folder, as for PostgreSQL), checked against the
 * format, merged with `catalog_tables` (fdl_catalog_tables_json). With no
 * description file (or no folder: PostgreSQL), the base version's
 * description `base` (its dataset.json, may be NULL) carries over; without
 * either, name and title are `default_name`. A table or column that
 * `known` (a dataset.json: the base's, and the one checkout wrote from;
 * may be NULL) described and the catalog has dropped since is dropped from
 * the description (so is everything the catalog lacks when the description is
 * the base's: carried over, or the dataset file checkout wrote, whose
 * sha256 is `written_sha256`, unedited); one the base never described is
 * refused, as the format says. A table or column the description names
 * as it was before a rename in `renames` follows it, with a warning naming
 * the file and line. Caller decrefs *out. */
typedef struct fdl_dataset_in {
	const fdl_desc_files *files;
	const json_t *catalog_tables;
	const char *default_name;
	const json_t *base, *known;
	const char *written_sha256;
	/* the schema changes since the version the description was written
	 * for (`renames_from`), oldest first: an array of version.json
	 * `changes` arrays; NULL: none */
	const json_t *renames;
	const char *renames_from;
	fdl_strlist *warnings; /* each rename followed, "FILE, line N: ..."; may be NULL */
} fdl_dataset_in;
int fdl_dataset_build(json_t **out, const fdl_dataset_in *in, fdl_error *err);

/* What people wrote of a dataset.json (not what the catalog added: rows,
 * types, nullable, a view's SQL, tables and fields with nothing written
 * about them). New reference; NULL when out of memory. */
json_t *fdl_dataset_user_part(const json_t *dataset);
/* `description` as block YAML after `header` (comment lines), appended to
 * out. */
int fdl_dataset_yaml(fdl_buf *out, const json_t *description, const char *header, fdl_error *err);

/* What a description changed from dataset.json `a` to `b` (either may be
 * NULL), people's part only (not rows or types): [{"field", "kind":
 * added|removed|changed, "table"?, "column"?}], the dataset's keys first
 * (licenses, title, ...), then each table's and column's that both have. */
int fdl_dataset_diff(json_t **out, const json_t *a, const json_t *b, fdl_error *err);

/* Check one description file's text (a dataset, or with `table` one
 * <table>.table.yml item) against the spec, without a catalog. */
int fdl_dataset_check_text(json_t **out, const char *data, size_t len, const char *source, int table, fdl_error *err);

#endif
