/* The peer of the benchmark: stock DuckDB (the same libduckdb fdl links),
 * running the SQL of one file, the way `duckdb < FILE` would, with no
 * Python in between. Prints the last result's first column, if any.
 *
 * It opens DuckDB with allow_unsigned_extensions, as fdl does for its own
 * extension files: without it each LOAD hashes the 35 MB file (~100 ms),
 * which is not the job being compared. */
#include <duckdb.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sqlrun FILE.sql\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *sql = malloc((size_t)n + 1);
	if (!sql || fread(sql, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		return 1;
	}
	sql[n] = '\0';
	fclose(f);
	duckdb_database db;
	duckdb_connection con;
	duckdb_result res;
	duckdb_config cfg;
	if (duckdb_create_config(&cfg) != DuckDBSuccess)
		return 1;
	duckdb_set_config(cfg, "allow_unsigned_extensions", "true");
	char *msg = NULL;
	if (duckdb_open_ext(NULL, &db, cfg, &msg) != DuckDBSuccess || duckdb_connect(db, &con) != DuckDBSuccess) {
		fprintf(stderr, "sqlrun: %s\n", msg ? msg : "cannot open DuckDB");
		return 1;
	}
	duckdb_destroy_config(&cfg);
	int rc = 0;
	if (duckdb_query(con, sql, &res) != DuckDBSuccess) {
		fprintf(stderr, "sqlrun: %s\n", duckdb_result_error(&res));
		rc = 1;
	} else if (duckdb_column_count(&res) > 0 && duckdb_row_count(&res) > 0) {
		char *v = duckdb_value_varchar(&res, 0, 0);
		printf("%s\n", v ? v : "NULL");
		duckdb_free(v);
	}
	duckdb_destroy_result(&res);
	duckdb_disconnect(&con);
	duckdb_close(&db);
	free(sql);
	return rc;
}
