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
 * The table of functions is the one piece of process-wide state in libfdl:
 * written once, under pthread_once, and only read after.
 */
#include "duck.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FDL_DEFAULT_DUCKDB_LIBRARY
#define FDL_DEFAULT_DUCKDB_LIBRARY "/usr/local/lib/fdl/libduckdb.so"
#endif

typedef struct duckdb_api {
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
} duckdb_api;

static duckdb_api api;
static char load_error[1024];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

#define RESOLVE(name)                                                                                    \
	do {                                                                                              \
		if (!load_error[0] && !(*(void **)&api.name = dlsym(lib, "duckdb_" #name)))                \
			snprintf(load_error, sizeof load_error, "%s has no duckdb_" #name, path);          \
	} while (0)

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

static void *open_library(const char **tried)
{
	const char *env = getenv("FDL_DUCKDB_LIBRARY");
	if (env && *env) {
		*tried = env;
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	}
	char *beside = fdl_duck_beside_libfdl("libduckdb.so");
	void *lib = beside ? dlopen(beside, RTLD_NOW | RTLD_LOCAL) : NULL;
	free(beside);
	if (lib)
		return lib;
	lib = dlopen("libduckdb.so", RTLD_NOW | RTLD_LOCAL);
	*tried = FDL_DEFAULT_DUCKDB_LIBRARY;
	return lib ? lib : dlopen(FDL_DEFAULT_DUCKDB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
}

static void load(void)
{
	const char *path = "libduckdb.so";
	void *lib = open_library(&path);
	if (!lib) {
		snprintf(load_error, sizeof load_error, "cannot load DuckDB (%s): %s", path, dlerror());
		return;
	}
	RESOLVE(free);
	RESOLVE(library_version);
	RESOLVE(destroy_result);
	RESOLVE(column_name);
	RESOLVE(set_config);
	RESOLVE(result_error);
	RESOLVE(prepare);
	RESOLVE(destroy_prepare);
	RESOLVE(data_chunk_get_vector);
	RESOLVE(column_count);
	RESOLVE(vector_get_validity);
	RESOLVE(value_is_null);
	RESOLVE(validity_row_is_valid);
	RESOLVE(prepare_error);
	RESOLVE(destroy_config);
	RESOLVE(data_chunk_get_size);
	RESOLVE(close);
	RESOLVE(vector_get_data);
	RESOLVE(value_varchar);
	RESOLVE(value_int64);
	RESOLVE(string_t_length);
	RESOLVE(string_t_data);
	RESOLVE(row_count);
	RESOLVE(query);
	RESOLVE(open_ext);
	RESOLVE(fetch_chunk);
	RESOLVE(execute_prepared_streaming);
	RESOLVE(disconnect);
	RESOLVE(destroy_data_chunk);
	RESOLVE(data_chunk_get_column_count);
	RESOLVE(create_config);
	RESOLVE(connect);
	RESOLVE(column_type);
}

static bool loaded(void)
{
	pthread_once(&load_once, load);
	return load_error[0] == '\0';
}

/* Every forward but library_version: callers reach them only through a
 * handle fdl_duck_open() made, which loaded the library first, so an
 * unloaded table here is a bug in libfdl, not a user's error. */
static void need(void)
{
	if (!loaded()) {
		fprintf(stderr, "libfdl: DuckDB C API called before DuckDB was loaded: %s\n", load_error);
		abort();
	}
}

int fdl_duck_load_library(fdl_error *err)
{
	return loaded() ? 0 : fdl_fail(err, FDL_EDUCKDB, "%s (set FDL_DUCKDB_LIBRARY, or run `make setup`)", load_error);
}

/* ---- the forwards: the C API as duckdb.h declares it --------------------------- */

void duckdb_free(void *ptr)
{
	need();
	api.free(ptr);
}

const char *duckdb_library_version(void)
{
	return loaded() ? api.library_version() : "(DuckDB not loaded)";
}

void duckdb_destroy_result(duckdb_result *result)
{
	need();
	api.destroy_result(result);
}

const char *duckdb_column_name(duckdb_result *result, idx_t col)
{
	need();
	return api.column_name(result, col);
}

duckdb_state duckdb_set_config(duckdb_config config, const char *name, const char *option)
{
	need();
	return api.set_config(config, name, option);
}

const char *duckdb_result_error(duckdb_result *result)
{
	need();
	return api.result_error(result);
}

duckdb_state duckdb_prepare(duckdb_connection connection, const char *query, duckdb_prepared_statement *out_prepared_statement)
{
	need();
	return api.prepare(connection, query, out_prepared_statement);
}

void duckdb_destroy_prepare(duckdb_prepared_statement *prepared_statement)
{
	need();
	api.destroy_prepare(prepared_statement);
}

duckdb_vector duckdb_data_chunk_get_vector(duckdb_data_chunk chunk, idx_t col_idx)
{
	need();
	return api.data_chunk_get_vector(chunk, col_idx);
}

idx_t duckdb_column_count(duckdb_result *result)
{
	need();
	return api.column_count(result);
}

uint64_t *duckdb_vector_get_validity(duckdb_vector vector)
{
	need();
	return api.vector_get_validity(vector);
}

bool duckdb_value_is_null(duckdb_result *result, idx_t col, idx_t row)
{
	need();
	return api.value_is_null(result, col, row);
}

bool duckdb_validity_row_is_valid(uint64_t *validity, idx_t row)
{
	need();
	return api.validity_row_is_valid(validity, row);
}

const char *duckdb_prepare_error(duckdb_prepared_statement prepared_statement)
{
	need();
	return api.prepare_error(prepared_statement);
}

void duckdb_destroy_config(duckdb_config *config)
{
	need();
	api.destroy_config(config);
}

idx_t duckdb_data_chunk_get_size(duckdb_data_chunk chunk)
{
	need();
	return api.data_chunk_get_size(chunk);
}

void duckdb_close(duckdb_database *database)
{
	need();
	api.close(database);
}

void *duckdb_vector_get_data(duckdb_vector vector)
{
	need();
	return api.vector_get_data(vector);
}

char *duckdb_value_varchar(duckdb_result *result, idx_t col, idx_t row)
{
	need();
	return api.value_varchar(result, col, row);
}

int64_t duckdb_value_int64(duckdb_result *result, idx_t col, idx_t row)
{
	need();
	return api.value_int64(result, col, row);
}

uint32_t duckdb_string_t_length(duckdb_string_t string)
{
	need();
	return api.string_t_length(string);
}

const char *duckdb_string_t_data(duckdb_string_t *string)
{
	need();
	return api.string_t_data(string);
}

idx_t duckdb_row_count(duckdb_result *result)
{
	need();
	return api.row_count(result);
}

duckdb_state duckdb_query(duckdb_connection connection, const char *query, duckdb_result *out_result)
{
	need();
	return api.query(connection, query, out_result);
}

duckdb_state duckdb_open_ext(const char *path, duckdb_database *out_database, duckdb_config config, char **out_error)
{
	need();
	return api.open_ext(path, out_database, config, out_error);
}

duckdb_data_chunk duckdb_fetch_chunk(duckdb_result result)
{
	need();
	return api.fetch_chunk(result);
}

duckdb_state duckdb_execute_prepared_streaming(duckdb_prepared_statement prepared_statement, duckdb_result *out_result)
{
	need();
	return api.execute_prepared_streaming(prepared_statement, out_result);
}

void duckdb_disconnect(duckdb_connection *connection)
{
	need();
	api.disconnect(connection);
}

void duckdb_destroy_data_chunk(duckdb_data_chunk *chunk)
{
	need();
	api.destroy_data_chunk(chunk);
}

idx_t duckdb_data_chunk_get_column_count(duckdb_data_chunk chunk)
{
	need();
	return api.data_chunk_get_column_count(chunk);
}

duckdb_state duckdb_create_config(duckdb_config *out_config)
{
	need();
	return api.create_config(out_config);
}

duckdb_state duckdb_connect(duckdb_database database, duckdb_connection *out_connection)
{
	need();
	return api.connect(database, out_connection);
}

duckdb_type duckdb_column_type(duckdb_result *result, idx_t col)
{
	need();
	return api.column_type(result, col);
}
