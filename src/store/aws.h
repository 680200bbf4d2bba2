/*
 * Where an s3:// repository is and how to reach it, resolved the way the
 * AWS tools resolve it, so a publisher's existing set-up just works:
 *
 *  credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN),
 *               else the profile (AWS_PROFILE, default "default") in
 *               ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE), else in
 *               ~/.aws/config (AWS_CONFIG_FILE); none at all = anonymous
 *               (unsigned) requests, for public buckets
 *  region       AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`,
 *               else us-east-1
 *  endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's
 *               `s3 = endpoint_url`, its `endpoint_url`, else AWS
 *  addressing   FDL_S3_ADDRESSING_STYLE, the profile's
 *               `s3 = addressing_style` (path | virtual | auto); auto is
 *               virtual-hosted on AWS and path-style on another endpoint
 *               (MinIO, moto, most S3-compatible servers)
 */
#ifndef FDL_STORE_AWS_H
#define FDL_STORE_AWS_H

#include "../util/util.h"

typedef struct fdl_s3_config {
	char *bucket;
	char *prefix;   /* "" or "a/b": no leading or trailing '/' */
	char *region;
	char *endpoint; /* "https://host[:port]", no trailing '/' */
	bool custom_endpoint;
	bool path_style;
	char *key_id, *secret, *token; /* all NULL: anonymous */
	char *profile;                 /* where credentials came from, for messages */
} fdl_s3_config;

/* Parse "s3://bucket[/prefix]" and resolve everything above. */
int fdl_s3_config_load(fdl_s3_config *out, const char *url, fdl_error *err);
void fdl_s3_config_free(fdl_s3_config *c);

/* The base URL of an object key (relative to the bucket, already
 * URI-encoded), e.g. "http://127.0.0.1:9000/bucket/" or
 * "https://bucket.s3.eu-west-1.amazonaws.com/". Caller frees. */
char *fdl_s3_bucket_url(const fdl_s3_config *c);

#endif
