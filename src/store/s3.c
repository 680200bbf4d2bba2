/*
 * The S3 store: a bucket (AWS S3, R2, MinIO, GCS's S3 API, ...) through
 * libcurl, which signs every request with AWS SigV4 itself.
 *
 * Atomicity comes from the server's conditional requests, the twin of the
 * folder store's link() and lockfile:
 *  - create-only: PUT (or CompleteMultipartUpload) with If-None-Match: *
 *  - compare-and-swap: PUT with If-Match: <the etag read>
 * 412 Precondition Failed, and 409 ConditionalRequestConflict (AWS, for
 * racing conditional writes), mean another writer won. A server that
 * ignores these headers would silently lose updates, so before the first
 * conditional write a process makes to a bucket the store proves that the
 * server honours both (a probe key written twice), remembers the answer in
 * the cache folder, and refuses to write to a server that does not.
 *
 * Transient failures (5xx, 429, timeouts, resets) are retried with
 * exponential backoff and jitter. A conditional write retried after an
 * attempt that may have reached the server, and then refused, is checked
 * against what the bucket holds: if it holds exactly our bytes, the earlier
 * attempt won and the write succeeded.
 *
 * Files larger than FDL_S3_MULTIPART_THRESHOLD (default 16 MiB) go up in
 * parts of FDL_S3_PART_SIZE (default 8 MiB; AWS wants at least 5 MiB but for
 * the last part), each streamed from the file, so
 * memory stays bounded; an upload that fails is aborted, and one that is
 * interrupted never becomes an object (S3 shows it only once completed).
 */
#include "s3.h"

#include <errno.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading ---------------------------------------------------------------- */

static int s3_get(fdl_store *st, const char *key, size_t max_bytes, fdl_buf *out, char etag[FDL_ETAG_MAX],
		  fdl_error *err)
{
	s3_req r = {.s = (s3_store *)st, .method = "GET", .key = key, .sink = {.buf = out, .max = max_bytes}};
	int rc = fdl_s3_perform(&r, err);
	if (!rc && !fdl_s3_ok(&r))
		rc = fdl_s3_status_error(&r, err);
	if (!rc && !out->data)
		rc = fdl_buf_add(out, "", 0, err);
	if (!rc && etag)
		memcpy(etag, r.sink.etag, FDL_ETAG_MAX);
	fdl_buf_free(&r.errbody);
	return rc;
}

static int s3_get_file(fdl_store *st, const char *key, const char *local_path, fdl_error *err)
{
	FILE *f = fopen(local_path, "w+b");
	if (!f)
		return fdl_fail(err, FDL_EIO, "cannot create %s: %s", local_path, strerror(errno));
	s3_req r = {.s = (s3_store *)st, .method = "GET", .key = key, .sink = {.file = f, .max = SIZE_MAX}};
	int rc = fdl_s3_perform(&r, err);
	if (!rc && !fdl_s3_ok(&r))
		rc = fdl_s3_status_error(&r, err);
	if (fclose(f) != 0 && !rc)
		rc = fdl_fail(err, FDL_EIO, "cannot write %s", local_path);
	if (rc)
		remove(local_path);
	fdl_buf_free(&r.errbody);
	return rc;
}

static int s3_sha256(fdl_store *st, const char *key, char hex[65], int64_t *bytes, fdl_error *err)
{
	s3_req r = {.s = (s3_store *)st, .method = "GET", .key = key, .sink = {.max = SIZE_MAX}};
	int rc = fdl_sha256_new(&r.sink.hash, err);
	if (!rc)
		rc = fdl_s3_perform(&r, err);
	if (!rc && !fdl_s3_ok(&r))
		rc = fdl_s3_status_error(&r, err);
	if (!rc)
		rc = fdl_sha256_final(r.sink.hash, hex, err);
	if (!rc && bytes)
		*bytes = (int64_t)r.sink.got;
	fdl_sha256_free(r.sink.hash);
	fdl_buf_free(&r.errbody);
	return rc;
}

static int s3_head(fdl_store *st, const char *key, int64_t *bytes, fdl_error *err)
{
	s3_req r;
	int rc = fdl_s3_head((s3_store *)st, key, &r, err);
	if (!rc && bytes)
		*bytes = r.length;
	return rc;
}

static int s3_modified(fdl_store *st, const char *key, int64_t *when, fdl_error *err)
{
	s3_req r;
	int rc = fdl_s3_head((s3_store *)st, key, &r, err);
	if (!rc && r.mtime < 0)
		rc = fdl_fail(err, FDL_EIO, "HEAD %s/%s: the answer has no Last-Modified", st->url, key);
	if (!rc)
		*when = r.mtime;
	return rc;
}

/* Every key below `prefix`: ListObjectsV2, a page of up to 1000 at a time,
 * keys URL-encoded by the server (encoding-type=url) and decoded here. */
static int s3_list(fdl_store *st, const char *prefix, fdl_strlist *out, fdl_strlist *others, fdl_error *err)
{
	(void)others; /* a bucket holds objects only */
	s3_store *s = (s3_store *)st;
	char *full = *prefix ? fdl_s3_object_key(s, prefix) : fdl_strdup(s->cfg.prefix);
	char *want = full ? fdl_asprintf("%s%s", full, *full ? "/" : "") : NULL;
	free(full);
	if (!want)
		return fdl_oom(err);
	size_t strip = *s->cfg.prefix ? strlen(s->cfg.prefix) + 1 : 0;
	char *token = NULL;
	int rc = 0;
	do {
		fdl_buf q = {0}, body = {0};
		if (token) {
			rc = fdl_buf_puts(&q, "continuation-token=", err);
			if (!rc)
				rc = fdl_s3_uri_encode(&q, token, false, err);
			if (!rc)
				rc = fdl_buf_puts(&q, "&", err);
		}
		if (!rc)
			rc = fdl_buf_puts(&q, "encoding-type=url&list-type=2&prefix=", err);
		if (!rc)
			rc = fdl_s3_uri_encode(&q, want, false, err);
		free(token);
		token = NULL;
		s3_req r = {.s = s, .method = "GET", .query = q.data, .sink = {.buf = &body, .max = 64 * MIB}};
		if (!rc)
			rc = fdl_s3_perform(&r, err);
		if (!rc && !fdl_s3_ok(&r))
			rc = fdl_s3_status_error(&r, err);
		if (!rc)
			rc = fdl_s3_list_page(out, &token, s->curl, body.data, body.len, want, strip, s->url, err);
		fdl_buf_free(&body);
		fdl_buf_free(&q);
		fdl_buf_free(&r.errbody);
	} while (!rc && token);
	free(token);
	free(want);
	return rc;
}

/* ---- proving conditional writes ------------------------------------------- */

static int put_mem(s3_store *s, const char *key, const void *data, size_t len, const char *inm, const char *im,
		   s3_req *r, fdl_error *err)
{
	*r = (s3_req){.s = s, .method = "PUT", .key = key, .body = data, .body_len = len, .if_none_match = inm,
		      .if_match = im, .content_type = fdl_content_type(key)};
	return fdl_s3_perform(r, err);
}

static char *probe_marker(const s3_store *s)
{
	char *id = fdl_asprintf("%s %s", s->cfg.endpoint, s->cfg.bucket);
	char *p = id ? fdl_cache_path_hashed("s3-conditional", id) : NULL;
	free(id);
	return p;
}

static int probe(s3_store *s, fdl_error *err)
{
	unsigned char rnd[8];
	if (RAND_bytes(rnd, sizeof rnd) != 1)
		return fdl_fail(err, FDL_ERROR, "no random bytes for the probe key");
	char key[64];
	snprintf(key, sizeof key, ".fdl-probe-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		 rnd[5], rnd[6], rnd[7]);
	s3_req r;
	int rc = put_mem(s, key, "1", 1, "*", NULL, &r, err);
	if (!rc && !fdl_s3_ok(&r))
		rc = fdl_s3_status_error(&r, err);
	bool made = !rc;
	const char *ignored = NULL;
	if (!rc) {
		fdl_buf_free(&r.errbody);
		rc = put_mem(s, key, "2", 1, "*", NULL, &r, err);
		if (!rc && fdl_s3_ok(&r))
			ignored = "If-None-Match: * (a second create-only PUT of the same key succeeded)";
		else if (!rc && !fdl_s3_refused(&r))
			rc = fdl_s3_status_error(&r, err);
	}
	if (!rc && !ignored) {
		fdl_buf_free(&r.errbody);
		rc = put_mem(s, key, "3", 1, NULL, "\"00000000000000000000000000000000\"", &r, err);
		if (!rc && fdl_s3_ok(&r))
			ignored = "If-Match (a PUT with a wrong ETag succeeded)";
		else if (!rc && !fdl_s3_refused(&r))
			rc = fdl_s3_status_error(&r, err);
	}
	fdl_buf_free(&r.errbody);
	if (made) {
		s3_req d = {.s = s, .method = "DELETE", .key = key};
		fdl_error e2;
		fdl_s3_perform(&d, &e2); /* best effort: a leftover probe key is harmless */
		fdl_buf_free(&d.errbody);
	}
	if (!rc && ignored)
		rc = fdl_fail(err, FDL_EINVALID,
			      "%s: the S3 server at %s ignores %s. fdl refuses to write to it: without conditional "
			      "writes two publishers could overwrite each other's versions and refs. Reading works; "
			      "to publish, use a server that honours If-None-Match and If-Match on PutObject (AWS S3, "
			      "R2, MinIO, GCS).",
			      s->url, s->cfg.endpoint, ignored);
	if (rc)
		return fdl_error_prefix(err, "checking that %s honours conditional writes", s->url);
	s->probed = true;
	char *marker = probe_marker(s);
	fdl_cache_write(marker, "ok\n", 3);
	free(marker);
	return 0;
}

/* Before the first conditional write: proven once per machine and bucket. */
static int ensure_probed(s3_store *s, fdl_error *err)
{
	if (s->probed)
		return 0;
	char *marker = probe_marker(s);
	struct stat st;
	if (marker && stat(marker, &st) == 0)
		s->probed = true;
	free(marker);
	return s->probed ? 0 : probe(s, err);
}

static int s3_check_conditional(fdl_store *st, fdl_error *err)
{
	return probe((s3_store *)st, err);
}

/* ---- writing ---------------------------------------------------------------- */

/* After a retried write was refused: did an earlier attempt of ours land?
 * Yes when the key holds exactly our bytes. */
static bool holds_bytes(s3_store *s, const char *key, const void *data, size_t len)
{
	fdl_buf b = {0};
	fdl_error e2;
	bool same = s3_get(&s->base, key, len + 1, &b, NULL, &e2) == 0 && b.len == len && !memcmp(b.data, data, len);
	fdl_buf_free(&b);
	return same;
}

static bool holds_file(s3_store *s, const char *key, const char *path)
{
	char *tmp = fdl_asprintf("%s.fdl-check-%ld", path, (long)getpid());
	char a[65], b[65];
	int64_t na = 0, nb = 0;
	fdl_error e2;
	bool same = tmp && s3_get_file(&s->base, key, tmp, &e2) == 0 && !fdl_sha256_file(a, &na, tmp, &e2) &&
		    !fdl_sha256_file(b, &nb, path, &e2) && na == nb && !strcmp(a, b);
	if (tmp)
		remove(tmp);
	free(tmp);
	return same;
}

static int s3_put_if_absent(fdl_store *st, const char *key, const void *data, size_t len, fdl_error *err)
{
	s3_store *s = (s3_store *)st;
	s3_req r = {0};
	int rc = ensure_probed(s, err);
	if (!rc)
		rc = put_mem(s, key, data, len, "*", NULL, &r, err);
	if (!rc && fdl_s3_refused(&r) && !(r.uncertain && holds_bytes(s, key, data, len)))
		rc = fdl_s3_refused_error(&r, FDL_EEXISTS, err);
	else if (!rc && !fdl_s3_ok(&r) && !fdl_s3_refused(&r))
		rc = fdl_s3_status_error(&r, err);
	fdl_buf_free(&r.errbody);
	return rc;
}

static int s3_put_if_match(fdl_store *st, const char *key, const void *data, size_t len, const char *etag,
			   fdl_error *err)
{
	s3_store *s = (s3_store *)st;
	s3_req r = {0};
	int rc = ensure_probed(s, err);
	if (!rc)
		rc = put_mem(s, key, data, len, etag ? NULL : "*", etag, &r, err);
	/* 404: the key we meant to replace is gone, which is a change too */
	bool lost = fdl_s3_refused(&r) || (etag && r.status == 404);
	if (!rc && lost && !(r.uncertain && holds_bytes(s, key, data, len)))
		rc = fdl_s3_refused_error(&r, FDL_ECONFLICT, err);
	else if (!rc && !fdl_s3_ok(&r) && !lost)
		rc = fdl_s3_status_error(&r, err);
	fdl_buf_free(&r.errbody);
	return rc;
}

static int s3_put_file_if_absent(fdl_store *st, const char *key, const char *path, fdl_error *err)
{
	s3_store *s = (s3_store *)st;
	int rc = ensure_probed(s, err);
	if (rc)
		return rc;
	FILE *f = fopen(path, "rb");
	struct stat sb;
	if (!f || fstat(fileno(f), &sb) != 0) {
		rc = fdl_fail(err, errno == ENOENT ? FDL_ENOTFOUND : FDL_EIO, "cannot read %s: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return rc;
	}
	int64_t size = (int64_t)sb.st_size;
	if (size > s->threshold) {
		rc = fdl_s3_multipart_upload(s, key, f, size, err);
	} else {
		s3_req r = {.s = s, .method = "PUT", .key = key, .file = f, .file_len = size, .if_none_match = "*",
			    .content_type = fdl_content_type(key), .progress_key = key, .progress_total = size};
		rc = fdl_s3_perform(&r, err);
		if (!rc && fdl_s3_refused(&r) && !(r.uncertain && holds_file(s, key, path)))
			rc = fdl_s3_refused_error(&r, FDL_EEXISTS, err);
		else if (!rc && !fdl_s3_ok(&r) && !fdl_s3_refused(&r))
			rc = fdl_s3_status_error(&r, err);
		fdl_buf_free(&r.errbody);
	}
	fclose(f);
	return rc;
}

/* CopyObject, create-only (If-None-Match: *): the bytes stay in the
 * bucket. AWS may answer 200 with an error in the body: that is a failure.
 * An object over CopyObject's 5 GiB (refused with InvalidRequest) goes
 * through a temporary file. */
static int s3_copy_if_absent(fdl_store *st, const char *from, const char *to, fdl_error *err)
{
	s3_store *s = (s3_store *)st;
	s3_req r = {0};
	fdl_buf src = {0}, body = {0};
	int rc = ensure_probed(s, err);
	char *obj = rc ? NULL : fdl_s3_object_key(s, from);
	if (!rc && !obj)
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_buf_printf(&src, err, "/%s/", s->cfg.bucket);
	if (!rc)
		rc = fdl_s3_uri_encode(&src, obj, true, err);
	if (!rc) {
		r = (s3_req){.s = s, .method = "PUT", .key = to, .body = "", .body_len = 0, .if_none_match = "*",
			     .copy_source = src.data, .sink = {.buf = &body, .max = 1 << 20}};
		rc = fdl_s3_perform(&r, err);
	}
	char *code = !rc && r.status == 400 ? fdl_s3_error_text(&r.errbody) : NULL;
	bool too_big = code && strstr(code, "InvalidRequest") && strstr(code, "size");
	if (!rc && too_big)
		rc = fdl_store_copy_through_file(st, from, to, err);
	else if (!rc && fdl_s3_refused(&r))
		rc = fdl_s3_refused_error(&r, FDL_EEXISTS, err);
	else if (!rc && r.status == 404)
		rc = fdl_fail(err, FDL_ENOTFOUND, "copying %s: it is not in the bucket", from);
	else if (!rc && !fdl_s3_ok(&r))
		rc = fdl_s3_status_error(&r, err);
	else if (!rc && body.data && strstr(body.data, "<Error>"))
		rc = fdl_fail(err, FDL_EIO, "copying %s to %s: %s", from, to, body.data);
	free(code);
	free(obj);
	fdl_buf_free(&src);
	fdl_buf_free(&body);
	fdl_buf_free(&r.errbody);
	return rc;
}

static int s3_del(fdl_store *st, const char *key, fdl_error *err)
{
	s3_req r = {.s = (s3_store *)st, .method = "DELETE", .key = key};
	int rc = fdl_s3_perform(&r, err);
	if (!rc && !fdl_s3_ok(&r) && r.status != 404)
		rc = fdl_s3_status_error(&r, err);
	fdl_buf_free(&r.errbody);
	return rc;
}

/* DeleteObject with If-Match where the server has it; the ETag is checked
 * first as well, for servers that ignore it on DELETE. */
static int s3_del_if_match(fdl_store *st, const char *key, const char *etag, fdl_error *err)
{
	s3_store *s = (s3_store *)st;
	s3_req r;
	int rc = ensure_probed(s, err);
	if (!rc)
		rc = fdl_s3_head(s, key, &r, err);
	if (rc == FDL_ENOTFOUND || (!rc && strcmp(r.sink.etag, etag)))
		return fdl_s3_refused_error(&r, FDL_ECONFLICT, err);
	if (rc)
		return rc;
	r = (s3_req){.s = s, .method = "DELETE", .key = key, .if_match = etag};
	rc = fdl_s3_perform(&r, err);
	if (!rc && fdl_s3_refused(&r))
		rc = fdl_s3_refused_error(&r, FDL_ECONFLICT, err);
	else if (!rc && !fdl_s3_ok(&r))
		rc = fdl_s3_status_error(&r, err);
	fdl_buf_free(&r.errbody);
	return rc;
}

static void s3_free(fdl_store *st)
{
	s3_store *s = (s3_store *)st;
	if (s->curl)
		curl_easy_cleanup(s->curl);
	fdl_s3_config_free(&s->cfg);
	free(s->url);
	free(s->bucket_url);
	free(s->sigv4);
	free(s->cache_id);
	free(s->userpwd);
	free(s);
}

static void s3_access(fdl_store *st, fdl_s3_access *out)
{
	const fdl_s3_config *c = &((s3_store *)st)->cfg;
	*out = (fdl_s3_access){.bucket = c->bucket,
			       .region = c->region,
			       .key_id = c->key_id,
			       .secret = c->secret,
			       .token = c->token,
			       .endpoint = c->custom_endpoint ? c->endpoint : NULL,
			       .path_style = c->path_style};
}

static const fdl_store_ops s3_ops = {
	.name = "s3",
	.caps = FDL_STORE_LIST | FDL_STORE_WRITE | FDL_STORE_BUCKET,
	.get = s3_get,
	.get_file = s3_get_file,
	.sha256 = s3_sha256,
	.head = s3_head,
	.modified = s3_modified,
	.put_if_absent = s3_put_if_absent,
	.put_file_if_absent = s3_put_file_if_absent,
	.put_if_match = s3_put_if_match,
	.copy_if_absent = s3_copy_if_absent,
	.list = s3_list,
	.del = s3_del,
	.del_if_match = s3_del_if_match,
	.local_path = NULL,
	.check_conditional = s3_check_conditional,
	.s3_access = s3_access,
	.free = s3_free,
};

int fdl_store_s3_open(fdl_store **out, const char *url, fdl_error *err)
{
	int rc = fdl_curl_load(err);
	if (rc || (rc = fdl_xml_load(err)))
		return rc;
	s3_store *s = calloc(1, sizeof *s);
	if (!s)
		return fdl_oom(err);
	rc = fdl_s3_config_load(&s->cfg, url, err);
	if (rc) {
		free(s);
		return rc;
	}
	s->url = *s->cfg.prefix ? fdl_asprintf("s3://%s/%s", s->cfg.bucket, s->cfg.prefix)
				: fdl_asprintf("s3://%s", s->cfg.bucket);
	s->bucket_url = fdl_s3_bucket_url(&s->cfg);
	s->sigv4 = fdl_asprintf("aws:amz:%s:s3", s->cfg.region);
	s->userpwd = s->cfg.key_id ? fdl_asprintf("%s:%s", s->cfg.key_id, s->cfg.secret) : NULL;
	s->curl = curl_easy_init();
	s->retries = (int)fdl_s3_env_long("FDL_S3_RETRIES", 5, 0);
	s->retry_base_ms = fdl_s3_env_long("FDL_S3_RETRY_BASE_MS", 200, 1);
	s->part_size = (int64_t)fdl_s3_env_long("FDL_S3_PART_SIZE", 8 * MIB, 64 << 10);
	s->threshold = (int64_t)fdl_s3_env_long("FDL_S3_MULTIPART_THRESHOLD", 16 * MIB, 64 << 10);
	s->base.ops = &s3_ops;
	s->base.url = s->url;
	s->cache_id = fdl_asprintf("%s %s", s->cfg.endpoint, s->url); /* one bucket name, many endpoints */
	s->base.cache_id = s->cache_id;
	if (!s->url || !s->bucket_url || !s->sigv4 || !s->cache_id || (s->cfg.key_id && !s->userpwd) || !s->curl) {
		s3_free(&s->base);
		return fdl_fail(err, FDL_ENOMEM, "out of memory starting the S3 store");
	}
	*out = &s->base;
	return 0;
}
