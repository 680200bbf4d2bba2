/* version.json `inputs`: the source files a version was built from, each
 * hashed by streaming it (a local file, or an http(s) URL through libcurl),
 * whatever its size. */
#include "inputs.h"

#include <curl/curl.h>
#include "../store/lazy_curl.h"
#include "../util/dynlib.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct fetch {
	fdl_sha256 *h;
	fdl_error *err;
	int rc;
} fetch;

static size_t on_data(char *p, size_t size, size_t n, void *user)
{
	fetch *f = user;
	if (fdl_sha256_update(f->h, p, size * n, f->err)) {
		f->rc = FDL_ERROR;
		return 0;
	}
	return size * n;
}

static int hash_url(char hex[65], const char *url, fdl_error *err)
{
	if (fdl_curl_load(err))
		return FDL_ERROR;
	CURL *c = curl_easy_init();
	if (!c)
		return fdl_fail(err, FDL_ERROR, "libcurl: cannot start a transfer");
	fetch f = {NULL, err, 0};
	int rc = fdl_sha256_new(&f.h, err);
	char curl_err[CURL_ERROR_SIZE] = "";
	if (!rc) {
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L); /* a server that trickles is given up on */
		curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &f);
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
		CURLcode cc = curl_easy_perform(c);
		if (f.rc)
			rc = f.rc;
		else if (cc != CURLE_OK)
			rc = fdl_fail(err, FDL_EIO, "input %s: %s", url, curl_err[0] ? curl_err : curl_easy_strerror(cc));
	}
	if (!rc)
		rc = fdl_sha256_final(f.h, hex, err);
	fdl_sha256_free(f.h);
	curl_easy_cleanup(c);
	return rc;
}

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
		rc = hash_url(hex, where, err);
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
