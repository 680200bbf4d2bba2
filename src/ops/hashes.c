/*
 * The sha256 of a new version's data and delete files, for files.json
 * (fdl's field "sha256", docs/format.md): each file is read once, when it
 * first enters a version, streamed from the store (a folder's file in place,
 * a bucket's object through the digest); after that each version carries it
 * over from its base version's files.json without reading the file again.
 * And the cache through which fdl verify's threads hash each file once.
 */
#include "hashes.h"
#include "../layout/layout.h"
#include "../util/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The sha256 the base version's files.json records for each file (NULL:
 * none, for a first version or one written before fdl hashed data): from
 * the working folder's copy (FDL_WORK_HASHES) when it copies that very
 * files.json, else from files.json itself. Only that map is kept: the
 * rest of the document, as big again at 10,000 files, is freed before
 * the new version's map is built. */
static int base_hashes(json_t **map, fdl_repo *repo, const frozen *fz, const fdl_work *w, fdl_error *err)
{
	json_t *files = NULL;
	*map = NULL;
	const json_t *ref = fz->base ? json_object_get(fdl_version_json(fz->base), "files") : NULL;
	const char *sha = json_string_value(json_object_get(ref, "sha256"));
	char why[160] = "";
	int rc = w && sha ? fdl_work_hashes_read(map, w, sha, (int64_t)json_integer_value(json_object_get(ref, "bytes")),
						why, err)
			  : 0;
	if (!rc && *map)
		fdl_duck_trace(fz->duck, "commit: the base's sha256 map from %s", FDL_WORK_HASHES);
	if (rc || *map)
		return rc;
	if (why[0])
		fdl_duck_trace(fz->duck, "commit: the base's sha256 map from its %s (%s)", FDL_FILES_JSON, why);
	rc = fz->base ? fdl_version_load_json(&files, repo, fz->base, "files", err) : 0;
	if (rc)
		return fdl_error_prefix(err, "reading the base version's " FDL_FILES_JSON " for the sha256 of its data "
					"files");
	*map = json_incref(json_object_get(files, FDL_FILES_SHA256));
	json_decref(files);
	return 0;
}

/* Hash one file the catalog references, checking its size on the way: at
 * `staging`/path when it is still in the working catalog's own folder
 * (not yet published: commit puts it into the data folder after this),
 * else, or when a commit cut short published it already, in the data
 * folder. */
static int hash_one(char hex[65], fdl_repo *repo, const char *staging, const char *path, int64_t recorded,
		    fdl_error *err)
{
	char *key = staging ? fdl_asprintf("%s/%s", staging, path) : fdl_asprintf("%s/%s", repo->data_dir, path);
	int64_t n = 0;
	int rc = key ? fdl_store_sha256(repo->store, key, hex, &n, err) : fdl_oom(err);
	if (rc == FDL_ENOTFOUND && staging) {
		char *moved = fdl_asprintf("%s/%s", repo->data_dir, path);
		fdl_error_clear(err);
		if (!moved) {
			free(key);
			return fdl_oom(err);
		}
		rc = fdl_store_sha256(repo->store, moved, hex, &n, err);
		if (rc == FDL_ENOTFOUND)
			rc = fdl_fail(err, FDL_EINVALID,
				      "the working catalog references %s, which is neither in its own folder (%s/%s) "
				      "nor in the repository's data folder",
				      path, repo->root, key);
		free(key);
		key = moved;
	}
	if (rc == FDL_ENOTFOUND)
		rc = fdl_fail(err, FDL_EINVALID, "the catalog references %s, which is not in the repository's data folder "
				  "(%s/%s)", path, repo->root, key);
	else if (rc)
		fdl_error_prefix(err, "hashing %s/%s", repo->root, key);
	else if (recorded > 0 && n != recorded)
		rc = fdl_fail(err, FDL_EINVALID, "%s/%s is %lld bytes; the catalog records %lld", repo->root, key,
			      (long long)n, (long long)recorded);
	free(key);
	return rc;
}

/* The files no base records a hash of, hashed on the pool: each worker
 * with its own store handle (worker 0 the caller's), each job's digest in
 * its slot, so the map is built in the files' order on any number of
 * cores and the error reported is the first file's. A first version of
 * 10,000 files, or a table of a few big ones, is hashed on every core. */
typedef struct hash_pool {
	fdl_repo *repo;
	const char *staging;
	const frozen *fz;
	const char **paths;
	char (*hex)[65];
} hash_pool;

static int hash_init(void *ctx, size_t worker, void **state, fdl_error *err)
{
	hash_pool *p = ctx;
	fdl_repo *own = NULL;
	int rc = worker ? fdl_repo_open(&own, p->repo->root, err) : 0;
	*state = own;
	return rc;
}

static int hash_job(void *ctx, void *state, size_t k, fdl_error *err)
{
	hash_pool *p = ctx;
	const char *path = p->paths[k];
	int64_t recorded = -1;
	fdl_strmap_get(&p->fz->all_sizes, path, &recorded);
	bool staged = p->staging && fdl_strlist_has_sorted(&p->fz->staged, path);
	return hash_one(p->hex[k], state ? state : p->repo, staged ? p->staging : NULL, path, recorded, err);
}

static void hash_fini(void *ctx, size_t worker, void *state)
{
	(void)ctx;
	(void)worker;
	fdl_repo_free(state);
}

/* The sha256 of each of `n` paths into hex[i]. */
static int hash_new(fdl_repo *repo, const frozen *fz, const char *staging, const char **paths, char (*hex)[65],
		    size_t n, fdl_error *err)
{
	hash_pool p = {repo, staging, fz, paths, hex};
	fdl_pool_task t = {.jobs = n, .threads = fdl_pool_threads(8, "FDL_HASH_THREADS"), .ctx = &p,
			   .init = hash_init, .job = hash_job, .fini = hash_fini};
	return fdl_pool_run(&t, err);
}

/* Whether path's hash is carried over from the base's map: never for a
 * file still in the working catalog's own folder, which this commit
 * publishes (whatever a copy of the map says of it). */
static bool carried(const json_t *known, const frozen *fz, const char *path)
{
	return json_is_string(json_object_get(known, path)) && !fdl_strlist_has_sorted(&fz->staged, path);
}

/* A file fdl add registered must be what it was then (FDL_WORK_ADDED). */
static int added_same(const json_t *added, const char *path, const char *hex, const fdl_repo *repo,
		      const char *staging, fdl_error *err)
{
	const char *then = json_string_value(json_object_get(added, path));
	if (!then || !strcmp(then, hex))
		return 0;
	return fdl_fail(err, FDL_EINVALID,
			"%s/%s/%s changed after fdl add registered it (sha256 %s then, %s now); nothing was published. "
			"Put the file back as it was, or check the working catalog out again and add the new file",
			repo->root, staging ? staging : repo->data_dir, path, then, hex);
}

int fdl_data_hashes_add(frozen *fz, fdl_repo *repo, const fdl_work *w, const char *staging, fdl_error *err)
{
	json_t *added = NULL;
	int arc = w ? fdl_work_added_read(&added, w, err) : 0;
	if (arc)
		return fdl_error_prefix(err, "reading what fdl add registered");
	json_t *known = NULL, *map = json_object();
	size_t n = fz->all_files.len, todo = 0;
	const char **paths = calloc(n + 1, sizeof *paths);
	char(*hex)[65] = NULL;
	int rc = map && paths ? base_hashes(&known, repo, fz, w, err) : fdl_oom(err);
	for (size_t i = 0; !rc && i < n; i++) /* sorted: a repeat follows its first */
		if ((!i || strcmp(fz->all_files.items[i], fz->all_files.items[i - 1])) &&
		    !carried(known, fz, fz->all_files.items[i]))
			paths[todo++] = fz->all_files.items[i];
	if (!rc && !(hex = calloc(todo + 1, sizeof *hex)))
		rc = fdl_oom(err);
	if (!rc && todo)
		rc = hash_new(repo, fz, staging, paths, hex, todo, err);
	for (size_t i = 0, k = 0; !rc && i < n; i++) {
		const char *path = fz->all_files.items[i];
		if (i && !strcmp(path, fz->all_files.items[i - 1]))
			continue;
		json_t *had = carried(known, fz, path) ? json_object_get(known, path) : NULL;
		if (had) /* the base's value itself: one string for both */
			rc = json_object_set(map, path, had) ? fdl_oom(err) : 0;
		else if (!(rc = added_same(added, path, hex[k], repo, staging, err)) &&
			 json_object_set_new(map, path, json_string(hex[k++])))
			rc = fdl_oom(err);
	}
	json_decref(added);
	free(paths);
	free(hex);
	json_decref(known);
	if (!rc && json_object_set(fz->files_json, FDL_FILES_SHA256, map))
		rc = fdl_oom(err);
	if (!rc) {
		free(fz->files_text);
		fz->files_text = NULL;
		rc = fdl_json_dump_as(&fz->files_text, &fz->files_len, fz->files_json, true, err);
	}
	/* the working folder's copy of the map, for the next commit */
	char sha[65];
	fdl_error ignore; /* derived: without it, the next commit reads files.json */
	if (!rc && w && !w->postgres && !fdl_sha256_mem(sha, fz->files_text, fz->files_len, &ignore))
		fdl_work_hashes_text(&fz->hashes_text, map, sha);
	json_decref(map);
	if (!rc) { /* its text is what is written: the tree goes now, not at the commit's end */
		json_decref(fz->files_json);
		fz->files_json = NULL;
	}
	return rc;
}

/* ---- once per file, for many threads ------------------------------------------ */

typedef struct hash_entry {
	bool done;
	int rc; /* the store's answer, the same for every asker */
	char hex[65];
	int64_t bytes;
	fdl_error err;
} hash_entry;

struct fdl_hash_cache {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* an entry is done */
	fdl_strmap index;  /* key -> entry */
	hash_entry *items;
	size_t len, cap;
};

int fdl_hash_cache_new(fdl_hash_cache **out, fdl_error *err)
{
	fdl_hash_cache *c = calloc(1, sizeof *c);
	if (!c)
		return fdl_oom(err);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	*out = c;
	return 0;
}

void fdl_hash_cache_free(fdl_hash_cache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	fdl_strmap_free(&c->index);
	free(c->items);
	free(c);
}

/* Under the lock: the entry of `key`, made (not done) when there is none;
 * *mine says this caller made it and computes it. -1 when out of memory. */
static int64_t entry_of(fdl_hash_cache *c, const char *key, bool *mine)
{
	int64_t at;
	*mine = false;
	if (fdl_strmap_get(&c->index, key, &at))
		return at;
	if (c->len == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		hash_entry *grown = realloc(c->items, cap * sizeof *grown);
		if (!grown)
			return -1;
		c->items = grown;
		c->cap = cap;
	}
	fdl_error e;
	if (fdl_strmap_put(&c->index, key, (int64_t)c->len, &e))
		return -1;
	memset(&c->items[c->len], 0, sizeof c->items[c->len]);
	*mine = true;
	return (int64_t)c->len++;
}

int fdl_hash_cache_get(fdl_hash_cache *c, fdl_store *s, const char *key, char hex[65], int64_t *bytes,
		       fdl_error *err)
{
	bool mine;
	pthread_mutex_lock(&c->mu);
	int64_t at = entry_of(c, key, &mine);
	if (at >= 0 && mine) {
		pthread_mutex_unlock(&c->mu);
		hash_entry got = {.done = true};
		got.rc = fdl_store_sha256(s, key, got.hex, &got.bytes, &got.err);
		pthread_mutex_lock(&c->mu);
		c->items[at] = got; /* by index: the array may have moved */
		pthread_cond_broadcast(&c->cv);
	}
	while (at >= 0 && !c->items[at].done)
		pthread_cond_wait(&c->cv, &c->mu);
	hash_entry e = at >= 0 ? c->items[at] : (hash_entry){0};
	pthread_mutex_unlock(&c->mu);
	if (at < 0)
		return fdl_oom(err);
	if (e.rc)
		return fdl_fail(err, e.rc, "%s", e.err.message);
	memcpy(hex, e.hex, 65);
	if (bytes)
		*bytes = e.bytes;
	return 0;
}
