/* fdl add: register Parquet files another engine wrote as new data of a
 * table of a working catalog. Parses its arguments, calls libfdl and
 * prints what it returns. */
#include "cli.h"

#include <stdlib.h>

const cli_doc doc_add = {
	.usage = "fdl add WORK [SCHEMA.]TABLE FILE|DIR|GLOB... [--create] [--json] | fdl add WORK [SCHEMA.]TABLE "
		 "--iceberg METADATA [--json] | fdl add --folder WORK [SCHEMA.]TABLE",
	.summary = "register Parquet files another engine wrote, without copying them",
	.text = "Registers Parquet files that Spark, Polars, pyarrow or any engine wrote as\n"
		"new data of TABLE (schema `main` unless named) in the working catalog WORK,\n"
		"where they lie: nothing is copied. The next `fdl commit` publishes them as it\n"
		"publishes what DuckDB wrote (a hard link into the data folder on a folder),\n"
		"with their sha256 in `files.json`.\n"
		"\n"
		"The files must lie under the table's folder in the working catalog's own\n"
		"folder of the repository (`<root>/work/<id>/<schema>/<table>/`), which\n"
		"`fdl add --folder WORK TABLE` prints: write them there. A file anywhere else\n"
		"is refused, so that no version ever names a file outside its repository.\n"
		"On a bucket the files are named by their `s3://` URLs (Spark writes them with\n"
		"`s3a://`); a prefix is read as a folder, and the commit copies server-side.\n"
		"A DIR is read recursively, leaving out names that start with `.` or `_`\n"
		"(Spark's `_SUCCESS` and `.crc` files); a GLOB is expanded by fdl.\n"
		"\n"
		"Folders named `col=value` under the table's folder (Spark's `partitionBy`)\n"
		"are the table's identity partitions: the column's value comes from the\n"
		"folder, as Spark wrote it. `--create` makes the table (and its schema) from\n"
		"the first file's columns, then each partition column (INTEGER, BIGINT or\n"
		"VARCHAR from the folders' values), partitioned by them.\n"
		"\n"
		"Everything is checked before anything is registered, and the files are\n"
		"registered in one DuckLake transaction (all or none): every file must be\n"
		"Parquet and have exactly the table's columns with the table's types (a\n"
		"mismatch names the file, the column and both types). Each file's sha256 is\n"
		"recorded in WORK (`fdl-added.txt`); `fdl commit` refuses a file that changed\n"
		"since.\n"
		"\n"
		"`--iceberg METADATA` makes the current snapshot of an Iceberg v2 table the\n"
		"contents of TABLE. METADATA is its `metadata.json` (a path or `file:` URI),\n"
		"or the table's folder, whose `metadata/version-hint.text` (Spark's Hadoop\n"
		"catalog) names the current one. The table is made from the Iceberg schema\n"
		"when it does not exist. The snapshot's data files must lie under the table's\n"
		"folder, as above: point a Hadoop catalog's warehouse at the working catalog's\n"
		"own folder (`<root>/work/<id>/`), so that namespace and table are `SCHEMA/TABLE`.\n"
		"They are registered where they lie and hashed; its position deletes become\n"
		"DuckLake deletes (DuckLake writes one delete file per data file). Adding a\n"
		"later snapshot of the same table registers only its new files, removes the\n"
		"rows of files gone from it and carries its new deletes. The commit publishes\n"
		"the files and leaves them in the working folder, where the Iceberg table\n"
		"still names them; `fdl-iceberg.json` there records the snapshot last added.\n"
		"Refused, with the file named and nothing changed: a v1 table, metadata that\n"
		"is not an Iceberg table's, equality deletes, a data file elsewhere or not\n"
		"Parquet, a column whose type differs from the table's.\n"
		"\n"
		"Exit codes: 3 no such table (without --create), no file or no metadata, 5 a\n"
		"file refused (outside the folder, not Parquet, other columns or types, an\n"
		"Iceberg table fdl add cannot carry), 10 DuckDB.",
	.examples = "fdl checkout /srv/population spark-work > /dev/null\n"
		    "dest=$(fdl add --folder spark-work events)   # Spark: df.write.partitionBy(\"day\").parquet(dest)\n"
		    "mkdir -p \"$dest/day=1\" && duckdb -c \"COPY (SELECT 1 AS id, 'a' AS name) TO '$dest/day=1/part-0.parquet'\"\n"
		    "fdl add spark-work events \"$dest\" --create\n"
		    "fdl commit spark-work -m \"Events from the nightly Spark job\"\n"
		    "# Spark's Hadoop catalog with warehouse $(dirname $(dirname \"$dest\")) wrote main.events as Iceberg:\n"
		    "# fdl add spark-work events --iceberg \"$dest\"\n",
	.min = 2,
	.max = 4096,
};

static void print_iceberg(const fdl_add_report *r)
{
	printf("%s is Iceberg snapshot %lld: %lld rows; %zu new file%s (%lld bytes), %zu gone, %lld rows deleted by "
	       "position%s\n",
	       r->table, (long long)r->iceberg_snapshot, (long long)r->rows, r->files.count, r->files.count == 1 ? "" : "s",
	       (long long)r->bytes, r->removed.count, (long long)r->deleted_rows, r->created ? ", created" : "");
}

static void print_report(const fdl_add_report *r)
{
	if (r->iceberg) {
		print_iceberg(r);
		return;
	}
	printf("Added %zu file%s (%lld rows, %lld bytes) to %s%s", r->files.count, r->files.count == 1 ? "" : "s",
	       (long long)r->rows, (long long)r->bytes, r->table, r->created ? ", created" : "");
	for (size_t i = 0; i < r->partition.count; i++)
		printf("%s%s", i ? ", " : ", partitioned by ", r->partition.strings[i]);
	printf("\n");
}

int cmd_add(int argc, char **argv)
{
	const char *pos[4096];
	bool create = false, json = false, folder = false;
	const char *iceberg = NULL;
	int npos;
	cli_opt opts[] = {
		{.name = "create", .flag = &create, .help = "make the table from the files' columns and folders"},
		{.name = "folder", .flag = &folder, .help = "print the folder the table takes files from, and stop"},
		{.name = "iceberg", .value = &iceberg, .arg = "METADATA",
		 .help = "make an Iceberg table's current snapshot the table's contents"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_add, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	fdl_error err = {0};
	if (folder) {
		char *dir = NULL;
		if (npos != 2) {
			fprintf(stderr, "fdl: add --folder takes WORK and TABLE only\nusage: %s\n", doc_add.usage);
			return CLI_EXIT_USAGE;
		}
		if (fdl_add_folder(&dir, pos[0], pos[1], &err))
			return cli_fail(&err);
		printf("%s\n", dir);
		fdl_free(dir);
		return 0;
	}
	if (iceberg && (npos != 2 || create)) {
		fprintf(stderr, "fdl: add --iceberg takes WORK and TABLE only (no files, no --create)\nusage: %s\n",
			doc_add.usage);
		return CLI_EXIT_USAGE;
	}
	fdl_add_report *r = NULL;
	if (iceberg && fdl_add_iceberg(&r, pos[0], pos[1], iceberg, &err))
		return cli_fail(&err);
	if (!iceberg && npos < 3) {
		fprintf(stderr, "fdl: add needs at least one FILE, DIR or GLOB\nusage: %s\n", doc_add.usage);
		return CLI_EXIT_USAGE;
	}
	fdl_add_options o = FDL_ADD_OPTIONS_INIT;
	o.create = create;
	if (!iceberg && fdl_add(&r, pos[0], pos[1], pos + 2, (size_t)npos - 2, &o, &err))
		return cli_fail(&err);
	char *text = NULL;
	rc = 0;
	if (json)
		rc = cli_print_json(fdl_add_report_json(&text, r, &err), &text, &err);
	else
		print_report(r);
	fdl_add_report_free(r);
	return rc;
}
