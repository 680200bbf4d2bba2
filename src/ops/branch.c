/* Branches and tags: list, create, delete. Every ref change is a
 * compare-and-swap; a tag, once created, is never moved (delete it and
 * create it again, as Git wants with -f). A ref is created only on a live
 * version and never with the name of a ref of the other kind. */
#include "iceberg.h"
#include "../layout/hindex.h"
#include "../layout/layout.h"

#include <stdlib.h>
#include <string.h>

/* Every valid ref under `dir` ("refs/heads" or "refs/tags"), sorted. */
static int list_refs(fdl_branch **out, size_t *count, fdl_repo *repo, const char *dir, fdl_error *err)
{
	*out = NULL;
	*count = 0;
	fdl_strlist keys = {0};
	char *head = NULL;
	bool heads = !strcmp(dir, "refs/heads");
	int rc = fdl_store_list(repo->store, dir, &keys, err);
	if (!rc && heads)
		rc = fdl_repo_head_branch(&head, repo, err);
	fdl_strlist_sort(&keys);
	fdl_branch *list = keys.len ? calloc(keys.len, sizeof *list) : NULL;
	if (!rc && keys.len && !list)
		rc = fdl_oom(err);
	size_t n = 0;
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const char *name = keys.items[i] + strlen(dir) + 1;
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

int fdl_branch_list(fdl_branch **out, size_t *count, fdl_repo *repo, fdl_error *err)
{
	return list_refs(out, count, repo, "refs/heads", err);
}

int fdl_tag_list(fdl_tag **out, size_t *count, fdl_repo *repo, fdl_error *err)
{
	fdl_branch *list = NULL;
	int rc = list_refs(&list, count, repo, "refs/tags", err);
	fdl_tag *tags = rc || !*count ? NULL : calloc(*count, sizeof *tags);
	if (!rc && *count && !tags)
		rc = fdl_oom(err);
	for (size_t i = 0; !rc && i < *count; i++) {
		memcpy(tags[i].name, list[i].name, sizeof tags[i].name);
		memcpy(tags[i].target, list[i].tip, sizeof tags[i].target);
	}
	free(list);
	*out = rc ? NULL : tags;
	if (rc)
		*count = 0;
	return rc;
}

static int tag_key(char **out, const char *name, fdl_error *err)
{
	if (strncmp(name, "refs/tags/", 10) == 0)
		name += 10;
	if (fdl_ref_name_check(name, err))
		return fdl_error_prefix(err, "tag");
	*out = fdl_asprintf("refs/tags/%s", name);
	return *out ? 0 : fdl_oom(err);
}

/* Create the ref `key` at `start`, only if it does not exist, no ref of
 * the other kind has its name, and the version is live: checked and written
 * under the refs lock, which an expiry re-reads the refs under. */
static int create_ref(fdl_repo *repo, const char *key, const char *kind, const char *name, const char *start,
		      bool branch, fdl_error *err)
{
	char id[FDL_ID_LEN + 1];
	fdl_version *v = NULL;
	int rc = fdl_ref_resolve(id, repo, start, err);
	if (!rc) /* the start must be a readable version */
		rc = fdl_version_read(&v, repo, id, err);
	fdl_version_free(v);
	fdl_store_lock lock = {.file.fd = -1};
	if (!rc)
		rc = fdl_refs_lock(&lock, repo, branch ? "fdl branch" : "fdl tag", err);
	if (!rc)
		rc = fdl_ref_name_free(repo, name, branch, err);
	if (!rc && (rc = fdl_version_check_live(repo, id, err)) == FDL_EEXPIRED)
		fdl_error_prefix(err, "%s %s not created", kind, name);
	fdl_error ierr;
	/* a branch's history index first (derived: its failure costs readers
	 * speed only), so that running an interrupted create again ends the same */
	if (!rc && branch)
		fdl_history_prepare(repo, name, id, &ierr);
	if (!rc) {
		rc = fdl_ref_update(repo, key, id, NULL, err);
		if (rc == FDL_ECONFLICT && !strstr(err->message, "locked"))
			rc = fdl_fail(err, FDL_EEXISTS, "%s %s already exists", kind, name);
	}
	fdl_store_lock_release(&lock);
	return rc;
}

/* Delete the ref `key` by compare-and-swap. */
static int delete_ref(fdl_repo *repo, const char *key, const char *kind, const char *name, bool branch,
		      fdl_error *err)
{
	char id[FDL_ID_LEN + 1], etag[FDL_ETAG_MAX];
	bool exists = false;
	int rc = fdl_ref_read(repo, key, id, &exists, etag, err);
	if (!rc && !exists)
		rc = fdl_fail(err, FDL_ENOTFOUND, "no %s %s", kind, name);
	fdl_error ierr;
	if (!rc && branch) /* its index first: a branch without one reads as before */
		fdl_history_remove(repo, name, &ierr);
	if (!rc)
		rc = fdl_store_del_if_match(repo->store, key, etag, err);
	return rc;
}

int fdl_tag_create(fdl_repo *repo, const char *name, const char *target, fdl_error *err)
{
	char *key = NULL;
	int rc = tag_key(&key, name, err);
	if (!rc)
		rc = create_ref(repo, key, "tag", name, target, false, err);
	fdl_error ierr; /* derived: the tips' Iceberg views carry the tags */
	if (!rc)
		fdl_iceberg_after_refs(repo, &ierr);
	free(key);
	return rc;
}

int fdl_tag_delete(fdl_repo *repo, const char *name, fdl_error *err)
{
	char *key = NULL;
	int rc = tag_key(&key, name, err);
	if (!rc)
		rc = delete_ref(repo, key, "tag", name, false, err);
	fdl_error ierr;
	if (!rc)
		fdl_iceberg_after_refs(repo, &ierr);
	free(key);
	return rc;
}

int fdl_branch_create(fdl_repo *repo, const char *name, const char *start, fdl_error *err)
{
	char *key = NULL;
	int rc = fdl_ref_branch_key(&key, name, err);
	if (!rc)
		rc = create_ref(repo, key, "branch", name, start, true, err);
	fdl_error ierr; /* derived: a branch is a namespace of the Iceberg catalog */
	if (!rc)
		fdl_iceberg_after_refs(repo, &ierr);
	free(key);
	return rc;
}

int fdl_branch_delete(fdl_repo *repo, const char *name, fdl_error *err)
{
	char *key = NULL, *head = NULL;
	int rc = fdl_ref_branch_key(&key, name, err);
	if (!rc)
		rc = fdl_repo_head_branch(&head, repo, err);
	if (!rc && !strcmp(head, strncmp(name, "refs/heads/", 11) ? name : name + 11))
		rc = fdl_fail(err, FDL_EINVALID, "branch %s is the default branch (HEAD); refusing to delete it", name);
	if (!rc)
		rc = delete_ref(repo, key, "branch", name, true, err);
	fdl_error ierr;
	if (!rc)
		fdl_iceberg_after_refs(repo, &ierr);
	free(head);
	free(key);
	return rc;
}
