/* libcurl, loaded when a store first needs it (../util/dynlib.h). Include
 * after <curl/curl.h>: the calls below then go to libfdl's forwards. */
#ifndef FDL_STORE_LAZY_CURL_H
#define FDL_STORE_LAZY_CURL_H

#include <curl/curl.h>

#undef curl_easy_setopt
#undef curl_easy_getinfo
CURL *fdl_lazy_curl_easy_init(void);
void fdl_lazy_curl_easy_cleanup(CURL *c);
void fdl_lazy_curl_easy_reset(CURL *c);
CURLcode fdl_lazy_curl_easy_perform(CURL *c);
CURLcode fdl_lazy_curl_easy_setopt(CURL *c, CURLoption option, ...);
CURLcode fdl_lazy_curl_easy_getinfo(CURL *c, CURLINFO info, ...);
const char *fdl_lazy_curl_easy_strerror(CURLcode code);
char *fdl_lazy_curl_easy_unescape(CURL *c, const char *url, int inlength, int *outlength);
void fdl_lazy_curl_free(void *p);
struct curl_slist *fdl_lazy_curl_slist_append(struct curl_slist *list, const char *s);
void fdl_lazy_curl_slist_free_all(struct curl_slist *list);
#define curl_easy_init fdl_lazy_curl_easy_init
#define curl_easy_cleanup fdl_lazy_curl_easy_cleanup
#define curl_easy_reset fdl_lazy_curl_easy_reset
#define curl_easy_perform fdl_lazy_curl_easy_perform
#define curl_easy_setopt fdl_lazy_curl_easy_setopt
#define curl_easy_getinfo fdl_lazy_curl_easy_getinfo
#define curl_easy_strerror fdl_lazy_curl_easy_strerror
#define curl_easy_unescape fdl_lazy_curl_easy_unescape
#define curl_free fdl_lazy_curl_free
#define curl_slist_append fdl_lazy_curl_slist_append
#define curl_slist_free_all fdl_lazy_curl_slist_free_all

#endif
