/* dataset.json: the publisher's description merged with the catalog. */
#ifndef FDL_DATASET_H
#define FDL_DATASET_H

#include "../util/json.h"

/* Build the dataset.json a commit of `work_dir` writes: its dataset.yml /
 * dataset.yaml / dataset.json and *.table.yml files, checked against the
 * spec, merged with `catalog_tables` (fdl_catalog_tables_json). Without a
 * description, name and title are `default_name`. Caller decrefs *out. */
int fdl_dataset_build(json_t **out, const char *work_dir, const json_t *catalog_tables, const char *default_name,
		      fdl_error *err);

/* Check one description file's text (a dataset, or with `table` one
 * <table>.table.yml item) against the spec, without a catalog. */
int fdl_dataset_check_text(json_t **out, const char *data, size_t len, const char *source, int table, fdl_error *err);

#endif
