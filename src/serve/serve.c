/*
 * fdl serve. Every file is opened by walking the path from the repository
 * root one component at a time with O_NOFOLLOW, so neither `..` (refused
 * anyway), an encoded traversal (libmicrohttpd decodes before we check) nor
 * a symlink can reach outside the root. Only the layout's own files are
 * served; folders are never listed; temp and lock files are invisible.
 *
 * With a page folder (opts->web_dir), `/` is the repository's page and
 * `/_fdl/` its assets (the folder `make web` builds), opened the same way
 * beneath that folder; `/_fdl/refs.json` lists the branches and tags, which
 * a static host could not.
 *
 * With a token file, every path but the page's static files answers 401
 * without a valid token, before anything else is looked at: the answer is
 * the same whether the path exists or not, and holds no byte of the
 * repository. What is served then is `Cache-Control: private`, never kept
 * by a shared cache.
 */
#include "serve.h"
#include "../layout/keys.h"
#include "../layout/iceberg.h"
#include "../layout/site.h"
#include "../site/site.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include "lazy_mhd.h"
#include "guard.h"
#include "tokens.h"
#include "../util/dynlib.h"
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RANGES 32

struct fdl_server {
	struct MHD_Daemon *mhd;
	char *root;
	char *data_dir;
	int root_fd;
	int web_fd; /* the page's folder, or -1 */
	FILE *log;
	int port;
	fdl_serve_guard *guard;
	fdl_serve_tokens *tokens; /* NULL: a public repository */
	fdl_buf cert, key;        /* PEM, for HTTPS; kept while the daemon runs */
	/* libmicrohttpd's own messages go to `log` once the server runs; while
	 * it starts they are dropped: a failure to listen is said once, by
	 * fdl_server_start's error */
	atomic_bool started;
	/* a request's state (libmicrohttpd's con_cls) points at one of these:
	 * [0] target ok, [1] target bad (400), [2] and [3] the same once the
	 * handler has seen the request once */
	char marks[4];
};

/* libmicrohttpd's error log (MHD_OPTION_EXTERNAL_LOGGER). The format
 * attribute says fmt is printf's, so clang's -Wformat-nonliteral checks
 * the callers' formats instead of refusing the vsnprintf below. */
static void mhd_log(void *cls, const char *fmt, va_list ap) FDL_PRINTF(2, 0);
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	fdl_server *s = cls;
	if (!s->log || !atomic_load(&s->started))
		return;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	size_t n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	fprintf(s->log, "fdl serve: %s\n", line);
}

/* Called with the raw target before libmicrohttpd decodes it. */
static void *check_target(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)c;
	fdl_server *s = cls;
	return &s->marks[fdl_http_uri_check(uri) == 0 ? 0 : 1];
}

/* ---- which files exist for HTTP ----------------------------------------- */

int fdl_serve_path_allowed(const char *data_dir, const char *rel)
{
	if (strstr(rel, "..") || strchr(rel, '\\') || strstr(rel, "//"))
		return -1; /* 403 */
	if (fdl_path_check_key(rel, "path", NULL) != 0)
		return 0;
	/* the layout's files and the data; never a lock, a write on its way,
	 * fdl's working area or anything the layout does not name */
	fdl_key_class c = fdl_key_classify_in(data_dir, rel);
	return c == FDL_KEY_MOVING || c == FDL_KEY_IMMUTABLE || c == FDL_KEY_DATA;
}

/* Open rel under the folder `top` without following any symlink; -1 with errno. */
static int open_beneath(int top, const char *rel, struct stat *st)
{
	char *copy = fdl_strdup(rel);
	if (!copy) {
		errno = ENOMEM;
		return -1;
	}
	int dir = dup(top);
	char *save = NULL;
	char *comp = strtok_r(copy, "/", &save);
	int fd = -1;
	while (comp && dir >= 0) {
		char *next = strtok_r(NULL, "/", &save);
		int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (next ? O_DIRECTORY : 0);
		int f = openat(dir, comp, flags);
		close(dir);
		dir = -1;
		if (f < 0)
			break;
		if (next)
			dir = f;
		else
			fd = f;
		comp = next;
	}
	if (dir >= 0)
		close(dir);
	free(copy);
	if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
		close(fd);
		errno = EISDIR;
		fd = -1;
	}
	return fd;
}

/* The ETag of a file: for a file version.json lists, its recorded sha256;
 * for version.json itself, its own sha256; else size and mtime (data files
 * never change, refs do and their mtime moves with them). */
static void etag_of(const fdl_server *s, const char *rel, int fd, const struct stat *st, char out[FDL_ETAG_MAX])
{
	snprintf(out, FDL_ETAG_MAX, "\"%llx-%llx\"", (unsigned long long)st->st_size,
		 (unsigned long long)st->st_mtim.tv_sec * 1000000000ull + (unsigned long long)st->st_mtim.tv_nsec);
	char id[FDL_ID_LEN + 1];
	const char *name = NULL;
	if (!fdl_version_key_parse(rel, id, &name) || !*name)
		return;
	char hex[65];
	if (!strcmp(name, FDL_VERSION_JSON)) {
		char *p = fdl_asprintf("%s/%s", s->root, rel);
		int64_t n;
		(void)fd;
		if (p && fdl_sha256_file(hex, &n, p, NULL) == 0)
			snprintf(out, FDL_ETAG_MAX, "\"%s\"", hex);
		free(p);
		return;
	}
	char *vj = fdl_version_url(s->root, id, FDL_VERSION_JSON);
	json_t *doc = vj ? json_load_file(vj, JSON_REJECT_DUPLICATES, NULL) : NULL;
	const char *keys[] = {"catalog", "dataset", "files"};
	for (size_t i = 0; doc && i < 3; i++) {
		const json_t *o = json_object_get(doc, keys[i]);
		const char *path = json_string_value(json_object_get(o, "path"));
		const char *sha = json_string_value(json_object_get(o, "sha256"));
		if (path && sha && !strcmp(path, name) && strlen(sha) == 64)
			snprintf(out, FDL_ETAG_MAX, "\"%s\"", sha);
	}
	json_decref(doc);
	free(vj);
}

static bool etag_matches(const char *header, const char *etag)
{
	if (!header)
		return false;
	if (!strcmp(header, "*"))
		return true;
	/* a list of (possibly weak) tags */
	const char *p = header;
	size_t n = strlen(etag);
	while ((p = strstr(p, etag + 1)) != NULL) {
		if (p > header && p[-1] == '"' && !strncmp(p, etag + 1, n - 1))
			return true;
		p++;
	}
	return false;
}

/* Cache-Control from the layout's one answer to what never changes
 * (fdl_key_classify): a version's files, history packs, Iceberg manifests
 * and deletes, data files for a year; what moves (HEAD, refs, fdl.json,
 * pointers, expired.json) and anything else revalidated after 5 s. */
static void common_headers(struct MHD_Response *r, const fdl_server *s, const char *rel)
{
	MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
	MHD_add_response_header(r, "Access-Control-Expose-Headers",
				"Content-Length, Content-Range, ETag, Accept-Ranges, Content-Type");
	MHD_add_response_header(r, "Accept-Ranges", "bytes");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (!rel)
		return;
	if (!strcmp(rel, "index.html") || !strcmp(rel, "_fdl/refs.json")) {
		MHD_add_response_header(r, "Cache-Control", "no-cache");
		return;
	}
	if (!strncmp(rel, "_fdl/", 5)) {
		MHD_add_response_header(r, "Cache-Control", s->tokens ? "private, max-age=3600" : "public, max-age=3600");
		return;
	}
	fdl_key_class c = fdl_key_classify_in(s->data_dir, rel);
	bool stays = c == FDL_KEY_IMMUTABLE || c == FDL_KEY_DATA;
	const char *who = s->tokens ? "private" : "public";
	char cc[64];
	snprintf(cc, sizeof cc, stays ? "%s, max-age=31536000, immutable" : "%s, max-age=5, must-revalidate", who);
	MHD_add_response_header(r, "Cache-Control", cc);
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	common_headers(r, NULL, NULL);
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD, OPTIONS");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- multipart/byteranges ------------------------------------------------ */

typedef struct multipart {
	int fd;
	size_t n;
	fdl_range ranges[MAX_RANGES];
	char *heads[MAX_RANGES]; /* each part's header block */
	char *tail;
	uint64_t total;
} multipart;

static void multipart_free(void *cls)
{
	multipart *m = cls;
	for (size_t i = 0; i < m->n; i++)
		free(m->heads[i]);
	free(m->tail);
	close(m->fd);
	free(m);
}

/* Serve byte `pos` onwards of the whole body: head, data, head, data..., tail. */
static ssize_t multipart_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	multipart *m = cls;
	uint64_t off = 0;
	for (size_t i = 0; i <= m->n; i++) {
		const char *h = i < m->n ? m->heads[i] : m->tail;
		uint64_t hl = strlen(h);
		if (pos < off + hl) {
			size_t k = (size_t)(off + hl - pos) < max ? (size_t)(off + hl - pos) : max;
			memcpy(buf, h + (pos - off), k);
			return (ssize_t)k;
		}
		off += hl;
		if (i == m->n)
			break;
		uint64_t dl = (uint64_t)(m->ranges[i].end - m->ranges[i].start + 1);
		if (pos < off + dl) {
			size_t k = (size_t)(off + dl - pos) < max ? (size_t)(off + dl - pos) : max;
			ssize_t got = pread(m->fd, buf, k, (off_t)(m->ranges[i].start + (int64_t)(pos - off)));
			return got > 0 ? got : MHD_CONTENT_READER_END_WITH_ERROR;
		}
		off += dl;
	}
	return MHD_CONTENT_READER_END_OF_STREAM;
}

static struct MHD_Response *multipart_response(int fd, const fdl_range *ranges, size_t n, int64_t size,
					       const char *type)
{
	multipart *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->fd = fd;
	/* a boundary fresh for each response (RFC 2046: it must not occur in
	 * the parts; a fixed one could be planted in a served file) */
	unsigned char rnd[16];
	char boundary[48];
	if (RAND_bytes(rnd, sizeof rnd) != 1) {
		free(m);
		return NULL;
	}
	int at = snprintf(boundary, sizeof boundary, "fdl-");
	for (size_t i = 0; i < sizeof rnd; i++)
		at += snprintf(boundary + at, sizeof boundary - (size_t)at, "%02x", rnd[i]);
	for (size_t i = 0; i < n; i++) {
		m->ranges[i] = ranges[i];
		m->heads[i] = fdl_asprintf("%s--%s\r\nContent-Type: %s\r\nContent-Range: bytes %lld-%lld/%lld\r\n\r\n",
					   i ? "\r\n" : "", boundary, type, (long long)ranges[i].start,
					   (long long)ranges[i].end, (long long)size);
		m->n++;
		if (!m->heads[i]) {
			multipart_free(m);
			return NULL;
		}
		m->total += strlen(m->heads[i]) + (uint64_t)(ranges[i].end - ranges[i].start + 1);
	}
	m->tail = fdl_asprintf("\r\n--%s--\r\n", boundary);
	if (!m->tail) {
		multipart_free(m);
		return NULL;
	}
	m->total += strlen(m->tail);
	struct MHD_Response *r = MHD_create_response_from_callback(m->total, 64 * 1024, multipart_read, m,
								   multipart_free);
	if (!r) {
		multipart_free(m);
		return NULL;
	}
	char ct[128];
	snprintf(ct, sizeof ct, "multipart/byteranges; boundary=%s", boundary);
	MHD_add_response_header(r, "Content-Type", ct);
	return r;
}

/* ---- the page's list of refs --------------------------------------------- */

/* {"head": "main", "branches": {"main": "<id>"}, "tags": {...}} */
static char *refs_json(const fdl_server *s)
{
	fdl_repo *repo = NULL;
	fdl_error e;
	char *out = NULL;
	json_t *doc = json_pack("{s:o, s:o}", "branches", json_object(), "tags", json_object());
	fdl_refs refs = {0};
	if (!doc || fdl_repo_open(&repo, s->root, &e) || fdl_refs_all(&refs, repo, true, &e))
		goto out;
	if (refs.head)
		json_object_set_new(doc, "head", json_string(refs.head));
	for (size_t i = 0; i < refs.names.len; i++) {
		fdl_ref_kind kind;
		const char *name = fdl_ref_short(refs.names.items[i], &kind);
		json_object_set_new(json_object_get(doc, kind == FDL_REF_BRANCH ? "branches" : "tags"), name,
				    json_string(refs.ids[i]));
	}
	fdl_json_dump(&out, NULL, doc, &e);
out:
	fdl_refs_free(&refs);
	json_decref(doc);
	fdl_repo_free(repo);
	return out;
}

static enum MHD_Result reply_refs(fdl_server *s, struct MHD_Connection *c, unsigned *status, int64_t *sent)
{
	char *text = refs_json(s);
	if (!text)
		return reply_text(c, *status = MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot list the refs\n");
	*sent = (int64_t)strlen(text);
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	common_headers(r, s, "_fdl/refs.json");
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result ret = MHD_queue_response(c, *status = MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- the handler ---------------------------------------------------------- */

/* The page's own static files, public even with a token file: everything
 * under /_fdl/ but its list of refs, and / itself. */
static bool has_home(const fdl_server *s)
{
	struct stat st;
	return fstatat(s->root_fd, FDL_SITE_HOME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* ... but for the repository's own page (fdl site), which shows its rows. */
static bool page_public(const fdl_server *s, const char *rel)
{
	if (s->web_fd >= 0 && (!*rel || !strcmp(rel, "index.html")))
		return !has_home(s);
	return s->web_fd >= 0 && !strncmp(rel, "_fdl/", 5) && strcmp(rel, "_fdl/refs.json");
}

/* 401: the same few bytes whatever the path. */
static enum MHD_Result reply_unauthorized(struct MHD_Connection *c, unsigned *status)
{
	static const char text[] = "a token is needed (Authorization: Bearer TOKEN)\n";
	struct MHD_Response *r = MHD_create_response_from_buffer(sizeof text - 1, (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	common_headers(r, NULL, NULL);
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"fdl\"");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	enum MHD_Result ret = MHD_queue_response(c, *status = MHD_HTTP_UNAUTHORIZED, r);
	MHD_destroy_response(r);
	return ret;
}

/* OPTIONS: the answer to a browser's preflight. */
static enum MHD_Result reply_options(struct MHD_Connection *c, unsigned *status)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	common_headers(r, NULL, NULL);
	MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
	MHD_add_response_header(r, "Access-Control-Allow-Headers", "Authorization, Range, If-None-Match, If-Match");
	MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
	enum MHD_Result ret = MHD_queue_response(c, *status = MHD_HTTP_NO_CONTENT, r);
	MHD_destroy_response(r);
	return ret;
}

/* The body of a GET or HEAD of the open file `fd` (taken): the whole file,
 * one range, several (multipart/byteranges), or 416. NULL when it cannot
 * be made. */
static struct MHD_Response *file_response(struct MHD_Connection *c, int fd, int64_t size, const char *rel,
					  unsigned *status, int64_t *sent)
{
	fdl_range ranges[MAX_RANGES];
	size_t n = 0;
	int kind = fdl_http_parse_ranges(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range"), size, ranges,
					 MAX_RANGES, &n);
	struct MHD_Response *r = NULL;
	if (kind == FDL_RANGE_UNSATISFIABLE) {
		close(fd);
		char cr[64];
		snprintf(cr, sizeof cr, "bytes */%lld", (long long)size);
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		MHD_add_response_header(r, "Content-Range", cr);
		*status = MHD_HTTP_RANGE_NOT_SATISFIABLE;
	} else if (kind == FDL_RANGE_OK && n == 1) {
		char cr[96];
		snprintf(cr, sizeof cr, "bytes %lld-%lld/%lld", (long long)ranges[0].start, (long long)ranges[0].end,
			 (long long)size);
		*sent = ranges[0].end - ranges[0].start + 1;
		r = MHD_create_response_from_fd_at_offset64((uint64_t)*sent, fd, (uint64_t)ranges[0].start);
		if (r) {
			MHD_add_response_header(r, "Content-Range", cr);
			MHD_add_response_header(r, "Content-Type", fdl_content_type(rel));
		}
		*status = MHD_HTTP_PARTIAL_CONTENT;
	} else if (kind == FDL_RANGE_OK) {
		r = multipart_response(fd, ranges, n, size, fdl_content_type(rel));
		for (size_t i = 0; i < n; i++)
			*sent += ranges[i].end - ranges[i].start + 1;
		*status = MHD_HTTP_PARTIAL_CONTENT;
	} else {
		r = MHD_create_response_from_fd64((uint64_t)size, fd);
		if (r)
			MHD_add_response_header(r, "Content-Type", fdl_content_type(rel));
		*sent = size;
		*status = MHD_HTTP_OK;
	}
	return r;
}

/* The server's own address as the client named it (Host, when it is a
 * plain host[:port]), with a trailing '/'. Caller frees. */
static char *own_address(const fdl_server *s, struct MHD_Connection *c)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	bool ok = host && *host && strlen(host) < 256;
	for (const char *p = host; ok && *p; p++)
		ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		     strchr(".-:[]", *p);
	const char *scheme = s->cert.len ? "https" : "http";
	return ok ? fdl_asprintf("%s://%s/", scheme, host) : fdl_asprintf("%s://127.0.0.1:%d/", scheme, s->port);
}

/* A file of the pages (site/<id>/...), made as it is asked for: its
 * addresses start with the repository's public_url, or else with this
 * server's own address, so that a loader reading it from fdl serve gets
 * absolute addresses it can fetch (docs/web.md). */
static enum MHD_Result reply_site(fdl_server *s, struct MHD_Connection *c, const char *id, const char *name,
				  const char *rel, unsigned *status, int64_t *sent)
{
	fdl_site_file what = !strcmp(name, FDL_SITE_CROISSANT)     ? FDL_SITE_FILE_CROISSANT
			     : !strcmp(name, FDL_SITE_DATAPACKAGE) ? FDL_SITE_FILE_DATAPACKAGE
								   : FDL_SITE_FILE_PAGE;
	fdl_repo *repo = NULL;
	fdl_error err = {0};
	fdl_buf b = {0};
	char *base = own_address(s, c);
	int rc = base ? fdl_repo_open(&repo, s->root, &err) : fdl_oom(&err);
	if (!rc)
		rc = fdl_site_render(&b, repo, id, what, fdl_repo_public_url(repo) ? NULL : base, &err);
	fdl_repo_free(repo);
	free(base);
	if (rc == FDL_ENOTFOUND || rc == FDL_EEXPIRED)
		return reply_text(c, *status = MHD_HTTP_NOT_FOUND, "not found\n");
	if (rc)
		return reply_text(c, *status = MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot make the file\n");
	size_t len = b.len;
	*sent = (int64_t)len;
	struct MHD_Response *r = MHD_create_response_from_buffer(len, fdl_buf_detach(&b), MHD_RESPMEM_MUST_FREE);
	if (!r)
		return MHD_NO;
	common_headers(r, s, rel);
	MHD_add_response_header(r, "Content-Type", fdl_content_type(rel));
	MHD_add_response_header(r, "Cache-Control", s->tokens ? "private, no-cache" : "no-cache");
	enum MHD_Result ret = MHD_queue_response(c, *status = MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* A GET or HEAD (anything else is refused): the page, its list of refs,
 * or a file of the repository. *relp comes to name what was served (the
 * page's index.html, a folder's index.html: *index, owned by the caller). */
static enum MHD_Result reply_get(fdl_server *s, struct MHD_Connection *c, const char *method, const char **relp,
				 char **index, unsigned *status, int64_t *sent)
{
	const char *rel = *relp;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_text(c, *status = MHD_HTTP_METHOD_NOT_ALLOWED, "read only: GET, HEAD and OPTIONS\n");
	bool page = s->web_fd >= 0 && (!*rel || !strcmp(rel, "index.html") || !strncmp(rel, "_fdl/", 5));
	if ((page || has_home(s)) && !*rel)
		rel = *relp = "index.html";
	char vid[FDL_ID_LEN + 1];
	const char *name;
	if (fdl_site_key_parse(rel, vid, &name))
		return reply_site(s, c, vid, name, rel, status, sent);
	/* the repository's own page (fdl site) before the page folder's */
	if (page && !strcmp(rel, FDL_SITE_HOME) && has_home(s))
		page = false;
	if (page && !strcmp(rel, "_fdl/refs.json"))
		return reply_refs(s, c, status, sent);
	int allowed = page ? (strstr(rel, "..") || strstr(rel, "//") ? -1 : 1) : fdl_serve_path_allowed(s->data_dir, rel);
	if (allowed < 0)
		return reply_text(c, *status = MHD_HTTP_FORBIDDEN, "forbidden\n");
	struct stat st;
	int fd = allowed ? open_beneath(page ? s->web_fd : s->root_fd, rel, &st) : -1;
	/* a folder of the Iceberg catalog answers with its index.html, as static hosts do */
	if (fd < 0 && errno == EISDIR && !page && !strncmp(rel, FDL_ICEBERG_DIR "/", strlen(FDL_ICEBERG_DIR "/")) &&
	    (*index = fdl_asprintf("%s/" FDL_ICEBERG_CATALOG_INDEX, rel)) != NULL) {
		fd = open_beneath(s->root_fd, *index, &st);
		rel = *relp = *index;
	}
	if (fd < 0)
		return reply_text(c, *status = MHD_HTTP_NOT_FOUND, "not found\n");
	char etag[FDL_ETAG_MAX];
	etag_of(s, page ? "" : rel, fd, &st, etag);
	struct MHD_Response *r = NULL;
	if (etag_matches(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match"), etag)) {
		close(fd);
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		*status = MHD_HTTP_NOT_MODIFIED;
	} else if (!(r = file_response(c, fd, (int64_t)st.st_size, rel, status, sent))) {
		return reply_text(c, *status = MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot serve the file\n");
	}
	common_headers(r, s, rel);
	MHD_add_response_header(r, "ETag", etag);
	enum MHD_Result ret = MHD_queue_response(c, *status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	(void)version;
	(void)upload;
	fdl_server *s = cls;
	char *mark = *state;
	if (mark == &s->marks[0] || mark == &s->marks[1]) {
		/* first call for this request: its headers are in (the guard's
		 * deadline is met); wait for the body (none expected) */
		fdl_serve_guard_request(s->guard, c);
		*state = mark + 2;
		return MHD_YES;
	}
	bool bad_target = mark != &s->marks[2];
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	unsigned status = 0;
	int64_t sent = 0;
	char *index = NULL;
	enum MHD_Result ret;
	const char *rel = url && url[0] == '/' ? url + 1 : "";
	char who[FDL_TOKEN_NAME_MAX + 1] = "-";
	bool denied = s->tokens && !bad_target && strcmp(method, "OPTIONS") && !page_public(s, rel) &&
		      !fdl_serve_tokens_check(s->tokens,
					      MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"), who);
	if (denied)
		ret = reply_unauthorized(c, &status);
	else if (bad_target)
		ret = reply_text(c, status = MHD_HTTP_BAD_REQUEST,
				 "bad request: an invalid %-escape, a NUL or control character, or a path that is not UTF-8\n");
	else if (!strcmp(method, "OPTIONS"))
		ret = reply_options(c, &status);
	else
		ret = reply_get(s, c, method, &rel, &index, &status, &sent);
	if (s->log) {
		/* with tokens, the name of the one the request carried ("-": none) */
		fprintf(s->log, "fdl serve: %s /%s %u %lld%s%s\n", method, rel, status, (long long)sent,
			s->tokens ? " " : "", s->tokens ? who : "");
		fflush(s->log);
	}
	free(index);
	return ret;
}

/* The certificate and key for HTTPS, read whole (libmicrohttpd takes PEM
 * in memory); the key as the private file it is. */
static int load_tls(fdl_buf *cert, fdl_buf *key, const fdl_serve_options *o, fdl_error *err)
{
	if (!o->tls_cert != !o->tls_key)
		return fdl_fail(err, FDL_EINVALID, "--tls-cert and --tls-key go together");
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		return fdl_fail(err, FDL_EINVALID, "this libmicrohttpd was built without TLS; serve HTTPS behind a "
						   "reverse proxy (docs/private.md)");
	int rc = fdl_file_read(cert, o->tls_cert, 1 << 20, err);
	if (!rc)
		rc = fdl_private_file_read(key, o->tls_key, 1 << 20, err);
	return rc;
}

/* Tokens and TLS, as the options ask: tokens over plain HTTP only on
 * loopback, unless told --insecure. */
static int load_access(fdl_server *s, const fdl_serve_options *o, const struct sockaddr_in *addr, fdl_buf *cert,
		       fdl_buf *key, fdl_error *err)
{
	if (!o)
		return 0;
	bool loopback = (ntohl(addr->sin_addr.s_addr) >> 24) == 127;
	if (o->token_file && !o->tls_cert && !loopback && !o->insecure)
		return fdl_fail(err, FDL_EINVALID,
				"tokens over plain HTTP on %s would cross the network in the clear: give --tls-cert and "
				"--tls-key, put a TLS proxy in front and --bind 127.0.0.1, or say --insecure",
				o->bind);
	int rc = o->token_file ? fdl_serve_tokens_new(&s->tokens, o->token_file, err) : 0;
	if (!rc && (o->tls_cert || o->tls_key))
		rc = load_tls(cert, key, o, err);
	return rc;
}

static int start_daemon(fdl_server *s, struct sockaddr_in *addr, const fdl_buf *cert, const fdl_buf *key)
{
	struct MHD_OptionItem tls[] = {
		{MHD_OPTION_HTTPS_MEM_CERT, 0, cert->data},
		{MHD_OPTION_HTTPS_MEM_KEY, 0, key->data},
		{MHD_OPTION_END, 0, NULL},
	};
	bool https = cert->data != NULL;
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG |
					  (https ? MHD_USE_TLS : 0),
				  0, fdl_serve_guard_accept, s->guard, handle, s, MHD_OPTION_SOCK_ADDR,
				  (struct sockaddr *)addr, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
				  MHD_OPTION_CONNECTION_LIMIT, FDL_SERVE_MAX_CONNECTIONS,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, FDL_SERVE_MAX_PER_IP,
				  MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024), MHD_OPTION_NOTIFY_CONNECTION,
				  fdl_serve_guard_notify, s->guard, MHD_OPTION_NOTIFY_COMPLETED,
				  fdl_serve_guard_completed, s->guard, MHD_OPTION_URI_LOG_CALLBACK, check_target, s,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_ARRAY, https ? tls : tls + 2,
				  MHD_OPTION_END);
	return s->mhd ? 0 : -1;
}

/* The repository at root, which must be a folder. */
static int open_root(fdl_server *s, const char *root, fdl_error *err)
{
	fdl_repo *repo = NULL;
	int rc = fdl_repo_open(&repo, root, err);
	if (rc)
		return rc;
	char *local = fdl_store_local_path(repo->store, FDL_CONFIG_FILE);
	if (!local) {
		fdl_repo_free(repo);
		return fdl_fail(err, FDL_EINVALID, "fdl serve serves a folder repository; %s is not one", root);
	}
	free(local);
	s->root = fdl_strdup(repo->root);
	s->data_dir = fdl_strdup(repo->data_dir);
	fdl_repo_free(repo);
	if (!s->root || !s->data_dir)
		return fdl_oom(err);
	s->root_fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->root_fd < 0)
		return fdl_fail(err, FDL_EIO, "cannot open %s: %s", s->root, strerror(errno));
	return 0;
}

static int open_page(fdl_server *s, const char *web_dir, fdl_error *err)
{
	s->web_fd = open(web_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (s->web_fd < 0 || fstatat(s->web_fd, "index.html", &st, 0) != 0)
		return fdl_fail(err, FDL_ENOTFOUND, "the page folder %s has no index.html (run `make web`)", web_dir);
	return 0;
}

int fdl_server_start(fdl_server **out, const char *root, const fdl_serve_options *opts, fdl_error *err)
{
	if (opts && fdl_options_check(opts->version, FDL_SERVE_OPTIONS_VERSION, "fdl_server_start", "fdl_serve_options",
				      err))
		return FDL_EINVALID;
	int rc = fdl_mhd_load(err);
	if (rc)
		return rc;
	fdl_server *s = calloc(1, sizeof *s);
	if (!s)
		return fdl_oom(err);
	atomic_init(&s->started, false);
	s->log = opts ? opts->log : NULL;
	s->web_fd = -1;
	s->root_fd = -1;
	struct sockaddr_in addr = {0};
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)(opts ? opts->port : 0));
	const char *bind = opts && opts->bind ? opts->bind : "127.0.0.1";
	fdl_buf *cert = &s->cert, *key = &s->key;
	rc = open_root(s, root, err);
	if (!rc && opts && opts->web_dir)
		rc = open_page(s, opts->web_dir, err);
	if (!rc && inet_pton(AF_INET, bind, &addr.sin_addr) != 1)
		rc = fdl_fail(err, FDL_EINVALID, "--bind '%s' is not an IPv4 address", bind);
	if (!rc)
		rc = load_access(s, opts, &addr, cert, key, err);
	if (!rc)
		rc = fdl_serve_guard_new(&s->guard, err);
	if (!rc && start_daemon(s, &addr, cert, key))
		rc = fdl_fail(err, FDL_EIO, "cannot listen on %s:%d%s: %s", bind, opts ? opts->port : 0,
			      cert->data ? " with TLS (are --tls-cert and --tls-key a PEM certificate and its key?)" : "",
			      strerror(errno));
	if (rc) {
		fdl_server_stop(s);
		return rc;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? (int)info->port : (opts ? opts->port : 0);
	atomic_store(&s->started, true);
	*out = s;
	return 0;
}

int fdl_server_reload_tokens(fdl_server *s, fdl_error *err)
{
	if (!s->tokens)
		return fdl_fail(err, FDL_EINVALID, "the server was started without a token file");
	return fdl_serve_tokens_reload(s->tokens, err);
}

int fdl_server_port(const fdl_server *s)
{
	return s->port;
}

void fdl_server_stop(fdl_server *s)
{
	if (!s)
		return;
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	fdl_serve_guard_free(s->guard);
	fdl_serve_tokens_free(s->tokens);
	if (s->key.data)
		OPENSSL_cleanse(s->key.data, s->key.len);
	fdl_buf_free(&s->key);
	fdl_buf_free(&s->cert);
	if (s->root_fd >= 0)
		close(s->root_fd);
	if (s->web_fd >= 0)
		close(s->web_fd);
	free(s->root);
	free(s->data_dir);
	free(s);
}
