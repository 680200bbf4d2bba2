/* A version's Croissant 1.1 description (MLCommons; what mlcroissant, TFDS
 * and PyTorch loaders read): the schema.org Dataset, and for each table a
 * plain Parquet reader reads right (model.c: its rows in one data file
 * among the rest), a FileObject and a RecordSet whose fields extract its
 * columns by name. The other tables are named, with the reason, in the
 * description, never described as record sets. (A FileSet gathers files
 * from an archive or a git repository; mlcroissant 1.1 reads none from a
 * list of files on a web host: tried, it reads the folder of the Croissant
 * file instead.) */
#include "site_int.h"

#include <stdlib.h>
#include <string.h>

/* The context Croissant 1.1 files carry (mlcroissant warns on another):
 * each term with its IRI, or with "@type" / "@container" after a '|'. */
static const char *const CONTEXT[][2] = {
	{"@language", "en"}, {"@vocab", "https://schema.org/"}, {"arrayShape", "cr:arrayShape"},
	{"citeAs", "cr:citeAs"}, {"column", "cr:column"}, {"conformsTo", "dct:conformsTo"},
	{"containedIn", "cr:containedIn"}, {"cr", "http://mlcommons.org/croissant/"}, {"data", "cr:data|@json"},
	{"dataType", "cr:dataType|@vocab"}, {"dct", "http://purl.org/dc/terms/"}, {"description", "|@language"},
	{"equivalentProperty", "cr:equivalentProperty"}, {"examples", "cr:examples|@json"}, {"extract", "cr:extract"},
	{"field", "cr:field"}, {"fileProperty", "cr:fileProperty"}, {"fileObject", "cr:fileObject"},
	{"fileSet", "cr:fileSet"}, {"format", "cr:format"}, {"includes", "cr:includes"}, {"isArray", "cr:isArray"},
	{"isLiveDataset", "cr:isLiveDataset"}, {"jsonPath", "cr:jsonPath"}, {"key", "cr:key"}, {"md5", "cr:md5"},
	{"name", "|@language"}, {"parentField", "cr:parentField"}, {"path", "cr:path"},
	{"rai", "http://mlcommons.org/croissant/RAI/"}, {"recordSet", "cr:recordSet"}, {"references", "cr:references"},
	{"regex", "cr:regex"}, {"repeated", "cr:repeated"}, {"replace", "cr:replace"}, {"samplingRate", "cr:samplingRate"},
	{"sc", "https://schema.org/"}, {"separator", "cr:separator"}, {"source", "cr:source"},
	{"subField", "cr:subField"}, {"transform", "cr:transform"},
};

static json_t *context(void)
{
	json_t *c = json_object();
	for (size_t i = 0; c && i < sizeof CONTEXT / sizeof *CONTEXT; i++) {
		const char *v = CONTEXT[i][1], *bar = strchr(v, '|');
		json_t *term = !bar ? json_string(v)
			       : bar == v ? json_pack("{s:s}", "@container", bar + 1)
					  : json_pack("{s:s%, s:s}", "@id", v, (size_t)(bar - v), "@type", bar + 1);
		if (json_object_set_new(c, CONTEXT[i][0], term)) {
			json_decref(c);
			return NULL;
		}
	}
	return c;
}

static int add_table(json_t *dist, json_t *sets, const site_model *m, const site_table *t)
{
	json_t *fields = json_array();
	const json_t *f = json_array_get(json_object_get(t->files, "files"), 0), *col;
	const json_t *sums = json_object_get(m->files, "sha256");
	const char *path = fdl__site_str(f, "path");
	char *id = fdl_asprintf("%s/file", t->qname), *url = fdl__site_data_url(m, path);
	char size[32];
	size_t i;
	snprintf(size, sizeof size, "%lld B", (long long)json_integer_value(json_object_get(f, "bytes")));
	json_t *fo = json_pack("{s:s, s:s*, s:s*, s:s*, s:s, s:s}", "@type", "cr:FileObject", "@id", id, "name", id,
			       "contentUrl", url, "encodingFormat", "application/x-parquet", "contentSize", size);
	if (fo && json_is_string(json_object_get(sums, path)))
		json_object_set(fo, "sha256", json_object_get(sums, path));
	json_array_append_new(dist, fo);
	json_array_foreach(json_object_get(t->files, "columns"), i, col)
	{
		const char *name = fdl__site_str(col, "name");
		char *fid = fdl_asprintf("%s/%s", t->qname, name);
		json_t *fd = json_pack("{s:s, s:s*, s:s, s:s*, s:{s:{s:s*}, s:{s:s}}}", "@type", "cr:Field", "@id", fid,
				       "name", name, "dataType", fdl__site_croissant_type(fdl__site_str(col, "type")),
				       "source", "fileObject", "@id", id, "extract", "column", name);
		size_t k;
		const json_t *d;
		json_array_foreach(json_object_get(t->desc, "fields"), k, d) if (!strcmp(fdl__site_str(d, "name"), name) &&
										 *fdl__site_str(d, "description"))
			json_object_set(fd, "description", json_object_get(d, "description"));
		json_array_append_new(fields, fd);
		free(fid);
	}
	json_t *rs = json_pack("{s:s, s:s, s:s, s:o}", "@type", "cr:RecordSet", "@id", t->qname, "name", t->qname,
			       "field", fields);
	if (rs && *fdl__site_str(t->desc, "description"))
		json_object_set(rs, "description", json_object_get(t->desc, "description"));
	free(id);
	free(url);
	return !fo || !rs || json_array_append_new(sets, rs) ? -1 : 0;
}

/* The description, with the tables a plain reader cannot serve named. */
static char *description(const site_model *m, const json_t *ds)
{
	fdl_buf b = {0};
	fdl_error e;
	fdl_buf_puts(&b, json_string_value(json_object_get(ds, "description")), &e);
	for (size_t i = 0, n = 0; i < m->ntables; i++)
		if (m->tables[i].why)
			fdl_buf_printf(&b, &e, "%s%s (%s)",
				       n++ ? "; "
					   : "\n\nTables without a record set here, since a plain Parquet reader would not "
					     "return their rows as DuckLake does (read them through the DuckLake catalog, "
					     "DuckDB's ATTACH): ",
				       m->tables[i].qname, m->tables[i].why);
	return fdl_buf_detach(&b);
}

int fdl__site_croissant(fdl_buf *out, const site_model *m, fdl_error *err)
{
	if (m->expired[0])
		return fdl_fail(err, FDL_EEXPIRED, "version %s was %s: its data cannot be described for loading",
				fdl_version_id(m->v), m->expired);
	json_t *doc = json_pack("{s:o, s:s, s:s}", "@context", context(), "@type", "sc:Dataset", "conformsTo",
				"http://mlcommons.org/croissant/1.1");
	json_t *ds = fdl__site_schema_org(m, true), *dist = json_array(), *sets = json_array();
	char *bib = fdl__site_cite(m), *desc = ds ? description(m, ds) : NULL;
	int rc = !doc || !ds || !dist || !sets || !bib || !desc || json_object_update(doc, ds) ? fdl_oom(err) : 0;
	if (!rc && !json_object_get(doc, "url"))
		json_object_set_new(doc, "url", json_string(m->root[0] ? m->root : "./"));
	if (!rc)
		json_object_set_new(doc, "description", json_string(desc));
	if (!rc)
		json_object_set_new(doc, "citeAs", json_string(bib));
	for (size_t i = 0; !rc && i < m->ntables; i++)
		if (!m->tables[i].why && add_table(dist, sets, m, &m->tables[i]))
			rc = fdl_oom(err);
	if (!rc && (json_object_set(doc, "distribution", dist) || json_object_set(doc, "recordSet", sets)))
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl__site_json(out, doc, false, err);
	free(bib);
	free(desc);
	json_decref(ds);
	json_decref(dist);
	json_decref(sets);
	json_decref(doc);
	return rc;
}
