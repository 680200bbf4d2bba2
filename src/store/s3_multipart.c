/* Large uploads: CreateMultipartUpload, one PUT per part streamed from the
 * file (memory stays bounded), then CompleteMultipartUpload with
 * If-None-Match: * so the object appears create-only, whole or not at all;
 * an upload that fails is aborted. */
#include "s3.h"

#include <stdlib.h>
#include <string.h>

static int put_part(s3_store *s, const char *key, FILE *f, const char *query, int64_t off, int64_t len,
		    int64_t total, s3_req *r, fdl_error *err)
{
	*r = (s3_req){.s = s, .method = "PUT", .key = key, .query = query, .file = f, .file_off = off, .file_len = len,
		      .content_type = "application/octet-stream", .progress_key = key, .progress_base = off,
		      .progress_total = total};
	return fdl_s3_perform(r, err);
}

static int multipart_abort(s3_store *s, const char *key, const char *upload_id)
{
	fdl_buf q = {0};
	fdl_error e2;
	int rc = fdl_buf_puts(&q, "uploadId=", &e2);
	if (!rc)
		rc = fdl_s3_uri_encode(&q, upload_id, false, &e2);
	s3_req r = {.s = s, .method = "DELETE", .key = key, .query = q.data};
	if (!rc)
		rc = fdl_s3_perform(&r, &e2);
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
			rc = fdl_s3_uri_encode(&q, upload_id, false, err);
		s3_req r = {0};
		if (!rc)
			rc = put_part(s, key, f, q.data, off, len, size, &r, err);
		if (!rc && !fdl_s3_ok(&r))
			rc = fdl_s3_status_error(&r, err);
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

int fdl_s3_multipart_upload(s3_store *s, const char *key, FILE *f, int64_t size, fdl_error *err)
{
	/* fail fast, before sending gigabytes, if the key is taken */
	s3_req r;
	fdl_error e2;
	int rc = fdl_s3_head(s, key, &r, &e2);
	if (rc == 0)
		return fdl_s3_refused_error(&r, FDL_EEXISTS, err);
	if (rc != FDL_ENOTFOUND)
		return fdl_fail(err, e2.code, "%s", e2.message);
	fdl_buf body = {0}, complete = {0}, q = {0};
	char *upload_id = NULL;
	r = (s3_req){.s = s, .method = "POST", .key = key, .query = "uploads=", .sink = {.buf = &body, .max = MIB},
		     .content_type = fdl_content_type(key)};
	rc = fdl_s3_perform(&r, err);
	if (!rc && !fdl_s3_ok(&r))
		rc = fdl_s3_status_error(&r, err);
	xmlDoc *doc = rc ? NULL : fdl_s3_xml_parse(body.data, body.len);
	if (doc)
		upload_id = fdl_s3_xml_text(xmlDocGetRootElement(doc), "UploadId");
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
		rc = fdl_s3_uri_encode(&q, upload_id, false, err);
	if (!rc) {
		fdl_buf_free(&body);
		fdl_store_before_write(&s->base);
		r = (s3_req){.s = s, .method = "POST", .key = key, .query = q.data, .body = complete.data,
			     .body_len = complete.len, .if_none_match = "*", .content_type = "application/xml",
			     .sink = {.buf = &body, .max = MIB}};
		rc = fdl_s3_perform(&r, err);
	}
	/* S3 may answer 200 and put the error in the body */
	char *in_body = !rc && fdl_s3_ok(&r) && body.data && strstr(body.data, "<Error>") ? fdl_s3_error_text(&body) : NULL;
	if (!rc && fdl_s3_refused(&r))
		rc = fdl_s3_refused_error(&r, FDL_EEXISTS, err);
	else if (!rc && !fdl_s3_ok(&r))
		rc = fdl_s3_status_error(&r, err);
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

