// The one rule for a value's text on the page: what stock DuckDB prints for
// CAST(x AS VARCHAR), made by DuckDB-Wasm itself. Every value the page shows,
// copies or downloads (the SQL box, the viewer, the CSV, the statistics)
// comes from valueText.
//
// A scalar is DuckDB's own cast (DECIMAL with its scale, DATE, TIMESTAMP,
// TIMESTAMP WITH TIME ZONE in UTC with +00 — the browser's DuckDB has no
// time zones, so the visitor's never applies —, TIME, INTERVAL, UUID, BLOB,
// HUGEINT and BIGINT without loss). Nested values are spelled in SQL here,
// because the browser's DuckDB (0.9) quotes the strings inside them
// differently from DuckDB 1.5: a value inside a LIST, STRUCT or MAP is quoted
// when it is empty, starts or ends with a space, is NULL as text, or holds
// one of "'(),:=[]{} (its ' and \ escaped with \); struct keys are always
// quoted; a NULL inside is NULL.
import { DataType } from 'apache-arrow';

const sqlString = (s) => `'${String(s).replace(/'/g, "''")}'`;
const ident = (s) => `"${String(s).replace(/"/g, '""')}"`;

const SPACE = '[ \\t\\n\\x0B\\f\\r]';
const quoted = (x) => `'''' || replace(replace(${x}, '\\', '\\\\'), '''', '\\''') || ''''`;
// a scalar's text inside a nested value
const inner = (x) => `CASE WHEN ${x} IS NULL THEN 'NULL' WHEN ${x} = '' OR lower(${x}) = 'null' OR ` +
  `regexp_matches(${x}, ${sqlString(`^${SPACE}|${SPACE}$|["'(),:=\\[\\]{}]`)}) THEN ${quoted(x)} ELSE ${x} END`;

const isNested = (type) => DataType.isList(type) || DataType.isStruct(type) || DataType.isMap(type) ||
  DataType.isFixedSizeList(type);

// SQL giving the text of expression `e` of Arrow type `type` (NULL for NULL);
// `depth` names lambda variables uniquely.
function textSql(e, type, depth = 0) {
  if (!isNested(type)) return `CAST(${e} AS VARCHAR)`;
  const x = `fdl_x${depth}`;
  const item = (v, t) => (isNested(t) ? `coalesce(${textSql(v, t, depth + 1)}, 'NULL')` : inner(`CAST(${v} AS VARCHAR)`));
  const joined = (list, body, open, close) =>
    `${sqlString(open)} || coalesce(array_to_string(list_transform(${list}, ${x} -> ${body}), ', '), '') || ${sqlString(close)}`;
  let text;
  if (DataType.isMap(type)) {
    const [k, v] = type.children[0].type.children;
    text = joined(`map_entries(${e})`, `${item(`struct_extract(${x}, 'key')`, k.type)} || '=' || ${item(`struct_extract(${x}, 'value')`, v.type)}`, '{', '}');
  } else if (DataType.isStruct(type)) {
    const key = (name) => sqlString(`'${name.replace(/[\\']/g, (c) => `\\${c}`)}': `);
    text = `'{' || ${type.children.map((f, i) => `${i ? "', ' || " : ''}${key(f.name)} || ${item(`struct_extract(${e}, ${sqlString(f.name)})`, f.type)}`).join(' || ')} || '}'`;
  } else {
    text = joined(e, item(x, type.children[0].type), '[', ']');
  }
  return `CASE WHEN ${e} IS NULL THEN NULL ELSE ${text} END`;
}

// Run `sql` on `conn` and give every value as its text: {names, rows}, each
// row an array of strings, null for NULL. A statement that cannot be read as
// a subquery (SHOW, PRAGMA, …) runs as it is and its values are spelled by
// JavaScript (they are names and numbers).
export async function valueText(conn, sql) {
  const body = sql.trim().replace(/;+\s*$/, '');
  let probe = null;
  try { probe = await conn.query(`SELECT * FROM (${body}\n) fdl_q LIMIT 0`); } catch { /* not a query */ }
  if (!probe) {
    const res = await conn.query(sql);
    const names = res.schema.fields.map((f) => f.name);
    return { names, rows: res.toArray().map((r) => names.map((n) => { const v = r[n]; return v === null || v === undefined ? null : String(v); })) };
  }
  const fields = probe.schema.fields;
  const cols = fields.map((f, i) => `${textSql(`fdl_q.${ident(f.name)}`, f.type)} AS fdl_c${i}`);
  const res = await conn.query(`SELECT ${cols.join(', ') || '1'} FROM (${body}\n) fdl_q`);
  const keys = fields.map((f, i) => `fdl_c${i}`);
  return { names: fields.map((f) => f.name), rows: res.toArray().map((r) => keys.map((k) => r[k] ?? null)) };
}

// CSV exactly as stock DuckDB's COPY (…) TO 'x.csv' writes it: a header,
// commas, \n after every line, NULL as nothing, and a value in double quotes
// (its " doubled) when it is empty or holds a comma, a quote, a newline, a
// carriage return or a # (DuckDB's comment character).
export function csvText(names, rows) {
  const field = (s) => (s === '' || /[",\n\r#]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const line = (values) => values.map((v) => (v === null ? '' : field(v))).join(',');
  return [line(names), ...rows.map(line)].map((l) => `${l}\n`).join('');
}
