/* Branches: list, create, delete. Every ref change is a compare-and-swap. */
#include "layout/layout.h"

#include <stdlib.h>
#include <string.h>

int fdl_branch_list(fdl_branch **out, size_t *count, fdl_repo *repo, fdl_error *err)
{
	*out = NULL;
	*count = 0;
	fdl_strlist keys = {0};
	char *head = NULL;
	int rc = fdl_store_list(repo->store, "refs/heads", &keys, err);
	if (!rc)
		rc = fdl_repo_head_branch(&head, repo, err);
	fdl_strlist_sort(&keys);
	fdl_branch *list = keys.len ? calloc(keys.len, sizeof *list) : NULL;
	if (!rc && keys.len && !list)
		rc = fdl_fail(err, FDL_ERROR, "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const char *name = keys.items[i] + strlen("refs/heads/");
		if (strlen(name) >= sizeof list[n].name || fdl_ref_name_check(name, NULL) != 0)
			continue; /* lock files, temp files, foreign names */
		bool exists = false;
		rc = fdl_ref_read(repo, keys.items[i], list[n].tip, &exists, NULL, err);
		if (!rc && exists) {
			snprintf(list[n].name, sizeof list[n].name, "%s", name);
			list[n].head = head && !strcmp(head, name);
			n++;
		}
	}
	free(head);
	fdl_strlist_free(&keys);
	if (rc) {
		free(list);
		return rc;
	}
	*out = list;
	*count = n;
	return 0;
}

int fdl_branch_create(fdl_repo *repo, const char *name, const char *start, fdl_error *err)
{
	char *key = NULL, id[FDL_ID_LEN + 1];
	fdl_version *v = NULL;
	int rc = fdl_ref_branch_key(&key, name, err);
	if (!rc)
		rc = fdl_ref_resolve(id, repo, start, err);
	if (!rc) /* the start must be a readable version */
		rc = fdl_version_read(&v, repo, id, err);
	fdl_version_free(v);
	if (!rc) {
		rc = fdl_ref_update(repo, key, id, NULL, err);
		if (rc == FDL_ECONFLICT)
			rc = fdl_fail(err, FDL_EEXISTS, "branch %s already exists", name);
	}
	free(key);
	return rc;
}

int fdl_branch_delete(fdl_repo *repo, const char *name, fdl_error *err)
{
	char *key = NULL, *head = NULL, id[FDL_ID_LEN + 1], etag[FDL_ETAG_MAX];
	bool exists = false;
	int rc = fdl_ref_branch_key(&key, name, err);
	if (!rc)
		rc = fdl_repo_head_branch(&head, repo, err);
	if (!rc && !strcmp(head, strncmp(name, "refs/heads/", 11) ? name : name + 11))
		rc = fdl_fail(err, FDL_EINVALID, "branch %s is the default branch (HEAD); refusing to delete it", name);
	if (!rc)
		rc = fdl_ref_read(repo, key, id, &exists, etag, err);
	if (!rc && !exists)
		rc = fdl_fail(err, FDL_ENOTFOUND, "no branch %s", name);
	if (!rc)
		rc = fdl_store_del_if_match(repo->store, key, etag, err);
	free(head);
	free(key);
	return rc;
}
