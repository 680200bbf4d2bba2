/* fdl verify's default depth for one version (docs/decisions.md, section
 * fdl verify): files.json read once and proven by version.json's sha256,
 * then the version's data from it alone, as bytes and hashes can prove it:
 * each live file of its recorded size, each file of its sha256 map with
 * that sha256 (each data file hashed once a run, however many versions
 * share it); expired.json field by field. Findings in the words the deep
 * check (verify.c) uses. */
#include "hashes.h"
#include "report.h"
#include "verify.h"
#include "../layout/files_scan.h"
#include "../layout/keys.h"
#include "../layout/layout.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct sink {
	fdl_verify_report *out;
	bool oom;
	fdl_hash_cache *hashes;
} sink;

static void problem(sink *k, const char *where, const char *fmt, ...) FDL_PRINTF(3, 4);
static void problem(sink *k, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fdl_error e;
	if (fdl_findings_addv(&k->out->problems, &k->out->problem_count, where, fmt, ap, &e))
		k->oom = true;
	va_end(ap);
}

/* files.json read once, into memory: its bytes and sha256 against
 * version.json's record (`ref`), then its data files read from the text
 * (fdl_files_scan_text; jansson's parse where the text is not plain).
 * False when it is absent (a problem unless expired), not the recorded
 * bytes, or not JSON. */
static bool files_checked(sink *k, fdl_repo *repo, const vdir *d, const json_t *ref, bool expired,
			  fdl_files_scan *scan)
{
	const char *path = json_string_value(json_object_get(ref, "path"));
	const char *sha = json_string_value(json_object_get(ref, "sha256"));
	int64_t bytes = (int64_t)json_integer_value(json_object_get(ref, "bytes"));
	char *key = path ? fdl_version_key(d->id, path) : NULL;
	fdl_buf b = {0};
	json_t *doc = NULL;
	char hex[65];
	fdl_error e;
	bool ok = false, plain = false;
	if (!key)
		problem(k, d->id, "out of memory");
	else if (!fdl_vdir_has(d, path)) {
		if (!expired)
			problem(k, key, "is listed in " FDL_VERSION_JSON " but missing");
	} else if (fdl_store_get(repo->store, key, FDL_META_MAX_BYTES, &b, NULL, &e) ||
		   fdl_sha256_mem(hex, b.data, b.len, &e))
		problem(k, key, "cannot be read: %s", e.message);
	else if ((int64_t)b.len != bytes)
		problem(k, key, "is %lld bytes; " FDL_VERSION_JSON " says %lld", (long long)b.len, (long long)bytes);
	else if (!sha || strcmp(hex, sha))
		problem(k, key, "has sha256 %s; " FDL_VERSION_JSON " says %s (the file changed after it was written)", hex,
			sha ? sha : "none");
	else if (fdl_files_scan_text(&plain, scan, b.data, b.len, &e))
		k->oom = true;
	else if (plain)
		ok = true;
	else if (fdl_json_parse(&doc, b.data, b.len, key, &e) || !json_is_object(doc))
		problem(k, key, "%s", doc ? "is not a JSON object" : e.message);
	else if (fdl_files_scan_tree(scan, doc, &e))
		k->oom = true;
	else
		ok = true;
	json_decref(doc);
	fdl_buf_free(&b);
	free(key);
	return ok;
}

/* The sha256 files.json's map records for `path`; NULL when none. */
static const char *map_sha(const fdl_files_scan *s, const char *path)
{
	size_t lo = 0, hi = s->nmap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(fdl_files_str(s, s->map[mid].path), path);
		if (!c)
			return fdl_files_str(s, s->map[mid].sha);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* One data or delete file files.json names as live in `table`: there, a
 * regular file, of the size it records (`want`; 0: none recorded), and
 * named in its sha256 map. In the words check_catalog uses; a file found
 * wrong here goes in `bad`, and its hash is not compared again. */
static void check_live_file(sink *k, fdl_repo *repo, const char *ckey, const char *fkey, const fdl_files_scan *scan,
			    const char *table, const char *path, int64_t want, fdl_strlist *bad)
{
	char *dkey = fdl_asprintf("%s/%s", repo->data_dir, path), hex[65];
	int64_t have = -1;
	fdl_error e;
	int hrc = 0;
	if (!dkey) {
		k->oom = true;
		return;
	}
	if (fdl_path_check_relative(path, "a data file's path", &e))
		problem(k, fkey, "%s", e.message);
	else if ((hrc = fdl_hash_cache_get(k->hashes, repo->store, dkey, hex, &have, &e)) == FDL_ENOTFOUND)
		problem(k, dkey, "is referenced by %s (table %s) but missing", ckey, table);
	else if (hrc == FDL_EINVALID)
		problem(k, dkey, "is referenced by %s (table %s) but is a symlink or not a regular file; fdl follows no "
				 "symlink inside a repository", ckey, table);
	else if (hrc)
		problem(k, dkey, "cannot be read: %s", e.message);
	else if (want > 0 && have != want)
		problem(k, dkey, "is %lld bytes; %s records %lld", (long long)have, fkey, (long long)want);
	else {
		if (!map_sha(scan, path))
			problem(k, fkey, "records no sha256 of %s, which the catalog references", dkey);
		free(dkey);
		return;
	}
	if (fdl_strlist_add(bad, path, &e))
		k->oom = true;
	free(dkey);
}

/* Every file of files.json's sha256 map (those of every snapshot of the
 * catalog; sorted by path) has that sha256, each hashed once a run
 * (k->hashes); `bad` (sorted): paths reported already. */
static void check_mapped_files(sink *k, fdl_repo *repo, const char *ckey, const char *fkey,
			       const fdl_files_scan *scan, const fdl_strlist *bad)
{
	fdl_error e;
	for (size_t i = 0; i < scan->nmap; i++) {
		const char *path = fdl_files_str(scan, scan->map[i].path);
		const char *want = fdl_files_str(scan, scan->map[i].sha);
		if (i && !strcmp(path, fdl_files_str(scan, scan->map[i - 1].path)))
			continue; /* a key written twice: the first */
		char *dkey = fdl_asprintf("%s/%s", repo->data_dir, path), hex[65];
		int hrc = 0;
		if (!dkey)
			k->oom = true;
		else if (fdl_strlist_has_sorted(bad, path))
			; /* reported */
		else if (fdl_path_check_relative(path, "a data file's path", &e))
			problem(k, fkey, "%s", e.message);
		else if ((hrc = fdl_hash_cache_get(k->hashes, repo->store, dkey, hex, NULL, &e)) == FDL_ENOTFOUND)
			problem(k, dkey, "is referenced by %s but missing", ckey);
		else if (hrc == FDL_EINVALID)
			problem(k, dkey, "is referenced by %s but is a symlink or not a regular file; fdl follows no "
					 "symlink inside a repository", ckey);
		else if (hrc)
			problem(k, dkey, "cannot be read: %s", e.message);
		else if (strcmp(hex, want))
			problem(k, dkey, "has sha256 %s; %s records %s (the file changed after it was written)", hex,
				fkey, *want ? want : "no sha256");
		free(dkey);
	}
}

/* A live version's data from its files.json alone (its bytes proven by
 * version.json's sha256): each live file of each table there, of its
 * recorded size, and every file of the sha256 map with that sha256. What
 * only the catalog can say (that files.json and the statistics are what
 * it holds, that the map names every file of every snapshot and no
 * other) is --deep's. */
static void check_data_listed(sink *k, fdl_repo *repo, const vdir *d, const fdl_files_scan *scan)
{
	const char *fpath = json_string_value(json_object_get(json_object_get(fdl_version_json(d->v), "files"), "path"));
	char *fkey = fdl_version_key(d->id, fpath ? fpath : FDL_FILES_JSON);
	char *ckey = fdl_version_key(d->id, fdl_version_catalog_path(d->v));
	fdl_strlist bad = {0};
	if (!fkey || !ckey)
		k->oom = true;
	for (size_t i = 0; i < scan->nlive && fkey && ckey; i++)
		check_live_file(k, repo, ckey, fkey, scan, fdl_files_str(scan, scan->live[i].table),
				fdl_files_str(scan, scan->live[i].path), scan->live[i].bytes, &bad);
	fdl_strlist_sort(&bad);
	if (fkey && ckey)
		check_mapped_files(k, repo, ckey, fkey, scan, &bad);
	fdl_strlist_free(&bad);
	free(fkey);
	free(ckey);
}

/* files.json (its bytes already checked against `sha`) says what the
 * catalog does: fdl writes exactly the serialisation of what it derives,
 * so equal hashes settle it; another writer's layout of the same JSON is
 * compared parsed. Its sha256 of the data files is not derived from the
 * catalog but checked against the files themselves (check_hashes): taken
 * as written here. */
bool fdl_verify_files_agree(json_t *derived, const char *sha, const json_t *written)
{
	char *text = NULL, hex[65];
	size_t len = 0;
	fdl_error e;
	json_t *hashes = json_object_get(written, FDL_FILES_SHA256);
	if (hashes)
		json_object_set(derived, FDL_FILES_SHA256, hashes);
	bool same = sha && !fdl_json_dump_as(&text, &len, derived, true, &e) && !fdl_sha256_mem(hex, text, len, &e) &&
		    !strcmp(hex, sha);
	free(text);
	if (same)
		return true;
	same = written && json_equal(written, derived);
	if (written && !same) {
		/* fdl's optional additions: a files.json written without one
		 * (before fdl wrote it, or by another writer) agrees */
		static const char *const optional[] = {"field_ids", "columns", "schema_changed", "unreadable"};
		json_t *bare = json_deep_copy(derived);
		const char *name;
		json_t *t;
		json_object_foreach(json_object_get(bare, "tables"), name, t)
		{
			const json_t *w = json_object_get(json_object_get(written, "tables"), name);
			for (size_t k = 0; k < sizeof optional / sizeof *optional; k++)
				if (!json_object_get(w, optional[k]) && !(k == 3 && json_object_get(w, "columns")))
					json_object_del(t, optional[k]);
		}
		same = bare && json_equal(written, bare);
		json_decref(bare);
	}
	return same;
}

/* expired.json (one of the format's exceptions: added to a version after
 * it was written, so no hash records it) read and checked field by field. */
static void check_expired(sink *k, fdl_repo *repo, const vdir *d)
{
	char *key = fdl_version_key(d->id, FDL_EXPIRED_JSON);
	fdl_buf b = {0};
	json_t *doc = NULL;
	const char *reason, *when;
	fdl_error e;
	if (!key)
		k->oom = true;
	else if (fdl_store_get(repo->store, key, 1 << 20, &b, NULL, &e))
		problem(k, key, "cannot be read: %s", e.message);
	else if (fdl_json_parse(&doc, b.data, b.len, key, &e) || fdl_expired_parse(&reason, &when, doc, key, &e))
		problem(k, key, "%s", e.message);
	json_decref(doc);
	fdl_buf_free(&b);
	free(key);
}

int fdl_verify_expired(fdl_verify_report *out, fdl_repo *repo, const vdir *d)
{
	sink k = {out, false, NULL};
	check_expired(&k, repo, d);
	return k.oom ? FDL_ENOMEM : 0;
}

int fdl_verify_files_json(fdl_files_scan *scan, bool *ok, fdl_verify_report *out, fdl_repo *repo, const vdir *d,
			  const json_t *ref, bool expired)
{
	sink k = {out, false, NULL};
	*ok = files_checked(&k, repo, d, ref, expired, scan);
	return k.oom ? FDL_ENOMEM : 0;
}

int fdl_verify_data_listed(fdl_verify_report *out, fdl_repo *repo, fdl_hash_cache *hashes, const vdir *d,
			   const fdl_files_scan *scan)
{
	sink k = {out, false, hashes};
	check_data_listed(&k, repo, d, scan);
	return k.oom ? FDL_ENOMEM : 0;
}

int fdl_verify_unhashed(fdl_verify_report *out, const vdirs *dirs, const size_t *todo, const bool *unhashed, size_t n,
			fdl_error *err)
{
	size_t count = 0, first = 0, last = 0;
	for (size_t k = 0; k < n; k++)
		if (unhashed[k]) {
			first = count++ ? first : k;
			last = k;
		}
	if (!count)
		return 0;
	char *where = fdl_version_dir_key(dirs->items[todo[first]].id), what[512];
	if (count == 1)
		snprintf(what, sizeof what, "records no sha256 of its data files (written before fdl recorded them, or "
			 "by another writer): their sizes are checked, not their content");
	else
		snprintf(what, sizeof what, "and %zu more versions, up to %s, record no sha256 of their data files "
			 "(written before fdl recorded them, or by another writer): their sizes are checked, not their "
			 "content", count - 1, dirs->items[todo[last]].id);
	int rc = fdl_findings_add(&out->warnings, &out->warning_count, where ? where : dirs->items[todo[first]].id, what,
				  err);
	free(where);
	return rc;
}
