/* fdl commit --compact: the working catalog's small data files merged by
 * DuckLake (ducklake_merge_adjacent_files) before the freeze, in a new
 * snapshot of the working catalog. The files merged stay: older versions
 * read them (gc deletes what no live version references). */
#include "duck.h"

#include <stdlib.h>
#include <string.h>

int fdl_catalog_compact(fdl_duck *d, fdl_cat_kind kind, const char *catalog, const char *data_path,
			int64_t *merged, fdl_error *err)
{
	*merged = 0;
	/* the options of the working catalog's own ATTACH (fdl_catalog_attach_script) */
	const char *rest = kind == FDL_CAT_POSTGRES
				   ? ", OVERRIDE_DATA_PATH true, DATA_INLINING_ROW_LIMIT 0"
				   : ", OVERRIDE_DATA_PATH true, META_TYPE 'sqlite', DATA_INLINING_ROW_LIMIT 0, "
				     "META_JOURNAL_MODE 'WAL', BUSY_TIMEOUT 5000";
	int rc = fdl_attach_run(d, kind == FDL_CAT_POSTGRES ? "ducklake:postgres:" : "ducklake:", catalog, "fdl_compact",
				"", data_path, rest, err);
	if (!rc)
		rc = fdl_duck_int(d, merged, 0,
				  "SELECT coalesce(sum(files_processed), 0) FROM ducklake_merge_adjacent_files('fdl_compact')",
				  err);
	if (!rc)
		rc = fdl_catalog_detach(d, "fdl_compact", err);
	if (rc)
		fdl_error_prefix(err, "merging the working catalog's small files (ducklake_merge_adjacent_files)");
	return rc;
}
