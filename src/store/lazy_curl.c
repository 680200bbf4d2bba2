/* The libcurl forwards (lazy_curl.h, ../util/dynlib.h). */
#include "lazy_curl.h"
#include "../util/dynlib.h"
#include "../util/util.h"

#include <stdarg.h>

static const char *const names[] = {
	"curl_easy_init",  "curl_easy_cleanup",  "curl_easy_reset", "curl_easy_perform",  "curl_easy_setopt",
	"curl_easy_getinfo", "curl_easy_strerror", "curl_easy_unescape", "curl_free", "curl_slist_append",
	"curl_slist_free_all",
};

/* In the order of names. */
static union {
	void *slot[sizeof names / sizeof *names];
	struct {
		CURL *(*easy_init)(void);
		void (*easy_cleanup)(CURL *);
		void (*easy_reset)(CURL *);
		CURLcode (*easy_perform)(CURL *);
		CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
		CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
		const char *(*easy_strerror)(CURLcode);
		char *(*easy_unescape)(CURL *, const char *, int, int *);
		void (*free)(void *);
		struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
		void (*slist_free_all)(struct curl_slist *);
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

CURL *fdl_lazy_curl_easy_init(void)
{
	need();
	return api.f.easy_init();
}

void fdl_lazy_curl_easy_cleanup(CURL *c)
{
	need();
	api.f.easy_cleanup(c);
}

void fdl_lazy_curl_easy_reset(CURL *c)
{
	need();
	api.f.easy_reset(c);
}

CURLcode fdl_lazy_curl_easy_perform(CURL *c)
{
	need();
	return api.f.easy_perform(c);
}

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

const char *fdl_lazy_curl_easy_strerror(CURLcode code)
{
	need();
	return api.f.easy_strerror(code);
}

char *fdl_lazy_curl_easy_unescape(CURL *c, const char *url, int inlength, int *outlength)
{
	need();
	return api.f.easy_unescape(c, url, inlength, outlength);
}

void fdl_lazy_curl_free(void *p)
{
	need();
	api.f.free(p);
}

struct curl_slist *fdl_lazy_curl_slist_append(struct curl_slist *list, const char *s)
{
	need();
	return api.f.slist_append(list, s);
}

void fdl_lazy_curl_slist_free_all(struct curl_slist *list)
{
	need();
	api.f.slist_free_all(list);
}
