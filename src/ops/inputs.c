/* version.json `inputs`: the source files a version was built from, each
 * hashed by streaming it (a local file, or an http(s) URL through the store layer),
 * whatever its size. */
#include "inputs.h"

#include "../store/store.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int fdl_input_record(json_t **out, const char *spec, fdl_error *err)
{
	const char *eq = strchr(spec, '=');
	if (!eq || eq == spec || !eq[1])
		return fdl_fail(err, FDL_EINVALID, "--input '%s': expected SOURCE_ID=FILE_OR_URL", spec);
	char *id = strndup(spec, (size_t)(eq - spec));
	const char *where = eq + 1;
	char hex[65], when[32];
	char *url = NULL;
	int rc = id ? 0 : fdl_oom(err);
	if (!rc && (!strncmp(where, "http://", 7) || !strncmp(where, "https://", 8))) {
		rc = fdl_url_sha256(hex, NULL, where, err);
		if (rc)
			fdl_error_prefix(err, "input");
		if (!rc)
			rc = fdl_time_now_iso(when, err);
		url = fdl_strdup(where);
	} else if (!rc) {
		char *abs = NULL;
		const char *path = !strncmp(where, "file://", 7) ? where + 7 : where;
		int64_t bytes;
		struct stat st;
		rc = fdl_path_absolute(&abs, path, err);
		if (!rc)
			rc = fdl_sha256_file(hex, &bytes, abs, err);
		if (rc == FDL_ENOTFOUND)
			rc = fdl_fail(err, FDL_ENOTFOUND, "--input %s: no such file %s", id, abs);
		/* a local file was retrieved when it was last written */
		if (!rc && stat(abs, &st) == 0) {
			struct tm tm;
			gmtime_r(&st.st_mtime, &tm);
			strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
		}
		if (!rc)
			url = fdl_asprintf("file://%s", abs);
		free(abs);
	}
	if (!rc) {
		*out = json_pack("{s:s, s:s, s:s, s:s}", "source_id", id, "sha256", hex, "retrieved_at", when, "url",
				 url ? url : "");
		if (!*out)
			rc = fdl_oom(err);
	}
	free(id);
	free(url);
	return rc;
}
