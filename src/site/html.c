/* A version's page, and the repository's, as static HTML: what a visitor
 * without JavaScript and a crawler see (title, description, licences,
 * people, tables with their columns and first rows, how to read and cite
 * it), the schema.org JSON-LD in its head and links to the Croissant file
 * and the Data Package. The page's script (web/) takes over where scripts
 * run. Every text from the repository is escaped (text.c). */
#include "site_int.h"
#include "../layout/hindex.h"
#include "../layout/site.h"

#include <stdlib.h>
#include <string.h>

#define HISTORY_MAX 50

typedef struct page {
	fdl_buf *out;
	const site_model *m;
	const char *up;   /* from the page to the repository's root */
	const char *here; /* from the page to the version's folder under site/ */
	fdl_error *err;
	int rc;
} page;

static void raw(page *p, const char *s)
{
	if (!p->rc)
		p->rc = fdl_buf_puts(p->out, s, p->err);
}

static void text(page *p, const char *s)
{
	if (!p->rc)
		p->rc = fdl__site_esc(p->out, s, p->err);
}

/* <tag attrs>escaped text</tag> */
static void el(page *p, const char *open, const char *s, const char *close)
{
	raw(p, open);
	text(p, s);
	raw(p, close);
}

static void link(page *p, const char *href_a, const char *href_b, const char *label)
{
	raw(p, "<a href=\"");
	text(p, href_a);
	text(p, href_b);
	raw(p, "\">");
	text(p, label);
	raw(p, "</a>");
}

static void head(page *p, bool home)
{
	const site_model *m = p->m;
	const char *lang = fdl__site_str(m->dataset, "language");
	raw(p, "<!doctype html>\n<html lang=\"");
	text(p, *lang ? lang : "en");
	raw(p, "\" data-fdl-root=\"");
	text(p, p->up);
	if (!home) {
		raw(p, "\" data-fdl-version=\"");
		text(p, fdl_version_id(m->v));
	}
	raw(p, "\">\n<head>\n<meta charset=\"utf-8\">\n"
	       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	text(p, fdl__site_title(m));
	if (!p->rc)
		p->rc = fdl_buf_printf(p->out, p->err, " — version %lld</title>\n", (long long)fdl_version_seq(m->v));
	el(p, "<meta name=\"description\" content=\"", fdl__site_str(m->dataset, "description"), "\">\n");
	raw(p, "<link rel=\"icon\" href=\"data:,\">\n<link rel=\"stylesheet\" href=\"");
	text(p, p->up);
	raw(p, "_fdl/style.css\">\n");
	if (!m->expired[0]) {
		raw(p, "<link rel=\"alternate\" type=\"application/ld+json\" title=\"Croissant\" href=\"");
		text(p, p->here);
		raw(p, FDL_SITE_CROISSANT "\">\n<link rel=\"alternate\" type=\"application/json\" "
		       "title=\"Frictionless Data Package\" href=\"");
		text(p, p->here);
		raw(p, FDL_SITE_DATAPACKAGE "\">\n");
	}
	json_t *ld = fdl__site_schema_org(m, false);
	raw(p, "<script type=\"application/ld+json\">\n");
	if (!p->rc)
		p->rc = ld ? fdl__site_json(p->out, ld, true, p->err) : fdl_oom(p->err);
	raw(p, "</script>\n</head>\n<body>\n<header id=\"top\"><a href=\"");
	text(p, p->up);
	raw(p, "#/\" id=\"home\">fdl</a> <span id=\"where\"></span></header>\n<main id=\"main\">\n");
	json_decref(ld);
}

/* The description as paragraphs of text (its Markdown is not rendered
 * here: the script does it; without one the source reads as written). */
static void paragraphs(page *p, const char *s)
{
	while (s && *s) {
		const char *end = strstr(s, "\n\n");
		size_t n = end ? (size_t)(end - s) : strlen(s);
		char *para = fdl_asprintf("%.*s", (int)n, s);
		if (para && *para)
			el(p, "<p class=\"description\">", para, "</p>\n");
		free(para);
		s = end ? end + 2 : NULL;
	}
}

static void meta_row(page *p, const char *label)
{
	raw(p, "<dt>");
	text(p, label);
	raw(p, "</dt><dd>");
}

static void meta(page *p)
{
	const json_t *d = p->m->dataset, *x;
	size_t i;
	raw(p, "<dl class=\"meta\">\n");
	if (json_array_size(json_object_get(d, "licenses")))
		meta_row(p, "Licences");
	json_array_foreach(json_object_get(d, "licenses"), i, x)
	{
		const char *id, *title;
		char *url;
		fdl__site_licence(x, &id, &url, &title);
		raw(p, i ? ", " : "");
		if (url)
			link(p, url, "", title ? title : id);
		else
			text(p, title ? title : id);
		free(url);
	}
	if (json_array_size(json_object_get(d, "licenses")))
		raw(p, "</dd>\n");
	if (json_array_size(json_object_get(d, "contributors")))
		meta_row(p, "Contributors");
	json_array_foreach(json_object_get(d, "contributors"), i, x)
	{
		raw(p, i ? ", " : "");
		text(p, fdl__site_str(x, "title"));
		size_t k;
		const json_t *r;
		json_array_foreach(json_object_get(x, "roles"), k, r) el(p, k ? ", " : " (", json_string_value(r),
									 k + 1 == json_array_size(json_object_get(x, "roles")) ? ")" : "");
	}
	if (json_array_size(json_object_get(d, "contributors")))
		raw(p, "</dd>\n");
	const char *keys[][2] = {{"homepage", "Homepage"}, {"issued", "Issued"},
				 {"update_frequency", "Updated"}, {"language", "Language"}};
	for (size_t k = 0; k < 4; k++)
		if (*fdl__site_str(d, keys[k][0])) {
			meta_row(p, keys[k][1]);
			el(p, "", fdl__site_str(d, keys[k][0]), "</dd>\n");
		}
	if (json_array_size(json_object_get(d, "keywords")))
		meta_row(p, "Keywords");
	json_array_foreach(json_object_get(d, "keywords"), i, x) el(p, "<span class=\"badge\">", json_string_value(x),
								      "</span>");
	if (json_array_size(json_object_get(d, "keywords")))
		raw(p, "</dd>\n");
	raw(p, "</dl>\n");
}

static void version_line(page *p)
{
	const fdl_version *v = p->m->v;
	char line[160];
	snprintf(line, sizeof line, "Version %lld, %s, by ", (long long)fdl_version_seq(v), fdl_version_created_at(v));
	raw(p, "<p class=\"version\">");
	text(p, line);
	text(p, fdl_version_author_name(v));
	raw(p, ": ");
	text(p, fdl_version_message(v));
	el(p, " <code class=\"id\">", fdl_version_id(v), "</code></p>\n");
	if (p->m->expired[0])
		el(p, "<p class=\"gone\">This version was ", p->m->expired,
		   ": its catalog and its " FDL_FILES_JSON " are gone; only its description remains.</p>\n");
}

static void cell(page *p, const json_t *v)
{
	if (json_is_string(v))
		el(p, "<td>", json_string_value(v), "</td>");
	else
		raw(p, "<td><i>NULL</i></td>");
}

static void first_rows(page *p, const site_table *t)
{
	const json_t *rows = json_object_get(t->preview, "rows"), *c, *r;
	size_t i, k;
	if (!t->preview) {
		raw(p, "<p class=\"muted\">First rows: none computed for this version yet (<code>fdl preview</code>).</p>\n");
		return;
	}
	/* the card's own marks (app.js viewer()): one selector finds the first
	 * rows on this page and on the one the script draws */
	if (!p->rc)
		p->rc = fdl_buf_printf(p->out, p->err,
				       "<div class=\"viewer\" data-source=\"preview\" data-rows=\"%zu\"><div class=\"scroll\">",
				       json_array_size(rows));
	raw(p, "<table class=\"rows\"><thead><tr>");
	json_array_foreach(json_object_get(t->preview, "columns"), i, c) el(p, "<th>", fdl__site_str(c, "name"), "</th>");
	raw(p, "</tr></thead>\n<tbody>\n");
	json_array_foreach(rows, i, r)
	{
		raw(p, "<tr>");
		json_array_foreach(r, k, c) cell(p, c);
		raw(p, "</tr>\n");
	}
	raw(p, "</tbody></table></div></div>\n");
}

static void table(page *p, const site_table *t)
{
	const json_t *f;
	size_t i;
	raw(p, "<section class=\"table\" data-table=\"");
	text(p, t->qname);
	el(p, "\">\n<h3>", t->qname, "</h3>\n");
	if (*fdl__site_str(t->desc, "title"))
		el(p, "<p><b>", fdl__site_str(t->desc, "title"), "</b></p>\n");
	paragraphs(p, fdl__site_str(t->desc, "description"));
	if (!p->rc)
		p->rc = fdl_buf_printf(p->out, p->err, "<p class=\"muted\">%lld rows</p>\n",
				       (long long)json_integer_value(json_object_get(t->desc, "rows")));
	raw(p, "<table class=\"fields\"><thead><tr><th>column</th><th>type</th><th>nullable</th>"
	       "<th>description</th></tr></thead>\n<tbody>\n");
	json_array_foreach(json_object_get(t->desc, "fields"), i, f)
	{
		el(p, "<tr><td>", fdl__site_str(f, "name"), "</td>");
		el(p, "<td>", fdl__site_str(f, "type"), "</td>");
		raw(p, json_is_false(json_object_get(f, "nullable")) ? "<td>no</td>" : "<td>yes</td>");
		el(p, "<td>", fdl__site_str(f, "description"), "</td></tr>\n");
	}
	raw(p, "</tbody></table>\n");
	if (!p->m->expired[0])
		first_rows(p, t);
	if (t->why && !p->m->expired[0])
		el(p, "<p class=\"muted plain\">Not in the Croissant file or the Data Package: ", t->why,
		   ". DuckDB's ATTACH reads it.</p>\n");
	raw(p, "</section>\n");
}

static void use(page *p)
{
	const site_model *m = p->m;
	char *cat = fdl__site_version_url(m, fdl_version_catalog_path(m->v));
	raw(p, "<h2>Use this dataset</h2>\n<pre class=\"use-duckdb\">");
	if (m->absolute) {
		text(p, "INSTALL httpfs;\nLOAD httpfs;\nLOAD ducklake;\nATTACH 'ducklake:");
		text(p, cat);
		text(p, "' AS lake (READ_ONLY, DATA_PATH '");
		text(p, m->root);
		text(p, m->repo->data_dir);
		text(p, "/', OVERRIDE_DATA_PATH true);");
	} else {
		text(p, "-- in DuckDB, with URL the address this page is published at:\nINSTALL httpfs;\nLOAD "
			"httpfs;\nLOAD ducklake;\nATTACH 'ducklake:URL/");
		text(p, cat);
		text(p, "' AS lake (READ_ONLY, DATA_PATH 'URL/");
		text(p, m->repo->data_dir);
		text(p, "/', OVERRIDE_DATA_PATH true);");
	}
	raw(p, "</pre>\n<p>With fdl: <code>fdl attach URL@");
	text(p, fdl_version_id(m->v));
	raw(p, " | duckdb</code>; as Apache Iceberg tables: <code>fdl iceberg URL@");
	text(p, fdl_version_id(m->v));
	raw(p, "</code>.</p>\n");
	free(cat);
}

static void cite(page *p)
{
	char *bib = fdl__site_cite(p->m);
	el(p, "<h2>Cite</h2>\n<pre class=\"cite-bibtex\">", bib ? bib : "", "</pre>\n");
	free(bib);
}

static void files(page *p)
{
	raw(p, "<h2>Descriptions</h2>\n<ul class=\"descriptions\">\n<li>");
	link(p, p->here, FDL_SITE_CROISSANT, "Croissant 1.1 (croissant.json)");
	raw(p, "</li>\n<li>");
	link(p, p->here, FDL_SITE_DATAPACKAGE, "Frictionless Data Package (datapackage.json)");
	raw(p, "</li>\n</ul>\n");
}

static void history(page *p)
{
	fdl_hist h = {0};
	fdl_error ierr;
	if (fdl_history_read(&h, p->m->repo, NULL, fdl_version_id(p->m->v), HISTORY_MAX, true, &ierr) && !h.len)
		return;
	raw(p, "<h2>History</h2>\n<ol class=\"history\">\n");
	for (size_t i = 0; i < h.len; i++) {
		const json_t *doc = h.items[i].doc;
		char label[64];
		snprintf(label, sizeof label, "version %lld", (long long)h.items[i].seq);
		raw(p, "<li>");
		char *dir = fdl_site_key(h.items[i].id, "");
		link(p, dir ? dir : "", "", label);
		free(dir);
		raw(p, " ");
		text(p, fdl__site_str(doc, "created_at"));
		raw(p, ": ");
		text(p, fdl__site_str(doc, "message"));
		raw(p, "</li>\n");
	}
	raw(p, "</ol>\n");
	fdl_hist_free(&h);
}

int fdl__site_html(fdl_buf *out, const site_model *m, bool home, fdl_error *err)
{
	char *here = home ? fdl_site_key(fdl_version_id(m->v), "") : fdl_strdup("");
	page p = {out, m, home ? "" : FDL_SITE_UP, here, err, here ? 0 : fdl_oom(err)};
	head(&p, home);
	el(&p, "<h1>", fdl__site_title(m), "</h1>\n");
	paragraphs(&p, fdl__site_str(m->dataset, "description"));
	meta(&p);
	version_line(&p);
	raw(&p, home ? "<h2>Tables</h2>\n<div id=\"card-tables\">\n" : "<h2>Tables</h2>\n<div>\n");
	for (size_t i = 0; i < m->ntables; i++)
		table(&p, &m->tables[i]);
	raw(&p, "</div>\n");
	if (!m->ntables)
		raw(&p, "<p class=\"muted\">No tables.</p>\n");
	size_t i;
	const json_t *w;
	json_array_foreach(m->views, i, w)
	{
		el(&p, "<section class=\"view\"><h3>", fdl__site_str(w, "name"), "</h3>");
		el(&p, "<pre>", fdl__site_str(w, "sql"), "</pre></section>\n");
	}
	if (!m->expired[0]) {
		use(&p);
		cite(&p);
		files(&p);
	}
	if (home)
		history(&p);
	raw(&p, "</main>\n<footer>A versioned DuckLake dataset (FDL 0.1). Every version opens with one DuckDB "
		"<code>ATTACH</code>.</footer>\n<script type=\"module\" src=\"");
	text(&p, p.up);
	raw(&p, "_fdl/app.js\"></script>\n</body>\n</html>\n");
	free(here);
	return p.rc;
}
