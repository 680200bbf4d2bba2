/* libduckdb, loaded when a command first opens DuckDB (duckapi.c,
 * ../util/dynlib.h). duck.h includes this after <duckdb.h>: the calls of
 * src/catalog/ then go to libfdl's forwards, named fdl_lazy_duckdb_*, so a
 * program that links libfdl.a and DuckDB both keeps DuckDB's own names. */
#ifndef FDL_CATALOG_LAZY_DUCKDB_H
#define FDL_CATALOG_LAZY_DUCKDB_H

#include <duckdb.h>

/* Every DuckDB C API function libfdl calls, once: as duckdb.h declares it
 * (../util/dynlib.h says how the list is read). In this order dlsym looks
 * them up. duckdb_library_version's forward is written by hand in
 * duckapi.c: it loads the library itself. */
#define DUCKDB_FUNCTIONS(F, V, H) \
	V(free, (void *ptr), (ptr)) \
	H(const char *, library_version, (void)) \
	V(destroy_result, (duckdb_result *result), (result)) \
	F(const char *, column_name, (duckdb_result *result, idx_t col), (result, col)) \
	F(duckdb_state, set_config, (duckdb_config config, const char *name, const char *option), (config, name, option)) \
	F(const char *, result_error, (duckdb_result *result), (result)) \
	F(duckdb_state, prepare, (duckdb_connection connection, const char *query, duckdb_prepared_statement *out_prepared_statement), (connection, query, out_prepared_statement)) \
	V(destroy_prepare, (duckdb_prepared_statement *prepared_statement), (prepared_statement)) \
	F(duckdb_vector, data_chunk_get_vector, (duckdb_data_chunk chunk, idx_t col_idx), (chunk, col_idx)) \
	F(idx_t, column_count, (duckdb_result *result), (result)) \
	F(uint64_t *, vector_get_validity, (duckdb_vector vector), (vector)) \
	F(bool, value_is_null, (duckdb_result *result, idx_t col, idx_t row), (result, col, row)) \
	F(bool, validity_row_is_valid, (uint64_t *validity, idx_t row), (validity, row)) \
	F(const char *, prepare_error, (duckdb_prepared_statement prepared_statement), (prepared_statement)) \
	V(destroy_config, (duckdb_config *config), (config)) \
	F(idx_t, data_chunk_get_size, (duckdb_data_chunk chunk), (chunk)) \
	V(close, (duckdb_database *database), (database)) \
	F(void *, vector_get_data, (duckdb_vector vector), (vector)) \
	F(char *, value_varchar, (duckdb_result *result, idx_t col, idx_t row), (result, col, row)) \
	F(int64_t, value_int64, (duckdb_result *result, idx_t col, idx_t row), (result, col, row)) \
	F(uint32_t, string_t_length, (duckdb_string_t string), (string)) \
	F(const char *, string_t_data, (duckdb_string_t *string), (string)) \
	F(idx_t, row_count, (duckdb_result *result), (result)) \
	F(duckdb_state, query, (duckdb_connection connection, const char *query, duckdb_result *out_result), (connection, query, out_result)) \
	F(duckdb_state, open_ext, (const char *path, duckdb_database *out_database, duckdb_config config, char **out_error), (path, out_database, config, out_error)) \
	F(duckdb_data_chunk, fetch_chunk, (duckdb_result result), (result)) \
	F(duckdb_state, execute_prepared_streaming, (duckdb_prepared_statement prepared_statement, duckdb_result *out_result), (prepared_statement, out_result)) \
	V(disconnect, (duckdb_connection *connection), (connection)) \
	V(destroy_data_chunk, (duckdb_data_chunk *chunk), (chunk)) \
	F(idx_t, data_chunk_get_column_count, (duckdb_data_chunk chunk), (chunk)) \
	F(duckdb_state, create_config, (duckdb_config *out_config), (out_config)) \
	F(duckdb_state, connect, (duckdb_database database, duckdb_connection *out_connection), (database, out_connection)) \
	F(duckdb_type, column_type, (duckdb_result *result, idx_t col), (result, col))

#define FDL_LAZY_DUCKDB_F(ret, name, params, args) ret fdl_lazy_duckdb_##name params;
#define FDL_LAZY_DUCKDB_V(name, params, args) void fdl_lazy_duckdb_##name params;
#define FDL_LAZY_DUCKDB_H(ret, name, params) ret fdl_lazy_duckdb_##name params;
DUCKDB_FUNCTIONS(FDL_LAZY_DUCKDB_F, FDL_LAZY_DUCKDB_V, FDL_LAZY_DUCKDB_H)
#undef FDL_LAZY_DUCKDB_F
#undef FDL_LAZY_DUCKDB_V
#undef FDL_LAZY_DUCKDB_H

#define duckdb_free fdl_lazy_duckdb_free
#define duckdb_library_version fdl_lazy_duckdb_library_version
#define duckdb_destroy_result fdl_lazy_duckdb_destroy_result
#define duckdb_column_name fdl_lazy_duckdb_column_name
#define duckdb_set_config fdl_lazy_duckdb_set_config
#define duckdb_result_error fdl_lazy_duckdb_result_error
#define duckdb_prepare fdl_lazy_duckdb_prepare
#define duckdb_destroy_prepare fdl_lazy_duckdb_destroy_prepare
#define duckdb_data_chunk_get_vector fdl_lazy_duckdb_data_chunk_get_vector
#define duckdb_column_count fdl_lazy_duckdb_column_count
#define duckdb_vector_get_validity fdl_lazy_duckdb_vector_get_validity
#define duckdb_value_is_null fdl_lazy_duckdb_value_is_null
#define duckdb_validity_row_is_valid fdl_lazy_duckdb_validity_row_is_valid
#define duckdb_prepare_error fdl_lazy_duckdb_prepare_error
#define duckdb_destroy_config fdl_lazy_duckdb_destroy_config
#define duckdb_data_chunk_get_size fdl_lazy_duckdb_data_chunk_get_size
#define duckdb_close fdl_lazy_duckdb_close
#define duckdb_vector_get_data fdl_lazy_duckdb_vector_get_data
#define duckdb_value_varchar fdl_lazy_duckdb_value_varchar
#define duckdb_value_int64 fdl_lazy_duckdb_value_int64
#define duckdb_string_t_length fdl_lazy_duckdb_string_t_length
#define duckdb_string_t_data fdl_lazy_duckdb_string_t_data
#define duckdb_row_count fdl_lazy_duckdb_row_count
#define duckdb_query fdl_lazy_duckdb_query
#define duckdb_open_ext fdl_lazy_duckdb_open_ext
#define duckdb_fetch_chunk fdl_lazy_duckdb_fetch_chunk
#define duckdb_execute_prepared_streaming fdl_lazy_duckdb_execute_prepared_streaming
#define duckdb_disconnect fdl_lazy_duckdb_disconnect
#define duckdb_destroy_data_chunk fdl_lazy_duckdb_destroy_data_chunk
#define duckdb_data_chunk_get_column_count fdl_lazy_duckdb_data_chunk_get_column_count
#define duckdb_create_config fdl_lazy_duckdb_create_config
#define duckdb_connect fdl_lazy_duckdb_connect
#define duckdb_column_type fdl_lazy_duckdb_column_type

#endif
