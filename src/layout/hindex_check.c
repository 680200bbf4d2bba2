/* The history index, checking: what fdl verify says about it and the packs fdl gc may
 * remove (hindex.h). */
#include "hindex_int.h"
#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- verify ------------------------------------------------------------------- */

#define finding fdl_finding_list_add

/* One entry against the version.json it copies. */
static int check_entry(fdl_finding_list *problems, fdl_repo *repo, const char *where, const fdl_hentry *h)
{
	fdl_hentry real;
	fdl_error e;
	int rc = 0;
	if (fdl__hix_entry_read(&real, repo, h->id, &e))
		return finding(problems, where, "names version %s (seq %lld), which cannot be read: %s", h->id,
			       (long long)h->seq, e.message);
	if (strcmp(real.sha256, h->sha256) || !json_equal(real.doc, h->doc) || real.seq != h->seq)
		rc = finding(problems, where,
			     "its entry for version %s (seq %lld) differs from versions/%s/version.json (the index was "
			     "edited or is damaged; readers check what they open, but its listing may be wrong: "
			     "delete history/ and commit, or run fdl gc)",
			     h->id, (long long)h->seq, h->id);
	fdl__hix_entry_clear(&real);
	return rc;
}

/* A pack's bytes must hash to its name. */
static int check_pack_bytes(fdl_finding_list *problems, fdl_repo *repo, const char *key, const char *name)
{
	fdl_buf b = {0};
	fdl_error e;
	char hex[65];
	int rc = 0;
	if (fdl_store_get(repo->store, key, FDL_META_MAX_BYTES, &b, NULL, &e) || fdl_sha256_mem(hex, b.data, b.len, &e))
		rc = finding(problems, key, "cannot be read: %s", e.message);
	else if (strncmp(hex, name, 64))
		rc = finding(problems, key, "has sha256 %s; a pack is named by the sha256 of its bytes (it was changed "
					    "after it was written)", hex);
	fdl_buf_free(&b);
	return rc;
}

/* Is `k` a pointer's key, history/heads/<branch>.json? */
static bool is_pointer_key(const char *k)
{
	size_t n = strlen(k);
	return !strncmp(k, "history/heads/", 14) && n >= 20 && !strcmp(k + n - 5, ".json");
}

/* The scan for unnamed packs, fdl verify's and fdl gc's: the keys of
 * `keys` under history/packs/ that `named` (sorted here) does not hold,
 * added to out. */
static int packs_unnamed(fdl_strlist *out, const fdl_strlist *keys, fdl_strlist *named, fdl_error *err)
{
	int rc = 0;
	fdl_strlist_sort(named);
	for (size_t i = 0; i < keys->len && !rc; i++)
		if (!strncmp(keys->items[i], "history/packs/", 14) && !fdl_strlist_has_sorted(named, keys->items[i]))
			rc = fdl_strlist_add(out, keys->items[i], err);
	return rc;
}

/* Each file of the index among `keys` (sorted), the packs its pointers
 * name added to `named`. */
static int check_keys(fdl_finding_list *problems, fdl_finding_list *warnings, fdl_repo *repo, const fdl_strlist *keys,
		      fdl_strlist *named, fdl_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < keys->len && !rc; i++) {
		const char *k = keys->items[i];
		size_t n = strlen(k);
		if (!strncmp(k, "history/packs/", 14)) {
			if (n != 14 + 70 || strcmp(k + n - 6, ".jsonl"))
				rc = finding(problems, k, "is not part of the history index (packs are <sha256>.jsonl)");
			continue;
		}
		if (!strcmp(k, "history/refs.json")) { /* the ref list (reflist.c) */
			rc = fdl_reflist_verify(problems, warnings, repo, err);
			continue;
		}
		if (!is_pointer_key(k)) {
			if (!strstr(k, ".lock"))
				rc = finding(problems, k, "is not part of the history index (history/heads/<branch>.json, "
							  "history/packs/<sha256>.jsonl, history/refs.json)");
			continue;
		}
		char *branch = strndup(k + 14, n - 14 - 5);
		hindex ix;
		if (!branch || (rc = fdl__hix_load(&ix, repo, branch, false, err))) {
			free(branch);
			break;
		}
		ix.whole = true; /* each entry is compared with its version.json */
		if (!ix.usable) {
			rc = finding(problems, k, "is not a usable history index (%s); readers ignore it and read "
						  "version.json files; the next commit on the branch rewrites it",
				     ix.why);
			fdl__hix_free(&ix);
			free(branch);
			continue;
		}
		char *ref_key = fdl_asprintf("refs/heads/%s", branch);
		char tip[FDL_ID_LEN + 1];
		bool exists = false;
		fdl_error e;
		if (ref_key && !fdl_ref_read(repo, ref_key, tip, &exists, NULL, &e)) {
			if (!exists)
				rc = finding(warnings, k, "indexes branch %s, which does not exist", branch);
			else if (strcmp(tip, ix.tip))
				rc = finding(warnings, k, "indexes %s (seq %lld) but branch %s is at %s: readers complete it "
							  "from version.json files; the next commit on the branch brings it "
							  "up to date",
					     ix.tip, (long long)ix.seq, branch, tip);
		}
		free(ref_key);
		for (size_t t = 0; t < ix.ntail && !rc; t++)
			rc = check_entry(problems, repo, k, &ix.tail[t]);
		for (size_t p = 0; p < ix.npacks && !rc; p++) {
			char *pk = fdl__hix_pack_key(ix.packs[p].name);
			rc = pk ? fdl_strlist_add(named, pk, err) : fdl_oom(err);
			if (!rc && !fdl__hix_pack_load(&ix, &ix.packs[p], repo))
				rc = finding(problems, k, "names pack %s (seqs %lld to %lld), which cannot be used: %s",
					     ix.packs[p].name, (long long)ix.packs[p].first, (long long)ix.packs[p].last,
					     ix.why);
			else if (!rc)
				rc = check_pack_bytes(problems, repo, pk, ix.packs[p].name);
			for (size_t q = 0; !rc && q < ix.packs[p].n; q++)
				rc = check_entry(problems, repo, pk ? pk : k, &ix.packs[p].e[q]);
			if (!rc && p + 1 < ix.npacks && ix.packs[p].n && fdl__hix_pack_load(&ix, &ix.packs[p + 1], repo) &&
			    !fdl__hix_entries_link(&ix.packs[p].e[ix.packs[p].n - 1], &ix.packs[p + 1].e[0]))
				rc = finding(problems, k, "packs %s and %s do not follow each other", ix.packs[p].name,
					     ix.packs[p + 1].name);
			free(pk);
		}
		fdl__hix_free(&ix);
		free(branch);
	}
	return rc;
}

int fdl_history_check(fdl_finding_list *problems, fdl_finding_list *warnings, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist keys = {0}, named = {0};
	int rc = fdl_store_list(repo->store, "history", &keys, err);
	if (rc) { /* no index, or a store that cannot be listed: nothing to say */
		fdl_strlist_free(&keys);
		return rc == FDL_ENOTFOUND || rc == FDL_EINVALID ? 0 : rc;
	}
	fdl_strlist_sort(&keys);
	rc = check_keys(problems, warnings, repo, &keys, &named, err);
	fdl_strlist unnamed = {0};
	if (!rc)
		rc = packs_unnamed(&unnamed, &keys, &named, err);
	for (size_t i = 0; i < unnamed.len && !rc; i++)
		if (strlen(unnamed.items[i]) == 84) /* a pack's name (any other is a problem above) */
			rc = finding(warnings, unnamed.items[i], "is named by no history index (left by an interrupted "
								 "writer; fdl gc removes it)");
	fdl_strlist_free(&unnamed);
	fdl_strlist_free(&named);
	fdl_strlist_free(&keys);
	return rc;
}

int fdl_history_check_named(fdl_finding_list *problems, fdl_finding_list *warnings, fdl_repo *repo,
			    const fdl_strlist *refs, fdl_error *err)
{
	fdl_strlist keys = {0}, named = {0};
	int rc = 0;
	for (size_t i = 0; i <= refs->len && !rc; i++) {
		fdl_ref_kind kind = FDL_REF_BRANCH;
		const char *name = i < refs->len ? fdl_ref_short(refs->items[i], &kind) : NULL;
		char *k = i == refs->len ? fdl_strdup("history/refs.json")
			  : kind == FDL_REF_BRANCH ? fdl_asprintf("history/heads/%s.json", name) : NULL;
		int64_t bytes;
		fdl_error e;
		if (!k && (i == refs->len || kind == FDL_REF_BRANCH))
			rc = fdl_oom(err);
		else if (k && fdl_store_head(repo->store, k, &bytes, &e) == 0) /* none: nothing to check */
			rc = fdl_strlist_add(&keys, k, err);
		free(k);
	}
	fdl_strlist_sort(&keys);
	if (!rc)
		rc = check_keys(problems, warnings, repo, &keys, &named, err);
	fdl_strlist_free(&named);
	fdl_strlist_free(&keys);
	return rc;
}

int fdl_history_unnamed_packs(fdl_strlist *out, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist keys = {0}, named = {0};
	int rc = fdl_store_list(repo->store, "history", &keys, err);
	if (rc) {
		fdl_strlist_free(&keys);
		return rc == FDL_ENOTFOUND || rc == FDL_EINVALID ? 0 : rc;
	}
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const char *k = keys.items[i];
		if (!is_pointer_key(k))
			continue;
		/* a pointer that cannot be read or parsed keeps everything */
		fdl_buf b = {0};
		json_t *doc = NULL;
		fdl_error e;
		if (fdl_store_get(repo->store, k, FDL_META_MAX_BYTES, &b, NULL, &e) ||
		    fdl_json_parse(&doc, b.data, b.len, k, &e)) {
			fdl_buf_free(&b);
			fdl_strlist_free(&keys);
			fdl_strlist_free(&named);
			return 0;
		}
		const json_t *packs = json_object_get(doc, "packs");
		for (size_t p = 0; p < json_array_size(packs) && !rc; p++) {
			const char *name = json_string_value(json_object_get(json_array_get(packs, p), "name"));
			char *pk = name ? fdl__hix_pack_key(name) : NULL;
			if (pk)
				rc = fdl_strlist_add(&named, pk, err);
			free(pk);
		}
		json_decref(doc);
		fdl_buf_free(&b);
	}
	if (!rc)
		rc = packs_unnamed(out, &keys, &named, err);
	fdl_strlist_free(&named);
	fdl_strlist_free(&keys);
	return rc;
}
