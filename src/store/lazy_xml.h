/* libxml2, loaded when an S3 reply is first parsed (../util/dynlib.h).
 * Include after <libxml/parser.h>. */
#ifndef FDL_STORE_LAZY_XML_H
#define FDL_STORE_LAZY_XML_H

#include <libxml/parser.h>
#include <libxml/tree.h>

#undef xmlFree
xmlDocPtr fdl_lazy_xmlReadMemory(const char *buffer, int size, const char *url, const char *encoding, int options);
xmlNodePtr fdl_lazy_xmlDocGetRootElement(const xmlDoc *doc);
xmlChar *fdl_lazy_xmlNodeGetContent(const xmlNode *cur);
void fdl_lazy_xmlFreeDoc(xmlDocPtr doc);
void fdl_lazy_xmlFree(void *p);
void fdl_lazy_xmlSetGenericErrorFunc(void *ctx, xmlGenericErrorFunc handler);
#define xmlReadMemory fdl_lazy_xmlReadMemory
#define xmlDocGetRootElement fdl_lazy_xmlDocGetRootElement
#define xmlNodeGetContent fdl_lazy_xmlNodeGetContent
#define xmlFreeDoc fdl_lazy_xmlFreeDoc
#define xmlFree fdl_lazy_xmlFree
#define xmlSetGenericErrorFunc fdl_lazy_xmlSetGenericErrorFunc

#endif
