/* Branches and tags: list, create, delete. Every ref change is a
 * compare-and-swap; a tag, once created, is never moved (delete it and
 * create it again, as Git wants with -f). A ref is created only on a live
 * version and never with the name of a ref of the other kind. */
#include "iceberg.h"
#include "../layout/hindex.h"
#include "../layout/keys.h"

#include <stdlib.h>
#include <string.h>

/* Every valid ref of `kind` (branches or tags), sorted. */
static int list_refs(fdl_branch **out, size_t *count, fdl_repo *repo, fdl_ref_kind kind, fdl_error *err)
{
	*out = NULL;
	*count = 0;
	fdl_strlist keys = {0};
	char *head = NULL;
	const char *dir = fdl_ref_dir(kind);
	bool heads = kind == FDL_REF_BRANCH;
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
	return list_refs(out, count, repo, FDL_REF_BRANCH, err);
}

int fdl_tag_list(fdl_tag **out, size_t *count, fdl_repo *repo, fdl_error *err)
{
	fdl_branch *list = NULL;
	int rc = list_refs(&list, count, repo, FDL_REF_TAG, err);
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
	if (fdl_ref_kind_of(name) == FDL_REF_TAG)
		name = fdl_ref_short(name, NULL);
	if (fdl_ref_name_check(name, err))
		return fdl_error_prefix(err, "tag");
	*out = fdl_ref_key(FDL_REF_TAG, name);
	return *out ? 0 : fdl_oom(err);
}

/* A branch's name as given, with or without its refs/heads/ prefix. */
static const char *branch_name(const char *name)
{
	return fdl_ref_kind_of(name) == FDL_REF_BRANCH ? fdl_ref_short(name, NULL) : name;
}

/* A new branch or tag may not read as something else: all digits would
 * hide a seq (`fdl show ROOT 3`), a version id the version itself. */
static int name_not_a_version(const char *kind, const char *name, fdl_error *err)
{
	const char *n = fdl_ref_short(name, NULL);
	size_t digits = strspn(n, "0123456789");
	if (*n && !n[digits])
		return fdl_fail(err, FDL_EINVALID,
				"%s name '%s' is all digits: it would hide seq %s of HEAD's branch (fdl show ROOT %s); "
				"give it a name such as v%s",
				kind, n, n, n, n);
	if (fdl_id_is_valid(n))
		return fdl_fail(err, FDL_EINVALID, "%s name '%s' is a version id: the id names the version, not the %s",
				kind, n, kind);
	return 0;
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
	/* the ref list too, and read back from refs/ when the ref was not made */
	bool listed = !rc && fdl_reflist_set(repo, key, id, &ierr) == 0;
	if (!rc) {
		rc = fdl_ref_update(repo, key, id, NULL, err);
		if (rc == FDL_ECONFLICT && !strstr(err->message, "locked"))
			rc = fdl_fail(err, FDL_EEXISTS, "%s %s already exists%s", kind, name,
				      branch ? " (fdl branch ROOT NAME START --force moves it)" : "");
	}
	fdl_store_lock_release(&lock);
	if (rc && listed)
		fdl_reflist_note(repo, &key, 1, &ierr);
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
	if (!rc) /* and its line in the ref list (read back if the ref stays) */
		fdl_reflist_set(repo, key, NULL, &ierr);
	if (!rc && (rc = fdl_store_del_if_match(repo->store, key, etag, err)))
		fdl_reflist_note(repo, &key, 1, &ierr);
	return rc;
}

int fdl_tag_create(fdl_repo *repo, const char *name, const char *target, fdl_error *err)
{
	char *key = NULL;
	int rc = tag_key(&key, name, err);
	if (!rc)
		rc = name_not_a_version("tag", name, err);
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
		rc = name_not_a_version("branch", name, err);
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
	if (!rc && !strcmp(head, branch_name(name)))
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

int fdl_branch_set(char old_tip[FDL_ID_LEN + 1], fdl_repo *repo, const char *name, const char *start, fdl_error *err)
{
	char *key = NULL, id[FDL_ID_LEN + 1], etag[FDL_ETAG_MAX] = "";
	bool exists = false;
	fdl_version *v = NULL;
	old_tip[0] = '\0';
	int rc = fdl_ref_branch_key(&key, name, err);
	if (!rc)
		rc = fdl_ref_resolve(id, repo, start, err);
	if (!rc) /* the start must be a readable version */
		rc = fdl_version_read(&v, repo, id, err);
	fdl_version_free(v);
	if (!rc)
		rc = fdl_ref_read(repo, key, old_tip, &exists, etag, err);
	if (!rc && !exists) {
		free(key);
		return fdl_branch_create(repo, name, id, err);
	}
	/* under the refs lock, as a new ref: the version is live when the
	 * branch is moved to it, and an expiry then sees the branch there */
	fdl_store_lock lock = {.file.fd = -1};
	if (!rc)
		rc = fdl_refs_lock(&lock, repo, "fdl branch --force", err);
	if (!rc && (rc = fdl_version_check_live(repo, id, err)) == FDL_EEXPIRED)
		fdl_error_prefix(err, "branch %s not moved", name);
	fdl_error ierr;
	if (!rc && strcmp(old_tip, id)) {
		fdl_reflist_set(repo, key, id, &ierr); /* before, as for a new ref */
		rc = fdl_ref_update(repo, key, id, etag, err);
		if (rc == FDL_ECONFLICT && !strstr(err->message, "locked"))
			rc = fdl_fail(err, FDL_ECONFLICT, "branch %s moved while it was being set (it was at %s); "
				      "look at it again (fdl branch ROOT) and retry", name, old_tip);
		if (rc)
			fdl_reflist_note(repo, (const char *const *)&key, 1, &ierr);
	}
	fdl_store_lock_release(&lock);
	/* derived: readers lose speed only when these fail; also when nothing
	 * moved (an interrupted run, again): the history index, and the
	 * Iceberg view of the new tip, as after a commit */
	const char *shortname = branch_name(name);
	if (!rc)
		fdl_history_update(repo, shortname, FDL_HISTORY_WALK_MAX, &ierr);
	if (!rc)
		fdl_iceberg_after_commit(repo, shortname, id, &ierr);
	free(key);
	return rc;
}

int fdl_repo_head_set(fdl_repo *repo, const char *branch, fdl_error *err)
{
	char *key = NULL, *line = NULL, id[FDL_ID_LEN + 1], etag[FDL_ETAG_MAX] = "";
	bool exists = false;
	fdl_buf b = {0};
	int rc = fdl_ref_branch_key(&key, branch, err);
	if (!rc)
		rc = fdl_ref_read(repo, key, id, &exists, NULL, err);
	if (!rc && !exists)
		rc = fdl_fail(err, FDL_ENOTFOUND, "no branch %s in %s: HEAD names a branch with a version", branch,
			      repo->root);
	if (!rc)
		rc = fdl_store_get(repo->store, "HEAD", 4096, &b, etag, err);
	if (!rc && !(line = fdl_asprintf("ref: %s\n", key)))
		rc = fdl_oom(err);
	if (!rc && (b.len != strlen(line) || memcmp(b.data, line, b.len)))
		rc = fdl_store_put_if_match(repo->store, "HEAD", line, strlen(line), etag, err);
	if (rc == FDL_ECONFLICT && !strstr(err->message, "locked"))
		rc = fdl_fail(err, FDL_ECONFLICT, "HEAD changed while it was being set; look at it again and retry");
	fdl_buf_free(&b);
	free(line);
	free(key);
	return rc;
}
