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
#include "aws.h"
#include "curlx.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MIB ((int64_t)1 << 20)

typedef struct s3_store {
	fdl_store base;
	fdl_s3_config cfg;
	char *url;        /* s3://bucket[/prefix] */
	char *bucket_url; /* base URL of object keys */
	char *sigv4;      /* "aws:amz:<region>:s3" */
	char *cache_id;   /* endpoint and URL: names the bucket in the local cache */
	char *userpwd;    /* "<key id>:<secret>" */
	CURL *curl;       /* reused: keep-alive for the whole open */
	bool probed;      /* conditional writes proven in this process */
	int retries;
	long retry_base_ms;
	int64_t part_size, threshold;
} s3_store;

/* One request, retried as a whole. */
typedef struct s3_req {
	const char *method; /* GET HEAD PUT POST DELETE */
	const char *key;    /* relative to the store root; NULL = the bucket */
	const char *query;  /* encoded, parameters sorted by name; NULL = none */
	const char *body;   /* in-memory body (PUT, POST) */
	size_t body_len;
	FILE *file; /* or a region of a file (PUT) */
	int64_t file_off, file_len;
	const char *if_none_match, *if_match;
	const char *content_type;
	fdl_sink sink; /* the 2xx body */
	/* out */
	long status;
	fdl_buf errbody;
	int64_t length, mtime;
	bool uncertain; /* an earlier attempt may have reached the server */
	/* internal */
	s3_store *s;
	int64_t sent;
	int64_t progress_base, progress_total;
	const char *progress_key;
} s3_req;

/* ---- small helpers -------------------------------------------------------- */

static char *object_key(const s3_store *s, const char *key)
{
	return *s->cfg.prefix ? fdl_asprintf("%s/%s", s->cfg.prefix, key) : fdl_strdup(key);
}

/* S3's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ (and '/' in keys). */
static int uri_encode(fdl_buf *b, const char *s, bool keep_slash, fdl_error *err)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char c = (char)*p;
		bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			     c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
		char enc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
		int rc = plain ? fdl_buf_add(b, &c, 1, err) : fdl_buf_add(b, enc, 3, err);
		if (rc)
			return rc;
	}
	return 0;
}

static char *display(const s3_store *s, const char *key)
{
	return key ? fdl_asprintf("%s/%s", s->url, key) : fdl_strdup(s->url);
}

static long env_long(const char *name, long dflt, long min)
{
	const char *v = getenv(name);
	long n = v && *v ? strtol(v, NULL, 10) : dflt;
	return n < min ? min : n;
}

/* Random milliseconds in [d/2, d]: exponential backoff with jitter. */
static void backoff(const s3_store *s, int attempt)
{
	long d = s->retry_base_ms;
	for (int i = 0; i < attempt && d < 10000; i++)
		d *= 2;
	if (d > 10000)
		d = 10000;
	unsigned int r = 0;
	if (RAND_bytes((unsigned char *)&r, sizeof r) != 1)
		r = (unsigned int)time(NULL);
	long ms = d / 2 + (long)(r % (unsigned long)(d / 2 + 1));
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The first element named `name` anywhere below `n`, as text. */
static char *xml_text(xmlNode *n, const char *name)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!strcmp((const char *)n->name, name)) {
			xmlChar *t = xmlNodeGetContent(n);
			char *r = fdl_strdup(t ? (const char *)t : "");
			xmlFree(t);
			return r;
		}
		char *r = xml_text(n->children, name);
		if (r)
			return r;
	}
	return NULL;
}

static xmlDoc *xml_parse(const char *data, size_t len)
{
	if (!data || !len || len > INT32_MAX)
		return NULL;
	return xmlReadMemory(data, (int)len, "s3.xml", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
}

/* "Code: Message" of an S3 error body, or NULL. */
static char *s3_error_text(const fdl_buf *b)
{
	xmlDoc *doc = xml_parse(b->data, b->len);
	if (!doc)
		return NULL;
	xmlNode *root = xmlDocGetRootElement(doc);
	char *code = xml_text(root, "Code"), *msg = xml_text(root, "Message");
	char *r = code ? fdl_asprintf("%s%s%s", code, msg ? ": " : "", msg ? msg : "") : NULL;
	free(code);
	free(msg);
	xmlFreeDoc(doc);
	return r;
}

/* ---- one request ---------------------------------------------------------- */

static size_t on_read(char *p, size_t size, size_t n, void *user)
{
	s3_req *r = user;
	size_t want = size * n;
	if (r->file) {
		int64_t left = r->file_len - r->sent;
		if ((int64_t)want > left)
			want = (size_t)left;
		size_t got = want ? fread(p, 1, want, r->file) : 0;
		if (got < want && ferror(r->file))
			return CURL_READFUNC_ABORT;
		r->sent += (int64_t)got;
		return got;
	}
	size_t left = r->body_len - (size_t)r->sent;
	if (want > left)
		want = left;
	memcpy(p, r->body + r->sent, want);
	r->sent += (int64_t)want;
	return want;
}

static size_t on_body(char *p, size_t size, size_t n, void *user)
{
	s3_req *r = user;
	size_t len = size * n;
	long status = 0;
	curl_easy_getinfo(r->s->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 300) { /* an error document, never the caller's data */
		if (r->errbody.len < 65536)
			fdl_buf_add(&r->errbody, p, len, NULL);
		return len;
	}
	return fdl_sink_write(&r->sink, p, len);
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	s3_req *r = user;
	fdl_store *st = &r->s->base;
	if (st->progress && r->progress_key)
		st->progress(r->progress_key, r->progress_base + (int64_t)ulnow, r->progress_total,
			     st->progress_payload);
	return 0;
}

static bool transient_curl(CURLcode cc)
{
	return cc == CURLE_COULDNT_CONNECT || cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_SEND_ERROR ||
	       cc == CURLE_RECV_ERROR || cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE ||
	       cc == CURLE_HTTP2 || cc == CURLE_HTTP2_STREAM || cc == CURLE_SSL_CONNECT_ERROR;
}

static bool transient_status(long st)
{
	return st == 429 || st == 500 || st == 502 || st == 503 || st == 504;
}

/* Undo what a failed attempt left in the response sinks. */
static int reset_attempt(s3_req *r, fdl_error *err)
{
	r->sent = 0;
	r->status = 0;
	fdl_buf_free(&r->errbody);
	r->sink.got = 0;
	r->sink.too_big = false;
	r->sink.etag[0] = '\0';
	if (r->sink.buf)
		fdl_buf_free(r->sink.buf);
	if (r->sink.file && (fflush(r->sink.file) || ftruncate(fileno(r->sink.file), 0) || fseeko(r->sink.file, 0, SEEK_SET)))
		return fdl_fail(err, FDL_EIO, "cannot rewind a download file: %s", strerror(errno));
	if (r->file && fseeko(r->file, (off_t)r->file_off, SEEK_SET))
		return fdl_fail(err, FDL_EIO, "cannot seek in the upload: %s", strerror(errno));
	return 0;
}

static int perform_once(s3_req *r, const char *url, CURLcode *cc, fdl_error *err)
{
	s3_store *s = r->s;
	CURL *c = s->curl;
	curl_easy_reset(c);
	char curl_err[CURL_ERROR_SIZE];
	fdl_curl_defaults(c, curl_err);
	fdl_curl_sink(c, &r->sink); /* header callback: the ETag */
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_FILETIME, 1L);
	if (getenv("FDL_CURL_VERBOSE")) curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
	if (s->userpwd) {
		curl_easy_setopt(c, CURLOPT_AWS_SIGV4, s->sigv4);
		curl_easy_setopt(c, CURLOPT_USERPWD, s->userpwd);
	}
	struct curl_slist *h = NULL;
	fdl_buf line = {0};
	char sha[65] = EMPTY_SHA256;
	int rc = 0;
	if (r->body && r->body_len)
		rc = fdl_sha256_mem(sha, r->body, r->body_len, err);
	/* streamed uploads are not hashed twice: S3 accepts them unsigned */
	if (!rc)
		rc = fdl_buf_printf(&line, err, "x-amz-content-sha256: %s", r->file ? "UNSIGNED-PAYLOAD" : sha);
	if (!rc)
		h = curl_slist_append(h, line.data);
	fdl_buf_free(&line);
	if (!rc && s->cfg.token && !(rc = fdl_buf_printf(&line, err, "x-amz-security-token: %s", s->cfg.token)))
		h = curl_slist_append(h, line.data);
	fdl_buf_free(&line);
	if (!rc && r->if_none_match && !(rc = fdl_buf_printf(&line, err, "If-None-Match: %s", r->if_none_match)))
		h = curl_slist_append(h, line.data);
	fdl_buf_free(&line);
	if (!rc && r->if_match && !(rc = fdl_buf_printf(&line, err, "If-Match: %s", r->if_match)))
		h = curl_slist_append(h, line.data);
	fdl_buf_free(&line);
	if (!rc && r->content_type && !(rc = fdl_buf_printf(&line, err, "Content-Type: %s", r->content_type)))
		h = curl_slist_append(h, line.data);
	fdl_buf_free(&line);
	if (rc) {
		curl_slist_free_all(h);
		return rc;
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	bool upload = !strcmp(r->method, "PUT");
	if (!strcmp(r->method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (upload) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, r);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE,
				 (curl_off_t)(r->file ? r->file_len : (int64_t)r->body_len));
		if (r->progress_key) {
			curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
			curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
			curl_easy_setopt(c, CURLOPT_XFERINFODATA, r);
		}
	} else if (!strcmp(r->method, "POST")) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body ? r->body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	} else if (strcmp(r->method, "GET")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
	}
	*cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_off_t len = -1, when = -1;
	curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	curl_easy_getinfo(c, CURLINFO_FILETIME_T, &when);
	r->length = (int64_t)len;
	r->mtime = (int64_t)when;
	curl_slist_free_all(h);
	if (*cc != CURLE_OK && !r->sink.too_big)
		rc = fdl_fail(err, FDL_EIO, "%s", curl_err[0] ? curl_err : curl_easy_strerror(*cc));
	return rc;
}

/* Run a request with retries. Returns 0 with r->status set for any HTTP
 * answer that is not transient (the caller maps 4xx); an error for a
 * transport failure or a 5xx that outlived the retries. */
static int perform(s3_req *r, fdl_error *err)
{
	s3_store *s = r->s;
	fdl_buf url = {0};
	char *obj = r->key ? object_key(s, r->key) : NULL;
	int rc = (r->key && !obj) ? fdl_fail(err, FDL_ERROR, "out of memory") : fdl_buf_puts(&url, s->bucket_url, err);
	if (!rc && obj)
		rc = uri_encode(&url, obj, true, err);
	if (!rc && r->query)
		rc = fdl_buf_printf(&url, err, "?%s", r->query);
	free(obj);
	char *what = display(s, r->key);
	for (int attempt = 0; !rc; attempt++) {
		CURLcode cc = CURLE_OK;
		fdl_error e2;
		if ((rc = reset_attempt(r, err)))
			break;
		s->base.requests++;
		int prc = perform_once(r, url.data, &cc, &e2);
		if (r->sink.too_big) {
			rc = fdl_fail(err, FDL_EINVALID, "%s is larger than the %zu bytes allowed", what, r->sink.max);
			break;
		}
		bool retry = (prc && transient_curl(cc)) || (!prc && transient_status(r->status));
		if (prc && !retry) {
			rc = fdl_fail(err, e2.code, "%s %s: %s", r->method, what, e2.message);
			break;
		}
		if (!retry)
			break;
		/* a request that was sent may have been applied */
		if (cc != CURLE_COULDNT_CONNECT && strcmp(r->method, "GET") && strcmp(r->method, "HEAD"))
			r->uncertain = true;
		if (attempt >= s->retries) {
			char *why = prc ? NULL : s3_error_text(&r->errbody);
			if (prc)
				rc = fdl_fail(err, FDL_EIO, "%s %s: %s (gave up after %d attempts)", r->method, what,
					      e2.message, attempt + 1);
			else
				rc = fdl_fail(err, FDL_EIO, "%s %s: HTTP %ld%s%s (gave up after %d attempts)", r->method,
					      what, r->status, why ? " " : "", why ? why : "", attempt + 1);
			free(why);
			break;
		}
		backoff(s, attempt);
	}
	free(what);
	fdl_buf_free(&url);
	return rc;
}

/* The error for an answer the caller did not expect. */
static int status_error(s3_req *r, fdl_error *err)
{
	char *what = display(r->s, r->key);
	char *why = s3_error_text(&r->errbody);
	int code = r->status == 404 ? FDL_ENOTFOUND : FDL_EIO;
	const char *hint = "";
	if (r->status == 403 || r->status == 401)
		hint = r->s->userpwd ? " (check the credentials from " : " (no AWS credentials were found; set "
									 "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE";
	int rc = r->status == 404 ? fdl_fail(err, code, "%s: not found%s%s%s", what, why ? " (" : "", why ? why : "",
					     why ? ")" : "")
				  : fdl_fail(err, code, "%s %s: HTTP %ld%s%s%s%s%s", r->method, what, r->status,
					     why ? " " : "", why ? why : "", hint,
					     *hint && r->s->userpwd ? r->s->cfg.profile : "", *hint ? ")" : "");
	free(why);
	free(what);
	return rc;
}

static bool ok(const s3_req *r)
{
	return r->status >= 200 && r->status < 300;
}

static bool refused(const s3_req *r)
{
	return r->status == 412 || r->status == 409;
}

/* ---- reading ---------------------------------------------------------------- */

static int s3_get(fdl_store *st, const char *key, size_t max_bytes, fdl_buf *out, char etag[FDL_ETAG_MAX],
		  fdl_error *err)
{
	s3_req r = {.s = (s3_store *)st, .method = "GET", .key = key, .sink = {.buf = out, .max = max_bytes}};
	int rc = perform(&r, err);
	if (!rc && !ok(&r))
		rc = status_error(&r, err);
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
	int rc = perform(&r, err);
	if (!rc && !ok(&r))
		rc = status_error(&r, err);
	if (fclose(f) != 0 && !rc)
		rc = fdl_fail(err, FDL_EIO, "cannot write %s", local_path);
	if (rc)
		remove(local_path);
	fdl_buf_free(&r.errbody);
	return rc;
}

static int head(s3_store *s, const char *key, s3_req *r, fdl_error *err)
{
	*r = (s3_req){.s = s, .method = "HEAD", .key = key};
	int rc = perform(r, err);
	if (!rc && !ok(r))
		rc = status_error(r, err);
	return rc;
}

static int s3_head(fdl_store *st, const char *key, int64_t *bytes, fdl_error *err)
{
	s3_req r;
	int rc = head((s3_store *)st, key, &r, err);
	if (!rc && bytes)
		*bytes = r.length;
	return rc;
}

static int s3_modified(fdl_store *st, const char *key, int64_t *when, fdl_error *err)
{
	s3_req r;
	int rc = head((s3_store *)st, key, &r, err);
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
	char *full = *prefix ? object_key(s, prefix) : fdl_strdup(s->cfg.prefix);
	char *want = full ? fdl_asprintf("%s%s", full, *full ? "/" : "") : NULL;
	free(full);
	if (!want)
		return fdl_fail(err, FDL_ERROR, "out of memory");
	size_t strip = *s->cfg.prefix ? strlen(s->cfg.prefix) + 1 : 0;
	char *token = NULL;
	int rc = 0;
	do {
		fdl_buf q = {0}, body = {0};
		if (token) {
			rc = fdl_buf_puts(&q, "continuation-token=", err);
			if (!rc)
				rc = uri_encode(&q, token, false, err);
			if (!rc)
				rc = fdl_buf_puts(&q, "&", err);
		}
		if (!rc)
			rc = fdl_buf_puts(&q, "encoding-type=url&list-type=2&prefix=", err);
		if (!rc)
			rc = uri_encode(&q, want, false, err);
		free(token);
		token = NULL;
		s3_req r = {.s = s, .method = "GET", .query = q.data, .sink = {.buf = &body, .max = 64 * MIB}};
		if (!rc)
			rc = perform(&r, err);
		if (!rc && !ok(&r))
			rc = status_error(&r, err);
		xmlDoc *doc = rc ? NULL : xml_parse(body.data, body.len);
		if (!rc && !doc)
			rc = fdl_fail(err, FDL_EIO, "listing %s/%s: the answer is not S3's XML", s->url, prefix);
		xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
		for (xmlNode *n = root ? root->children : NULL; !rc && n; n = n->next) {
			if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "Contents"))
				continue;
			char *k = xml_text(n->children, "Key");
			int dl = 0;
			char *dec = k ? curl_easy_unescape(s->curl, k, 0, &dl) : NULL;
			if (!dec)
				rc = fdl_fail(err, FDL_EIO, "listing %s: an entry without a Key", s->url);
			else if ((size_t)dl > strip && !strncmp(dec, want, strlen(want)))
				rc = fdl_strlist_add(out, dec + strip, err);
			curl_free(dec);
			free(k);
		}
		char *trunc = root ? xml_text(root->children, "IsTruncated") : NULL;
		if (!rc && trunc && !strcmp(trunc, "true")) {
			token = xml_text(root->children, "NextContinuationToken");
			if (!token || !*token)
				rc = fdl_fail(err, FDL_EIO, "listing %s: truncated, without a continuation token", s->url);
		}
		free(trunc);
		if (doc)
			xmlFreeDoc(doc);
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
	return perform(r, err);
}

static char *probe_marker(const s3_store *s)
{
	char *id = fdl_asprintf("%s %s", s->cfg.endpoint, s->cfg.bucket);
	char *dir = fdl_cache_dir();
	char hex[65];
	char *p = id && dir && !fdl_sha256_mem(hex, id, strlen(id), NULL) ? fdl_asprintf("%s/s3-conditional/%s", dir, hex)
									   : NULL;
	free(id);
	free(dir);
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
	if (!rc && !ok(&r))
		rc = status_error(&r, err);
	bool made = !rc;
	const char *ignored = NULL;
	if (!rc) {
		fdl_buf_free(&r.errbody);
		rc = put_mem(s, key, "2", 1, "*", NULL, &r, err);
		if (!rc && ok(&r))
			ignored = "If-None-Match: * (a second create-only PUT of the same key succeeded)";
		else if (!rc && !refused(&r))
			rc = status_error(&r, err);
	}
	if (!rc && !ignored) {
		fdl_buf_free(&r.errbody);
		rc = put_mem(s, key, "3", 1, NULL, "\"00000000000000000000000000000000\"", &r, err);
		if (!rc && ok(&r))
			ignored = "If-Match (a PUT with a wrong ETag succeeded)";
		else if (!rc && !refused(&r))
			rc = status_error(&r, err);
	}
	fdl_buf_free(&r.errbody);
	if (made) {
		s3_req d = {.s = s, .method = "DELETE", .key = key};
		fdl_error e2;
		perform(&d, &e2); /* best effort: a leftover probe key is harmless */
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
	fdl_cache_file_write(marker, "ok\n", 3);
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

static int refused_error(s3_req *r, int code, fdl_error *err)
{
	char *what = display(r->s, r->key);
	int rc = code == FDL_EEXISTS ? fdl_fail(err, code, "%s already exists; refusing to overwrite it", what)
				     : fdl_fail(err, code, "%s was changed by another writer (HTTP %ld)", what, r->status);
	free(what);
	return rc;
}

static int s3_put_if_absent(fdl_store *st, const char *key, const void *data, size_t len, fdl_error *err)
{
	s3_store *s = (s3_store *)st;
	s3_req r = {0};
	int rc = ensure_probed(s, err);
	if (!rc)
		rc = put_mem(s, key, data, len, "*", NULL, &r, err);
	if (!rc && refused(&r) && !(r.uncertain && holds_bytes(s, key, data, len)))
		rc = refused_error(&r, FDL_EEXISTS, err);
	else if (!rc && !ok(&r) && !refused(&r))
		rc = status_error(&r, err);
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
	bool lost = refused(&r) || (etag && r.status == 404);
	if (!rc && lost && !(r.uncertain && holds_bytes(s, key, data, len)))
		rc = refused_error(&r, FDL_ECONFLICT, err);
	else if (!rc && !ok(&r) && !lost)
		rc = status_error(&r, err);
	fdl_buf_free(&r.errbody);
	return rc;
}

static int put_part(s3_store *s, const char *key, FILE *f, const char *query, int64_t off, int64_t len,
		    int64_t total, s3_req *r, fdl_error *err)
{
	*r = (s3_req){.s = s, .method = "PUT", .key = key, .query = query, .file = f, .file_off = off, .file_len = len,
		      .content_type = "application/octet-stream", .progress_key = key, .progress_base = off,
		      .progress_total = total};
	return perform(r, err);
}

static int multipart_abort(s3_store *s, const char *key, const char *upload_id)
{
	fdl_buf q = {0};
	fdl_error e2;
	int rc = fdl_buf_puts(&q, "uploadId=", &e2);
	if (!rc)
		rc = uri_encode(&q, upload_id, false, &e2);
	s3_req r = {.s = s, .method = "DELETE", .key = key, .query = q.data};
	if (!rc)
		rc = perform(&r, &e2);
	fdl_buf_free(&r.errbody);
	fdl_buf_free(&q);
	return rc;
}

static int multipart_parts(s3_store *s, const char *key, FILE *f, int64_t size, const char *upload_id,
			   fdl_buf *complete, fdl_error *err)
{
	int rc = fdl_buf_puts(complete, "<CompleteMultipartUpload>", err);
	for (int64_t off = 0, n = 1; !rc && off < size; off += s->part_size, n++) {
		fdl_store_before_write(&s->base); /* test builds: a crash between parts */
		int64_t len = size - off < s->part_size ? size - off : s->part_size;
		fdl_buf q = {0};
		rc = fdl_buf_printf(&q, err, "partNumber=%lld&uploadId=", (long long)n);
		if (!rc)
			rc = uri_encode(&q, upload_id, false, err);
		s3_req r = {0};
		if (!rc)
			rc = put_part(s, key, f, q.data, off, len, size, &r, err);
		if (!rc && !ok(&r))
			rc = status_error(&r, err);
		if (!rc && !r.sink.etag[0])
			rc = fdl_fail(err, FDL_EIO, "uploading part %lld of %s/%s: the answer has no ETag", (long long)n,
				      s->url, key);
		if (!rc)
			rc = fdl_buf_printf(complete, err, "<Part><PartNumber>%lld</PartNumber><ETag>%s</ETag></Part>",
					    (long long)n, r.sink.etag);
		fdl_buf_free(&r.errbody);
		fdl_buf_free(&q);
	}
	if (!rc)
		rc = fdl_buf_puts(complete, "</CompleteMultipartUpload>", err);
	return rc;
}

static int multipart_upload(s3_store *s, const char *key, FILE *f, int64_t size, fdl_error *err)
{
	/* fail fast, before sending gigabytes, if the key is taken */
	s3_req r;
	fdl_error e2;
	int rc = head(s, key, &r, &e2);
	if (rc == 0)
		return refused_error(&r, FDL_EEXISTS, err);
	if (rc != FDL_ENOTFOUND)
		return fdl_fail(err, e2.code, "%s", e2.message);
	fdl_buf body = {0}, complete = {0}, q = {0};
	char *upload_id = NULL;
	r = (s3_req){.s = s, .method = "POST", .key = key, .query = "uploads=", .sink = {.buf = &body, .max = MIB},
		     .content_type = fdl_content_type(key)};
	rc = perform(&r, err);
	if (!rc && !ok(&r))
		rc = status_error(&r, err);
	xmlDoc *doc = rc ? NULL : xml_parse(body.data, body.len);
	if (doc)
		upload_id = xml_text(xmlDocGetRootElement(doc), "UploadId");
	if (!rc && (!upload_id || !*upload_id))
		rc = fdl_fail(err, FDL_EIO, "starting a multipart upload of %s/%s: no UploadId in the answer", s->url, key);
	if (doc)
		xmlFreeDoc(doc);
	fdl_buf_free(&r.errbody);
	if (!rc)
		rc = multipart_parts(s, key, f, size, upload_id, &complete, err);
	if (!rc)
		rc = fdl_buf_puts(&q, "uploadId=", err);
	if (!rc)
		rc = uri_encode(&q, upload_id, false, err);
	if (!rc) {
		fdl_buf_free(&body);
		fdl_store_before_write(&s->base);
		r = (s3_req){.s = s, .method = "POST", .key = key, .query = q.data, .body = complete.data,
			     .body_len = complete.len, .if_none_match = "*", .content_type = "application/xml",
			     .sink = {.buf = &body, .max = MIB}};
		rc = perform(&r, err);
	}
	/* S3 may answer 200 and put the error in the body */
	char *in_body = !rc && ok(&r) && body.data && strstr(body.data, "<Error>") ? s3_error_text(&body) : NULL;
	if (!rc && refused(&r))
		rc = refused_error(&r, FDL_EEXISTS, err);
	else if (!rc && !ok(&r))
		rc = status_error(&r, err);
	else if (in_body)
		rc = fdl_fail(err, FDL_EIO, "completing the multipart upload of %s/%s: %s", s->url, key, in_body);
	free(in_body);
	if (rc && upload_id && *upload_id)
		multipart_abort(s, key, upload_id);
	fdl_buf_free(&r.errbody);
	fdl_buf_free(&body);
	fdl_buf_free(&complete);
	fdl_buf_free(&q);
	free(upload_id);
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
		rc = multipart_upload(s, key, f, size, err);
	} else {
		s3_req r = {.s = s, .method = "PUT", .key = key, .file = f, .file_len = size, .if_none_match = "*",
			    .content_type = fdl_content_type(key), .progress_key = key, .progress_total = size};
		rc = perform(&r, err);
		if (!rc && refused(&r) && !(r.uncertain && holds_file(s, key, path)))
			rc = refused_error(&r, FDL_EEXISTS, err);
		else if (!rc && !ok(&r) && !refused(&r))
			rc = status_error(&r, err);
		fdl_buf_free(&r.errbody);
	}
	fclose(f);
	return rc;
}

static int s3_del(fdl_store *st, const char *key, fdl_error *err)
{
	s3_req r = {.s = (s3_store *)st, .method = "DELETE", .key = key};
	int rc = perform(&r, err);
	if (!rc && !ok(&r) && r.status != 404)
		rc = status_error(&r, err);
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
		rc = head(s, key, &r, err);
	if (rc == FDL_ENOTFOUND || (!rc && strcmp(r.sink.etag, etag)))
		return refused_error(&r, FDL_ECONFLICT, err);
	if (rc)
		return rc;
	r = (s3_req){.s = s, .method = "DELETE", .key = key, .if_match = etag};
	rc = perform(&r, err);
	if (!rc && refused(&r))
		rc = refused_error(&r, FDL_ECONFLICT, err);
	else if (!rc && !ok(&r))
		rc = status_error(&r, err);
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

static int s3_duck_secret(fdl_store *st, fdl_buf *sql, fdl_error *err)
{
	return fdl_s3_secret_sql(sql, &((s3_store *)st)->cfg, "fdl_s3", err);
}

static const fdl_store_ops s3_ops = {
	.name = "s3",
	.get = s3_get,
	.get_file = s3_get_file,
	.head = s3_head,
	.modified = s3_modified,
	.put_if_absent = s3_put_if_absent,
	.put_file_if_absent = s3_put_file_if_absent,
	.put_if_match = s3_put_if_match,
	.list = s3_list,
	.del = s3_del,
	.del_if_match = s3_del_if_match,
	.local_path = NULL,
	.check_conditional = s3_check_conditional,
	.duck_secret = s3_duck_secret,
	.free = s3_free,
};

int fdl_store_s3_open(fdl_store **out, const char *url, fdl_error *err)
{
	s3_store *s = calloc(1, sizeof *s);
	if (!s)
		return fdl_fail(err, FDL_ERROR, "out of memory");
	int rc = fdl_s3_config_load(&s->cfg, url, err);
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
	s->retries = (int)env_long("FDL_S3_RETRIES", 5, 0);
	s->retry_base_ms = env_long("FDL_S3_RETRY_BASE_MS", 200, 1);
	s->part_size = (int64_t)env_long("FDL_S3_PART_SIZE", 8 * MIB, 64 << 10);
	s->threshold = (int64_t)env_long("FDL_S3_MULTIPART_THRESHOLD", 16 * MIB, 64 << 10);
	s->base.ops = &s3_ops;
	s->base.url = s->url;
	s->cache_id = fdl_asprintf("%s %s", s->cfg.endpoint, s->url); /* one bucket name, many endpoints */
	s->base.cache_id = s->cache_id;
	if (!s->url || !s->bucket_url || !s->sigv4 || !s->cache_id || (s->cfg.key_id && !s->userpwd) || !s->curl) {
		s3_free(&s->base);
		return fdl_fail(err, FDL_ERROR, "out of memory starting the S3 store");
	}
	*out = &s->base;
	return 0;
}
