/* What the files of the pages wing share: one version as the renderers see
 * it (model.c), the text helpers (text.c) and the three renderers. */
#ifndef FDL_SITE_INT_H
#define FDL_SITE_INT_H

#include "site.h"

typedef struct site_table {
	const json_t *desc;    /* its dataset.json entry */
	const json_t *files;   /* its files.json entry, or NULL */
	const json_t *preview; /* its preview (first rows), or NULL */
	char *qname;           /* schema.table */
	char *why;             /* NULL: a plain Parquet reader reads it right; else why not */
} site_table;

typedef struct site_model {
	fdl_repo *repo;
	fdl_version *v;
	json_t *dataset, *files, *preview; /* files, preview: NULL when absent */
	site_table *tables;                /* the tables (not the views) of dataset.json */
	size_t ntables;
	const json_t *views;  /* dataset.json's views, an array (owned by the model) */
	char *root;           /* the repository's address with '/': absolute, or relative to the file */
	bool absolute;        /* root is absolute */
	char expired[16];     /* "" when live; else the reason */
} site_model;

/* Load version `id`: root is `base`, else the public URL, else `up` (the
 * way from the file to the repository, "" or "../../"). */
int fdl__site_model_load(site_model *m, fdl_repo *repo, const char *id, const char *base, const char *up,
			 fdl_error *err);
void fdl__site_model_free(site_model *m);
/* root + data_dir + "/" + path (a files.json path). Caller frees. */
char *fdl__site_data_url(const site_model *m, const char *path);
/* The address of a file of the version's folder, from root. Caller frees. */
char *fdl__site_version_url(const site_model *m, const char *name);
/* The dataset's title, description (or ""), name. */
const char *fdl__site_title(const site_model *m);
const char *fdl__site_str(const json_t *o, const char *key);

/* The Croissant and Data Package types of a column type a plain reader
 * reads (model.c's list); NULL for any other. */
const char *fdl__site_croissant_type(const char *duck);
const char *fdl__site_frictionless_type(const char *duck);
/* The schema.org Dataset (HTML's JSON-LD and the base of Croissant). */
json_t *fdl__site_schema_org(const site_model *m, bool croissant);
/* A licence item of dataset.json: its URL (given, or SPDX's page), its
 * SPDX id or id, its title (NULL when none). */
void fdl__site_licence(const json_t *l, const char **id, char **url, const char **title);

/* A BibTeX entry for the version. Caller frees. */
char *fdl__site_cite(const site_model *m);

/* The renderers: appended to out. */
int fdl__site_html(fdl_buf *out, const site_model *m, bool home, fdl_error *err);
int fdl__site_croissant(fdl_buf *out, const site_model *m, fdl_error *err);
int fdl__site_datapackage(fdl_buf *out, const site_model *m, fdl_error *err);

/* Text helpers: HTML-escaped text; JSON safe inside <script> (no '<', '>'
 * or '&', each written \u00XX). */
int fdl__site_esc(fdl_buf *out, const char *s, fdl_error *err);
int fdl__site_json(fdl_buf *out, const json_t *j, bool script, fdl_error *err);

#endif
