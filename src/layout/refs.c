/* HEAD, branches and tags. A ref file holds one version id and a newline;
 * HEAD is "ref: refs/heads/<branch>\n" (Git's syntax). */
#include "hindex.h"
#include "keys.h"

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
	if (fdl_ref_kind_of(branch) == FDL_REF_BRANCH)
		branch = fdl_ref_short(branch, NULL);
	int rc = fdl_ref_name_check(branch, err);
	if (rc)
		return fdl_error_prefix(err, "branch");
	*out = fdl_ref_key(FDL_REF_BRANCH, branch);
	return *out ? 0 : fdl_oom(err);
}

int fdl_refs_lock(fdl_store_lock *l, fdl_repo *repo, const char *command, fdl_error *err)
{
	return fdl_store_lock_take(l, repo->store, FDL_REFS_LOCK, "creating refs and expiring versions", command, err);
}

/* Whether ref `a` is a folder of ref `b` (a = "main", b = "main/geo"). */
static bool folder_of(const char *a, const char *b)
{
	size_t n = strlen(a);
	return !strncmp(a, b, n) && b[n] == '/';
}

/* A ref of the same kind whose name is a folder of `name`, or has `name`
 * as a folder: refs/heads/main and refs/heads/main/geo cannot both be files
 * of a folder (Git refuses them for that reason), so a bucket holds them
 * apart no better. Refused as the name taken, before anything is written. */
static int folder_free(fdl_repo *repo, const char *name, bool branch, fdl_error *err)
{
	fdl_ref_kind kind = branch ? FDL_REF_BRANCH : FDL_REF_TAG;
	const char *dir = fdl_ref_dir(kind), *what = branch ? "branch" : "tag";
	fdl_strlist keys = {0};
	int rc = fdl_store_list(repo->store, dir, &keys, err);
	fdl_strlist_sort(&keys);
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const char *other = keys.items[i] + strlen(dir) + 1;
		char id[FDL_ID_LEN + 1];
		bool exists = false;
		fdl_error e;
		if (fdl_ref_name_check(other, NULL) || !(folder_of(other, name) || folder_of(name, other)) ||
		    fdl_ref_read(repo, keys.items[i], id, &exists, NULL, &e) || !exists)
			continue; /* lock files, temp files, foreign names; refs elsewhere */
		rc = fdl_fail(err, FDL_EEXISTS,
			      "a %s %s exists (%s, version %s): %s %s cannot be made beside it, since one name would "
			      "be the other's folder; pick another name",
			      what, other, keys.items[i], id, what, name);
	}
	fdl_strlist_free(&keys);
	return rc;
}

int fdl_ref_name_free(fdl_repo *repo, const char *name, bool branch, fdl_error *err)
{
	if (fdl_ref_kind_of(name) == (branch ? FDL_REF_BRANCH : FDL_REF_TAG))
		name = fdl_ref_short(name, NULL);
	int frc = folder_free(repo, name, branch, err);
	if (frc)
		return frc;
	char *key = fdl_ref_key(branch ? FDL_REF_TAG : FDL_REF_BRANCH, name);
	char id[FDL_ID_LEN + 1];
	bool exists = false;
	int rc = key ? fdl_ref_read(repo, key, id, &exists, NULL, err) : fdl_oom(err);
	if (!rc && exists)
		rc = fdl_fail(err, FDL_EEXISTS,
			      "%s %s exists (%s, version %s): a branch and a tag never share a name, since the name "
			      "would read as the branch; pick another name",
			      branch ? "a tag" : "a branch", name, key, id);
	free(key);
	return rc;
}

int fdl_head_parse(char **branch, const char *data, size_t len, fdl_error *err)
{
	const char *prefix = "ref: " FDL_REFS_HEADS;
	size_t pl = strlen(prefix);
	while (len && (data[len - 1] == '\n' || data[len - 1] == '\r'))
		len--;
	if (len <= pl || strncmp(data, prefix, pl) != 0 || memchr(data, '\n', len) || memchr(data, '\0', len))
		return fdl_fail(err, FDL_EINVALID, "HEAD: expected 'ref: " FDL_REFS_HEADS "<branch>', found '%.*s'",
				(int)(len > 80 ? 80 : len), data);
	char *name = malloc(len - pl + 1);
	if (!name)
		return fdl_oom(err);
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

/* A branch or tag by name (a branch first, as Git does), or a full
 * "refs/..." key. *found false (rc 0) when neither exists. */
static int resolve_name(char out_id[FDL_ID_LEN + 1], bool *found, fdl_repo *repo, const char *spec, fdl_error *err)
{
	*found = false;
	const fdl_ref_kind kinds[] = {FDL_REF_BRANCH, FDL_REF_TAG};
	size_t refs = strlen(FDL_REFS_DIR "/");
	if (strncmp(spec, FDL_REFS_DIR "/", refs) == 0) {
		int rc = fdl_ref_name_check(spec + refs, err);
		return rc ? rc : fdl_ref_read(repo, spec, out_id, found, NULL, err);
	}
	int rc = fdl_ref_name_check(spec, err);
	for (size_t i = 0; !rc && !*found && i < 2; i++) {
		char *key = fdl_ref_key(kinds[i], spec);
		rc = key ? fdl_ref_read(repo, key, out_id, found, NULL, err) : fdl_oom(err);
		free(key);
	}
	return rc;
}

/* HEAD's branch tip; FDL_ENOTFOUND on an unborn branch. */
static int resolve_head(char out_id[FDL_ID_LEN + 1], fdl_repo *repo, fdl_error *err)
{
	char *branch = NULL;
	int rc = fdl_repo_head_branch(&branch, repo, err);
	char *key = rc ? NULL : fdl_ref_key(FDL_REF_BRANCH, branch);
	bool found = false;
	if (!rc)
		rc = key ? fdl_ref_read(repo, key, out_id, &found, NULL, err) : fdl_oom(err);
	if (!rc && !found)
		rc = fdl_fail(err, FDL_ENOTFOUND, "%s has no versions yet (HEAD names %s, which does not exist)",
			      repo->root, key);
	free(key);
	free(branch);
	return rc;
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0 || n > 18)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Walk the first-parent chain from `tip` down to the version with `seq`.
 * seq falls by one per step along a valid chain, so this ends; a gap or a
 * cycle ends it too. */
static int walk_to_seq(char id[FDL_ID_LEN + 1], fdl_repo *repo, const char *branch, const char *tip, long long seq,
		       const char *where, fdl_error *err)
{
	/* the history index answers in a few requests, checked against the
	 * version's own version.json; without it, walk */
	bool found = false;
	int rc = fdl_history_find_seq(id, &found, repo, branch, tip, seq, err);
	if (rc || found)
		return rc;
	memcpy(id, tip, FDL_ID_LEN + 1);
	for (bool at_tip = true;; at_tip = false) {
		fdl_version *v;
		if ((rc = fdl_version_read(&v, repo, id, err)))
			return rc;
		long long have = (long long)fdl_version_seq(v);
		const char *parent = fdl_version_parent(v, 0);
		if (have == seq) {
			fdl_version_free(v);
			return 0;
		}
		if (have < seq || !parent) {
			fdl_version_free(v);
			if (at_tip)
				return fdl_fail(err, FDL_ENOTFOUND, "%s has no version with seq %lld: its tip is seq %lld",
						where, seq, have);
			return fdl_fail(err, FDL_ENOTFOUND,
					"%s has no version with seq %lld: its first-parent chain goes from seq %lld to %s",
					where, seq, have, parent ? "a lower one" : "its first version");
		}
		memcpy(id, parent, FDL_ID_LEN + 1);
		fdl_version_free(v);
	}
}

/* Could `s` be the start of a version id? Lower-case hex and the hyphens
 * where an id has them, at least 4 characters (Git's shortest). */
static bool id_prefix_like(const char *s)
{
	size_t n = strlen(s);
	if (n < 4 || n >= FDL_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool hyphen = i == 8 || i == 13 || i == 18 || i == 23;
		char c = s[i];
		if (hyphen ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

/* The one version whose id starts with `prefix`, among the complete
 * versions (those with a version.json). */
static int resolve_prefix(char out_id[FDL_ID_LEN + 1], fdl_repo *repo, const char *prefix, fdl_error *err)
{
	fdl_strlist keys = {0};
	int rc = fdl_store_list(repo->store, FDL_VERSIONS_DIR, &keys, err);
	if (rc) {
		fdl_strlist_free(&keys);
		return fdl_error_prefix(err, "'%s' could be an abbreviated version id, but the versions cannot be "
					     "listed; give the whole id",
					prefix);
	}
	size_t n = strlen(prefix), matches = 0;
	char first[FDL_ID_LEN + 1] = "", second[FDL_ID_LEN + 1] = "";
	for (size_t i = 0; i < keys.len; i++) {
		char id[FDL_ID_LEN + 1];
		const char *rest = NULL;
		if (!fdl_version_key_parse(keys.items[i], id, &rest) || strncmp(id, prefix, n) != 0 ||
		    strcmp(rest, FDL_VERSION_JSON))
			continue;
		if (++matches == 1)
			memcpy(first, id, sizeof id);
		else if (matches == 2)
			memcpy(second, id, sizeof id);
	}
	fdl_strlist_free(&keys);
	if (matches == 1) {
		memcpy(out_id, first, FDL_ID_LEN + 1);
		return 0;
	}
	if (matches > 1)
		return fdl_fail(err, FDL_EAMBIGUOUS, "version id prefix '%s' is ambiguous: %zu versions start with it (%s, %s%s)",
				prefix, matches, first, second, matches > 2 ? ", ..." : "");
	char meant[300];
	fdl_ref_suggest(meant, sizeof meant, repo, prefix);
	return fdl_fail(err, FDL_ENOTFOUND, "no branch, tag or version '%s' in %s%s", prefix, repo->root, meant);
}

/* Everything but Git's ~N and ^N suffixes. */
static int resolve_base(char out_id[FDL_ID_LEN + 1], fdl_repo *repo, const char *spec, fdl_error *err)
{
	if (!spec || !strcmp(spec, "HEAD") || !strcmp(spec, "@"))
		return resolve_head(out_id, repo, err);
	if (!*spec)
		return fdl_fail(err, FDL_EINVALID, "an empty ref names no version (give a branch, tag, id or seq)");
	if (fdl_id_is_valid(spec)) {
		memcpy(out_id, spec, FDL_ID_LEN + 1);
		return 0;
	}
	if (strlen(spec) > 1024 || memchr(spec, '\n', strlen(spec)))
		return fdl_fail(err, FDL_EINVALID, "'%.40s...' is not a ref", spec);
	/* BRANCH:SEQ, or HEAD:SEQ */
	const char *colon = strrchr(spec, ':');
	if (colon && all_digits(colon + 1, strlen(colon + 1))) {
		char *name = strndup(spec, (size_t)(colon - spec));
		char tip[FDL_ID_LEN + 1];
		bool found = false;
		int rc = !name ? fdl_oom(err)
		       : !*name || !strcmp(name, "HEAD") ? (found = true, resolve_head(tip, repo, err))
							 : resolve_name(tip, &found, repo, name, err);
		if (!rc && !found) {
			char meant[300];
			fdl_ref_suggest(meant, sizeof meant, repo, name);
			rc = fdl_fail(err, FDL_ENOTFOUND, "no branch or tag '%s' in %s%s", name, repo->root, meant);
		}
		if (!rc)
			rc = walk_to_seq(out_id, repo, *name && strcmp(name, "HEAD") ? name : NULL, tip,
					 strtoll(colon + 1, NULL, 10), name, err);
		free(name);
		return rc;
	}
	if (colon)
		return fdl_fail(err, FDL_EINVALID, "'%s' is not a ref: after ':' comes a seq (digits), as in main:12",
				spec);
	/* a branch or a tag wins over a seq or an id prefix, as refs do in Git */
	bool found = false;
	fdl_error name_err = {0};
	int rc = resolve_name(out_id, &found, repo, spec, &name_err);
	if (!rc && found)
		return 0;
	if (rc && rc != FDL_EINVALID) {
		*err = name_err;
		return rc;
	}
	if (all_digits(spec, strlen(spec))) {
		char tip[FDL_ID_LEN + 1];
		if ((rc = resolve_head(tip, repo, err)))
			return rc;
		rc = walk_to_seq(out_id, repo, NULL, tip, strtoll(spec, NULL, 10), "HEAD's branch", err);
		if (rc != FDL_ENOTFOUND || !id_prefix_like(spec))
			return rc;
		fdl_error seq_err = *err;
		rc = resolve_prefix(out_id, repo, spec, err);
		if (rc == FDL_ENOTFOUND)
			*err = seq_err;
		return rc;
	}
	char lower[FDL_ID_LEN + 1];
	size_t n = strlen(spec);
	for (size_t i = 0; n < sizeof lower && i <= n; i++)
		lower[i] = (char)(spec[i] >= 'A' && spec[i] <= 'F' ? spec[i] - 'A' + 'a' : spec[i]);
	if (n < sizeof lower && id_prefix_like(lower))
		return resolve_prefix(out_id, repo, lower, err);
	if (rc) {
		*err = name_err;
		return rc;
	}
	char meant[300];
	fdl_ref_suggest(meant, sizeof meant, repo, spec);
	return fdl_fail(err, FDL_ENOTFOUND, "no branch, tag or version '%s' in %s%s", spec, repo->root, meant);
}

/* One step of a suffix: `~N` walks N first parents (through the history
 * index, as BRANCH:SEQ does: seq falls by one per first parent), `^N` takes
 * the Nth parent (`^` is `^1`, `^0` the version itself), as in Git. */
static int suffix_step(char id[FDL_ID_LEN + 1], fdl_repo *repo, const char *hint, char op, long long n,
		       const char *spec, fdl_error *err)
{
	if (n == 0)
		return 0;
	fdl_version *v;
	int rc = fdl_version_read(&v, repo, id, err);
	if (rc)
		return rc;
	long long seq = (long long)fdl_version_seq(v);
	const char *parent = fdl_version_parent(v, op == '^' ? (size_t)(n - 1) : 0);
	if (op == '^' || n == 1) {
		if (parent)
			memcpy(id, parent, FDL_ID_LEN + 1);
		else if (op == '^' && n > 1)
			rc = fdl_fail(err, FDL_ENOTFOUND, "%s: version %s (seq %lld) has no parent %lld", spec, id, seq,
				      n);
		else
			rc = fdl_fail(err, FDL_ENOTFOUND, "%s: version %s (seq %lld) has no parent: it is the first "
							   "of its history",
				      spec, id, seq);
		fdl_version_free(v);
		return rc;
	}
	fdl_version_free(v);
	if (n >= seq)
		return fdl_fail(err, FDL_ENOTFOUND, "%s: version %s is seq %lld, %lld first parents from its branch's "
						   "first version; ~%lld goes past it",
				spec, id, seq, seq - 1, n);
	char tip[FDL_ID_LEN + 1];
	memcpy(tip, id, sizeof tip);
	return walk_to_seq(id, repo, hint, tip, seq - n, spec, err);
}

int fdl_ref_resolve(char out_id[FDL_ID_LEN + 1], fdl_repo *repo, const char *spec, fdl_error *err)
{
	/* REF~N and REF^N, any number of them (main~2^, HEAD^^): ref names
	 * cannot hold '~' or '^', so the first one ends the base */
	size_t base_len = spec ? strcspn(spec, "~^") : 0;
	if (!spec || !spec[base_len])
		return resolve_base(out_id, repo, spec, err);
	if (strlen(spec) > 1024)
		return fdl_fail(err, FDL_EINVALID, "'%.40s...' is not a ref", spec);
	char *base = strndup(spec, base_len);
	if (!base)
		return fdl_oom(err);
	int rc = !*base ? fdl_fail(err, FDL_EINVALID, "'%s' is not a ref: '%c' follows a ref, as in main~1 or HEAD^",
				  spec, spec[0])
			: resolve_base(out_id, repo, base, err);
	size_t hint_len = 0;
	const char *name = rc ? NULL : fdl_ref_spec_name(base, &hint_len);
	char *hint = name ? strndup(name, hint_len) : NULL;
	for (const char *p = spec + base_len; !rc && *p;) {
		char op = *p++;
		if (op != '~' && op != '^') {
			rc = fdl_fail(err, FDL_EINVALID, "'%s' is not a ref: after a suffix comes ~N or ^N, as in main~2^",
				      spec);
			break;
		}
		size_t digits = strspn(p, "0123456789");
		long long n = 1;
		if (digits > 9) {
			rc = fdl_fail(err, FDL_EINVALID, "'%s': %.*s is too many steps back", spec, (int)digits, p);
			break;
		}
		if (digits)
			n = strtoll(p, NULL, 10);
		p += digits;
		rc = suffix_step(out_id, repo, hint, op, n, spec, err);
	}
	free(hint);
	free(base);
	return rc;
}
