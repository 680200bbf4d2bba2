/* Catalog copy with a snapshot limit in the past: the frozen catalog holds
 * the rows up to that snapshot and none after (seed: "the frozen catalog"),
 * and stock DuckLake reads it as the table was then. */
#include "test.h"
#include "../../src/catalog/duck.h"

#include <stdlib.h>

static int64_t count(fdl_duck *d, const char *sql)
{
	int64_t n = -1;
	fdl_error err;
	if (fdl_duck_int(d, &n, -1, sql, &err))
		fprintf(stderr, "    %s\n", err.message);
	return n;
}

static void copy_upto_past_snapshot(t_ctx *t)
{
	char *dir = t_tempdir();
	char *work = fdl_asprintf("%s/work.sqlite", dir), *frozen = fdl_asprintf("%s/frozen.duckdb", dir);
	char *data = fdl_asprintf("%s/data/", dir);
	fdl_duck d;
	fdl_error err;
	CHECK(t, fdl_duck_open(&d, &err) == 0);
	CHECK(t, fdl_catalog_create(&d, work, FDL_CAT_SQLITE, data, &err) == 0);
	char *attach = fdl_asprintf("ATTACH 'ducklake:%s' AS lake (META_TYPE 'sqlite', DATA_INLINING_ROW_LIMIT 0)", work);
	CHECK(t, fdl_duck_exec(&d, attach, &err) == 0);
	CHECK(t, fdl_duck_exec(&d, "CREATE TABLE lake.t (a INTEGER, b VARCHAR)", &err) == 0);
	CHECK(t, fdl_duck_exec(&d, "INSERT INTO lake.t VALUES (1, 'x'), (2, 'y')", &err) == 0);
	int64_t n = count(&d, "SELECT max(snapshot_id) FROM lake.snapshots()");
	/* after the frozen snapshot: a rename (ends a column row), a delete
	 * (adds a delete file), a new table */
	CHECK(t, fdl_duck_exec(&d, "ALTER TABLE lake.t RENAME COLUMN b TO c", &err) == 0);
	CHECK(t, fdl_duck_exec(&d, "DELETE FROM lake.t WHERE a = 1", &err) == 0);
	CHECK(t, fdl_duck_exec(&d, "INSERT INTO lake.t VALUES (3, 'z'), (4, 'w'), (5, 'v')", &err) == 0);
	CHECK(t, fdl_duck_exec(&d, "CREATE TABLE lake.later (x INTEGER)", &err) == 0);
	CHECK(t, fdl_duck_exec(&d, "DETACH lake", &err) == 0);

	/* as freeze does: rows written into the new catalog's metadata database
	 * while DuckLake holds it, the file written once at the detach */
	CHECK(t, fdl_catalog_create_attached(&d, frozen, "fdl_t", data, &err) == 0);
	CHECK(t, fdl_catalog_attach_raw(&d, "w", work, FDL_CAT_SQLITE, true, &err) == 0);
	fdl_copy_options o = {.upto = n, .data_path = "/published/data/", .src_sqlite = true};
	CHECK(t, fdl_catalog_copy(&d, "w", FDL_DUCKLAKE_META_PREFIX "fdl_t", &o, &err) == 0);
	CHECK(t, fdl_catalog_detach(&d, "fdl_t", &err) == 0);
	CHECK(t, fdl_catalog_attach_raw(&d, "f", frozen, FDL_CAT_DUCKDB, false, &err) == 0);
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT max(snapshot_id) FROM f.ducklake_snapshot");
	CHECK(t, count(&d, sql) == n);
	const char *versioned[] = {"ducklake_schema", "ducklake_table", "ducklake_column", "ducklake_data_file",
				   "ducklake_delete_file", NULL};
	for (const char **tb = versioned; *tb; tb++) {
		snprintf(sql, sizeof sql, "SELECT count(*) FROM f.%s WHERE begin_snapshot > %lld OR end_snapshot > %lld",
			 *tb, (long long)n, (long long)n);
		CHECK(t, count(&d, sql) == 0);
	}
	CHECK(t, count(&d, "SELECT count(*) FROM f.ducklake_column WHERE end_snapshot IS NOT NULL") == 0);
	CHECK(t, count(&d, "SELECT count(*) FROM f.ducklake_metadata WHERE key = 'data_path' AND "
			   "value = '/published/data/'") == 1);
	/* table stats describe the cut, not the catalog's later state */
	CHECK(t, count(&d, "SELECT record_count FROM f.ducklake_table_stats WHERE table_id = "
			   "(SELECT table_id FROM f.ducklake_table WHERE table_name = 't')") == 2);
	CHECK(t, count(&d, "SELECT file_size_bytes FROM f.ducklake_table_stats WHERE table_id = (SELECT table_id FROM "
			   "f.ducklake_table WHERE table_name = 't')") ==
		     count(&d, "SELECT sum(file_size_bytes) FROM f.ducklake_data_file"));
	/* the working catalog is untouched */
	CHECK(t, count(&d, "SELECT count(*) FROM w.ducklake_column WHERE end_snapshot IS NOT NULL") == 1);

	fdl_catalog_info info;
	CHECK(t, fdl_catalog_info_read(&d, "f", &info, &err) == 0);
	CHECK(t, info.last_snapshot == n && !strcmp(info.format, "1.0"));
	CHECK_CONTAINS(t, info.storage, "duckdb-v");
	fdl_data_files files = {0};
	CHECK(t, fdl_catalog_data_files(&d, "f", &files, &err) == 0);
	CHECK(t, files.len == 1 && files.items[0].rows == 2 && files.items[0].delete_path == NULL);
	CHECK(t, files.len == 1 && !strncmp(files.items[0].path, "main/t/ducklake-", 16));
	fdl_data_files_free(&files);
	CHECK(t, fdl_duck_exec(&d, "DETACH f", &err) == 0);
	CHECK(t, fdl_duck_exec(&d, "DETACH w", &err) == 0);

	/* DuckLake reads the frozen file as the table was at snapshot n */
	char *ro = fdl_asprintf("ATTACH 'ducklake:%s' AS v (READ_ONLY, DATA_PATH '%s', OVERRIDE_DATA_PATH true)",
				frozen, data);
	CHECK(t, fdl_duck_exec(&d, ro, &err) == 0);
	CHECK(t, count(&d, "SELECT count(*) FROM v.t WHERE b IS NOT NULL") == 2);
	CHECK(t, count(&d, "SELECT count(*) FROM v.t") == 2); /* may be answered from table stats */
	CHECK(t, count(&d, "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'v'") == 1);
	fdl_duck_close(&d);
	free(ro);
	free(attach);
	free(work);
	free(frozen);
	free(data);
	fdl_rm_rf(dir);
	free(dir);
}

static void missing_extension_named(t_ctx *t)
{
	char *old = getenv("FDL_EXTENSION_DIR") ? fdl_strdup(getenv("FDL_EXTENSION_DIR")) : NULL;
	setenv("FDL_EXTENSION_DIR", "/nonexistent/ext", 1);
	fdl_duck d;
	fdl_error err = {0};
	CHECK(t, fdl_duck_open(&d, &err) == FDL_ENOTFOUND);
	CHECK_CONTAINS(t, err.message, "/nonexistent/ext/");
	CHECK_CONTAINS(t, err.message, ".duckdb_extension");
	if (old)
		setenv("FDL_EXTENSION_DIR", old, 1);
	else
		unsetenv("FDL_EXTENSION_DIR");
	free(old);
}

/* A copy of an extension whose signature no longer matches (its last byte,
 * in the signature, flipped): what DuckDB's own check refuses. */
static char *tampered_extension(const char *dir)
{
	char *src = NULL, *dst = fdl_asprintf("%s/tampered.duckdb_extension", dir);
	fdl_error err;
	if (fdl_duck_extension_path(&src, "sqlite_scanner", &err))
		return NULL;
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	char buf[65536];
	size_t n;
	while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	if (out && fseek(out, -1, SEEK_END) == 0)
		fputc(0x5a, out);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	free(src);
	return dst;
}

/* fdl's own loads skip DuckDB's signature check (docs/decisions.md), and
 * nothing after them does: the first other statement finds it back on. */
static void unsigned_loads_locked(t_ctx *t)
{
	char *dir = t_tempdir();
	char *bad = tampered_extension(dir);
	CHECK(t, bad != NULL);
	fdl_duck d;
	fdl_error err = {0};
	CHECK(t, fdl_duck_open(&d, &err) == 0);
	CHECK(t, count(&d, "SELECT count(*) WHERE NOT current_setting('allow_unsigned_extensions')") == 1);
	char *load = fdl_asprintf("LOAD '%s'", bad);
	CHECK(t, fdl_duck_exec(&d, load, &err) == FDL_EDUCKDB);
	CHECK_CONTAINS(t, err.message, "signature");
	fdl_duck_close(&d);
	free(load);
	free(bad);
	fdl_rm_rf(dir);
	free(dir);
}

/* A statement beside the caller's (the incremental freeze's summary and
 * copy of the base): it sees the tables made before its start, the caller
 * goes on with its own connection meanwhile, and its answer or its own
 * error comes back at the join. */
static void statement_beside(t_ctx *t)
{
	fdl_duck d;
	fdl_error err = {0};
	CHECK(t, fdl_duck_open(&d, &err) == 0);
	CHECK(t, fdl_duck_exec(&d, "CREATE TABLE t AS SELECT range AS i FROM range(1000)", &err) == 0);
	fdl_duck_beside *sum = NULL, *bad = NULL, *dropped = NULL;
	CHECK(t, fdl_duck_beside_start(&sum, &d, "SELECT CAST(sum(i) AS BIGINT) FROM t", &err) == 0);
	CHECK(t, fdl_duck_beside_start(&bad, &d, "SELECT * FROM no_such_table", &err) == 0);
	CHECK(t, fdl_duck_beside_start(&dropped, &d, "SELECT * FROM t", &err) == 0);
	CHECK(t, count(&d, "SELECT count(*) FROM range(7)") == 7); /* the caller's own, meanwhile */
	fdl_rows r;
	CHECK(t, fdl_duck_beside_join(sum, &r, &err) == 0);
	CHECK(t, fdl_rows_count(&r) == 1 && fdl_rows_int(&r, 0, 0) == 499500);
	fdl_rows_free(&r);
	CHECK(t, fdl_duck_beside_join(bad, &r, &err) == FDL_EDUCKDB);
	CHECK_CONTAINS(t, err.message, "no_such_table");
	CHECK(t, !r.live); /* no rows to free */
	CHECK(t, fdl_duck_beside_join(dropped, NULL, &err) == 0);
	CHECK(t, fdl_duck_beside_join(NULL, &r, &err) == 0);
	fdl_duck_close(&d);
}

const t_case catalog_tests[] = {
	{"catalog: a statement beside answers at its join, or fails with its own error", statement_beside},
	{"catalog: nothing unsigned loads after fdl's own extensions", unsigned_loads_locked},
	{"catalog: a copy up to a past snapshot holds nothing after it", copy_upto_past_snapshot},
	{"catalog: a missing extension names the file expected", missing_extension_named},
	{NULL, NULL},
};
