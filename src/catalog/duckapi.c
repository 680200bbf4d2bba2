/*
 * libduckdb, loaded when a command first needs DuckDB rather than when fdl
 * starts: `fdl log`, `show`, `branch` and `--version` never open DuckDB, and
 * mapping and initialising its 68 MB library cost more than the command
 * itself (measured in bench/RESULTS.md). libfdl defines the DuckDB C API
 * functions it uses as forwards to the library dlopen() found, hidden inside
 * libfdl (-fvisibility=hidden), so a program that links DuckDB itself sees
 * its own. The library is $FDL_DUCKDB_LIBRARY, else the one beside libfdl
 * (<libdir>/fdl after make install), else the loader's, else the build
 * tree's deps/lib.
 *
 * Loaded through the one loader of optional libraries (../util/dynlib.h),
 * as libcurl, libxml2 and libmicrohttpd are: its table of functions is
 * written once, under the loader's lock, and only read after.
 */
#include "duck.h"
#include "../util/dynlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FDL_DEFAULT_DUCKDB_LIBRARY
#define FDL_DEFAULT_DUCKDB_LIBRARY "/usr/local/lib/fdl/libduckdb.so"
#endif

static const char *const names[] = {
	"duckdb_free",
	"duckdb_library_version",
	"duckdb_destroy_result",
	"duckdb_column_name",
	"duckdb_set_config",
	"duckdb_result_error",
	"duckdb_prepare",
	"duckdb_destroy_prepare",
	"duckdb_data_chunk_get_vector",
	"duckdb_column_count",
	"duckdb_vector_get_validity",
	"duckdb_value_is_null",
	"duckdb_validity_row_is_valid",
	"duckdb_prepare_error",
	"duckdb_destroy_config",
	"duckdb_data_chunk_get_size",
	"duckdb_close",
	"duckdb_vector_get_data",
	"duckdb_value_varchar",
	"duckdb_value_int64",
	"duckdb_string_t_length",
	"duckdb_string_t_data",
	"duckdb_row_count",
	"duckdb_query",
	"duckdb_open_ext",
	"duckdb_fetch_chunk",
	"duckdb_execute_prepared_streaming",
	"duckdb_disconnect",
	"duckdb_destroy_data_chunk",
	"duckdb_data_chunk_get_column_count",
	"duckdb_create_config",
	"duckdb_connect",
	"duckdb_column_type",
};

/* In the order of names. */
static union {
	void *slot[sizeof names / sizeof *names];
	struct {
	void (*free)(void *ptr);
	const char *(*library_version)(void);
	void (*destroy_result)(duckdb_result *result);
	const char *(*column_name)(duckdb_result *result, idx_t col);
	duckdb_state (*set_config)(duckdb_config config, const char *name, const char *option);
	const char *(*result_error)(duckdb_result *result);
	duckdb_state (*prepare)(duckdb_connection connection, const char *query, duckdb_prepared_statement *out_prepared_statement);
	void (*destroy_prepare)(duckdb_prepared_statement *prepared_statement);
	duckdb_vector (*data_chunk_get_vector)(duckdb_data_chunk chunk, idx_t col_idx);
	idx_t (*column_count)(duckdb_result *result);
	uint64_t *(*vector_get_validity)(duckdb_vector vector);
	bool (*value_is_null)(duckdb_result *result, idx_t col, idx_t row);
	bool (*validity_row_is_valid)(uint64_t *validity, idx_t row);
	const char *(*prepare_error)(duckdb_prepared_statement prepared_statement);
	void (*destroy_config)(duckdb_config *config);
	idx_t (*data_chunk_get_size)(duckdb_data_chunk chunk);
	void (*close)(duckdb_database *database);
	void *(*vector_get_data)(duckdb_vector vector);
	char *(*value_varchar)(duckdb_result *result, idx_t col, idx_t row);
	int64_t (*value_int64)(duckdb_result *result, idx_t col, idx_t row);
	uint32_t (*string_t_length)(duckdb_string_t string);
	const char *(*string_t_data)(duckdb_string_t *string);
	idx_t (*row_count)(duckdb_result *result);
	duckdb_state (*query)(duckdb_connection connection, const char *query, duckdb_result *out_result);
	duckdb_state (*open_ext)(const char *path, duckdb_database *out_database, duckdb_config config, char **out_error);
	duckdb_data_chunk (*fetch_chunk)(duckdb_result result);
	duckdb_state (*execute_prepared_streaming)(duckdb_prepared_statement prepared_statement, duckdb_result *out_result);
	void (*disconnect)(duckdb_connection *connection);
	void (*destroy_data_chunk)(duckdb_data_chunk *chunk);
	idx_t (*data_chunk_get_column_count)(duckdb_data_chunk chunk);
	duckdb_state (*create_config)(duckdb_config *out_config);
	duckdb_state (*connect)(duckdb_database database, duckdb_connection *out_connection);
	duckdb_type (*column_type)(duckdb_result *result, idx_t col);
} f;
} api;
_Static_assert(sizeof api.slot == sizeof api.f, "one slot per function");

/* Where libduckdb may be: beside an installed libfdl (<libdir>/fdl/, found
 * from where this code was loaded), the loader's own search, and the build
 * tree's deps/lib. The loader's search alone is not enough: a program run
 * under AddressSanitizer has dlopen called from libasan, whose run path is
 * not ours. */
char *fdl_duck_beside_libfdl(const char *name)
{
	Dl_info info;
	if (!dladdr((void *)fdl_duck_beside_libfdl, &info) || !info.dli_fname || info.dli_fname[0] != '/')
		return NULL;
	const char *slash = strrchr(info.dli_fname, '/');
	static const char *const rel[] = {"fdl", "../lib/fdl"};
	for (size_t i = 0; i < 2; i++) {
		char *path = fdl_asprintf("%.*s/%s/%s", (int)(slash - info.dli_fname), info.dli_fname, rel[i], name);
		if (path && access(path, F_OK) == 0)
			return path;
		free(path);
	}
	return NULL;
}

/* RTLD_LAZY: libduckdb's own calls bind on first use; binding all of them
 * up front (RTLD_NOW) costs ~5 ms of every command that opens DuckDB. The
 * functions fdl calls are looked up (and checked) by dlsym at load. */
#define DUCKDB_DLOPEN_FLAGS (RTLD_LAZY | RTLD_LOCAL)

static void *open_library(const char **tried)
{
	const char *env = getenv("FDL_DUCKDB_LIBRARY");
	if (env && *env) {
		*tried = env;
		return dlopen(env, DUCKDB_DLOPEN_FLAGS);
	}
	char *beside = fdl_duck_beside_libfdl("libduckdb.so");
	void *lib = beside ? dlopen(beside, DUCKDB_DLOPEN_FLAGS) : NULL;
	free(beside);
	if (lib)
		return lib;
	lib = dlopen("libduckdb.so", DUCKDB_DLOPEN_FLAGS);
	*tried = FDL_DEFAULT_DUCKDB_LIBRARY;
	return lib ? lib : dlopen(FDL_DEFAULT_DUCKDB_LIBRARY, DUCKDB_DLOPEN_FLAGS);
}

/* dlopen() of the first of those that loads; `tried` names the last one
 * tried, for the message. */
static void *open_duckdb(char *tried, size_t n)
{
	const char *path = "libduckdb.so";
	void *lib = open_library(&path);
	snprintf(tried, n, "%s", path);
	return lib;
}

static fdl_dynlib lib = FDL_DYNLIB_OPEN("libduckdb.so", "set FDL_DUCKDB_LIBRARY, or run `make setup`", names, api.slot,
				       open_duckdb);

/* Every forward but library_version: callers reach them only through a
 * handle fdl_duck_open() made, which loaded the library first, so an
 * unloaded table here is a bug in libfdl, not a user's error. */
static void need(void)
{
	fdl_dynlib_need(&lib);
}

int fdl_duck_load_library(fdl_error *err)
{
	return fdl_dynlib_load(&lib, err) ? (err ? (err->code = FDL_EDUCKDB) : FDL_EDUCKDB) : 0;
}

/* ---- the forwards: the C API as duckdb.h declares it --------------------------- */

void duckdb_free(void *ptr)
{
	need();
	api.f.free(ptr);
}

const char *duckdb_library_version(void)
{
	fdl_error e;
	return fdl_dynlib_load(&lib, &e) == 0 ? api.f.library_version() : "(DuckDB not loaded)";
}

void duckdb_destroy_result(duckdb_result *result)
{
	need();
	api.f.destroy_result(result);
}

const char *duckdb_column_name(duckdb_result *result, idx_t col)
{
	need();
	return api.f.column_name(result, col);
}

duckdb_state duckdb_set_config(duckdb_config config, const char *name, const char *option)
{
	need();
	return api.f.set_config(config, name, option);
}

const char *duckdb_result_error(duckdb_result *result)
{
	need();
	return api.f.result_error(result);
}

duckdb_state duckdb_prepare(duckdb_connection connection, const char *query, duckdb_prepared_statement *out_prepared_statement)
{
	need();
	return api.f.prepare(connection, query, out_prepared_statement);
}

void duckdb_destroy_prepare(duckdb_prepared_statement *prepared_statement)
{
	need();
	api.f.destroy_prepare(prepared_statement);
}

duckdb_vector duckdb_data_chunk_get_vector(duckdb_data_chunk chunk, idx_t col_idx)
{
	need();
	return api.f.data_chunk_get_vector(chunk, col_idx);
}

idx_t duckdb_column_count(duckdb_result *result)
{
	need();
	return api.f.column_count(result);
}

uint64_t *duckdb_vector_get_validity(duckdb_vector vector)
{
	need();
	return api.f.vector_get_validity(vector);
}

bool duckdb_value_is_null(duckdb_result *result, idx_t col, idx_t row)
{
	need();
	return api.f.value_is_null(result, col, row);
}

bool duckdb_validity_row_is_valid(uint64_t *validity, idx_t row)
{
	need();
	return api.f.validity_row_is_valid(validity, row);
}

const char *duckdb_prepare_error(duckdb_prepared_statement prepared_statement)
{
	need();
	return api.f.prepare_error(prepared_statement);
}

void duckdb_destroy_config(duckdb_config *config)
{
	need();
	api.f.destroy_config(config);
}

idx_t duckdb_data_chunk_get_size(duckdb_data_chunk chunk)
{
	need();
	return api.f.data_chunk_get_size(chunk);
}

void duckdb_close(duckdb_database *database)
{
	need();
	api.f.close(database);
}

void *duckdb_vector_get_data(duckdb_vector vector)
{
	need();
	return api.f.vector_get_data(vector);
}

char *duckdb_value_varchar(duckdb_result *result, idx_t col, idx_t row)
{
	need();
	return api.f.value_varchar(result, col, row);
}

int64_t duckdb_value_int64(duckdb_result *result, idx_t col, idx_t row)
{
	need();
	return api.f.value_int64(result, col, row);
}

uint32_t duckdb_string_t_length(duckdb_string_t string)
{
	need();
	return api.f.string_t_length(string);
}

const char *duckdb_string_t_data(duckdb_string_t *string)
{
	need();
	return api.f.string_t_data(string);
}

idx_t duckdb_row_count(duckdb_result *result)
{
	need();
	return api.f.row_count(result);
}

duckdb_state duckdb_query(duckdb_connection connection, const char *query, duckdb_result *out_result)
{
	need();
	return api.f.query(connection, query, out_result);
}

duckdb_state duckdb_open_ext(const char *path, duckdb_database *out_database, duckdb_config config, char **out_error)
{
	need();
	return api.f.open_ext(path, out_database, config, out_error);
}

duckdb_data_chunk duckdb_fetch_chunk(duckdb_result result)
{
	need();
	return api.f.fetch_chunk(result);
}

duckdb_state duckdb_execute_prepared_streaming(duckdb_prepared_statement prepared_statement, duckdb_result *out_result)
{
	need();
	return api.f.execute_prepared_streaming(prepared_statement, out_result);
}

void duckdb_disconnect(duckdb_connection *connection)
{
	need();
	api.f.disconnect(connection);
}

void duckdb_destroy_data_chunk(duckdb_data_chunk *chunk)
{
	need();
	api.f.destroy_data_chunk(chunk);
}

idx_t duckdb_data_chunk_get_column_count(duckdb_data_chunk chunk)
{
	need();
	return api.f.data_chunk_get_column_count(chunk);
}

duckdb_state duckdb_create_config(duckdb_config *out_config)
{
	need();
	return api.f.create_config(out_config);
}

duckdb_state duckdb_connect(duckdb_database database, duckdb_connection *out_connection)
{
	need();
	return api.f.connect(database, out_connection);
}

duckdb_type duckdb_column_type(duckdb_result *result, idx_t col)
{
	need();
	return api.f.column_type(result, col);
}
