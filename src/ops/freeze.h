/* Freezing a working catalog (freeze.c): what commit publishes and what
 * describe prints, made the same way so they fail the same way. */
#ifndef FDL_FREEZE_H
#define FDL_FREEZE_H

#include "../catalog/catalog.h"
#include "work.h"
#include "../util/strmap.h"

typedef struct frozen {
	fdl_catalog_info info;
	json_t *files_json; /* freed by fdl_data_hashes_add once files_text holds it */
	char *files_text; /* files.json serialised as published (compact), by fdl_data_hashes_add */
	size_t files_len;
	/* the working folder's copy of its sha256 map (FDL_WORK_HASHES), by
	 * fdl_data_hashes_add; written once the version is published */
	fdl_buf hashes_text;
	json_t *dataset_json;
	json_t *changes; /* NULL for a first version */
	char *catalog_file; /* local temp path */
	bool same_snapshot; /* no snapshot since the base version */
	/* no base, and no snapshot since the catalog was made: an empty
	 * checkout nobody wrote to */
	bool untouched;
	bool described; /* WORK holds description files (dataset.yml, ...) */
	char desc_sha256[65]; /* fdl_desc_files_sha256 of them ("" when none) */
	fdl_version *base;    /* the base version, read once (NULL: a first version) */
	json_t *base_dataset; /* its dataset.json (NULL: it has none) */
	/* every data and delete file the frozen catalog references, at any of
	 * its snapshots (sorted; may repeat), with the sizes it records */
	fdl_strlist all_files;
	fdl_strmap all_sizes;
	/* for the committer: tables of mostly small files, a description that
	 * followed a rename ("FILE, line N: ...") */
	fdl_strlist warnings;
	/* the data files the version holds that are still in the working
	 * catalog's own folder (relative to it, sorted), with the sizes the
	 * catalog records: commit publishes them into the data folder */
	fdl_strlist staged;
	fdl_strmap staged_sizes;
	bool staged_kinds[2]; /* among them: a data file's row, a delete file's */
	fdl_duck *duck; /* the freeze's DuckDB, the working catalog attached raw as "fdl_work" */
	/* the commit writes the version's preview (fdl__preview_wanted, decided
	 * once here: DuckLake is loaded for it; the seam is told) */
	bool preview;
	/* what derives from the version, started beside the freeze's last
	 * write (its preview, held: the seam's FROZEN); commit moves and
	 * joins it (fdl_frozen_free does, at the latest) */
	struct fdl_derived_job *derived;
} frozen;

/* Freeze the working catalog's latest snapshot into tmpdir/ducklake.duckdb
 * and derive files.json, dataset.json and changes from it. A catalog with
 * no new snapshot since the base is frozen too (out->same_snapshot set):
 * its description may have changed, and a broken one must fail as it
 * would with new data. With `hash` (commit), files.json's sha256 of the
 * data files and its text too (fdl_data_hashes_add, hashes.h), made while
 * DuckDB writes the frozen file. */
int fdl_freeze(frozen *out, fdl_repo *repo, const fdl_work *w, const char *tmpdir, bool hash, fdl_error *err);
void fdl_frozen_free(frozen *f);
/* No snapshot since the base and the base's description: nothing to
 * publish (commit says so, exit 1). */
bool fdl_frozen_unchanged(const frozen *f);

#endif
