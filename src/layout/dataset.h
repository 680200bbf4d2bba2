/* dataset.json: the publisher's description merged with the catalog. */
#ifndef FDL_DATASET_H
#define FDL_DATASET_H

#include "../util/json.h"

/* Build the dataset.json a commit of `work_dir` writes: its dataset.yml /
 * dataset.yaml / dataset.json and *.table.yml files, checked against the
 * format, merged with `catalog_tables` (fdl_catalog_tables_json). With no
 * description file (or no folder: PostgreSQL), the base version's
 * description `base` (its dataset.json, may be NULL) carries over; without
 * either, name and title are `default_name`. A table or column that
 * `known` (a dataset.json: the base's, and the one checkout wrote from;
 * may be NULL) described and the catalog has dropped since is dropped from
 * the description (so is everything the catalog lacks when the description is
 * the base's: carried over, or the dataset file checkout wrote, whose
 * sha256 is `written_sha256`, unedited); one the base never described is
 * refused, as the format says. Caller decrefs *out. */
int fdl_dataset_build(json_t **out, const char *work_dir, const json_t *catalog_tables, const char *default_name,
		      const json_t *base, const json_t *known, const char *written_sha256, fdl_error *err);

/* What people wrote of a dataset.json (not what the catalog added: rows,
 * types, nullable, a view's SQL, tables and fields with nothing written
 * about them). New reference; NULL when out of memory. */
json_t *fdl_dataset_user_part(const json_t *dataset);
/* `description` as block YAML after `header` (comment lines), appended to
 * out. */
int fdl_dataset_yaml(fdl_buf *out, const json_t *description, const char *header, fdl_error *err);

/* Check one description file's text (a dataset, or with `table` one
 * <table>.table.yml item) against the spec, without a catalog. */
int fdl_dataset_check_text(json_t **out, const char *data, size_t len, const char *source, int table, fdl_error *err);

#endif
