/* The libxml2 forwards (lazy_xml.h, ../util/dynlib.h). */
#include "lazy_xml.h"
#include "../util/dynlib.h"
#include "../util/util.h"


/* Every libxml2 symbol libfdl uses, once (../util/dynlib.h says how the
 * list is read). xmlFree is a variable of libxml2 (the function it frees
 * with), not a function: its slot holds the variable's address, and its
 * forward is written by hand below. */
#define XML_FUNCTIONS(F, V, H) \
	F(xmlDocPtr, ReadMemory, (const char *buffer, int size, const char *url, const char *encoding, int options), \
	  (buffer, size, url, encoding, options)) \
	F(xmlNodePtr, DocGetRootElement, (const xmlDoc *doc), (doc)) \
	F(xmlChar *, NodeGetContent, (const xmlNode *cur), (cur)) \
	V(FreeDoc, (xmlDocPtr doc), (doc)) \
	V(SetGenericErrorFunc, (void *ctx, xmlGenericErrorFunc handler), (ctx, handler)) \
	H(xmlFreeFunc *, Free, )

/* H's slot here: a pointer to the variable. */
#define SLOT_VARIABLE(type, name, unused) type name;

#define FDL_DYN_SYMBOL(name) "xml" #name
#define FDL_DYN_FORWARD(name) fdl_lazy_xml##name

static const char *const names[] = {XML_FUNCTIONS(FDL_DYN_NAME_F, FDL_DYN_NAME_V, FDL_DYN_NAME_H)};

/* In the order of names. */
static union {
	void *slot[sizeof names / sizeof *names];
	struct {
		XML_FUNCTIONS(FDL_DYN_SLOT_F, FDL_DYN_SLOT_V, SLOT_VARIABLE)
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

XML_FUNCTIONS(FDL_DYN_FORWARD_F, FDL_DYN_FORWARD_V, FDL_DYN_FORWARD_H)

void fdl_lazy_xmlFree(void *p)
{
	need();
	(*api.f.Free)(p);
}
