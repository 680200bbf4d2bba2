/* The S3 store's own pieces (s3.c the operations, s3_transport.c one
 * request with retries, s3_xml.c S3's XML replies, s3_multipart.c large
 * uploads); only the store layer includes this. */
#ifndef FDL_STORE_S3_H
#define FDL_STORE_S3_H

#include "aws.h"
#include "curlx.h"

#include <libxml/tree.h>
#include "lazy_xml.h"

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
	const char *copy_source; /* x-amz-copy-source: "/<bucket>/<object key>", URI-encoded (CopyObject) */
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

/* ---- s3_transport.c: one request, retried as a whole ------------------- */

/* The object key of a store key (below the bucket prefix). Caller frees. */
char *fdl_s3_object_key(const s3_store *s, const char *key);
/* S3's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ (and '/' in keys). */
int fdl_s3_uri_encode(fdl_buf *b, const char *s, bool keep_slash, fdl_error *err);
/* "s3://bucket/prefix/key" for messages. Caller frees. */
char *fdl_s3_display(const s3_store *s, const char *key);
long fdl_s3_env_long(const char *name, long dflt, long min);
/* Run a request with retries. Returns 0 with r->status set for any HTTP
 * answer that is not transient (the caller maps 4xx); an error for a
 * transport failure or a 5xx that outlived the retries. */
int fdl_s3_perform(s3_req *r, fdl_error *err);
/* The error for an answer the caller did not expect. */
int fdl_s3_status_error(s3_req *r, fdl_error *err);
/* The error for a conditional write another writer won: FDL_EEXISTS or
 * FDL_ECONFLICT. */
int fdl_s3_refused_error(s3_req *r, int code, fdl_error *err);
bool fdl_s3_ok(const s3_req *r);
bool fdl_s3_refused(const s3_req *r);
/* HEAD key into *r (its ETag, length and time). */
int fdl_s3_head(s3_store *s, const char *key, s3_req *r, fdl_error *err);

/* ---- s3_xml.c: S3's replies ------------------------------------------------ */

xmlDoc *fdl_s3_xml_parse(const char *data, size_t len);
/* The first element named `name` anywhere below `n`, as text. Caller frees. */
char *fdl_s3_xml_text(xmlNode *n, const char *name);
/* "Code: Message" of an S3 error body, or NULL. Caller frees. */
char *fdl_s3_error_text(const fdl_buf *b);
/* One page of a ListObjectsV2 answer: each Key (URL-decoded) under `want`
 * added to out without its first `strip` bytes; *token the continuation
 * token when the page says it is truncated, else NULL. */
int fdl_s3_list_page(fdl_strlist *out, char **token, CURL *curl, const char *data, size_t len, const char *want,
		     size_t strip, const char *url, fdl_error *err);

/* ---- s3_multipart.c ---------------------------------------------------------- */

/* Create-only upload of an open file of `size` bytes in parts of
 * s->part_size, each streamed; aborted on failure. */
int fdl_s3_multipart_upload(s3_store *s, const char *key, FILE *f, int64_t size, fdl_error *err);

#endif
