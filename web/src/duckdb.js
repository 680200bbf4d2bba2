// DuckDB-Wasm and what reads its answers, in a module of their own
// (_fdl/duckdb/duckdb.js): the page imports it only when someone queries or
// pages past a version's preview, so a first paint neither fetches nor
// parses it.
export * from '@duckdb/duckdb-wasm';
export { csvText, valueText } from './text.js';
