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

xmlDoc *fdl_s3_xml_parse(const char *data, size_t len)
{
	if (!data || !len || len > INT32_MAX)
		return NULL;
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

