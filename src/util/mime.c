/* The media type a host gives a repository file or a page file, by name:
 * what fdl serve answers and what the S3 store stores with each object. */
#include "util.h"

#include <string.h>

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

const char *fdl_content_type(const char *rel)
{
	static const struct {
		const char *suffix, *type;
	} by_suffix[] = {
		{".json", "application/json"},
		{".html", "text/html; charset=utf-8"},
		{".js", "text/javascript; charset=utf-8"},
		{".css", "text/css; charset=utf-8"},
		{".wasm", "application/wasm"},
		{".map", "application/json"},
		{".parquet", "application/vnd.apache.parquet"},
		{".sig", "text/plain; charset=utf-8"},
	};
	size_t n = strlen(rel);
	if (!strncmp(rel, "iceberg/", 8) && strstr(rel, "/catalog/v1/"))
		return "application/json"; /* the Iceberg REST catalog's answers (index.html ones too) */
	for (size_t i = 0; i < sizeof by_suffix / sizeof by_suffix[0]; i++)
		if (ends_with(rel, n, by_suffix[i].suffix))
			return by_suffix[i].type;
	if (!strcmp(rel, "HEAD") || !strncmp(rel, "refs/", 5))
		return "text/plain; charset=utf-8";
	return "application/octet-stream";
}
