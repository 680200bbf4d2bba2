/* S3's XML replies (libxml2, never from the network: XML_PARSE_NONET). */
#include "s3.h"

#include <libxml/parser.h>
#include "lazy_xml.h"
#include <stdlib.h>
#include <string.h>

/* The first element named `name` anywhere below `n`, as text. */
char *fdl_s3_xml_text(xmlNode *n, const char *name)
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
		char *r = fdl_s3_xml_text(n->children, name);
		if (r)
			return r;
	}
	return NULL;
}

/* libxml2's messages that no parser context carries (an encoding error,
 * "I/O error : encoder error"), which XML_PARSE_NOERROR does not silence. */
static void quiet(void *ctx, const char *fmt, ...)
{
	(void)ctx, (void)fmt;
}

xmlDoc *fdl_s3_xml_parse(const char *data, size_t len)
{
	if (!data || !len || len > INT32_MAX)
		return NULL;
	/* an answer in a bad encoding must not write to fdl's stderr: the
	 * handler is libxml2's per thread, and this file alone parses XML */
	xmlSetGenericErrorFunc(NULL, quiet);
	return xmlReadMemory(data, (int)len, "s3.xml", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
}

/* "Code: Message" of an S3 error body, or NULL. */
char *fdl_s3_error_text(const fdl_buf *b)
{
	xmlDoc *doc = fdl_s3_xml_parse(b->data, b->len);
	if (!doc)
		return NULL;
	xmlNode *root = xmlDocGetRootElement(doc);
	char *code = fdl_s3_xml_text(root, "Code"), *msg = fdl_s3_xml_text(root, "Message");
	char *r = code ? fdl_asprintf("%s%s%s", code, msg ? ": " : "", msg ? msg : "") : NULL;
	free(code);
	free(msg);
	xmlFreeDoc(doc);
	return r;
}


/* One entry's Key, URL-decoded (encoding-type=url), into out below
 * `strip` when it is under `want`. */
static int list_key(fdl_strlist *out, CURL *curl, const char *k, const char *want, size_t strip, const char *url,
		    fdl_error *err)
{
	int dl = 0;
	char *dec = k ? curl_easy_unescape(curl, k, 0, &dl) : NULL;
	int rc = 0;
	if (!dec)
		rc = fdl_fail(err, FDL_EIO, "listing %s: an entry without a Key", url);
	else if (memchr(dec, '\0', (size_t)dl))
		rc = fdl_fail(err, FDL_EIO, "listing %s: a Key holds a NUL byte (%%00)", url);
	else if ((size_t)dl > strip && !strncmp(dec, want, strlen(want)))
		rc = fdl_strlist_add(out, dec + strip, err);
	curl_free(dec);
	return rc;
}

int fdl_s3_list_page(fdl_strlist *out, char **token, CURL *curl, const char *data, size_t len, const char *want,
		     size_t strip, const char *url, fdl_error *err)
{
	*token = NULL;
	xmlDoc *doc = fdl_s3_xml_parse(data, len);
	if (!doc)
		return fdl_fail(err, FDL_EIO, "listing %s (keys under %s): the answer is not S3's XML", url, want);
	xmlNode *root = xmlDocGetRootElement(doc);
	int rc = 0;
	for (xmlNode *n = root ? root->children : NULL; !rc && n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "Contents"))
			continue;
		char *k = fdl_s3_xml_text(n->children, "Key");
		rc = list_key(out, curl, k, want, strip, url, err);
		free(k);
	}
	char *trunc = root ? fdl_s3_xml_text(root->children, "IsTruncated") : NULL;
	if (!rc && trunc && !strcmp(trunc, "true")) {
		*token = fdl_s3_xml_text(root->children, "NextContinuationToken");
		if (!*token || !**token)
			rc = fdl_fail(err, FDL_EIO, "listing %s: truncated, without a continuation token", url);
	}
	if (rc) {
		free(*token);
		*token = NULL;
	}
	free(trunc);
	xmlFreeDoc(doc);
	return rc;
}
