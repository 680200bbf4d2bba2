/*
 * The HTTP store: any static web host, read only, through libcurl. get and
 * get_file are plain GETs (the ETag header is the etag), head is a HEAD.
 * Writes, deletes and listing are refused: a static host cannot do them.
 * Timeouts are bounded: a host that does not answer in 30 s, or trickles
 * slower than 1 byte/s for 60 s, is given up on (FDL_HTTP_TIMEOUT overrides
 * the second figure).
 *
 * A private host: the token fdl_http_token finds goes as libcurl's bearer
 * (CURLAUTH_BEARER), which libcurl sends to the URL's own host, port and
 * scheme only; a redirect to another is followed without it.
 */
#include "curlx.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

typedef struct http_store {
	fdl_store base;
	char *root; /* no trailing slash */
	CURL *curl; /* reused: one connection for the whole open (keep-alive) */
	char *token; /* NULL: none */
} http_store;

/* One request; status in *status. */
static int request(http_store *h, const char *key, bool head_only, fdl_sink *s, long *status, fdl_error *err)
{
	char *url = fdl_asprintf("%s/%s", h->root, key);
	if (!url)
		return fdl_oom(err);
	CURL *c = h->curl;
	curl_easy_reset(c);
	char curl_err[CURL_ERROR_SIZE];
	fdl_curl_defaults(c, curl_err);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_NOBODY, head_only ? 1L : 0L);
	if (h->token) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, h->token);
		curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
	}
	fdl_curl_sink(c, s);
	h->base.requests++;
	CURLcode cc = curl_easy_perform(c);
	int rc = 0;
	*status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (s->too_big)
		rc = fdl_fail(err, FDL_EINVALID, "%s is larger than the %zu bytes allowed", url, s->max);
	else if (cc != CURLE_OK)
		rc = fdl_fail(err, FDL_EIO, "GET %s: %s", url, curl_err[0] ? curl_err : curl_easy_strerror(cc));
	else if ((*status == 401 || *status == 403) && h->token)
		rc = fdl_fail(err, FDL_EIO, "GET %s: HTTP %ld: the host refused the token fdl sent (from FDL_TOKEN, "
					    "the credentials file or ~/.netrc)", url, *status);
	else if (*status == 401)
		rc = fdl_fail(err, FDL_EIO, "GET %s: HTTP 401: the host wants a token: set FDL_TOKEN, or add "
					    "`HOST TOKEN` to ~/.config/fdl/credentials (docs/private.md)", url);
	else if (*status == 404 || *status == 410)
		rc = fdl_fail(err, FDL_ENOTFOUND, "%s: not found (HTTP %ld)", url, *status);
	else if (*status < 200 || *status >= 300)
		rc = fdl_fail(err, FDL_EIO, "GET %s: HTTP %ld", url, *status);
	free(url);
	return rc;
}

static int http_get(fdl_store *st, const char *key, size_t max_bytes, fdl_buf *out, char etag[FDL_ETAG_MAX],
		    fdl_error *err)
{
	http_store *h = (http_store *)st;
	fdl_sink s = {.buf = out, .max = max_bytes};
	long status;
	int rc = request(h, key, false, &s, &status, err);
	if (!rc && !out->data)
		rc = fdl_buf_add(out, "", 0, err);
	if (!rc && etag) {
		/* without an ETag, the content itself identifies the version */
		if (s.etag[0])
			memcpy(etag, s.etag, sizeof s.etag);
		else {
			char hex[65];
			rc = fdl_sha256_mem(hex, out->data, out->len, err);
			memcpy(etag, hex, 65);
		}
	}
	return rc;
}

static int http_get_file(fdl_store *st, const char *key, const char *local_path, fdl_error *err)
{
	http_store *h = (http_store *)st;
	FILE *f = fopen(local_path, "wb");
	if (!f)
		return fdl_fail(err, FDL_EIO, "cannot create %s", local_path);
	fdl_sink s = {.file = f, .max = SIZE_MAX};
	long status;
	int rc = request(h, key, false, &s, &status, err);
	if (fclose(f) != 0 && !rc)
		rc = fdl_fail(err, FDL_EIO, "cannot write %s", local_path);
	if (rc)
		remove(local_path);
	return rc;
}

static int http_sha256(fdl_store *st, const char *key, char hex[65], int64_t *bytes, fdl_error *err)
{
	http_store *h = (http_store *)st;
	fdl_sink s = {.max = SIZE_MAX};
	long status;
	int rc = fdl_sha256_new(&s.hash, err);
	if (!rc)
		rc = request(h, key, false, &s, &status, err);
	if (!rc)
		rc = fdl_sha256_final(s.hash, hex, err);
	if (!rc && bytes)
		*bytes = (int64_t)s.got;
	fdl_sha256_free(s.hash);
	return rc;
}

static int http_head(fdl_store *st, const char *key, int64_t *bytes, fdl_error *err)
{
	http_store *h = (http_store *)st;
	fdl_sink s = {.max = 0};
	long status;
	int rc = request(h, key, true, &s, &status, err);
	curl_off_t len = -1;
	if (!rc)
		curl_easy_getinfo(h->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	if (!rc && bytes)
		*bytes = (int64_t)len;
	return rc;
}

static int read_only(fdl_store *st, const char *key, fdl_error *err)
{
	return fdl_fail(err, FDL_EINVALID, "%s/%s: an HTTP repository is read only (write to its folder or bucket)",
			st->url, key);
}

static int http_put(fdl_store *st, const char *key, const void *d, size_t n, fdl_error *err)
{
	(void)d;
	(void)n;
	return read_only(st, key, err);
}

static int http_put_file(fdl_store *st, const char *key, const char *p, fdl_error *err)
{
	(void)p;
	return read_only(st, key, err);
}

static int http_put_if_match(fdl_store *st, const char *key, const void *d, size_t n, const char *e,
			     fdl_error *err)
{
	(void)d;
	(void)n;
	(void)e;
	return read_only(st, key, err);
}

static int http_list(fdl_store *st, const char *prefix, fdl_strlist *out, fdl_strlist *others, fdl_error *err)
{
	(void)others;
	(void)out;
	return fdl_fail(err, FDL_EINVALID, "%s/%s: a static HTTP host cannot list files", st->url, prefix);
}

static int http_del(fdl_store *st, const char *key, fdl_error *err)
{
	return read_only(st, key, err);
}

static int http_del_if_match(fdl_store *st, const char *key, const char *e, fdl_error *err)
{
	(void)e;
	return read_only(st, key, err);
}

static void http_free(fdl_store *st)
{
	http_store *h = (http_store *)st;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	if (h->token)
		OPENSSL_cleanse(h->token, strlen(h->token));
	free(h->token);
	free(h->root);
	free(h);
}

static const fdl_store_ops http_ops = {
	.name = "http",
	.caps = 0, /* a static host: read only, no listing */
	.get = http_get,
	.get_file = http_get_file,
	.sha256 = http_sha256,
	.head = http_head,
	.put_if_absent = http_put,
	.put_file_if_absent = http_put_file,
	.put_if_match = http_put_if_match,
	.list = http_list,
	.del = http_del,
	.del_if_match = http_del_if_match,
	.local_path = NULL,
	.free = http_free,
};

int fdl_store_http_open(fdl_store **out, const char *url, fdl_error *err)
{
	int rc = fdl_curl_load(err);
	if (rc)
		return rc;
	http_store *h = calloc(1, sizeof *h);
	if (!h)
		return fdl_oom(err);
	h->root = fdl_strdup(url);
	h->curl = curl_easy_init();
	rc = fdl_http_token(&h->token, url, err);
	if (rc) {
		http_free(&h->base);
		return rc;
	}
	if (!h->root || !h->curl) {
		http_free(&h->base);
		return fdl_fail(err, FDL_ERROR, "libcurl: cannot start");
	}
	size_t n = strlen(h->root);
	while (n > 8 && h->root[n - 1] == '/')
		h->root[--n] = '\0';
	h->base.ops = &http_ops;
	h->base.url = h->root;
	h->base.cache_id = h->root;
	*out = &h->base;
	return 0;
}

const char *fdl_store_http_token(const fdl_store *st)
{
	return st && st->ops == &http_ops ? ((const http_store *)st)->token : NULL;
}

int fdl_store_http_set_token(fdl_store *st, const char *token, fdl_error *err)
{
	if (st->ops != &http_ops)
		return fdl_fail(err, FDL_EINVALID, "%s: a token is for an http(s):// repository", st->url);
	http_store *h = (http_store *)st;
	char *copy = fdl_strdup(token);
	if (!copy)
		return fdl_oom(err);
	if (h->token)
		OPENSSL_cleanse(h->token, strlen(h->token));
	free(h->token);
	h->token = copy;
	return 0;
}
