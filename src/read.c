/* Reading a version: the checks every reader path makes, and the ATTACH a
 * stock DuckDB runs (fdl-spec.md, "Reading"). */
#include "layout/layout.h"

#include <stdlib.h>
#include <string.h>

/* Refuse a version that left retention or was withdrawn. */
static int check_not_expired(fdl_repo *repo, const char *id, fdl_error *err)
{
	char *key = fdl_version_key(id, "expired.json");
	if (!key)
		return fdl_fail(err, FDL_ERROR, "out of memory");
	fdl_buf b = {0};
	fdl_error e2;
	int rc = fdl_store_get(repo->store, key, 1 << 20, &b, NULL, &e2);
	if (rc == FDL_ENOTFOUND) {
		rc = 0;
	} else if (rc) {
		rc = fdl_fail(err, e2.code, "%s", e2.message);
	} else {
		json_t *j = json_loadb(b.data, b.len, 0, NULL);
		const char *reason = json_string_value(json_object_get(j, "reason"));
		const char *when = json_string_value(json_object_get(j, "expired_at"));
		rc = fdl_fail(err, FDL_EEXPIRED, "version %s %s on %s; its catalog is gone (%s/%s)", id,
			      reason && !strcmp(reason, "withdrawn") ? "was withdrawn" : "left retention",
			      when ? when : "an unknown date", repo->root, key);
		json_decref(j);
	}
	fdl_buf_free(&b);
	free(key);
	return rc;
}

int fdl_attach_sql(char **out, fdl_repo *repo, const char *spec, const char *alias, fdl_error *err)
{
	char id[FDL_ID_LEN + 1];
	fdl_version *v = NULL;
	char *catalog = NULL;
	int rc = fdl_ref_resolve(id, repo, spec, err);
	if (!rc)
		rc = check_not_expired(repo, id, err);
	if (!rc)
		rc = fdl_version_read(&v, repo, id, err);
	if (!rc)
		rc = fdl_version_fetch_checked(&catalog, repo, v, fdl_version_catalog_path(v),
					       fdl_version_catalog_bytes(v), fdl_version_catalog_sha256(v), NULL, err);
	fdl_buf b = {0};
	char *target = catalog ? fdl_asprintf("ducklake:%s", catalog) : NULL;
	if (!rc)
		rc = target ? fdl_buf_printf(&b, err, "-- version %s (seq %lld) of %s\nLOAD ducklake;\nATTACH ", id,
					     (long long)fdl_version_seq(v), repo->root)
			    : fdl_fail(err, FDL_ERROR, "out of memory");
	if (!rc)
		rc = fdl_buf_sql_str(&b, target, err);
	if (!rc)
		rc = fdl_buf_printf(&b, err, " AS %s (READ_ONLY, DATA_PATH ", alias ? alias : "lake");
	if (!rc)
		rc = fdl_buf_sql_str(&b, repo->data_url, err);
	if (!rc)
		rc = fdl_buf_puts(&b, ", OVERRIDE_DATA_PATH true);\n", err);
	free(target);
	free(catalog);
	fdl_version_free(v);
	if (rc) {
		fdl_buf_free(&b);
		return rc;
	}
	*out = fdl_buf_detach(&b);
	return 0;
}
