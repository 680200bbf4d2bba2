#include "test.h"
#include "../../src/store/aws.h"
#include "../../src/store/s3.h"
#include "../../src/catalog/catalog.h"
#include "../../src/store/store.h"
#include "../../src/util/ini.h"

#include <stdlib.h>
#include <unistd.h>

static const char CONFIG[] = "# comment\n"
			     "[default]\n"
			     "region = eu-west-1\n"
			     "s3 =\n"
			     "  addressing_style = virtual\n"
			     "  endpoint_url = http://nested:9000\n"
			     "\n"
			     "[profile pub]\n"
			     "region=us-west-2   \n"
			     "endpoint_url = http://top:9000\n"
			     "; another comment\n"
			     "addressing_style = not-nested\n"
			     "s3 =\n"
			     "\taddressing_style = path\n"
			     "region = ca-central-1\n";

static char *get(const char *section, const char *key)
{
	char *v = NULL;
	return fdl_ini_get(&v, CONFIG, strlen(CONFIG), section, key) == 0 ? v : strdup("(error)");
}

static void ini_sections_nesting_and_last_value(t_ctx *t)
{
	char *v;
	CHECK(t, (v = get("default", "region")) && !strcmp(v, "eu-west-1"));
	free(v);
	CHECK(t, (v = get("default", "s3.addressing_style")) && !strcmp(v, "virtual"));
	free(v);
	CHECK(t, (v = get("default", "s3.endpoint_url")) && !strcmp(v, "http://nested:9000"));
	free(v);
	/* a nested key is not a top-level one, and the other way round */
	CHECK(t, (v = get("default", "addressing_style")) == NULL);
	free(v);
	CHECK(t, (v = get("profile pub", "addressing_style")) && !strcmp(v, "not-nested"));
	free(v);
	CHECK(t, (v = get("profile pub", "s3.addressing_style")) && !strcmp(v, "path"));
	free(v);
	/* trailing blanks trimmed; a later value wins, as in the AWS CLI */
	CHECK(t, (v = get("profile pub", "region")) && !strcmp(v, "ca-central-1"));
	free(v);
	CHECK(t, (v = get("profile pub", "endpoint_url")) && !strcmp(v, "http://top:9000"));
	free(v);
	CHECK(t, (v = get("pub", "region")) == NULL); /* config sections say "profile" */
	free(v);
	CHECK(t, (v = get("nope", "region")) == NULL);
	free(v);
}

static void ini_survives_odd_input(t_ctx *t)
{
	const char *odd[] = {"", "[", "[default", "=", "[default]\n=\n", "[default]\nregion", "\n\n\n[default]\n  x = y\n",
			     "[default]\nregion = a\n[default]\nregion = b\n"};
	for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
		char *v = NULL;
		CHECK(t, fdl_ini_get(&v, odd[i], strlen(odd[i]), "default", "region") == 0);
		if (i == 7)
			CHECK(t, v && !strcmp(v, "b"));
		else
			CHECK(t, v == NULL);
		free(v);
	}
}

/* The statements a stock DuckDB gets for the bucket `url` names, made as
 * fdl makes them: the S3 store hands the catalog layer its access. */
static int secret_of(fdl_buf *b, const char *url)
{
	fdl_store *st = NULL;
	fdl_error err;
	int rc = fdl_store_s3_open(&st, url, &err);
	if (!rc)
		rc = fdl_duck_store_sql(b, st, &err);
	fdl_store_free(st);
	return rc;
}

static void s3_urls_and_secrets(t_ctx *t)
{
	setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "it's secret", 1);
	setenv("AWS_SESSION_TOKEN", "tok", 1);
	setenv("AWS_REGION", "eu-central-1", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent", 1);
	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("FDL_S3_ADDRESSING_STYLE");
	fdl_s3_config c;
	fdl_error err;
	CHECK(t, fdl_s3_config_load(&c, "s3://my-bucket/a/b//", &err) == 0);
	CHECK(t, !strcmp(c.bucket, "my-bucket") && !strcmp(c.prefix, "a/b"));
	CHECK(t, !c.path_style && !c.custom_endpoint);
	char *url = fdl_s3_bucket_url(&c);
	CHECK(t, url && !strcmp(url, "https://my-bucket.s3.eu-central-1.amazonaws.com/"));
	free(url);
	fdl_buf b = {0};
	CHECK(t, secret_of(&b, "s3://my-bucket/a/b//") == 0);
	CHECK_CONTAINS(t, b.data, "LOAD httpfs;\nCREATE OR REPLACE SECRET");
	CHECK_CONTAINS(t, b.data, "KEY_ID 'AKIDEXAMPLE', SECRET 'it''s secret', SESSION_TOKEN 'tok', REGION 'eu-central-1'");
	CHECK_CONTAINS(t, b.data, "URL_STYLE 'vhost', SCOPE 's3://my-bucket/');");
	CHECK(t, !strstr(b.data, "ENDPOINT"));
	fdl_buf_free(&b);
	fdl_s3_config_free(&c);

	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/", 1);
	CHECK(t, fdl_s3_config_load(&c, "s3://bkt", &err) == 0);
	CHECK(t, c.path_style && !strcmp(c.prefix, ""));
	url = fdl_s3_bucket_url(&c);
	CHECK(t, url && !strcmp(url, "http://127.0.0.1:9000/bkt/"));
	free(url);
	CHECK(t, secret_of(&b, "s3://bkt") == 0);
	CHECK_CONTAINS(t, b.data, "ENDPOINT '127.0.0.1:9000', USE_SSL false, URL_STYLE 'path'");
	fdl_buf_free(&b);
	fdl_s3_config_free(&c);

	CHECK(t, fdl_s3_config_load(&c, "s3://Bad_Bucket/x", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "not a valid bucket name");
	CHECK(t, fdl_s3_config_load(&c, "s3://bkt/../x", &err) == FDL_EINVALID);
	setenv("FDL_S3_ADDRESSING_STYLE", "sideways", 1);
	CHECK(t, fdl_s3_config_load(&c, "s3://bkt", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "'sideways'");
	unsetenv("FDL_S3_ADDRESSING_STYLE");
	setenv("AWS_ENDPOINT_URL", "127.0.0.1:9000", 1);
	CHECK(t, fdl_s3_config_load(&c, "s3://bkt", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "must start with http:// or https://");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	CHECK(t, fdl_s3_config_load(&c, "s3://bkt", &err) == FDL_EINVALID);
	CHECK_CONTAINS(t, err.message, "must be set together");
	/* no credentials at all: anonymous, for public buckets */
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_ENDPOINT_URL");
	CHECK(t, fdl_s3_config_load(&c, "s3://bkt", &err) == 0);
	CHECK(t, c.key_id == NULL && c.secret == NULL && c.token == NULL);
	fdl_s3_config_free(&c);
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_REGION");
	unsetenv("AWS_CONFIG_FILE");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

/* What a page of ListObjectsV2 gives, as in s3_list for s3://bkt/pfx and
 * "dir"; the error's text in *why. */
static int list_page(fdl_strlist *keys, char **token, const char *xml, fdl_error *err)
{
	return fdl_s3_list_page(keys, token, NULL, xml, strlen(xml), "pfx/dir/", 4, "s3://bkt/pfx", err);
}

static void s3_xml_answers(t_ctx *t)
{
	fdl_error err;
	const char *e = "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>gone</Message></Error>";
	char *why = fdl_s3_error_text(&(fdl_buf){.data = (char *)e, .len = strlen(e)});
	CHECK(t, why && !strcmp(why, "NoSuchKey: gone"));
	free(why);
	fdl_strlist keys = {0};
	char *token = NULL;
	CHECK(t, list_page(&keys, &token,
			   "<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>pfx/dir/a%20b%25c</Key></Contents>"
			   "<Contents><Key>pfx/other</Key></Contents><NextContinuationToken>tk</NextContinuationToken>"
			   "</ListBucketResult>",
			   &err) == 0);
	CHECK(t, keys.len == 1 && !strcmp(keys.items[0], "dir/a b%c") && token && !strcmp(token, "tk"));
	free(token);
	fdl_strlist_free(&keys);
	/* a key with a NUL byte would be listed as another key */
	CHECK(t, list_page(&keys, &token, "<ListBucketResult><Contents><Key>pfx/dir/a%00.json</Key></Contents></ListBucketResult>",
			   &err) == FDL_EIO);
	CHECK_CONTAINS(t, err.message, "NUL byte");
	CHECK(t, keys.len == 0 && !token);
	CHECK(t, list_page(&keys, &token, "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", &err) ==
			 FDL_EIO);
	CHECK_CONTAINS(t, err.message, "without a continuation token");
	CHECK(t, list_page(&keys, &token, "not XML", &err) == FDL_EIO);
	CHECK_CONTAINS(t, err.message, "not S3's XML");
	/* an answer in a broken encoding: no answer, and nothing from libxml2
	 * on fdl's stderr (found by fuzz_s3xml) */
	char path[] = "/tmp/fdl-unit-xml-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	CHECK(t, fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	const char bad[] = "<?xml version=\"1.0\" encoding=\"ISO-2022-JP\"?><Error><Code>\x1b$B\x92/dt</Code></Error>";
	why = fdl_s3_error_text(&(fdl_buf){.data = (char *)bad, .len = sizeof bad - 1});
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	CHECK(t, lseek(fd, 0, SEEK_END) == 0);
	close(fd);
	unlink(path);
	free(why);
}

const t_case aws_tests[] = {
	{"aws: S3's XML answers (errors, a listing page, quiet on a bad encoding)", s3_xml_answers},
	{"aws: INI sections, nested blocks, last value wins", ini_sections_nesting_and_last_value},
	{"aws: INI parser survives odd input", ini_survives_odd_input},
	{"aws: s3 URLs, endpoints, addressing, DuckDB secrets, errors", s3_urls_and_secrets},
	{NULL, NULL},
};
