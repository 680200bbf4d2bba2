/* fdl iceberg: make sure a version's Iceberg view exists and say how to
 * read it. Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <string.h>

const cli_doc doc_iceberg = {
	.usage = "fdl iceberg ROOT[@REF] [--location URI] [--json]",
	.summary = "make a version readable as Apache Iceberg tables (Spark, Trino, pyiceberg, DuckDB)",
	.text = "Makes sure the Iceberg view of a version (default HEAD) exists, writing what\n"
		"is missing, and prints each table's `metadata.json` with ready-to-run\n"
		"snippets for PySpark, pyiceberg and DuckDB. Each table is an Iceberg v2\n"
		"table over the repository's own Parquet files (nothing is copied): its\n"
		"schema uses DuckLake's column ids as field ids, deleted rows are\n"
		"rewritten as position-delete files, column statistics let engines skip\n"
		"files, and the branch's earlier live versions are its snapshots (snapshot\n"
		"id = the version's seq, so `VERSION AS OF 3` reads `main:3`) with fdl's\n"
		"tags as tag refs. The view lives in the repository's `iceberg/` folder,\n"
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
		"in Spark) is named, with the table and the reason. `--json` prints one\n"
		"object mapping `\"schema.table\"` to its `metadata.json` URI (what is left\n"
		"out goes to stderr).",
	.examples = "fdl iceberg /srv/population\n"
		    "fdl iceberg /srv/population@v2025 --json\n"
		    "fdl iceberg s3://open-data/population\n",
	.min = 1,
	.max = 1,
};

static void print_snippets(const fdl_iceberg_table *t)
{
	const char *dot = strchr(t->name, '.');
	printf("\nRead %s with:\n", t->name);
	printf("  # PySpark (iceberg-spark-runtime on the classpath; any Iceberg catalog can register it)\n");
	printf("  spark.sql(\"CREATE NAMESPACE IF NOT EXISTS cat.fdl\")\n");
	printf("  spark.sql(\"CALL cat.system.register_table(table => 'fdl.%s', metadata_file => '%s')\")\n",
	       dot ? dot + 1 : t->name, t->metadata);
	printf("  spark.table(\"cat.fdl.%s\").show()\n", dot ? dot + 1 : t->name);
	printf("  # pyiceberg\n");
	printf("  from pyiceberg.table import StaticTable\n");
	printf("  StaticTable.from_metadata(\"%s\").scan().to_arrow()\n", t->metadata);
	printf("  -- DuckDB (INSTALL iceberg; LOAD iceberg;)\n");
	printf("  SELECT * FROM iceberg_scan('%s');\n", t->metadata);
}

static void print_notices(FILE *f, const fdl_iceberg_report *r)
{
	if (r->notice_count)
		fprintf(f, "%sNot in the view, or not readable by every engine:\n", f == stdout ? "\n" : "");
	for (size_t i = 0; i < r->notice_count; i++)
		if (*r->notices[i].column)
			fprintf(f, "  %s.%s (%s): %s\n", r->notices[i].table, r->notices[i].column, r->notices[i].type,
				r->notices[i].reason);
		else
			fprintf(f, "  %s: %s\n", r->notices[i].table, r->notices[i].reason);
}

int cmd_iceberg(int argc, char **argv)
{
	const char *location = NULL, *pos[1];
	bool json = false;
	int npos;
	cli_opt opts[] = {
		{.name = "location", .value = &location, .arg = "URI",
		 .help = "write the view for another place the repository is published (file://, s3://, https://)"},
		{.name = "json", .flag = &json, .help = "print {\"schema.table\": \"<metadata.json URI>\"}"},
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
	if (!rc)
		rc = fdl_repo_open(&repo, root, &err);
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
		print_notices(stderr, r);
	} else {
		printf("Iceberg view of version %s for %s (%lld files written):\n", r->version, r->location,
		       (long long)r->files_written);
		for (size_t i = 0; i < r->table_count; i++)
			printf("  %s\t%s\n", r->tables[i].name, r->tables[i].metadata);
		print_notices(stdout, r);
		if (r->table_count)
			print_snippets(&r->tables[0]);
	}
	fdl_iceberg_report_free(r);
	return rc ? cli_fail(&err) : 0;
}
