/* The libxml2 forwards (lazy_xml.h, ../util/dynlib.h). */
#include "lazy_xml.h"
#include "../util/dynlib.h"
#include "../util/util.h"

#include <pthread.h>

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

static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	fdl_dynlib_open("libxml2.so.2", names, api.slot, sizeof names / sizeof *names, load_error, sizeof load_error);
}

int fdl_xml_load(fdl_error *err)
{
	pthread_once(&once, load);
	return load_error[0] ? fdl_fail(err, FDL_ERROR, "%s (install libxml2)", load_error) : 0;
}

static void need(void)
{
	pthread_once(&once, load);
	if (load_error[0] || !api.f.read_memory)
		fdl_dynlib_unloaded("libxml2", load_error);
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
