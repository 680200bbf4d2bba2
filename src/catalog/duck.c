/* The one wrapper of DuckDB's C API: open an in-memory DuckDB with fdl's
 * own extensions, run statements, read and stream results, FDL_TRACE. */
#include "duck.h"

#include "../store/store.h"
#include "../util/dynlib.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#ifndef FDL_DEFAULT_EXTENSION_DIR
#define FDL_DEFAULT_EXTENSION_DIR "/usr/local/lib/fdl/extensions"
#endif

const char *fdl_duck_platform(void)
{
#if defined(__x86_64__) && defined(__linux__)
	return "linux_amd64";
#elif defined(__aarch64__) && defined(__linux__)
	return "linux_arm64";
#else
	return "unknown";
#endif
}

char *fdl_duck_extension_dir(void)
{
	const char *dir = getenv("FDL_EXTENSION_DIR");
	if (dir && *dir)
		return fdl_strdup(dir);
	char *installed = fdl_dynlib_beside("extensions");
	return installed ? installed : fdl_strdup(FDL_DEFAULT_EXTENSION_DIR);
}

char *fdl_extension_dir(void)
{
	return fdl_duck_extension_dir();
}

int fdl_duck_extension_path(char **out, const char *name, fdl_error *err)
{
	char *dir = fdl_duck_extension_dir();
	char *path = dir ? fdl_asprintf("%s/%s/%s/%s.duckdb_extension", dir, duckdb_library_version(),
					fdl_duck_platform(), name)
			 : NULL;
	free(dir);
	if (!path)
		return fdl_oom(err);
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		int rc = fdl_fail(err, FDL_ENOTFOUND,
				  "DuckDB extension '%s' is missing: expected the file %s (run `make setup`, or "
				  "set FDL_EXTENSION_DIR to a folder holding %s/%s/%s.duckdb_extension)",
				  name, path, duckdb_library_version(), fdl_duck_platform(), name);
		free(path);
		return rc;
	}
	*out = path;
	return 0;
}

/* A file DuckDB need not check again: a regular file in a folder, both
 * owned by root or by us and writable by no one else. */
static bool trusted_file(const char *path)
{
	struct stat st;
	uid_t me = geteuid();
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != me) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	char dir[4096];
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	return stat(dir, &st) == 0 && (st.st_uid == 0 || st.st_uid == me) && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

static int run_sql(fdl_duck *d, const char *sql, fdl_error *err);

/* From here on DuckDB checks every extension's signature again. */
int fdl_duck_lock_extensions(fdl_duck *d, fdl_error *err)
{
	if (!d->unsigned_ok)
		return 0;
	d->unsigned_ok = false;
	return run_sql(d, "SET allow_unsigned_extensions = false", err);
}

int fdl_duck_load(fdl_duck *d, const char *name, fdl_error *err)
{
	char *path;
	int rc = fdl_duck_extension_path(&path, name, err);
	if (rc)
		return rc;
	if (d->unsigned_ok && !trusted_file(path))
		rc = fdl_duck_lock_extensions(d, err);
	fdl_buf sql = {0};
	if (!rc)
		rc = fdl_buf_puts(&sql, "LOAD ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, path, err);
	if (!rc)
		rc = run_sql(d, sql.data, err);
	if (rc)
		fdl_error_prefix(err, "loading %s", path);
	fdl_buf_free(&sql);
	free(path);
	return rc;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The calling thread's CPU time, in ms, and its page faults: a lean
 * session's statements run on it alone, so FDL_TRACE shows what each
 * cost. */
static double thread_cpu_ms(long *faults)
{
	struct timespec ts;
	struct rusage u;
	*faults = getrusage(RUSAGE_THREAD, &u) ? 0 : u.ru_minflt + u.ru_majflt;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int open_session(fdl_duck *d, const char *const *extensions, bool lean, fdl_error *err);

int fdl_duck_open(fdl_duck *d, fdl_error *err)
{
	return fdl_duck_open_with(d, true, err);
}

int fdl_duck_open_with(fdl_duck *d, bool sqlite, fdl_error *err)
{
	static const char *const lake[] = {"ducklake", NULL}, *const both[] = {"sqlite_scanner", "ducklake", NULL};
	return fdl_duck_open_loading(d, sqlite ? both : lake, err);
}

int fdl_duck_open_loading(fdl_duck *d, const char *const *extensions, fdl_error *err)
{
	return open_session(d, extensions, false, err);
}

/* `lean`: one thread from the start (DuckDB starts no worker, which a
 * later SET threads would stop again), and memory DuckDB frees in bulk
 * given back at once rather than kept cached. */
static int open_session(fdl_duck *d, const char *const *extensions, bool lean, fdl_error *err)
{
	memset(d, 0, sizeof *d);
	const char *trace = getenv("FDL_TRACE");
	d->trace = trace && *trace && strcmp(trace, "0") != 0;
	double t0 = d->trace ? now_ms() : 0;
	if (fdl_duck_load_library(err))
		return FDL_EDUCKDB;
	duckdb_config cfg;
	if (duckdb_create_config(&cfg) != DuckDBSuccess)
		return fdl_fail(err, FDL_EDUCKDB, "DuckDB: cannot create a configuration");
	char *extdir = fdl_duck_extension_dir();
	/* Never fetch anything from the internet: fdl loads its own files. */
	duckdb_set_config(cfg, "autoinstall_known_extensions", "false");
	duckdb_set_config(cfg, "autoload_known_extensions", "false");
	const char *verify = getenv("FDL_VERIFY_EXTENSIONS");
	d->unsigned_ok = !(verify && *verify && strcmp(verify, "0") != 0);
	if (d->unsigned_ok)
		duckdb_set_config(cfg, "allow_unsigned_extensions", "true");
	if (extdir)
		duckdb_set_config(cfg, "extension_directory", extdir);
	free(extdir);
	if (lean) {
		duckdb_set_config(cfg, "threads", "1");
		duckdb_set_config(cfg, "allocator_bulk_deallocation_flush_threshold", "1MB");
	}
	char *msg = NULL;
	if (duckdb_open_ext(NULL, &d->db, cfg, &msg) != DuckDBSuccess) {
		int rc = fdl_fail(err, FDL_EDUCKDB, "DuckDB: cannot open: %s", msg ? msg : "unknown error");
		duckdb_free(msg);
		duckdb_destroy_config(&cfg);
		return rc;
	}
	duckdb_destroy_config(&cfg);
	if (duckdb_connect(d->db, &d->con) != DuckDBSuccess) {
		duckdb_close(&d->db);
		return fdl_fail(err, FDL_EDUCKDB, "DuckDB: cannot connect");
	}
	if (d->trace)
		fprintf(stderr, "fdl trace: %8.1f ms  open DuckDB\n", now_ms() - t0);
	if (d->trace) /* asked only for the trace */
		fdl_duck_trace(d, "libduckdb: %s", fdl_duck_deep_bound()
						  ? "its own symbols bound first (RTLD_DEEPBIND)"
						  : "bound in the process's order (malloc is not libc's)");
	int rc = 0;
	for (size_t i = 0; extensions && extensions[i] && !rc; i++)
		rc = fdl_duck_load(d, extensions[i], err);
	if (rc)
		fdl_duck_close(d);
	return rc;
}

void fdl_duck_close(fdl_duck *d)
{
	if (d->con)
		duckdb_disconnect(&d->con);
	if (d->db && !d->borrowed)
		duckdb_close(&d->db);
	d->con = NULL;
	d->db = NULL;
}

int fdl_duck_query_built(fdl_duck *d, fdl_rows *rows, fdl_buf *sql, int rc, fdl_error *err)
{
	if (!rc)
		rc = fdl_duck_query(d, rows, sql->data, err);
	fdl_buf_free(sql);
	return rc;
}

int fdl_duck_new(fdl_duck **out, bool sqlite, fdl_error *err)
{
	static const char *const lake[] = {"ducklake", NULL}, *const both[] = {"sqlite_scanner", "ducklake", NULL};
	return fdl_duck_new_loading(out, sqlite ? both : lake, err);
}

static int new_session(fdl_duck **out, const char *const *extensions, bool lean, fdl_error *err)
{
	fdl_duck *d = malloc(sizeof *d);
	if (!d)
		return fdl_oom(err);
	int rc = open_session(d, extensions, lean, err);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int fdl_duck_new_loading(fdl_duck **out, const char *const *extensions, fdl_error *err)
{
	return new_session(out, extensions, false, err);
}

int fdl_duck_new_lean(fdl_duck **out, const char *const *extensions, fdl_error *err)
{
	return new_session(out, extensions, true, err);
}

int fdl_duck_new_sharing(fdl_duck **out, fdl_duck *with, fdl_error *err)
{
	fdl_duck *d = calloc(1, sizeof *d);
	if (!d)
		return fdl_oom(err);
	*d = *with;
	d->con = NULL;
	d->borrowed = true;
	if (duckdb_connect(d->db, &d->con) == DuckDBError) {
		free(d);
		return fdl_fail(err, FDL_EDUCKDB, "DuckDB: cannot open a second connection");
	}
	*out = d;
	return 0;
}

void fdl_duck_free(fdl_duck *d)
{
	if (!d)
		return;
	fdl_duck_close(d);
	free(d);
}

void fdl_duck_trace(fdl_duck *d, const char *fmt, ...)
{
	if (!d || !d->trace)
		return;
	va_list ap;
	va_start(ap, fmt);
	flockfile(stderr); /* one line, whichever thread writes beside it */
	fputs("fdl trace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}

int fdl_duck_use(fdl_duck *d, const char *alias, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "USE ", err);
	if (!rc)
		rc = fdl_buf_sql_ident(&sql, alias, err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

const char *fdl_duck_version(void)
{
	fdl_error e;
	return fdl_duck_load_library(&e) ? "(DuckDB not found)" : duckdb_library_version();
}

static int query_raw(fdl_duck *d, fdl_rows *rows, const char *sql, fdl_error *err)
{
	memset(rows, 0, sizeof *rows);
	long f0 = 0, f1 = 0;
	double t0 = d->trace ? now_ms() : 0, c0 = d->trace ? thread_cpu_ms(&f0) : 0;
	duckdb_state st = duckdb_query(d->con, sql, &rows->res);
	/* a secret's statement is traced by its kind alone: never its values */
	bool secret = !strncasecmp(sql, "CREATE OR REPLACE SECRET", 24) || !strncasecmp(sql, "CREATE SECRET", 13);
	double c1 = d->trace ? thread_cpu_ms(&f1) : 0;
	if (d->trace)
		fprintf(stderr, "fdl trace: %8.1f ms %6.1f cpu %5ld faults  %.*s%s\n", now_ms() - t0, c1 - c0, f1 - f0,
			secret ? 24 : 160, sql,
			secret ? " ... (values not shown)" : strlen(sql) > 160 ? " ..." : "");
	if (st != DuckDBSuccess) {
		const char *e = duckdb_result_error(&rows->res);
		int rc = fdl_fail(err, FDL_EDUCKDB, "DuckDB: %s", e ? e : "query failed");
		duckdb_destroy_result(&rows->res);
		return rc;
	}
	rows->live = true;
	return 0;
}

static int run_sql(fdl_duck *d, const char *sql, fdl_error *err)
{
	fdl_rows r;
	int rc = query_raw(d, &r, sql, err);
	fdl_rows_free(&r);
	return rc;
}

int fdl_duck_query(fdl_duck *d, fdl_rows *rows, const char *sql, fdl_error *err)
{
	memset(rows, 0, sizeof *rows);
	int rc = fdl_duck_lock_extensions(d, err);
	return rc ? rc : query_raw(d, rows, sql, err);
}

int fdl_duck_exec(fdl_duck *d, const char *sql, fdl_error *err)
{
	fdl_rows r;
	int rc = fdl_duck_query(d, &r, sql, err);
	fdl_rows_free(&r);
	return rc;
}

void fdl_rows_free(fdl_rows *rows)
{
	if (rows->live)
		duckdb_destroy_result(&rows->res);
	rows->live = false;
}

size_t fdl_rows_count(fdl_rows *rows) { return (size_t)duckdb_row_count(&rows->res); }
size_t fdl_rows_columns(fdl_rows *rows) { return (size_t)duckdb_column_count(&rows->res); }
bool fdl_rows_null(fdl_rows *rows, size_t col, size_t row)
{
	return duckdb_value_is_null(&rows->res, col, row);
}
int64_t fdl_rows_int(fdl_rows *rows, size_t col, size_t row)
{
	return duckdb_value_int64(&rows->res, col, row);
}
char *fdl_rows_str(fdl_rows *rows, size_t col, size_t row)
{
	if (duckdb_value_is_null(&rows->res, col, row))
		return NULL;
	return duckdb_value_varchar(&rows->res, col, row);
}

int fdl_duck_int(fdl_duck *d, int64_t *out, int64_t if_null, const char *sql, fdl_error *err)
{
	fdl_rows r;
	int rc = fdl_duck_query(d, &r, sql, err);
	if (rc)
		return rc;
	if (fdl_rows_count(&r) == 0 || fdl_rows_null(&r, 0, 0))
		*out = if_null;
	else
		*out = fdl_rows_int(&r, 0, 0);
	fdl_rows_free(&r);
	return 0;
}

int fdl_duck_strings(fdl_duck *d, fdl_strlist *out, const char *sql, fdl_error *err)
{
	fdl_rows r;
	int rc = fdl_duck_query(d, &r, sql, err);
	for (size_t i = 0; !rc && i < fdl_rows_count(&r); i++) {
		char *c = fdl_rows_str(&r, 0, i);
		rc = fdl_strlist_add(out, c ? c : "", err);
		duckdb_free(c);
	}
	fdl_rows_free(&r); /* safe after a failed query too: live is false */
	return rc;
}

char *fdl_duck_vector_string(duckdb_vector vec, idx_t row)
{
	uint64_t *valid = duckdb_vector_get_validity(vec);
	if (valid && !duckdb_validity_row_is_valid(valid, row))
		return NULL;
	duckdb_string_t *str = (duckdb_string_t *)duckdb_vector_get_data(vec) + row;
	uint32_t n = duckdb_string_t_length(*str);
	char *out = malloc(n + 1);
	if (out) {
		memcpy(out, duckdb_string_t_data(str), n);
		out[n] = '\0';
	}
	return out;
}

int fdl_duck_stream_chunks(duckdb_prepared_statement st, fdl_duck_chunk_cb on_chunk, void *payload, fdl_error *err)
{
	duckdb_result res;
	if (duckdb_execute_prepared_streaming(st, &res) != DuckDBSuccess) {
		int rc = fdl_fail(err, FDL_EDUCKDB, "DuckDB: %s", duckdb_result_error(&res));
		duckdb_destroy_result(&res);
		return rc;
	}
	int rc = on_chunk(NULL, &res, payload); /* the columns, before any row */
	while (!rc) {
		duckdb_data_chunk chunk = duckdb_fetch_chunk(res);
		if (!chunk) {
			const char *e = duckdb_result_error(&res);
			if (e && *e)
				rc = fdl_fail(err, FDL_EDUCKDB, "DuckDB: %s", e);
			break;
		}
		rc = on_chunk(chunk, &res, payload);
		duckdb_destroy_data_chunk(&chunk);
	}
	duckdb_destroy_result(&res);
	return rc;
}

typedef struct each_string {
	int (*cb)(const char *value, void *payload);
	void *payload;
	fdl_error *err;
} each_string;

static int string_chunk(duckdb_data_chunk chunk, duckdb_result *res, void *payload)
{
	each_string *e = payload;
	if (!chunk)
		return duckdb_column_count(res) >= 1 && duckdb_column_type(res, 0) == DUCKDB_TYPE_VARCHAR
			       ? 0
			       : fdl_fail(e->err, FDL_ERROR, "internal: a streamed query must return VARCHAR first");
	duckdb_vector vec = duckdb_data_chunk_get_vector(chunk, 0);
	uint64_t *valid = duckdb_vector_get_validity(vec);
	idx_t n = duckdb_data_chunk_get_size(chunk);
	int rc = 0;
	for (idx_t i = 0; i < n && !rc; i++) {
		bool null = valid && !duckdb_validity_row_is_valid(valid, i);
		char *v = null ? NULL : fdl_duck_vector_string(vec, i);
		rc = !null && !v ? fdl_oom(e->err) : e->cb(v, e->payload);
		free(v);
	}
	return rc;
}

int fdl_duck_each_string(fdl_duck *d, const char *sql, int (*cb)(const char *value, void *payload), void *payload,
			 fdl_error *err)
{
	duckdb_prepared_statement st = NULL;
	each_string e = {cb, payload, err};
	int rc = fdl_duck_lock_extensions(d, err);
	if (!rc)
		rc = duckdb_prepare(d->con, sql, &st) == DuckDBSuccess
			     ? fdl_duck_stream_chunks(st, string_chunk, &e, err)
			     : fdl_fail(err, FDL_EDUCKDB, "DuckDB: %s", duckdb_prepare_error(st));
	duckdb_destroy_prepare(&st);
	return rc;
}

int fdl_duck_secret_sql(fdl_buf *b, const fdl_s3_access *a, const char *name, fdl_error *err)
{
	int rc = fdl_buf_puts(b, "CREATE OR REPLACE SECRET ", err);
	if (!rc)
		rc = fdl_buf_sql_ident(b, name, err);
	if (!rc)
		rc = fdl_buf_puts(b, " (TYPE s3", err);
	const char *keys[] = {"KEY_ID", "SECRET", "SESSION_TOKEN", "REGION"};
	const char *vals[] = {a->key_id, a->secret, a->token, a->region};
	for (size_t i = 0; !rc && i < 4; i++) {
		if (!vals[i])
			continue;
		rc = fdl_buf_printf(b, err, ", %s ", keys[i]);
		if (!rc)
			rc = fdl_buf_sql_str(b, vals[i], err);
	}
	if (!rc && a->endpoint) {
		bool tls = !strncmp(a->endpoint, "https://", 8);
		rc = fdl_buf_puts(b, ", ENDPOINT ", err);
		if (!rc)
			rc = fdl_buf_sql_str(b, a->endpoint + (tls ? 8 : 7), err);
		if (!rc)
			rc = fdl_buf_printf(b, err, ", USE_SSL %s", tls ? "true" : "false");
	}
	if (!rc)
		rc = fdl_buf_printf(b, err, ", URL_STYLE '%s', SCOPE ", a->path_style ? "path" : "vhost");
	char *scope = rc ? NULL : fdl_asprintf("s3://%s/", a->bucket);
	if (!rc)
		rc = scope ? fdl_buf_sql_str(b, scope, err) : fdl_oom(err);
	free(scope);
	if (!rc)
		rc = fdl_buf_puts(b, ");\n", err);
	return rc;
}

int fdl_duck_store_sql(fdl_buf *b, fdl_store *store, fdl_error *err)
{
	fdl_s3_access a;
	if (!fdl_store_s3_access(store, &a))
		return 0;
	int rc = fdl_buf_puts(b, "LOAD httpfs;\n", err);
	return rc ? rc : fdl_duck_secret_sql(b, &a, "fdl_s3", err);
}

int fdl_duck_http_secret_sql(fdl_buf *b, const char *scope, const char *token, fdl_error *err)
{
	int rc = fdl_buf_puts(b, "CREATE OR REPLACE SECRET fdl_http (TYPE http, BEARER_TOKEN ", err);
	if (!rc)
		rc = token ? fdl_buf_sql_str(b, token, err) : fdl_buf_puts(b, "getenv('FDL_TOKEN')", err);
	if (!rc)
		rc = fdl_buf_puts(b, ", SCOPE ", err);
	char *slashed = rc ? NULL : fdl_asprintf("%s/", scope);
	if (!rc)
		rc = slashed ? fdl_buf_sql_str(b, slashed, err) : fdl_oom(err);
	free(slashed);
	if (!rc)
		rc = fdl_buf_puts(b, ");\n", err);
	return rc;
}

/* httpfs for data on a web host; the store's token as an http secret scoped
 * to the repository, and $FDL_CA_FILE as the CA httpfs checks against. */
static int use_http(fdl_duck *d, fdl_store *store, fdl_error *err)
{
	int rc = fdl_duck_load(d, "httpfs", err);
	const char *ca = getenv("FDL_CA_FILE");
	fdl_buf sql = {0};
	if (!rc && ca && *ca) {
		rc = fdl_buf_puts(&sql, "SET ca_cert_file = ", err);
		if (!rc)
			rc = fdl_buf_sql_str(&sql, ca, err);
		if (!rc)
			rc = fdl_duck_exec(d, sql.data, err);
		fdl_buf_free(&sql);
	}
	const char *token = fdl_store_http_token(store);
	if (!rc && token)
		rc = fdl_duck_http_secret_sql(&sql, store->url, token, err);
	if (!rc && token)
		rc = fdl_duck_exec(d, sql.data, err);
	if (sql.data)
		OPENSSL_cleanse(sql.data, sql.len);
	fdl_buf_free(&sql);
	return rc;
}

int fdl_duck_use_data(fdl_duck *d, const char *data_url, fdl_store *store, fdl_error *err)
{
	if (!strncmp(data_url, "http://", 7) || !strncmp(data_url, "https://", 8))
		return use_http(d, store, err);
	return fdl_duck_use_store(d, store, err);
}

int fdl_duck_use_store(fdl_duck *d, fdl_store *store, fdl_error *err)
{
	fdl_s3_access a;
	if (!fdl_store_s3_access(store, &a))
		return 0;
	fdl_buf sql = {0};
	int rc = fdl_duck_load(d, "httpfs", err);
	if (!rc)
		rc = fdl_duck_secret_sql(&sql, &a, "fdl_s3", err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	if (rc)
		fdl_error_prefix(err, "giving DuckDB access to %s", store->url);
	fdl_buf_free(&sql);
	return rc;
}
