/* libcurl plumbing shared by the HTTP and S3 stores: handles, status
 * codes as fdl errors, retries, transfers into buffers and files. */
#include "curlx.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static size_t on_body(char *p, size_t size, size_t n, void *user)
{
	return fdl_sink_write(user, p, size * n);
}

size_t fdl_sink_write(fdl_sink *s, const char *p, size_t len)
{
	if (s->got + len > s->max) {
		s->too_big = true;
		return 0;
	}
	s->got += len;
	if (s->hash && fdl_sha256_update(s->hash, p, len, NULL))
		return 0;
	if (s->file)
		return fwrite(p, 1, len, s->file) == len ? len : 0;
	if (!s->buf)
		return len;
	return fdl_buf_add(s->buf, p, len, NULL) == 0 ? len : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *user)
{
	fdl_sink *s = user;
	size_t len = size * n;
	if (len > 5 && strncasecmp(p, "etag:", 5) == 0) {
		const char *v = p + 5;
		while (*v == ' ')
			v++;
		size_t vl = (size_t)(p + len - v);
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
			vl--;
		if (vl < sizeof s->etag) {
			memcpy(s->etag, v, vl);
			s->etag[vl] = '\0';
		}
	}
	return len;
}

void fdl_curl_sink(CURL *c, fdl_sink *s)
{
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
}

static long timeout_s(void)
{
	const char *t = getenv("FDL_HTTP_TIMEOUT");
	long v = t ? strtol(t, NULL, 10) : 0;
	return v > 0 ? v : 60;
}

const char *fdl_curl_ca_file(const char *own, const char *const *known, size_t n)
{
	if (own && access(own, R_OK) == 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (access(known[i], R_OK) == 0)
			return known[i];
	return NULL;
}

/* $FDL_CA_FILE, else libcurl's own CA file, else the first of the places other Linux
 * distributions keep theirs (fdl_curl_ca_file). */
static void ca_file(CURL *c)
{
	static const char *const known[] = {
		"/etc/ssl/certs/ca-certificates.crt",                /* Debian, Ubuntu, Arch, Gentoo */
		"/etc/pki/tls/certs/ca-bundle.crt",                  /* Fedora, RHEL */
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* RHEL, CentOS 7 */
		"/etc/ssl/ca-bundle.pem",                            /* openSUSE */
		"/etc/ssl/cert.pem",                                 /* Alpine */
	};
	const char *mine = getenv("FDL_CA_FILE");
	if (mine && *mine) { /* a private CA's, for a private host */
		curl_easy_setopt(c, CURLOPT_CAINFO, mine);
		return;
	}
	const char *own = NULL;
	if (curl_easy_getinfo(c, CURLINFO_CAINFO, &own) != CURLE_OK)
		return;
	const char *other = fdl_curl_ca_file(own, known, sizeof known / sizeof *known);
	if (other)
		curl_easy_setopt(c, CURLOPT_CAINFO, other);
}

/* Whether a header line carries a credential (its value is never printed). */
static bool secret_header(const char *line, size_t len)
{
	static const char *const names[] = {"authorization:", "proxy-authorization:", "x-amz-security-token:",
					    "cookie:", "set-cookie:"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		size_t n = strlen(names[i]);
		if (len >= n && !strncasecmp(line, names[i], n))
			return true;
	}
	return false;
}

/* FDL_CURL_VERBOSE: libcurl's account of each request and answer on
 * stderr, as CURLOPT_VERBOSE prints it but with the value of every header
 * that carries a credential left out; bodies are not printed. */
static int on_debug(CURL *c, curl_infotype type, char *data, size_t size, void *user)
{
	(void)c, (void)user;
	const char *mark = type == CURLINFO_TEXT ? "* " : type == CURLINFO_HEADER_OUT ? "> " :
			   type == CURLINFO_HEADER_IN ? "< " : NULL;
	for (size_t off = 0; mark && off < size;) {
		const char *nl = memchr(data + off, '\n', size - off);
		size_t len = nl ? (size_t)(nl - (data + off)) + 1 : size - off;
		const char *line = data + off;
		const char *who = type == CURLINFO_TEXT ? memmem(line, len, "with user '", 11) : NULL;
		if (type != CURLINFO_TEXT && secret_header(line, len)) {
			const char *colon = memchr(line, ':', len);
			fprintf(stderr, "%s%.*s <not shown>\n", mark, (int)(colon - line + 1), line);
		} else if (who) { /* libcurl names the key id it signs with */
			fprintf(stderr, "%s%.*s<not shown>\n", mark, (int)(who + 10 - line), line);
		} else if (len > 2 || (len && line[0] != '\r' && line[0] != '\n')) {
			fprintf(stderr, "%s%.*s%s", mark, (int)len, line, nl ? "" : "\n");
		}
		off += len;
	}
	return 0;
}

void fdl_curl_defaults(CURL *c, char errbuf[CURL_ERROR_SIZE])
{
	errbuf[0] = '\0';
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, timeout_s());
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	char agent[32];
	snprintf(agent, sizeof agent, "fdl/%s", fdl_libversion()); /* libcurl keeps its own copy */
	curl_easy_setopt(c, CURLOPT_USERAGENT, agent);
	ca_file(c);
	if (getenv("FDL_CURL_VERBOSE")) {
		curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, on_debug);
		curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
	}
}

int fdl_url_sha256(char hex[65], int64_t *bytes, const char *url, fdl_error *err)
{
	int rc = fdl_curl_load(err);
	if (rc)
		return rc;
	CURL *c = curl_easy_init();
	if (!c)
		return fdl_fail(err, FDL_ERROR, "libcurl: cannot start a transfer");
	fdl_sink sink = {.max = SIZE_MAX};
	char curl_err[CURL_ERROR_SIZE];
	rc = fdl_sha256_new(&sink.hash, err);
	if (!rc) {
		fdl_curl_defaults(c, curl_err);
		fdl_curl_sink(c, &sink);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
		CURLcode cc = curl_easy_perform(c);
		if (cc != CURLE_OK)
			rc = fdl_fail(err, FDL_EIO, "%s: %s", url, curl_err[0] ? curl_err : curl_easy_strerror(cc));
	}
	if (!rc)
		rc = fdl_sha256_final(sink.hash, hex, err);
	if (!rc && bytes)
		*bytes = (int64_t)sink.got;
	fdl_sha256_free(sink.hash);
	curl_easy_cleanup(c);
	return rc;
}
