/* fdl describe: the dataset.json the next commit would write, built by the
 * same freeze, so it fails exactly as commit would. Writes no version; it
 * renews the working catalog's record, as every command on it does. */
#include "freeze.h"

#include <stdlib.h>

int fdl_describe(char **out, const char *work, fdl_error *err)
{
	fdl_work w;
	int rc = fdl_work_load(&w, work, err);
	if (rc)
		return rc;
	fdl_repo *repo = NULL;
	char *tmpdir = NULL;
	frozen fz = {0};
	rc = fdl_repo_open(&repo, w.repository, err);
	/* a command on the working catalog: its record's lease is renewed */
	if (!rc)
		rc = fdl_work_record_touch(repo, &w, NULL, err);
	if (!rc)
		rc = fdl_tempdir(&tmpdir, "describe", err);
	if (!rc)
		rc = fdl_freeze(&fz, repo, &w, tmpdir, false, err);
	if (!rc)
		rc = fdl_json_dump(out, NULL, fz.dataset_json, err);
	if (tmpdir) {
		fdl_rm_rf(tmpdir);
		free(tmpdir);
	}
	fdl_frozen_free(&fz);
	fdl_repo_free(repo);
	fdl_work_free(&w);
	return rc;
}
