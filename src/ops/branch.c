/* Branches and tags: list, create, delete. Every ref change is a
 * compare-and-swap; a tag, once created, is never moved (delete it and
 * create it again, as Git wants with -f). A ref is created only on a live
 * version and never with the name of a ref of the other kind. */
#include "derived.h"
#include "../layout/keys.h"

#include <stdlib.h>
#include <string.h>

/* Every valid ref of `kind` (branches or tags), sorted, from the one
 * "every ref with its tip" (fdl_refs_all, read from refs/). */
static int list_refs(fdl_branch **out, size_t *count, fdl_repo *repo, fdl_ref_kind kind, fdl_error *err)
{
	*out = NULL;
	*count = 0;
	fdl_refs refs;
	int rc = fdl_refs_all(&refs, repo, true, err);
	fdl_branch *list = !rc && refs.names.len ? calloc(refs.names.len, sizeof *list) : NULL;
	if (!rc && refs.names.len && !list)
		rc = fdl_oom(err);
	size_t n = 0;
	for (size_t i = 0; i < refs.names.len && !rc; i++) {
		fdl_ref_kind k;
		const char *name = fdl_ref_short(refs.names.items[i], &k);
		if (k != kind || strlen(name) >= sizeof list[n].name)
			continue;
		snprintf(list[n].name, sizeof list[n].name, "%s", name);
		memcpy(list[n].tip, refs.ids[i], sizeof list[n].tip);
		list[n].head = kind == FDL_REF_BRANCH && refs.head && !strcmp(refs.head, name);
		n++;
	}
	fdl_refs_free(&refs);
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
	/* what derives from the ref first, so that running an interrupted
	 * create again ends the same; read back when the ref was not made */
	bool listed = !rc;
	if (listed)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_INTENT, .key = key, .id = id}, NULL);
	if (!rc) {
		rc = fdl_ref_update(repo, key, id, NULL, err);
		if (rc == FDL_ECONFLICT && !strstr(err->message, "locked"))
			rc = fdl_fail(err, FDL_EEXISTS, "%s %s already exists%s", kind, name,
				      branch ? " (fdl branch ROOT NAME START --force moves it)" : "");
	}
	fdl_store_lock_release(&lock);
	if (rc && listed)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_UNDONE, .key = key}, NULL);
	return rc;
}

/* Delete the ref `key` by compare-and-swap. */
static int delete_ref(fdl_repo *repo, const char *key, const char *kind, const char *name, fdl_error *err)
{
	char id[FDL_ID_LEN + 1], etag[FDL_ETAG_MAX];
	bool exists = false;
	int rc = fdl_ref_read(repo, key, id, &exists, etag, err);
	if (!rc && !exists)
		rc = fdl_fail(err, FDL_ENOTFOUND, "no %s %s", kind, name);
	/* what derives from it first: a branch without an index reads as
	 * before; read back if the ref stays */
	if (!rc)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_INTENT, .key = key}, NULL);
	if (!rc && (rc = fdl_store_del_if_match(repo->store, key, etag, err)))
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_UNDONE, .key = key}, NULL);
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
	if (!rc)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_REFS}, NULL);
	free(key);
	return rc;
}

int fdl_tag_delete(fdl_repo *repo, const char *name, fdl_error *err)
{
	char *key = NULL;
	int rc = tag_key(&key, name, err);
	if (!rc)
		rc = delete_ref(repo, key, "tag", name, err);
	if (!rc)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_REFS}, NULL);
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
	if (!rc)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_REFS}, NULL);
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
		rc = delete_ref(repo, key, "branch", name, err);
	if (!rc)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_REFS}, NULL);
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
	if (!rc && strcmp(old_tip, id)) {
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_INTENT, .key = key, .id = id}, NULL);
		rc = fdl_ref_update(repo, key, id, etag, err);
		if (rc == FDL_ECONFLICT && !strstr(err->message, "locked"))
			rc = fdl_fail(err, FDL_ECONFLICT, "branch %s moved while it was being set (it was at %s); "
				      "look at it again (fdl branch ROOT) and retry", name, old_tip);
		if (rc)
			fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_UNDONE, .key = key}, NULL);
	}
	fdl_store_lock_release(&lock);
	/* as after a commit, also when nothing moved (an interrupted run,
	 * again) */
	if (!rc)
		fdl_ref_moved(repo, &(fdl_ref_move){.what = FDL_MOVE_TIP, .key = key, .id = id}, NULL);
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
		rc = fdl_store_get(repo->store, FDL_HEAD_KEY, 4096, &b, etag, err);
	if (!rc && !(line = fdl_head_content(fdl_ref_short(key, NULL))))
		rc = fdl_oom(err);
	if (!rc && (b.len != strlen(line) || memcmp(b.data, line, b.len)))
		rc = fdl_store_put_if_match(repo->store, FDL_HEAD_KEY, line, strlen(line), etag, err);
	if (rc == FDL_ECONFLICT && !strstr(err->message, "locked"))
		rc = fdl_fail(err, FDL_ECONFLICT, "HEAD changed while it was being set; look at it again and retry");
	fdl_buf_free(&b);
	free(line);
	free(key);
	return rc;
}
