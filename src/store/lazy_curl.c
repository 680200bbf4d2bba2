/* The libcurl forwards (lazy_curl.h, ../util/dynlib.h). */
#include "lazy_curl.h"
#include "../util/dynlib.h"
#include "../util/util.h"

#include <stdarg.h>

/* Every libcurl function libfdl calls, once (../util/dynlib.h says how the
 * list is read); the two variadic ones are forwarded by hand below. */
#define CURL_FUNCTIONS(F, V, H) \
	F(CURL *, easy_init, (void), ()) \
	V(easy_cleanup, (CURL *c), (c)) \
	V(easy_reset, (CURL *c), (c)) \
	F(CURLcode, easy_perform, (CURL *c), (c)) \
	H(CURLcode, easy_setopt, (CURL *, CURLoption, ...)) \
	H(CURLcode, easy_getinfo, (CURL *, CURLINFO, ...)) \
	F(const char *, easy_strerror, (CURLcode code), (code)) \
	F(char *, easy_unescape, (CURL *c, const char *url, int inlength, int *outlength), (c, url, inlength, outlength)) \
	V(free, (void *p), (p)) \
	F(struct curl_slist *, slist_append, (struct curl_slist *list, const char *s), (list, s)) \
	V(slist_free_all, (struct curl_slist *list), (list))

#define FDL_DYN_SYMBOL(name) "curl_" #name
#define FDL_DYN_FORWARD(name) fdl_lazy_curl_##name

static const char *const names[] = {CURL_FUNCTIONS(FDL_DYN_NAME_F, FDL_DYN_NAME_V, FDL_DYN_NAME_H)};

/* In the order of names. */
static union {
	void *slot[sizeof names / sizeof *names];
	struct {
		CURL_FUNCTIONS(FDL_DYN_SLOT_F, FDL_DYN_SLOT_V, FDL_DYN_SLOT_H)
	} f;
} api;
_Static_assert(sizeof api.slot == sizeof api.f, "one slot per function");

static fdl_dynlib lib = FDL_DYNLIB("libcurl.so.4", "libcurl4", names, api.slot);

int fdl_curl_load(fdl_error *err)
{
	return fdl_dynlib_load(&lib, err);
}

static void need(void)
{
	fdl_dynlib_need(&lib);
}

CURL_FUNCTIONS(FDL_DYN_FORWARD_F, FDL_DYN_FORWARD_V, FDL_DYN_FORWARD_H)

/* An option's number says the type of its argument, as libcurl reads it. */
CURLcode fdl_lazy_curl_easy_setopt(CURL *c, CURLoption option, ...)
{
	need();
	va_list ap;
	va_start(ap, option);
	CURLcode rc;
	if (option < CURLOPTTYPE_OBJECTPOINT)
		rc = api.f.easy_setopt(c, option, va_arg(ap, long));
	else if (option < CURLOPTTYPE_FUNCTIONPOINT)
		rc = api.f.easy_setopt(c, option, va_arg(ap, void *));
	else if (option < CURLOPTTYPE_OFF_T)
		rc = api.f.easy_setopt(c, option, va_arg(ap, void (*)(void)));
	else if (option < CURLOPTTYPE_BLOB)
		rc = api.f.easy_setopt(c, option, va_arg(ap, curl_off_t));
	else
		rc = api.f.easy_setopt(c, option, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Every CURLINFO takes a pointer to where the answer goes. */
CURLcode fdl_lazy_curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
	need();
	va_list ap;
	va_start(ap, info);
	CURLcode rc = api.f.easy_getinfo(c, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}
