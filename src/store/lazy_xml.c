/* The libxml2 forwards (lazy_xml.h, ../util/dynlib.h). */
#include "lazy_xml.h"
#include "../util/dynlib.h"
#include "../util/util.h"


/* xmlFree is a variable of libxml2 (the function it frees with), not a
 * function: its slot holds the variable's address. */
static const char *const names[] = {"xmlReadMemory", "xmlDocGetRootElement", "xmlNodeGetContent", "xmlFreeDoc",
				    "xmlFree"};

static union {
	void *slot[sizeof names / sizeof *names];
	struct {
		xmlDocPtr (*read_memory)(const char *, int, const char *, const char *, int);
		xmlNodePtr (*root)(const xmlDoc *);
		xmlChar *(*content)(const xmlNode *);
		void (*free_doc)(xmlDocPtr);
		xmlFreeFunc *free;
	} f;
} api;
_Static_assert(sizeof api.slot == sizeof api.f, "one slot per function");

static fdl_dynlib lib = FDL_DYNLIB("libxml2.so.2", "libxml2", names, api.slot);

int fdl_xml_load(fdl_error *err)
{
	return fdl_dynlib_load(&lib, err);
}

static void need(void)
{
	fdl_dynlib_need(&lib);
}

xmlDocPtr fdl_lazy_xmlReadMemory(const char *buffer, int size, const char *url, const char *encoding, int options)
{
	need();
	return api.f.read_memory(buffer, size, url, encoding, options);
}

xmlNodePtr fdl_lazy_xmlDocGetRootElement(const xmlDoc *doc)
{
	need();
	return api.f.root(doc);
}

xmlChar *fdl_lazy_xmlNodeGetContent(const xmlNode *cur)
{
	need();
	return api.f.content(cur);
}

void fdl_lazy_xmlFreeDoc(xmlDocPtr doc)
{
	need();
	api.f.free_doc(doc);
}

void fdl_lazy_xmlFree(void *p)
{
	need();
	(*api.f.free)(p);
}
