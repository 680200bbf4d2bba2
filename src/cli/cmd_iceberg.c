/* fdl iceberg: make sure a version's Iceberg view exists and say how to
 * read it. Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

const cli_doc doc_iceberg = {
	.usage = "fdl iceberg ROOT[@REF] [--catalog] [--location URI] [--json]",
	.summary = "make a version readable as Apache Iceberg tables (Spark, Trino, pyiceberg, DuckDB)",
	.text = "Makes sure the Iceberg view of a version (default HEAD) exists, writing what\n"
		"is missing, and prints each table's `metadata.json` with ready-to-run\n"
		"snippets for PySpark, pyiceberg and DuckDB. Each table is an Iceberg v2\n"
		"table over the repository's own Parquet files (nothing is copied): its\n"
		"schema uses DuckLake's column ids as field ids, deleted rows are\n"
		"rewritten as position-delete files, column statistics let engines skip\n"
		"files, and the branch's earlier live versions are its snapshots, each with\n"
		"the schema of its time, a snapshot id of its own derived from its version\n"
		"id (never given to another version, even after a branch moved back) and\n"
		"its seq in the summary (`fdl.seq`), with fdl's tags as tag refs\n"
		"(`VERSION AS OF 'v2025'`). The view lives in the repository's `iceberg/` folder,\n"
		"outside `versions/`; once a repository has one, every commit writes its\n"
		"version's view too (docs/iceberg.md).\n"
		"\n"
		"Iceberg files name absolute locations: the view is written for the\n"
		"repository's own place (`file://` for a folder, `s3://` for a bucket);\n"
		"`--location URI` writes one for another place where the same repository\n"
		"is published (an `s3://` bucket it was cloned to, or an `https://` host,\n"
		"which DuckDB reads and Spark does not). A column Iceberg cannot hold\n"
		"(INTERVAL, HUGEINT, a column added with a DEFAULT that older rows would\n"
		"read as NULL, ...) is left out, and a column an engine cannot read (TIME\n"
		"in Spark) is named, with the table and the reason; an integer widened to\n"
		"BIGINT is named too, its table set to read row by row in Spark, whose\n"
		"vectorized reader fails on it. `--json` prints one\n"
		"object mapping `\"schema.table\"` to its `metadata.json` URI (what is left\n"
		"out goes to stderr).\n"
		"\n"
		"With `--catalog` (ROOT without @REF), the repository becomes an Iceberg\n"
		"REST catalog with no server: the answers to every GET a client makes are\n"
		"written as files under `iceberg/<lid>/catalog/`, which any static host\n"
		"serving the folder (`fdl serve`, `python3 -m http.server`, nginx) or the\n"
		"bucket's own S3 endpoint serves as they are. Each branch and tag is a namespace holding\n"
		"its version's tables (DuckLake's schema `main` directly, another schema\n"
		"`s` as the namespace `[ref, s]`). It prints where the catalog is and the\n"
		"snippets that attach it from Spark, pyiceberg, DuckDB, Trino and\n"
		"Snowflake; `--json` prints `{\"catalog\": \"<URI>\", ...}`. From then on\n"
		"every commit, branch, tag, expiry, withdrawal and clone keeps it current\n"
		"(docs/iceberg.md). Attach the catalog's URI (Spark, pyiceberg and DuckDB\n"
		"tested on a folder served by `python3 -m http.server` and by `fdl serve`\n"
		"and on a bucket's own S3 endpoint; Trino and Snowflake not tested):\n"
		"\n"
		"  # Spark (tested)\n"
		"  spark.sql.catalog.fdl       org.apache.iceberg.spark.SparkCatalog\n"
		"  spark.sql.catalog.fdl.type  rest\n"
		"  spark.sql.catalog.fdl.uri   <URI>\n"
		"  # pyiceberg (tested)\n"
		"  load_catalog(\"fdl\", type=\"rest\", uri=\"<URI>\").load_table((\"main\", \"population\"))\n"
		"  -- DuckDB (tested; LOAD iceberg)\n"
		"  ATTACH '' AS fdl (TYPE iceberg, ENDPOINT '<URI>', AUTHORIZATION_TYPE 'none',\n"
		"                    DEFAULT_SCHEMA 'main');\n"
		"  # Trino (not tested): etc/catalog/fdl.properties\n"
		"  connector.name=iceberg\n"
		"  iceberg.catalog.type=rest\n"
		"  iceberg.rest-catalog.uri=<URI>",
	.examples = "fdl iceberg /srv/population\n"
		    "fdl iceberg /srv/population@v2025 --json\n"
		    "fdl iceberg s3://open-data/population\n"
		    "fdl iceberg /srv/population --catalog\n",
	.min = 1,
	.max = 1,
};

/* The lines that make a stock DuckDB load fdl's own extensions, after the
 * user's (LOAD finds them with nothing downloaded; INSTALL would look in
 * the first folder alone, so each extension is LOADed, its dependencies
 * first), as fdl checkout and fdl attach print them. */
static void print_duckdb_loads(const char *extensions)
{
	char *dir = fdl_extension_dir();
	printf("  SET extension_directories = ['~/.duckdb/extensions', '");
	for (const char *c = dir ? dir : ""; *c; c++)
		printf(*c == '\'' ? "''" : "%c", *c);
	printf("'];\n  %s\n", extensions);
	fdl_free(dir);
}

/* Each block starts with its "# engine" or "-- engine" line and runs as
 * printed (tests/interop/test_snippets.py runs the PySpark, pyiceberg and
 * DuckDB ones). */
static void print_snippets(const fdl_iceberg_table *t)
{
	printf("\nRead %s with:\n", t->name);
	printf("  # PySpark (Spark 4.0 with Iceberg's runtime jar: spark.jars.packages\n"
	       "  # org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0; make setup puts it in deps/jars)\n");
	printf("  from pyspark.sql import SparkSession\n");
	printf("  spark = SparkSession.builder.getOrCreate()\n");
	printf("  spark.read.format(\"iceberg\").load(\"%s\").show()\n", t->metadata);
	printf("  # pyiceberg\n");
	printf("  from pyiceberg.table import StaticTable\n");
	printf("  print(StaticTable.from_metadata(\"%s\").scan().to_arrow())\n", t->metadata);
	printf("  -- DuckDB (fdl's own extensions: nothing downloaded)\n");
	print_duckdb_loads("LOAD avro; LOAD iceberg;");
	printf("  SELECT * FROM iceberg_scan('%s');\n", t->metadata);
}

static void print_notices(FILE *f, const fdl_iceberg_notice *notices, size_t n, const char *title)
{
	if (n)
		fprintf(f, "%s%s:\n", f == stdout ? "\n" : "", title);
	for (size_t i = 0; i < n; i++)
		if (*notices[i].column)
			fprintf(f, "  %s.%s (%s): %s\n", notices[i].table, notices[i].column, notices[i].type,
				notices[i].reason);
		else
			fprintf(f, "  %s: %s\n", notices[i].table, notices[i].reason);
}

/* The snippets that attach the catalog at `uri`: `ns`.`table` is a table
 * of HEAD's branch (NULL: none yet). Each block runs as printed, as the
 * view's do. */
static void print_catalog_snippets(const char *uri, const char *location, const char *ns, const char *table)
{
	const char *n = ns ? ns : "main", *tb = table ? table : "<table>";
	bool bucket = !strncmp(location, "s3://", 5);
	/* the tables' files on an http(s) host: only DuckDB's reader can send
	 * them a token (an http secret scoped to the location) */
	bool web = !strncmp(location, "http://", 7) || !strncmp(location, "https://", 8);
	printf("\nAttach it with:\n");
	printf("  # PySpark (Spark 4.0 with Iceberg's runtime jar, as for a view)\n");
	printf("  from pyspark.sql import SparkSession\n");
	printf("  spark = (SparkSession.builder\n");
	printf("    .config(\"spark.sql.catalog.fdl\", \"org.apache.iceberg.spark.SparkCatalog\")\n");
	printf("    .config(\"spark.sql.catalog.fdl.type\", \"rest\")\n");
	printf("    .config(\"spark.sql.catalog.fdl.uri\", \"%s\")\n", uri);
	if (bucket)
		printf("    .config(\"spark.sql.catalog.fdl.io-impl\", \"org.apache.iceberg.aws.s3.S3FileIO\")  # + s3.* settings\n");
	printf("    .getOrCreate())\n");
	/* not a builder setting: those are spark-submit's arguments, which ps shows */
	printf("  # a private host (docs/private.md), once the session runs (not in the builder, whose settings\n"
	       "  # are spark-submit's arguments, which ps shows):\n"
	       "  # spark.conf.set(\"spark.sql.catalog.fdl.token\", os.environ[\"FDL_TOKEN\"])\n");
	printf("  spark.sql(\"SELECT * FROM fdl.%s.%s\").show()   # fdl.<branch or tag>.<table>, fdl.%s.<schema>.<table>\n",
	       n, tb, n);
	if (web)
		printf("  # the tables' files are at %s: Spark (Iceberg's Hadoop file IO) and pyiceberg read no\n"
		       "  # http(s):// files, with or without a token; publish to a bucket for them (docs/private.md)\n",
		       location);
	printf("  # pyiceberg\n");
	printf("  from pyiceberg.catalog import load_catalog\n");
	printf("  cat = load_catalog(\"fdl\", type=\"rest\", uri=\"%s\")  # a private host: token=os.environ[\"FDL_TOKEN\"]\n",
	       uri);
	printf("  print(cat.load_table((\"%s\", \"%s\")).scan().to_arrow())\n", n, tb);
	printf("  -- DuckDB (fdl's own extensions: nothing downloaded%s)\n",
	       bucket ? "; first the CREATE SECRET of fdl attach" : "");
	print_duckdb_loads("LOAD httpfs; LOAD avro; LOAD iceberg;");
	printf("  -- a private host: CREATE SECRET fdl_iceberg (TYPE iceberg, TOKEN getenv('FDL_TOKEN')); and in the\n"
	       "  -- ATTACH, SECRET fdl_iceberg instead of AUTHORIZATION_TYPE 'none'\n");
	if (web) /* the catalog's token goes to the catalog alone; the files want their own */
		printf("  -- and for the tables' files: CREATE SECRET fdl_files (TYPE http, BEARER_TOKEN getenv('FDL_TOKEN'),\n"
		       "  --   SCOPE '%s/');\n", location);
	printf("  ATTACH '' AS fdl (TYPE iceberg, ENDPOINT '%s', AUTHORIZATION_TYPE 'none', DEFAULT_SCHEMA 'main');\n", uri);
	printf("  SELECT * FROM fdl.%s.%s;                  -- another schema: fdl.\"%s.geo\".towns\n", n, tb, n);
	printf("  # Trino (not tested): a catalog file etc/catalog/fdl.properties\n");
	printf("  connector.name=iceberg\n  iceberg.catalog.type=rest\n  iceberg.rest-catalog.uri=%s\n", uri);
	printf("  -- Snowflake (not tested): a catalog integration\n");
	printf("  CREATE CATALOG INTEGRATION fdl CATALOG_SOURCE = ICEBERG_REST TABLE_FORMAT = ICEBERG\n"
	       "    REST_CONFIG = (CATALOG_URI = '%s') ...;\n", uri);
}

/* A table of HEAD's branch for the snippets: the first of DuckLake's
 * schema main, else the first (*ns gets the branch, *table the name). */
static void example_table(fdl_repo *repo, const char *location, char **ns, char **table)
{
	fdl_error err = {0};
	fdl_iceberg_report *v = NULL;
	*ns = *table = NULL;
	if (fdl_repo_head_branch(ns, repo, &err) || fdl_iceberg_write(&v, repo, NULL, location, &err))
		return fdl_iceberg_report_free(v);
	for (size_t i = 0; i < v->table_count && !*table; i++)
		if (!strncmp(v->tables[i].name, "main.", 5))
			*table = strdup(v->tables[i].name + 5);
	fdl_iceberg_report_free(v);
}

static int run_catalog(fdl_repo *repo, const char *root, const char *location, bool json)
{
	fdl_error err = {0};
	fdl_iceberg_catalog_report *r = NULL;
	if (fdl_iceberg_catalog_write(&r, repo, location, &err))
		return cli_fail(&err);
	int rc = 0;
	if (json) {
		char *text = NULL;
		rc = cli_print_json(fdl_iceberg_catalog_report_json(&text, r, &err), &text, &err);
		print_notices(stderr, r->notices, r->notice_count, "Not in the catalog, or named otherwise");
	} else {
		bool folder = !strncmp(r->uri, "file://", 7);
		printf("Iceberg REST catalog of %s for %s (%lld files written):\n  %s\n", root, r->location,
		       (long long)r->files_written, r->uri);
		printf("\nNamespaces (each branch and tag; another DuckLake schema s of ref r is [r, s]):\n");
		for (size_t i = 0; i < r->namespace_count; i++) {
			const fdl_iceberg_namespace *n = &r->namespaces[i];
			printf("  %s%s%s\t%s, version %s, %zu table%s\n", n->name, n->schema ? "." : "",
			       n->schema ? n->schema : "", n->ref, n->version, n->tables, n->tables == 1 ? "" : "s");
		}
		print_notices(stdout, r->notices, r->notice_count, "Not in the catalog, or named otherwise");
		char example[1200];
		snprintf(example, sizeof example, "http://127.0.0.1:4001/%s", r->path);
		if (folder)
			printf("\nServe the folder with any static host (no rewrite rules), and attach\n"
			       "<host>/%s; with `fdl serve %s` that is %s\n",
			       r->path, root, example);
		char *ns = NULL, *table = NULL;
		example_table(repo, location, &ns, &table);
		print_catalog_snippets(folder ? example : r->uri, r->location, ns, table);
		fdl_free(ns);
		free(table);
	}
	fdl_iceberg_catalog_report_free(r);
	return rc;
}

int cmd_iceberg(int argc, char **argv)
{
	const char *location = NULL, *pos[1];
	bool json = false, catalog = false;
	int npos;
	cli_opt opts[] = {
		{.name = "location", .value = &location, .arg = "URI",
		 .help = "write the view for another place the repository is published (file://, s3://, https://)"},
		{.name = "catalog", .flag = &catalog,
		 .help = "write the repository's Iceberg REST catalog (every branch and tag) and keep it current"},
		{.name = "json", .flag = &json, .help = "print {\"schema.table\": \"<metadata.json URI>\"} ({\"catalog\": URI})"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_iceberg, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_error err = {0};
	char *root = NULL, *ref = NULL;
	fdl_repo *repo = NULL;
	fdl_iceberg_report *r = NULL;
	rc = fdl_target_split(&root, &ref, pos[0], &err);
	if (!rc && catalog && ref) {
		fprintf(stderr, "fdl: --catalog shows every branch and tag: give ROOT, not ROOT@%s\n", ref);
		fdl_free(root);
		fdl_free(ref);
		return CLI_EXIT_USAGE;
	}
	if (!rc)
		rc = fdl_repo_open(&repo, root, &err);
	if (!rc && catalog) {
		rc = run_catalog(repo, root, location, json);
		fdl_repo_free(repo);
		fdl_free(root);
		fdl_free(ref);
		return rc;
	}
	if (!rc)
		rc = fdl_iceberg_write(&r, repo, ref, location, &err);
	fdl_repo_free(repo);
	fdl_free(root);
	fdl_free(ref);
	if (rc)
		return cli_fail(&err);
	if (json) {
		char *text = NULL;
		rc = fdl_iceberg_report_json(&text, r, &err);
		if (!rc)
			fputs(text, stdout);
		fdl_free(text);
		print_notices(stderr, r->notices, r->notice_count, "Not in the view, or not readable by every engine");
	} else {
		printf("Iceberg view of version %s for %s (%lld files written):\n", r->version, r->location,
		       (long long)r->files_written);
		for (size_t i = 0; i < r->table_count; i++)
			printf("  %s\t%s\n", r->tables[i].name, r->tables[i].metadata);
		print_notices(stdout, r->notices, r->notice_count, "Not in the view, or not readable by every engine");
		if (r->table_count)
			print_snippets(&r->tables[0]);
	}
	fdl_iceberg_report_free(r);
	return rc ? cli_fail(&err) : 0;
}
