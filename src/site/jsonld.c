/* The schema.org Dataset of a version (what Google Dataset Search reads
 * from a page's JSON-LD, and what Croissant builds on): dataset.json's
 * title, description, licences and people mapped, never dropped. */
#include "site_int.h"
#include "../layout/keys.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool spdx_like(const char *s)
{
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(".-+", *p))
			return false;
	return *s != '\0';
}

static bool is_url(const char *s) { return !strncmp(s, "https://", 8) || !strncmp(s, "http://", 7); }

void fdl__site_licence(const json_t *l, const char **id, char **url, const char **title)
{
	const char *given = json_is_string(l) ? json_string_value(l) : fdl__site_str(l, "url");
	*id = json_is_string(l) ? json_string_value(l)
	      : *fdl__site_str(l, "spdx") ? fdl__site_str(l, "spdx")
					   : fdl__site_str(l, "id");
	*title = json_is_string(l) || !*fdl__site_str(l, "title") ? NULL : fdl__site_str(l, "title");
	*url = is_url(given)  ? fdl_strdup(given)
	       : spdx_like(*id) ? fdl_asprintf("https://spdx.org/licenses/%s.html", *id)
				: NULL;
}

static bool has_role(const json_t *c, const char *role)
{
	size_t i;
	const json_t *r;
	json_array_foreach(json_object_get(c, "roles"), i, r) if (!strcmp(json_string_value(r) ? json_string_value(r) : "",
									   role)) return true;
	return false;
}

/* contributors -> creator (everyone but a publisher alone; the publishers
 * when there is no one else) and publisher. */
static int people(json_t *ds, const json_t *contributors)
{
	json_t *creators = json_array(), *publishers = json_array();
	size_t i;
	const json_t *c;
	json_array_foreach(contributors, i, c)
	{
		const char *name = fdl__site_str(c, "title");
		if (!*name)
			continue;
		bool pub = has_role(c, "publisher");
		json_t *who = json_pack("{s:s, s:s}", "@type", pub ? "Organization" : "Person", "name", name);
		if (!who || json_array_append(pub ? publishers : creators, who))
			json_decref(who), who = NULL;
		if (pub && json_array_size(json_object_get(c, "roles")) > 1 && who)
			json_array_append(creators, who);
		json_decref(who);
	}
	if (!json_array_size(creators))
		json_array_extend(creators, publishers);
	if (json_array_size(creators))
		json_object_set(ds, "creator", creators);
	if (json_array_size(publishers))
		json_object_set(ds, "publisher", json_array_size(publishers) == 1 ? json_array_get(publishers, 0) : publishers);
	json_decref(creators);
	json_decref(publishers);
	return 0;
}

static void licences(json_t *ds, const json_t *list)
{
	json_t *urls = json_array();
	size_t i;
	const json_t *l;
	json_array_foreach(list, i, l)
	{
		const char *id, *title;
		char *url;
		fdl__site_licence(l, &id, &url, &title);
		json_array_append_new(urls, json_string(url ? url : id));
		free(url);
	}
	if (json_array_size(urls))
		json_object_set(ds, "license", json_array_size(urls) == 1 ? json_array_get(urls, 0) : urls);
	json_decref(urls);
}

static void coverage(json_t *ds, const json_t *d)
{
	const json_t *t = json_object_get(d, "temporal_coverage");
	const char *s = fdl__site_str(t, "start"), *e = fdl__site_str(t, "end");
	if (*s || *e) {
		char *span = fdl_asprintf("%s/%s", *s ? s : "..", *e ? e : "..");
		json_object_set_new(ds, "temporalCoverage", json_string(span ? span : ""));
		free(span);
	}
	const json_t *places = json_object_get(d, "spatial_coverage");
	if (json_array_size(places))
		json_object_set(ds, "spatialCoverage", (json_t *)places);
	json_t *based = json_array();
	size_t i;
	const json_t *src;
	json_array_foreach(json_object_get(d, "sources"), i, src)
	{
		const char *p = fdl__site_str(src, "path"), *title = fdl__site_str(src, "title");
		json_array_append_new(based, is_url(p) ? json_string(p)
							: json_pack("{s:s, s:s}", "@type", "CreativeWork", "name", *title ? title : p));
	}
	if (json_array_size(based))
		json_object_set(ds, "isBasedOn", based);
	json_decref(based);
}

static void set_str(json_t *o, const char *key, const char *value)
{
	if (value && *value)
		json_object_set_new(o, key, json_string(value));
}

/* distribution (the data files of tables a plain reader reads right, and
 * the catalog) and variableMeasured (every column) for the HTML. */
static void data(json_t *ds, const site_model *m)
{
	json_t *dist = json_array(), *vars = json_array();
	char *cat = fdl__site_version_url(m, fdl_version_catalog_path(m->v));
	if (!m->expired[0] && cat)
		json_array_append_new(dist, json_pack("{s:s, s:s, s:s, s:s}", "@type", "DataDownload", "name",
						      "DuckLake catalog (DuckDB ATTACH)", "encodingFormat",
						      "application/vnd.duckdb", "contentUrl", cat));
	free(cat);
	for (size_t i = 0; i < m->ntables; i++) {
		const site_table *t = &m->tables[i];
		size_t k;
		const json_t *f, *col;
		json_array_foreach(t->why ? NULL : json_object_get(t->files, "files"), k, f)
		{
			char *url = fdl__site_data_url(m, fdl__site_str(f, "path"));
			json_array_append_new(dist, json_pack("{s:s, s:s, s:s, s:s*}", "@type", "DataDownload", "name",
							      t->qname, "encodingFormat", "application/vnd.apache.parquet",
							      "contentUrl", url));
			free(url);
		}
		json_array_foreach(json_object_get(t->desc, "fields"), k, col)
		{
			char *name = fdl_asprintf("%s.%s", t->qname, fdl__site_str(col, "name"));
			json_t *pv = json_pack("{s:s, s:s*}", "@type", "PropertyValue", "name", name);
			set_str(pv, "description", fdl__site_str(col, "description"));
			set_str(pv, "alternateName", fdl__site_str(col, "title"));
			json_array_append_new(vars, pv);
			free(name);
		}
	}
	if (json_array_size(dist))
		json_object_set(ds, "distribution", dist);
	if (json_array_size(vars))
		json_object_set(ds, "variableMeasured", vars);
	json_decref(dist);
	json_decref(vars);
}

json_t *fdl__site_schema_org(const site_model *m, bool croissant)
{
	const json_t *d = m->dataset;
	json_t *ds = json_object();
	if (!ds)
		return NULL;
	if (!croissant) {
		json_object_set_new(ds, "@context", json_string("https://schema.org/"));
		json_object_set_new(ds, "@type", json_string("Dataset"));
	}
	set_str(ds, "name", fdl__site_title(m));
	if (strcmp(fdl__site_title(m), fdl__site_str(d, "name")))
		set_str(ds, "alternateName", fdl__site_str(d, "name"));
	const char *desc = fdl__site_str(d, "description");
	char *fallback = *desc ? NULL : fdl_asprintf("%s, a versioned DuckLake dataset published with fdl.",
						    fdl__site_title(m));
	set_str(ds, "description", *desc ? desc : fallback);
	free(fallback);
	if (m->absolute)
		set_str(ds, "url", m->root);
	char seq[32];
	snprintf(seq, sizeof seq, "%lld", (long long)fdl_version_seq(m->v));
	set_str(ds, "version", seq);
	set_str(ds, "identifier", fdl_version_id(m->v));
	licences(ds, json_object_get(d, "licenses"));
	people(ds, json_object_get(d, "contributors"));
	const char *issued = fdl__site_str(d, "issued");
	set_str(ds, "datePublished", *issued ? issued : fdl_version_created_at(m->v));
	set_str(ds, "dateModified", fdl_version_created_at(m->v));
	if (json_array_size(json_object_get(d, "keywords")))
		json_object_set(ds, "keywords", json_object_get(d, "keywords"));
	set_str(ds, "inLanguage", fdl__site_str(d, "language"));
	set_str(ds, "sameAs", fdl__site_str(d, "homepage"));
	coverage(ds, d);
	if (!croissant)
		data(ds, m);
	return ds;
}

/* A BibTeX entry from the dataset's title, people, version and address. */
char *fdl__site_cite(const site_model *m)
{
	fdl_buf b = {0};
	fdl_error e;
	const json_t *c;
	size_t i;
	const char *created = fdl_version_created_at(m->v);
	fdl_buf_printf(&b, &e, "@misc{fdl_%lld, title = {%s}", (long long)fdl_version_seq(m->v), fdl__site_title(m));
	json_array_foreach(json_object_get(m->dataset, "contributors"), i, c)
		fdl_buf_printf(&b, &e, "%s%s", i ? " and " : ", author = {", fdl__site_str(c, "title"));
	if (json_array_size(json_object_get(m->dataset, "contributors")))
		fdl_buf_puts(&b, "}", &e);
	fdl_buf_printf(&b, &e, ", year = {%.4s}, version = {%s}%s%s%s}", created, fdl_version_id(m->v),
		       m->absolute ? ", howpublished = {\\url{" : "", m->absolute ? m->root : "",
		       m->absolute ? "}}" : "");
	return fdl_buf_detach(&b);
}

