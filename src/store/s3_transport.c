/* One S3 request through libcurl, which signs it with AWS SigV4 itself:
 * the headers fdl adds (the payload hash, the session token, conditions),
 * streaming of bodies both ways, and retries of transient failures (5xx,
 * 429, timeouts, resets) with exponential backoff and jitter. */
#include "s3.h"

#include <errno.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

char *fdl_s3_object_key(const s3_store *s, const char *key)
{
	return *s->cfg.prefix ? fdl_asprintf("%s/%s", s->cfg.prefix, key) : fdl_strdup(key);
}

/* S3's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ (and '/' in keys). */
int fdl_s3_uri_encode(fdl_buf *b, const char *s, bool keep_slash, fdl_error *err)
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

char *fdl_s3_display(const s3_store *s, const char *key)
{
	return key ? fdl_asprintf("%s/%s", s->url, key) : fdl_strdup(s->url);
}

long fdl_s3_env_long(const char *name, long dflt, long min)
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
	int rc = r->sink.hash ? fdl_sha256_reset(r->sink.hash, err) : 0;
	if (rc)
		return rc;
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
	if (!rc && r->copy_source && !(rc = fdl_buf_printf(&line, err, "x-amz-copy-source: %s", r->copy_source)))
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
int fdl_s3_perform(s3_req *r, fdl_error *err)
{
	s3_store *s = r->s;
	fdl_buf url = {0};
	char *obj = r->key ? fdl_s3_object_key(s, r->key) : NULL;
	int rc = (r->key && !obj) ? fdl_oom(err) : fdl_buf_puts(&url, s->bucket_url, err);
	if (!rc && obj)
		rc = fdl_s3_uri_encode(&url, obj, true, err);
	if (!rc && r->query)
		rc = fdl_buf_printf(&url, err, "?%s", r->query);
	free(obj);
	char *what = fdl_s3_display(s, r->key);
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
			char *why = prc ? NULL : fdl_s3_error_text(&r->errbody);
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
int fdl_s3_status_error(s3_req *r, fdl_error *err)
{
	char *what = fdl_s3_display(r->s, r->key);
	char *why = fdl_s3_error_text(&r->errbody);
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

bool fdl_s3_ok(const s3_req *r)
{
	return r->status >= 200 && r->status < 300;
}

bool fdl_s3_refused(const s3_req *r)
{
	return r->status == 412 || r->status == 409;
}

int fdl_s3_refused_error(s3_req *r, int code, fdl_error *err)
{
	char *what = fdl_s3_display(r->s, r->key);
	int rc = code == FDL_EEXISTS ? fdl_fail(err, code, "%s already exists; refusing to overwrite it", what)
				     : fdl_fail(err, code, "%s was changed by another writer (HTTP %ld)", what, r->status);
	free(what);
	return rc;
}

int fdl_s3_head(s3_store *s, const char *key, s3_req *r, fdl_error *err)
{
	*r = (s3_req){.s = s, .method = "HEAD", .key = key};
	int rc = fdl_s3_perform(r, err);
	if (!rc && !fdl_s3_ok(r))
		rc = fdl_s3_status_error(r, err);
	return rc;
}

