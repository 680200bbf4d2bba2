/*
 * AWS configuration for the S3 store: the URL, credentials, region,
 * endpoint and addressing style, from the environment and the shared
 * config files, in the AWS CLI's order of precedence (see aws.h).
 */
#include "aws.h"
#include "../util/ini.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the shared config and credentials files ------------------------------ */

/* A value from one of the shared files; the file is read (at most 1 MiB)
 * each time: these are a handful of lookups per store open. */
static int file_value(char **out, const char *path, const char *section, const char *key, fdl_error *err)
{
	*out = NULL;
	fdl_buf b = {0};
	fdl_error e2;
	if (fdl_file_read(&b, path, 1 << 20, &e2) != 0)
		return 0; /* no file: nothing configured there */
	int rc = fdl_ini_get(out, b.data, b.len, section, key);
	fdl_buf_free(&b);
	return rc ? fdl_fail(err, FDL_ENOMEM, "out of memory reading %s", path) : 0;
}

static char *env_dup(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? fdl_strdup(v) : NULL;
}

static char *home_file(const char *env, const char *rel)
{
	const char *v = getenv(env);
	if (v && *v)
		return fdl_strdup(v);
	const char *home = getenv("HOME");
	return fdl_asprintf("%s/%s", home && *home ? home : "/", rel);
}

typedef struct profile_files {
	char *config, *credentials;
	char *config_section; /* "default" or "profile <name>" */
	const char *name;
} profile_files;

/* A profile value: the credentials file first (for keys), then config. */
static int profile_value(char **out, const profile_files *pf, const char *key, bool credentials_first,
			 fdl_error *err)
{
	int rc = 0;
	*out = NULL;
	if (credentials_first)
		rc = file_value(out, pf->credentials, pf->name, key, err);
	if (!rc && !*out)
		rc = file_value(out, pf->config, pf->config_section, key, err);
	return rc;
}

/* ---- the URL ---------------------------------------------------------------- */

static bool bucket_name_ok(const char *b, size_t n)
{
	if (n < 3 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = b[i];
		if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' || c == '.'))
			return false;
	}
	return isalnum((unsigned char)b[0]) && isalnum((unsigned char)b[n - 1]);
}

static int parse_url(fdl_s3_config *c, const char *url, fdl_error *err)
{
	if (strncmp(url, "s3://", 5) != 0)
		return fdl_fail(err, FDL_EINVALID, "'%s' is not an s3://bucket/prefix URL", url);
	const char *b = url + 5;
	const char *slash = strchr(b, '/');
	size_t bl = slash ? (size_t)(slash - b) : strlen(b);
	if (!bucket_name_ok(b, bl))
		return fdl_fail(err, FDL_EINVALID,
				"%s: '%.*s' is not a valid bucket name (3 to 63 lower-case letters, digits, '-' "
				"and '.', starting and ending with a letter or digit)",
				url, (int)bl, b);
	c->bucket = strndup(b, bl);
	const char *pre = slash ? slash + 1 : "";
	size_t pl = strlen(pre);
	while (pl && pre[pl - 1] == '/')
		pl--;
	c->prefix = strndup(pre, pl);
	if (!c->bucket || !c->prefix)
		return fdl_oom(err);
	if (*c->prefix && fdl_path_check_relative(c->prefix, "the prefix of an s3:// URL", err))
		return fdl_error_prefix(err, "%s", url);
	return 0;
}

/* ---- the whole configuration ------------------------------------------------ */

static int set_endpoint(fdl_s3_config *c, char *endpoint, const char *style, fdl_error *err)
{
	if (endpoint) {
		size_t n = strlen(endpoint);
		while (n && endpoint[n - 1] == '/')
			endpoint[--n] = '\0';
		if (strncmp(endpoint, "http://", 7) && strncmp(endpoint, "https://", 8)) {
			int rc = fdl_fail(err, FDL_EINVALID,
					  "the S3 endpoint '%s' must start with http:// or https:// (from "
					  "AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's endpoint_url)",
					  endpoint);
			free(endpoint);
			return rc;
		}
		c->endpoint = endpoint;
		c->custom_endpoint = true;
	} else {
		c->endpoint = fdl_asprintf("https://s3.%s.amazonaws.com", c->region);
		if (!c->endpoint)
			return fdl_oom(err);
	}
	if (!style || !*style || !strcasecmp(style, "auto"))
		/* dots in a bucket name break TLS for virtual-hosted names */
		c->path_style = c->custom_endpoint || strchr(c->bucket, '.') != NULL;
	else if (!strcasecmp(style, "path"))
		c->path_style = true;
	else if (!strcasecmp(style, "virtual"))
		c->path_style = false;
	else
		return fdl_fail(err, FDL_EINVALID,
				"S3 addressing style '%s' (FDL_S3_ADDRESSING_STYLE or the profile's s3.addressing_style) "
				"is not one of path, virtual, auto",
				style);
	return 0;
}

static int load_credentials(fdl_s3_config *c, const profile_files *pf, fdl_error *err)
{
	c->key_id = env_dup("AWS_ACCESS_KEY_ID");
	c->secret = env_dup("AWS_SECRET_ACCESS_KEY");
	if (c->key_id || c->secret) {
		if (!c->key_id || !c->secret)
			return fdl_fail(err, FDL_EINVALID,
					"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together (only %s is "
					"set)",
					c->key_id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY");
		c->token = env_dup("AWS_SESSION_TOKEN");
		c->profile = fdl_strdup("the environment (AWS_ACCESS_KEY_ID)");
		return c->profile ? 0 : fdl_oom(err);
	}
	int rc = profile_value(&c->key_id, pf, "aws_access_key_id", true, err);
	if (!rc)
		rc = profile_value(&c->secret, pf, "aws_secret_access_key", true, err);
	if (!rc)
		rc = profile_value(&c->token, pf, "aws_session_token", true, err);
	if (rc)
		return rc;
	if (c->key_id && c->secret) {
		c->profile = fdl_asprintf("profile '%s' (%s)", pf->name, pf->credentials);
		return c->profile ? 0 : fdl_oom(err);
	}
	if (c->key_id || c->secret)
		return fdl_fail(err, FDL_EINVALID, "profile '%s' has %s but not %s (%s, %s)", pf->name,
				c->key_id ? "aws_access_key_id" : "aws_secret_access_key",
				c->key_id ? "aws_secret_access_key" : "aws_access_key_id", pf->credentials, pf->config);
	free(c->token);
	c->token = NULL;
	return 0; /* anonymous */
}

int fdl_s3_config_load(fdl_s3_config *c, const char *url, fdl_error *err)
{
	memset(c, 0, sizeof *c);
	profile_files pf = {0};
	char *endpoint = NULL, *style = NULL;
	int rc = parse_url(c, url, err);
	if (rc)
		goto out;
	const char *name = getenv("AWS_PROFILE");
	pf.name = name && *name ? name : "default";
	pf.config = home_file("AWS_CONFIG_FILE", ".aws/config");
	pf.credentials = home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
	pf.config_section = strcmp(pf.name, "default") ? fdl_asprintf("profile %s", pf.name) : fdl_strdup("default");
	if (!pf.config || !pf.credentials || !pf.config_section) {
		rc = fdl_oom(err);
		goto out;
	}
	if ((rc = load_credentials(c, &pf, err)))
		goto out;
	c->region = env_dup("AWS_REGION");
	if (!c->region)
		c->region = env_dup("AWS_DEFAULT_REGION");
	if (!c->region && (rc = profile_value(&c->region, &pf, "region", false, err)))
		goto out;
	if (!c->region && !(c->region = fdl_strdup("us-east-1"))) {
		rc = fdl_oom(err);
		goto out;
	}
	endpoint = env_dup("AWS_ENDPOINT_URL_S3");
	if (!endpoint)
		endpoint = env_dup("AWS_ENDPOINT_URL");
	if (!endpoint && (rc = profile_value(&endpoint, &pf, "s3.endpoint_url", false, err)))
		goto out;
	if (!endpoint && (rc = profile_value(&endpoint, &pf, "endpoint_url", false, err)))
		goto out;
	style = env_dup("FDL_S3_ADDRESSING_STYLE");
	if (!style && (rc = profile_value(&style, &pf, "s3.addressing_style", false, err)))
		goto out;
	rc = set_endpoint(c, endpoint, style, err);
	endpoint = NULL; /* owned by c now, or freed */
out:
	free(endpoint);
	free(style);
	free(pf.config);
	free(pf.credentials);
	free(pf.config_section);
	if (rc)
		fdl_s3_config_free(c);
	return rc;
}

void fdl_s3_config_free(fdl_s3_config *c)
{
	if (!c)
		return;
	free(c->bucket);
	free(c->prefix);
	free(c->region);
	free(c->endpoint);
	free(c->key_id);
	free(c->secret);
	free(c->token);
	free(c->profile);
	memset(c, 0, sizeof *c);
}

char *fdl_s3_bucket_url(const fdl_s3_config *c)
{
	if (c->path_style)
		return fdl_asprintf("%s/%s/", c->endpoint, c->bucket);
	const char *host = strstr(c->endpoint, "://") + 3;
	return fdl_asprintf("%.*s%s.%s/", (int)(host - c->endpoint), c->endpoint, c->bucket, host);
}
