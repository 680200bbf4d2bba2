/* HEAD, branches and tags. A ref file holds one version id and a newline;
 * HEAD is "ref: refs/heads/<branch>\n" (Git's syntax). */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

/* git check-ref-format rules, for one branch or tag name. */
int fdl_ref_name_check(const char *name, fdl_error *err)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0)
		return fdl_fail(err, FDL_EINVALID, "ref name is empty");
	if (n > 255)
		return fdl_fail(err, FDL_EINVALID, "ref name '%.40s...' is longer than 255 bytes", name);
	if (!strcmp(name, "@") || !strcmp(name, "HEAD"))
		return fdl_fail(err, FDL_EINVALID, "'%s' cannot be used as a ref name", name);
	if (name[0] == '/' || name[n - 1] == '/' || name[n - 1] == '.' || name[0] == '-')
		return fdl_fail(err, FDL_EINVALID,
				"ref name '%s' may not start with '/' or '-', nor end with '/' or '.'", name);
	if (strstr(name, "..") || strstr(name, "//") || strstr(name, "@{"))
		return fdl_fail(err, FDL_EINVALID, "ref name '%s' may not contain '..', '//' or '@{'", name);
	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f || strchr(" ~^:?*[\\", c))
			return fdl_fail(err, FDL_EINVALID,
					"ref name '%s' contains a character refs may not have (control, space, ~ ^ "
					": ? * [ \\)",
					name);
	}
	for (const char *seg = name; seg; seg = strchr(seg, '/') ? strchr(seg, '/') + 1 : NULL) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);
		if (seg[0] == '.')
			return fdl_fail(err, FDL_EINVALID, "ref name '%s': a component may not start with '.'",
					name);
		if (len >= 5 && strncmp(seg + len - 5, ".lock", 5) == 0)
			return fdl_fail(err, FDL_EINVALID, "ref name '%s': a component may not end with '.lock'",
					name);
	}
	return 0;
}

int fdl_ref_branch_key(char **out, const char *branch, fdl_error *err)
{
	if (strncmp(branch, "refs/heads/", 11) == 0)
		branch += 11;
	int rc = fdl_ref_name_check(branch, err);
	if (rc)
		return fdl_error_prefix(err, "branch");
	*out = fdl_asprintf("refs/heads/%s", branch);
	return *out ? 0 : fdl_fail(err, FDL_ERROR, "out of memory");
}

int fdl_head_parse(char **branch, const char *data, size_t len, fdl_error *err)
{
	const char *prefix = "ref: refs/heads/";
	size_t pl = strlen(prefix);
	while (len && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		len--;
	if (len <= pl || strncmp(data, prefix, pl) != 0 || memchr(data, '\n', len) || memchr(data, '\0', len))
		return fdl_fail(err, FDL_EINVALID, "HEAD: expected 'ref: refs/heads/<branch>', found '%.*s'",
				(int)(len > 80 ? 80 : len), data);
	char *name = malloc(len - pl + 1);
	if (!name)
		return fdl_fail(err, FDL_ERROR, "out of memory");
	memcpy(name, data + pl, len - pl);
	name[len - pl] = '\0';
	int rc = fdl_ref_name_check(name, err);
	if (rc) {
		free(name);
		return fdl_error_prefix(err, "HEAD");
	}
	*branch = name;
	return 0;
}

int fdl_repo_head_branch(char **out, fdl_repo *repo, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_store_get(repo->store, "HEAD", 4096, &b, NULL, err);
	if (rc == FDL_ENOTFOUND)
		rc = fdl_fail(err, FDL_EINVALID, "%s/HEAD is missing", repo->root);
	if (!rc)
		rc = fdl_head_parse(out, b.data, b.len, err);
	fdl_buf_free(&b);
	return rc;
}

int fdl_ref_read(fdl_repo *repo, const char *key, char id[FDL_ID_LEN + 1], bool *exists,
		 char etag[FDL_ETAG_MAX], fdl_error *err)
{
	fdl_buf b = {0};
	*exists = false;
	int rc = fdl_store_get(repo->store, key, 4096, &b, etag, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		return 0;
	}
	if (rc)
		return rc;
	size_t len = b.len;
	while (len && (b.data[len - 1] == '\n' || b.data[len - 1] == '\r'))
		len--;
	if (len != FDL_ID_LEN) {
		rc = fdl_fail(err, FDL_EINVALID, "%s: expected a version id and a newline, found %zu bytes", key,
			      b.len);
	} else {
		memcpy(id, b.data, FDL_ID_LEN);
		id[FDL_ID_LEN] = '\0';
		if (!fdl_id_is_valid(id))
			rc = fdl_fail(err, FDL_EINVALID, "%s: '%s' is not a version id (lower-case UUID)", key, id);
		else
			*exists = true;
	}
	fdl_buf_free(&b);
	return rc;
}

int fdl_ref_update(fdl_repo *repo, const char *key, const char *new_id, const char *old_etag, fdl_error *err)
{
	char line[FDL_ID_LEN + 2];
	snprintf(line, sizeof line, "%s\n", new_id);
	return fdl_store_put_if_match(repo->store, key, line, strlen(line), old_etag, err);
}

int fdl_ref_resolve(char out_id[FDL_ID_LEN + 1], fdl_repo *repo, const char *spec, fdl_error *err)
{
	int rc = 0;
	if (spec && fdl_id_is_valid(spec)) {
		memcpy(out_id, spec, FDL_ID_LEN + 1);
		return 0;
	}
	char *key = NULL;
	if (!spec || !strcmp(spec, "HEAD")) {
		char *branch;
		if ((rc = fdl_repo_head_branch(&branch, repo, err)))
			return rc;
		key = fdl_asprintf("refs/heads/%s", branch);
		free(branch);
	} else if (strncmp(spec, "refs/", 5) == 0) {
		if ((rc = fdl_ref_name_check(spec + 5, err)))
			return rc;
		key = fdl_strdup(spec);
	} else {
		if ((rc = fdl_ref_name_check(spec, err)))
			return rc;
		/* A branch first, then a tag, as Git does. */
		char *heads = fdl_asprintf("refs/heads/%s", spec);
		bool exists = false;
		if (!heads)
			return fdl_fail(err, FDL_ERROR, "out of memory");
		rc = fdl_ref_read(repo, heads, out_id, &exists, NULL, err);
		free(heads);
		if (rc || exists)
			return rc;
		key = fdl_asprintf("refs/tags/%s", spec);
	}
	if (!key)
		return fdl_fail(err, FDL_ERROR, "out of memory");
	bool exists = false;
	rc = fdl_ref_read(repo, key, out_id, &exists, NULL, err);
	if (!rc && !exists) {
		if (!spec || !strcmp(spec, "HEAD") || strncmp(key, "refs/heads/", 11) == 0)
			rc = fdl_fail(err, FDL_ENOTFOUND, "%s has no versions yet (%s does not exist)", repo->root,
				      key);
		else
			rc = fdl_fail(err, FDL_ENOTFOUND, "no branch, tag or version id '%s' in %s", spec,
				      repo->root);
	}
	free(key);
	return rc;
}
