/*
 * fdl verify, modelled on git fsck: walk the repository, check everything,
 * and report every problem with the file it was found in rather than stop
 * at the first. Checks: refs and HEAD; each version's version.json (must
 * fields, id = directory, seq/parents chain); the bytes and sha256 of every
 * file version.json lists; that no file other than the spec's allowed
 * additions is in a version directory; the history index and the Iceberg
 * views. Two depths (issue 54): by default a version's data is checked
 * from its files.json alone (verify_data.c: each live file of its size,
 * each file of the sha256 map with that sha256), and no catalog is opened
 * unless files.json records no data hashes; --deep opens every live
 * catalog: that it stops at its snapshot, that every data file it
 * references exists under data_dir with its recorded size and sha256, that
 * files.json agrees with it, and that the column statistics DuckLake
 * answers min() and max() from are those of its data files.
 * On a store with no local files (S3, HTTP) each listed file is downloaded
 * into a temporary folder, hashed, and deleted once its version is checked:
 * verify checks what the store holds, never a cached copy.
 */
#include "../catalog/catalog.h"
#include "../layout/hindex.h"
#include "../layout/keys.h"
#include "../layout/walk.h"
#include "hashes.h"
#include "report.h"
#include "sign.h"
#include "verify.h"
#include "../iceberg/iceberg.h"
#include "card.h"
#include "preview.h"
#include "../util/pool.h"
#include "../util/strmap.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct report {
	fdl_verify_report *out;
	bool oom;
	const char *allowed_signers;
	char *tmpdir; /* downloads from a remote store */
	long downloads;
	fdl_strmap *sizes; /* data files already looked up: bytes, or -1 when missing */
	fdl_hash_cache *hashes; /* data files hashed, shared by every worker */
	bool unhashed; /* the version's files.json records no sha256 of its data files */
	bool deep;     /* open every catalog and derive its files again (--deep) */
	fdl_duck **duck; /* the worker's, made when a catalog is first opened */
	int duck_rc;     /* it could not be made: the run's error */
	fdl_error duck_err;
} report;

/* A local file with the content of `key`: the file itself in a folder
 * store, else a fresh download (*downloaded set; the caller deletes it). */
static char *local_copy(report *r, fdl_repo *repo, const char *key, bool *downloaded, fdl_error *e)
{
	*downloaded = false;
	char *local = fdl_store_local_path(repo->store, key);
	if (local)
		return local;
	if (!r->tmpdir && fdl_tempdir(&r->tmpdir, "verify", e))
		return NULL;
	local = fdl_asprintf("%s/%ld", r->tmpdir, ++r->downloads);
	if (!local) {
		fdl_oom(e);
		return NULL;
	}
	if (fdl_store_get_file(repo->store, key, local, e)) {
		free(local);
		return NULL;
	}
	*downloaded = true;
	return local;
}

static void drop_copy(char *local, bool downloaded)
{
	if (local && downloaded)
		remove(local);
	free(local);
}

static void problem(report *r, const char *where, const char *fmt, ...) FDL_PRINTF(3, 4);
static void problem(report *r, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fdl_error e;
	if (fdl_findings_addv(&r->out->problems, &r->out->problem_count, where, fmt, ap, &e))
		r->oom = true;
	va_end(ap);
}

static void warning(report *r, const char *where, const char *msg)
{
	fdl_error e;
	if (fdl_findings_add(&r->out->warnings, &r->out->warning_count, where, msg, &e))
		r->oom = true;
}

/* One listed file: present, with the recorded bytes and sha256. Its local
 * copy is kept in *keep for the checks that follow; with keep NULL it is
 * streamed through sha256 from the store, with no copy. */
static bool check_listed(report *r, fdl_repo *repo, const vdir *d, const json_t *ref, bool expired, char **keep,
			 bool *downloaded)
{
	const char *path = json_string_value(json_object_get(ref, "path"));
	const char *sha = json_string_value(json_object_get(ref, "sha256"));
	int64_t bytes = (int64_t)json_integer_value(json_object_get(ref, "bytes"));
	char *key = fdl_version_key(d->id, path);
	char *local = NULL;
	char hex[65];
	int64_t n = 0;
	fdl_error e;
	size_t before = r->out->problem_count;
	*downloaded = false;
	if (!key)
		problem(r, d->id, "out of memory");
	else if (!fdl_vdir_has(d, path)) {
		if (!expired)
			problem(r, key, "is listed in " FDL_VERSION_JSON " but missing");
	} else if (keep ? !(local = local_copy(r, repo, key, downloaded, &e)) || fdl_sha256_file(hex, &n, local, &e)
			: fdl_store_sha256(repo->store, key, hex, &n, &e)) /* not kept: streamed from the store */
		problem(r, key, "cannot be read: %s", e.message);
	else if (n != bytes)
		problem(r, key, "is %lld bytes; " FDL_VERSION_JSON " says %lld", (long long)n, (long long)bytes);
	else if (strcmp(hex, sha))
		problem(r, key, "has sha256 %s; " FDL_VERSION_JSON " says %s (the file changed after it was written)", hex, sha);
	if (keep)
		*keep = local;
	else
		drop_copy(local, *downloaded);
	free(key);
	return r->out->problem_count == before;
}

/* files.json as written (its local copy), parsed; NULL when it cannot be. */
static json_t *files_written(const char *local)
{
	fdl_buf b = {0};
	json_t *written = NULL;
	fdl_error e;
	if (!fdl_file_read(&b, local, FDL_META_MAX_BYTES, &e))
		fdl_json_parse(&written, b.data, b.len, local, &e);
	fdl_buf_free(&b);
	return written;
}

/* What a live catalog attached as `alias` must agree with: version.json's
 * snapshot_id, and files.json (its local copy; NULL: not checked). Its
 * files are left in *listing (the caller frees it, even on false) and the
 * live data files in *files, and files.json as written in *written (may
 * be NULL); false when the files could not be listed. */
static bool catalog_content(report *r, fdl_duck *duck, const char *alias, const vdir *d, const char *key,
			    const char *files_local, fdl_data_files *files, json_t **written, fdl_listing **listing)
{
	const fdl_version *v = d->v;
	fdl_error e;
	fdl_catalog_info info;
	if (fdl_catalog_info_read(duck, alias, &info, &e))
		problem(r, key, "%s", e.message);
	else if (info.last_snapshot != fdl_version_snapshot_id(v))
		problem(r, key, "holds snapshots up to %lld; " FDL_VERSION_JSON "'s ducklake.snapshot_id is %lld",
			(long long)info.last_snapshot, (long long)fdl_version_snapshot_id(v));
	if (fdl_listing_read(listing, duck, alias, true, &e) || fdl_listing_live(*listing, files, &e)) {
		problem(r, key, "%s", e.message);
		return false;
	}
	const json_t *fref = json_object_get(fdl_version_json(v), "files");
	const char *fpath = json_string_value(json_object_get(fref, "path"));
	char *fkey = fpath ? fdl_version_key(d->id, fpath) : NULL;
	json_t *derived = NULL;
	*written = files_local ? files_written(files_local) : NULL;
	if (files_local && !fdl_catalog_files_json(&derived, duck, alias, *listing, files, &e) &&
	    !fdl_verify_files_agree(derived, json_string_value(json_object_get(fref, "sha256")), *written))
		problem(r, fkey, "does not agree with the catalog (the catalog is right)");
	json_decref(derived);
	free(fkey);
	fdl_strlist bad = {0};
	if (fdl_catalog_stats_check(&bad, duck, alias, files, &e))
		problem(r, key, "%s", e.message);
	for (size_t i = 0; i < bad.len; i++)
		problem(r, key, "%s", bad.items[i]);
	fdl_strlist_free(&bad);
	return true;
}

/* fdl's sha256 of every file the catalog references, at any snapshot
 * (files.json's, its bytes checked against version.json): each file is
 * hashed once a run however many versions reference it (r->hashes) and
 * must have the recorded hash. A version without it (written before fdl
 * recorded it, or by another writer) is counted, and not a problem. `bad`
 * (sorted): data keys whose absence or size is reported already. */
static void check_hashes(report *r, fdl_repo *repo, fdl_listing *listing, const vdir *d, const char *key,
			 const json_t *written, const fdl_strlist *bad)
{
	const json_t *map = json_object_get(written, FDL_FILES_SHA256);
	if (!map) {
		r->unhashed = true;
		return;
	}
	fdl_strlist all = {0};
	fdl_error e;
	const char *fpath = json_string_value(json_object_get(json_object_get(fdl_version_json(d->v), "files"), "path"));
	char *fkey = fdl_version_key(d->id, fpath ? fpath : FDL_FILES_JSON);
	if (fdl_listing_all(listing, &all, NULL, NULL, -1, &e))
		problem(r, key, "%s", e.message);
	fdl_strlist_sort(&all);
	for (size_t i = 0; fkey && i < all.len; i++) {
		const char *path = all.items[i], *want = json_string_value(json_object_get(map, path));
		if (i && !strcmp(path, all.items[i - 1]))
			continue;
		char *dkey = fdl_asprintf("%s/%s", repo->data_dir, path);
		char hex[65];
		int hrc = 0;
		if (!dkey)
			r->oom = true;
		else if (!want)
			problem(r, fkey, "records no sha256 of %s, which the catalog references", dkey);
		else if (fdl_strlist_has_sorted(bad, dkey))
			; /* its absence or size is reported */
		else if ((hrc = fdl_hash_cache_get(r->hashes, repo->store, dkey, hex, NULL, &e)) == FDL_ENOTFOUND)
			problem(r, dkey, "is referenced by %s but missing", key);
		else if (hrc == FDL_EINVALID)
			problem(r, dkey, "is referenced by %s but is a symlink or not a regular file; fdl follows no "
					 "symlink inside a repository", key);
		else if (hrc)
			problem(r, dkey, "cannot be read: %s", e.message);
		else if (strcmp(hex, want))
			problem(r, dkey, "has sha256 %s; %s records %s (the file changed after it was written)", hex,
				fkey, want);
		free(dkey);
	}
	const char *path;
	const json_t *v;
	json_object_foreach((json_t *)map, path, v) if (fkey && !fdl_strlist_has_sorted(&all, path))
		problem(r, fkey, "records a sha256 of %s/%s, which the catalog does not reference", repo->data_dir, path);
	if (!fkey)
		r->oom = true;
	free(fkey);
	fdl_strlist_free(&all);
}

/* A live catalog: snapshots, data files (present, with their recorded
 * size and sha256), files.json. */
static void check_catalog(report *r, fdl_repo *repo, fdl_duck *duck, const vdir *d, const char *local,
			  const char *files_local)
{
	const fdl_version *v = d->v;
	char *key = fdl_version_key(d->id, fdl_version_catalog_path(v));
	fdl_error e;
	fdl_data_files files = {0};
	fdl_strlist bad = {0};
	json_t *written = NULL;
	fdl_listing *listing = NULL;
	if (!local || fdl_catalog_attach_raw(duck, "fdl_verify", local, FDL_CAT_DUCKDB, true, &e)) {
		problem(r, key ? key : d->id, "cannot be opened by DuckDB: %s", local ? e.message : "no local path");
		goto out;
	}
	if (catalog_content(r, duck, "fdl_verify", d, key, files_local, &files, &written, &listing)) {
		for (size_t i = 0; i < files.len; i++) {
			for (int k = 0; k < 2; k++) {
				const char *p = k ? files.items[i].delete_path : files.items[i].path;
				int64_t want = k ? files.items[i].delete_bytes : files.items[i].bytes;
				if (!p)
					continue;
				char *dkey = fdl_asprintf("%s/%s", repo->data_dir, p);
				int64_t have = -1;
				/* data files are shared by the versions after the one
				 * that added them: one head each */
				if (dkey && !(r->sizes && fdl_strmap_get(r->sizes, dkey, &have))) {
					int hrc = fdl_store_head(repo->store, dkey, &have, &e);
					if (hrc) /* -2: there, but a symlink or not a file */
						have = hrc == FDL_EINVALID ? -2 : -1;
					if (r->sizes && fdl_strmap_put(r->sizes, dkey, have, &e))
						r->oom = true;
				}
				if (dkey && have == -2)
					problem(r, dkey, "is referenced by %s (table %s) but is a symlink or not a regular "
							 "file; fdl follows no symlink inside a repository",
						key, files.items[i].table_key);
				else if (!dkey || have < 0)
					problem(r, dkey ? dkey : p, "is referenced by %s (table %s) but missing", key,
						files.items[i].table_key);
				else if (want > 0 && have != want)
					problem(r, dkey, "is %lld bytes; %s records %lld", (long long)have, key,
						(long long)want);
				if (dkey && (have < 0 || (want > 0 && have != want)) && fdl_strlist_add(&bad, dkey, &e))
					r->oom = true;
				free(dkey);
			}
		}
		fdl_strlist_sort(&bad);
		check_hashes(r, repo, listing, d, key, written, &bad);
	}
	fdl_catalog_detach(duck, "fdl_verify", NULL);
out:
	fdl_listing_free(listing);
	json_decref(written);
	fdl_strlist_free(&bad);
	fdl_data_files_free(&files);
	free(key);
}

static void check_signature(report *r, fdl_repo *repo, const vdir *d)
{
	char *vkey = fdl_version_key(d->id, FDL_VERSION_JSON);
	char *skey = fdl_version_key(d->id, FDL_VERSION_SIG);
	fdl_buf msg = {0}, sig = {0};
	fdl_error e;
	char *signer = NULL;
	if (!vkey || !skey)
		problem(r, d->id, "out of memory");
	else if (!fdl_vdir_has(d, FDL_VERSION_SIG) && d->named)
		problem(r, vkey, "is not signed (no " FDL_VERSION_SIG "), and a branch or tag names it: what a ref "
			"names must carry a good signature (fdl sign)");
	else if (!fdl_vdir_has(d, FDL_VERSION_SIG))
		/* an older version, signed or not when it was the tip: a note, as
		 * git log --show-signature notes a commit with none (issue 62) */
		warning(r, vkey, "has no signature (no " FDL_VERSION_SIG "): no branch or tag names it, so none is "
			"required, and no signature covers its data");
	else if (fdl_store_get(repo->store, vkey, FDL_META_MAX_BYTES, &msg, NULL, &e) ||
		 fdl_store_get(repo->store, skey, 1 << 20, &sig, NULL, &e) ||
		 fdl_sshsig_verify(&signer, sig.data, sig.len, msg.data, msg.len, r->allowed_signers, "signature", &e))
		problem(r, skey, "%s", e.message);
	else {
		fdl_good_signature *g = realloc(r->out->signatures, (r->out->signature_count + 1) * sizeof *g);
		if (!g) {
			r->oom = true;
		} else {
			r->out->signatures = g;
			g += r->out->signature_count++;
			memcpy(g->id, d->id, sizeof g->id);
			g->signer = signer;
			signer = NULL;
		}
	}
	free(signer);
	fdl_buf_free(&msg);
	fdl_buf_free(&sig);
	free(vkey);
	free(skey);
}

/* A version's directory and place in the history: only the files a
 * version may hold, and its first parent a readable version one seq below
 * (or withdrawn with its version.json). */
static void version_shape(report *r, vdirs *dirs, const vdir *d)
{
	char *vkey = fdl_version_key(d->id, FDL_VERSION_JSON);
	for (size_t i = 0; i < d->files.len; i++)
		if (!fdl_version_file_allowed(d->v, d->files.items[i])) {
			char *k = fdl_version_key(d->id, d->files.items[i]);
			problem(r, k ? k : d->id, "is not a file a version may hold (the spec allows only the files "
				FDL_VERSION_JSON " lists, " FDL_FORMAT_CATALOGS_DIR "/<format>.duckdb, " FDL_EXPIRED_JSON
				" and " FDL_VERSION_SIG ")");
			free(k);
		}
	const char *parent = fdl_version_parent(d->v, 0);
	if (parent) {
		vdir *p = fdl_vdirs_find(dirs, parent);
		if (p && !p->v && fdl_vdir_has(p, FDL_EXPIRED_JSON) && !fdl_vdir_has(p, FDL_VERSION_JSON))
			; /* withdrawn with its version.json (fdl withdraw --remove-version-json): the history ends there */
		else if (!p || !p->v)
			problem(r, vkey, "its first parent %s is not a readable version of this repository", parent);
		else if (fdl_version_seq(p->v) + 1 != fdl_version_seq(d->v))
			problem(r, vkey, "seq is %lld but its first parent's is %lld; expected %lld",
				(long long)fdl_version_seq(d->v), (long long)fdl_version_seq(p->v),
				(long long)fdl_version_seq(p->v) + 1);
	}
	free(vkey);
}

/* The worker's DuckDB, made the first time it opens a catalog: the
 * default depth opens none unless a version's files.json cannot say what
 * its data is. Catalogs are read raw: DuckDB alone, no extension. */
static fdl_duck *catalog_reader(report *r)
{
	fdl_duck **duck = r->duck;
	if (!*duck && !r->duck_rc) {
		/* the workers are the parallelism: DuckDB's own threads only add
		 * hand-offs to statements this small */
		r->duck_rc = fdl_duck_new_lean(duck, NULL, &r->duck_err);
	}
	return *duck;
}

/* --deep: every file version.json lists read and checked, and the
 * catalog attached: its last snapshot, files.json and statistics derived
 * again and compared (check_catalog), as verify did before issue 54. */
static void check_version_deep(report *r, fdl_repo *repo, vdir *d, bool expired)
{
	const json_t *doc = fdl_version_json(d->v);
	const char *keys[] = {"catalog", "dataset", "files"};
	bool catalog_ok = false;
	char *copies[3] = {NULL, NULL, NULL}; /* the catalog and files.json stay for check_catalog */
	bool downloaded[3] = {false, false, false};
	for (size_t i = 0; i < 3; i++) {
		const json_t *ref = json_object_get(doc, keys[i]);
		bool ok = ref ? check_listed(r, repo, d, ref, expired && i != 1, i == 1 ? NULL : &copies[i],
					     &downloaded[i])
			      : true;
		if (i == 0)
			catalog_ok = ok;
	}
	if (r->allowed_signers)
		check_signature(r, repo, d);
	/* a catalog whose bytes are not the recorded ones is not opened */
	fdl_duck *duck = !expired && catalog_ok && copies[0] ? catalog_reader(r) : NULL;
	if (duck)
		check_catalog(r, repo, duck, d, copies[0], copies[2]);
	for (size_t i = 0; i < 3; i++)
		drop_copy(copies[i], downloaded[i]);
}

/* The default depth: every file version.json lists, each read once (the
 * catalog streamed through sha256, files.json into memory, checked, then
 * parsed), and the data files from files.json alone (check_data_listed).
 * A live version whose files.json is absent or records no sha256 of its
 * data (written before fdl recorded them, or by another writer) has its
 * catalog opened as at --deep: nothing else says what its data is. */
static void check_version_bytes(report *r, fdl_repo *repo, vdir *d, bool expired)
{
	const json_t *doc = fdl_version_json(d->v);
	const json_t *fref = json_object_get(doc, "files"), *cref = json_object_get(doc, "catalog");
	fdl_files_scan scan = {0};
	bool written = false;
	if (fref && fdl_verify_files_json(&scan, &written, r->out, repo, d, fref, expired))
		r->oom = true;
	bool by_catalog = !expired && !scan.has_map && (!fref || written);
	char *copies[2] = {NULL, NULL};
	bool downloaded[2] = {false, false};
	bool catalog_ok = cref ? check_listed(r, repo, d, cref, expired, by_catalog ? &copies[0] : NULL, &downloaded[0])
			       : true;
	const json_t *dref = json_object_get(doc, "dataset");
	bool dataset_downloaded = false;
	if (dref)
		check_listed(r, repo, d, dref, false, NULL, &dataset_downloaded);
	if (r->allowed_signers)
		check_signature(r, repo, d);
	if (by_catalog && catalog_ok && copies[0]) {
		char *key = fref ? fdl_version_key(d->id, json_string_value(json_object_get(fref, "path"))) : NULL;
		fdl_error e;
		if (key && !(copies[1] = local_copy(r, repo, key, &downloaded[1], &e)))
			problem(r, key, "cannot be read: %s", e.message);
		fdl_duck *duck = !fref || copies[1] ? catalog_reader(r) : NULL;
		if (duck)
			check_catalog(r, repo, duck, d, copies[0], copies[1]);
		free(key);
	} else if (!expired && written) {
		if (fdl_verify_data_listed(r->out, repo, r->hashes, d, &scan))
			r->oom = true;
	}
	for (size_t i = 0; i < 2; i++)
		drop_copy(copies[i], downloaded[i]);
	fdl_files_scan_free(&scan);
}

static void check_version(report *r, fdl_repo *repo, vdirs *dirs, vdir *d)
{
	bool expired = fdl_vdir_has(d, FDL_EXPIRED_JSON);
	r->out->versions_checked++;
	version_shape(r, dirs, d);
	r->oom |= expired && fdl_verify_expired(r->out, repo, d);
	(r->deep ? check_version_deep : check_version_bytes)(r, repo, d, expired);
}

int fdl_verify_shape(fdl_verify_report *out, vdirs *dirs, const vdir *d, fdl_error *err)
{
	report r = {.out = out};
	version_shape(&r, dirs, d);
	return r.oom ? fdl_oom(err) : 0;
}

int fdl_verify_catalog_attached(fdl_verify_report *out, fdl_duck *duck, const char *alias, const vdir *d,
				const char *files_local, fdl_error *err)
{
	report r = {.out = out};
	fdl_data_files files = {0};
	json_t *written = NULL;
	char *key = fdl_version_key(d->id, fdl_version_catalog_path(d->v));
	if (!key)
		return fdl_oom(err);
	fdl_listing *listing = NULL;
	catalog_content(&r, duck, alias, d, key, files_local, &files, &written, &listing);
	fdl_listing_free(listing);
	json_decref(written);
	fdl_data_files_free(&files);
	free(key);
	return r.oom ? fdl_oom(err) : 0;
}

static void mark_reachable(vdirs *dirs, const char *id)
{
	/* seq falls along a valid chain; a bound stops a cycle in a broken one */
	for (size_t steps = 0; id && steps <= dirs->len; steps++) {
		vdir *d = fdl_vdirs_find(dirs, id);
		if (!d || d->reachable)
			return;
		d->reachable = true;
		id = d->v ? fdl_version_parent(d->v, 0) : NULL;
	}
}

static void check_refs(report *r, fdl_repo *repo, vdirs *dirs)
{
	fdl_strlist refs = {0}, specials = {0};
	fdl_error e;
	if (fdl_store_list_all(repo->store, FDL_REFS_DIR, &refs, &specials, &e))
		problem(r, FDL_REFS_DIR, "cannot be listed: %s", e.message);
	for (size_t i = 0; i < specials.len; i++)
		problem(r, specials.items[i], "is a symbolic link or special file, not a ref (a ref is a file "
			"holding a version id)");
	fdl_strlist_free(&specials);
	fdl_strlist_sort(&refs);
	for (size_t i = 0; i < refs.len; i++) {
		char id[FDL_ID_LEN + 1];
		bool exists = false;
		if (fdl_key_classify(NULL, refs.items[i]) == FDL_KEY_LOCK) {
			warning(r, refs.items[i], "a ref lock is held (a writer is running, or died: remove it then)");
			continue;
		}
		if (fdl_ref_read(repo, refs.items[i], id, &exists, NULL, &e)) {
			problem(r, refs.items[i], "%s", e.message);
			continue;
		}
		vdir *d = fdl_vdirs_find(dirs, id);
		if (!d || !d->v) {
			problem(r, refs.items[i], "points at %s, which is not a readable version", id);
		} else {
			d->named = true;
			mark_reachable(dirs, id);
		}
	}
	fdl_strlist_free(&refs);
	char *head = NULL;
	if (fdl_repo_head_branch(&head, repo, &e))
		problem(r, FDL_HEAD_KEY, "%s", e.message);
	free(head);
}

/* ---- checking the versions, on every core --------------------------------------- */

/* One worker of the pool (src/util/pool.c): its own repository handle (a
 * store handle is one thread's; worker 0 uses the caller's), its own
 * DuckDB, downloads and sizes; each version's findings in parts[k],
 * merged in version order after. */
typedef struct verify_pool {
	fdl_repo *repo; /* the caller's, for worker 0 */
	const char *allowed_signers;
	bool deep;
	vdirs *dirs;
	size_t *todo; /* indexes into dirs, in order */
	size_t ntodo;
	fdl_verify_report *parts;
	bool *unhashed; /* by part: its files.json records no sha256 of its data */
	fdl_hash_cache *hashes;
	atomic_bool oom;
} verify_pool;

typedef struct verify_worker {
	fdl_repo *repo;
	bool own_repo;
	fdl_duck *duck;
	fdl_strmap sizes;
	char *tmpdir;
	long downloads;
} verify_worker;

static int verify_init(void *ctx, size_t index, void **state, fdl_error *err)
{
	verify_pool *p = ctx;
	verify_worker *w = calloc(1, sizeof *w);
	if (!w)
		return fdl_oom(err);
	*state = w;
	w->repo = p->repo;
	w->own_repo = index != 0;
	const char *token = fdl_store_http_token(p->repo->store); /* pyfdl's token= is in no environment */
	int rc = w->own_repo ? fdl_repo_open_token(&w->repo, p->repo->root, token, err) : 0;
	if (rc) {
		w->repo = NULL;
		return rc;
	}
	fdl_repo_set_cached(w->repo, false); /* as the caller's, during verify */
	return 0;
}

static int verify_job(void *ctx, void *state, size_t k, fdl_error *err)
{
	/* a version's problems are findings, never the pool's error */
	verify_pool *p = ctx;
	verify_worker *w = state;
	report r = {&p->parts[k], false, p->allowed_signers, w->tmpdir, w->downloads, &w->sizes, p->hashes, false,
		    p->deep, &w->duck, 0, {0}};
	check_version(&r, w->repo, p->dirs, &p->dirs->items[p->todo[k]]);
	p->unhashed[k] = r.unhashed;
	w->tmpdir = r.tmpdir;
	w->downloads = r.downloads;
	if (r.oom)
		atomic_store(&p->oom, true);
	if (r.duck_rc) /* no DuckDB to open a catalog with: the run cannot check */
		*err = r.duck_err;
	return r.duck_rc;
}

static void verify_fini(void *ctx, size_t index, void *state)
{
	(void)ctx;
	(void)index;
	verify_worker *w = state;
	if (!w)
		return;
	fdl_duck_free(w->duck);
	fdl_strmap_free(&w->sizes);
	if (w->tmpdir) {
		fdl_rm_rf(w->tmpdir);
		free(w->tmpdir);
	}
	if (w->own_repo)
		fdl_repo_free(w->repo);
	free(w);
}

/* Versions are checked on the pool, one worker per core (at most 8;
 * FDL_VERIFY_THREADS sets it): hashing and DuckDB's reading of each
 * catalog are the cost, and versions share nothing but the listing and
 * the data files' hashes. Each catalog is read once, by one attach. The
 * findings are merged in the order of the versions, so the report is the
 * same on any number of cores. */
static int check_versions(report *r, fdl_repo *repo, vdirs *dirs, int all, fdl_error *err)
{
	verify_pool p = {repo, r->allowed_signers, r->deep, dirs, calloc(dirs->len + 1, sizeof(size_t)), 0, NULL,
			 calloc(dirs->len + 1, sizeof(bool)), NULL, false};
	if (!p.todo || !p.unhashed || fdl_hash_cache_new(&p.hashes, err)) {
		free(p.todo);
		free(p.unhashed);
		return fdl_oom(err);
	}
	for (size_t i = 0; i < dirs->len; i++)
		if (dirs->items[i].v && (all || dirs->items[i].reachable))
			p.todo[p.ntodo++] = i;
		else if (dirs->items[i].v)
			r->out->versions_unchecked++;
	p.parts = calloc(p.ntodo + 1, sizeof *p.parts);
	int rc = p.parts ? 0 : fdl_oom(err);
	fdl_pool_task t = {.jobs = p.ntodo, .threads = fdl_pool_threads(8, "FDL_VERIFY_THREADS"), .ctx = &p,
			   .init = verify_init, .job = verify_job, .fini = verify_fini};
	if (!rc)
		rc = fdl_pool_run(&t, err);
	r->oom |= atomic_load(&p.oom);
	for (size_t k = 0; k < p.ntodo && p.parts; k++)
		if (fdl_verify_report_merge(r->out, &p.parts[k]))
			r->oom = true;
	if (fdl_verify_unhashed(r->out, dirs, p.todo, p.unhashed, p.ntodo, err))
		r->oom = true;
	fdl_hash_cache_free(p.hashes);
	free(p.unhashed);
	free(p.parts);
	free(p.todo);
	return rc;
}

/* Findings "key\tmessage" of a derived part, as problems and warnings. */
static void add_findings(report *r, fdl_strlist *problems, fdl_strlist *warnings)
{
	for (int w = 0; w < 2; w++) {
		fdl_strlist *l = w ? warnings : problems;
		for (size_t i = 0; i < l->len; i++) {
			char *tab = strchr(l->items[i], '\t');
			*tab = '\0';
			if (w)
				warning(r, l->items[i], tab + 1);
			else
				problem(r, l->items[i], "%s", tab + 1);
		}
	}
	fdl_strlist_free(problems);
	fdl_strlist_free(warnings);
}

/* Findings layout gathered, as problems and warnings. */
static void add_found(report *r, fdl_finding_list *problems, fdl_finding_list *warnings)
{
	for (size_t i = 0; problems && i < problems->len; i++)
		problem(r, problems->items[i].where, "%s", problems->items[i].what);
	for (size_t i = 0; warnings && i < warnings->len; i++)
		warning(r, warnings->items[i].where, warnings->items[i].what);
	if (problems)
		fdl_finding_list_free(problems);
	if (warnings)
		fdl_finding_list_free(warnings);
}

/* The history index (fdl's addition): derived, but an entry that differs
 * from the version.json it copies is reported, as is any stray file. */
static int check_history(report *r, fdl_repo *repo, fdl_error *err)
{
	fdl_finding_list problems = {0}, warnings = {0};
	int rc = fdl_history_check(&problems, &warnings, repo, err);
	add_found(r, &problems, &warnings);
	return rc;
}

/* The Iceberg views, the previews and the landing card (fdl's additions,
 * derived): each against its version (the card against HEAD's tip). */
static int check_iceberg(report *r, fdl_repo *repo, fdl_error *err)
{
	fdl_strlist problems = {0}, warnings = {0};
	int rc = fdl_iceberg_check(&problems, &warnings, repo, err);
	if (!rc)
		rc = fdl__preview_check(&problems, &warnings, repo, err);
	if (!rc)
		rc = fdl__card_check(&problems, &warnings, repo, err);
	add_findings(r, &problems, &warnings);
	return rc;
}

/* A store that lists: every version directory, each version.json read,
 * the refs (a static host's walk from the refs is verify_walk.c's). */
static int list_versions(report *r, fdl_repo *repo, vdirs *dirs, fdl_error *err)
{
	fdl_strlist strays = {0}, specials = {0};
	int rc = fdl_vdirs_list(dirs, &strays, &specials, repo, err);
	for (size_t i = 0; i < strays.len; i++)
		problem(r, strays.items[i], "is not inside a version directory named by a version id");
	for (size_t i = 0; i < specials.len; i++)
		problem(r, specials.items[i], "is a symbolic link or special file, not part of a version "
			"(" FDL_VERSIONS_DIR "/ holds only version directories and their files)");
	fdl_strlist_free(&strays);
	fdl_strlist_free(&specials);
	fdl_finding_list unreadable = {0};
	if (!rc)
		rc = fdl_vdirs_read(dirs, &unreadable, repo, err);
	add_found(r, &unreadable, NULL);
	for (size_t i = 0; i < dirs->len && !rc; i++)
		if (!fdl_vdir_has(&dirs->items[i], FDL_VERSION_JSON) && !fdl_vdir_has(&dirs->items[i], FDL_EXPIRED_JSON)) {
			char *key = fdl_version_key(dirs->items[i].id, FDL_VERSION_JSON);
			warning(r, key ? key : dirs->items[i].id,
				"missing: an incomplete version (a writer died or is writing); readers ignore it");
			free(key);
		}
	if (!rc)
		check_refs(r, repo, dirs);
	return rc;
}

/* The versions found, then the history index and the Iceberg views as a
 * listing shows them (`listed`). Hands the report out, or frees it. */
static int verify_finish(fdl_verify_report **out, report *r, fdl_repo *repo, vdirs *dirs, int all, int rc,
			 bool listed, fdl_error *err)
{
	if (!rc)
		rc = check_versions(r, repo, dirs, all, err);
	if (!rc && listed && !(rc = check_history(r, repo, err)))
		rc = check_iceberg(r, repo, err);
	fdl_vdirs_free(dirs);
	if (!rc && r->oom)
		rc = fdl_fail(err, FDL_ENOMEM, "out of memory building the verify report");
	if (rc)
		fdl_verify_report_free(r->out);
	else
		*out = r->out;
	return rc;
}

int fdl_verify(fdl_verify_report **out, fdl_repo *repo, const fdl_verify_options *opts, fdl_error *err)
{
	fdl_verify_options defaults = FDL_VERIFY_OPTIONS_INIT;
	const fdl_verify_options *o = opts ? opts : &defaults;
	if (fdl_options_check(o->version, FDL_VERIFY_OPTIONS_VERSION, "fdl_verify", "fdl_verify_options", err))
		return FDL_EINVALID;
	const char *allowed_signers = o->allowed_signers;
	int all = !o->reachable_only;
	report r = {calloc(1, sizeof *r.out), false, allowed_signers, NULL, 0, NULL, NULL, false,
		    o->version >= 2 && o->deep, NULL, 0, {0}};
	if (!r.out || !(r.out->repository = fdl_strdup(repo->root))) {
		fdl_verify_report_free(r.out);
		return fdl_oom(err);
	}
	r.out->signatures_checked = allowed_signers != NULL;
	vdirs dirs = {0};
	bool cached = fdl_repo_set_cached(repo, false); /* what the store holds, never this machine's copy */
	bool listed = fdl_store_can(repo->store, FDL_STORE_LIST);
	int rc = listed ? list_versions(&r, repo, &dirs, err) : fdl_verify_walk(r.out, &dirs, repo, err);
	rc = verify_finish(out, &r, repo, &dirs, all, rc, listed, err);
	fdl_repo_set_cached(repo, cached);
	return rc;
}
