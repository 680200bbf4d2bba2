// How the page reads a table of a version without DuckLake: the reading
// docs/format.md describes ("Reading a table without the catalog"), in
// DuckDB-Wasm, from what files.json records of the table. fdl export does
// the same reading in stock DuckDB (src/catalog/reading.c).
//   - every column of files.json's `columns` by its Parquet field id, cast
//     to its type; a file without it gives the column's initial default;
//   - partition folders in the paths are never columns (hive_partitioning off);
//   - each delete file's row positions left out.
// Where the browser cannot be right it says why instead (whyNotReadable).

const sqlString = (s) => `'${String(s).replace(/'/g, "''")}'`;
const ident = (s) => `"${String(s).replace(/"/g, '""')}"`;

// DuckLake type names (dataset.json) as DuckDB SQL types: for a files.json
// written before fdl recorded each column's type.
function sqlTypeOf(t) {
  const map = { int8: 'TINYINT', int16: 'SMALLINT', int32: 'INTEGER', int64: 'BIGINT', int128: 'HUGEINT',
    uint8: 'UTINYINT', uint16: 'USMALLINT', uint32: 'UINTEGER', uint64: 'UBIGINT', float32: 'FLOAT', float64: 'DOUBLE',
    varchar: 'VARCHAR', blob: 'BLOB', boolean: 'BOOLEAN', date: 'DATE', time: 'TIME', timestamp: 'TIMESTAMP',
    timestamptz: 'TIMESTAMP WITH TIME ZONE', uuid: 'UUID', json: 'JSON', interval: 'INTERVAL' };
  if (!t) return null;
  if (/^decimal\(\d+,\s*\d+\)$/i.test(t)) return t.toUpperCase();
  return map[t.toLowerCase()] || null;
}

// The browser's DuckDB (DuckDB-Wasm 1.28, DuckDB 0.9) lacks a few of
// DuckDB 1.5's types. JSON is text to it (the same text); UHUGEINT, which
// Parquet holds as a DOUBLE, prints the same digits through HUGEINT (or
// fails, never a wrong value); the others it cannot read right.
const UNREADABLE_TYPES = [
  [/\bTIMESTAMP_NS\b/, 'nanosecond timestamps (the browser\'s DuckDB reads them as microseconds)'],
  [/\b(GEOMETRY|VARIANT|BIGNUM|VARINT)\b/, 'a type the browser\'s DuckDB does not have'],
];
function outsideQuotes(type, f) {
  return type.split(/("(?:[^"]|"")*")/).map((part, i) => (i % 2 ? part : f(part))).join('');
}
const engineType = (type) => outsideQuotes(type, (p) => p.replace(/\bJSON\b/g, 'VARCHAR').replace(/\bUHUGEINT\b/g, 'HUGEINT'));
const nested = (type) => /[[(]/.test(type.replace(/^DECIMAL\(\d+,\s*\d+\)$/i, ''));

// A data file's URL: each segment of its path escaped (a partition folder
// such as region=a%3Db holds a % of its own).
export const fileUrl = (base, dataDir, path) => new URL(`${dataDir}/${path}`.split('/').map(encodeURIComponent).join('/'), base).href;

// Why the browser cannot read table t (dataset.json) of this files.json as
// DuckLake does; null when it can.
export function whyNotReadable(t, filesJson, key) {
  if (!filesJson) return 'this version has no files.json, so the browser cannot find its Parquet files';
  const entry = filesJson.tables ? filesJson.tables[key] : null;
  if (!entry) return 'files.json does not list this table';
  if (entry.unreadable) return `no reader without the catalog can read it as DuckLake does: ${entry.unreadable}`;
  const cols = entry.columns || (t.fields || []).map((f) => ({ name: f.name, type: sqlTypeOf(f.type) || String(f.type || '').toUpperCase() }));
  for (const c of cols) {
    for (const [re, what] of UNREADABLE_TYPES) {
      if (re.test(outsideQuotes(c.type || '', (p) => p))) return `its column ${c.name} holds ${what}`;
    }
  }
  if (!entry.columns && entry.renamed_columns && !entry.field_ids) {
    return `a column of this table was renamed: files written before the rename carry the old name, and this files.json has no field_ids to map them by (to fix it, rewrite it in the working catalog: CREATE OR REPLACE TABLE lake.${key} AS FROM lake.${key}, then commit)`;
  }
  return null;
}

// Each file's top-level columns by field id, from the footers (one query).
async function fileColumns(conn, urls) {
  const res = await conn.query(`SELECT file_name, name, field_id, num_children FROM parquet_schema([${urls.map(sqlString).join(', ')}])`);
  const rows = res.toArray().map((r) => r.toJSON());
  const byFile = new Map(urls.map((u) => [u, { ids: new Map(), names: new Map() }]));
  let i = 0;
  while (i < rows.length) { // each file: its root, then its columns depth first
    const file = byFile.get(rows[i].file_name);
    const end = i + 1;
    let j = end;
    const skip = (k) => { let n = k + 1; for (let c = 0; c < Number(rows[k].num_children || 0); c++) n = skip(n); return n; };
    for (let c = 0; c < Number(rows[i].num_children || 0); c++) {
      const r = rows[j];
      if (file) {
        if (r.field_id !== null && r.field_id !== undefined) file.ids.set(Number(r.field_id), r.name);
        file.names.set(r.name, r.field_id === null || r.field_id === undefined ? null : Number(r.field_id));
      }
      j = skip(j);
    }
    i = j;
  }
  return byFile;
}

// files.json's columns for a files.json written before fdl recorded them:
// taken from the footers when every file holds every column under its
// current name with one field id; otherwise the browser cannot know what
// DuckLake returns for the files that lack one.
async function columnsFromFooters(t, entry, conn, urls) {
  const byFile = await fileColumns(conn, urls);
  const cols = [];
  for (const f of t.fields || []) {
    let id = entry.field_ids ? Number(entry.field_ids[f.name]) : undefined;
    for (const [url, file] of byFile) {
      const here = id !== undefined && file.ids.has(id) ? id : file.names.get(f.name);
      if (here === undefined || (id !== undefined && here !== id)) {
        throw new Error(`files.json was written before fdl recorded how its tables read, and the data file ${url.split('/').pop()} was written before column ${f.name} existed (or under another column of that name): only the catalog knows what DuckLake returns there`);
      }
      id = here;
    }
    cols.push({ name: f.name, field_id: id, type: sqlTypeOf(f.type) });
  }
  return { cols, byFile };
}

// The SQL that reads table t of a version (its files.json entry) as DuckLake
// does, in the browser's DuckDB.
export async function tableSql(t, entry, base, dataDir, conn) {
  const urls = entry.files.map((f) => fileUrl(base, dataDir, f.path));
  let cols = entry.columns;
  let byFile = null;
  if (!cols) ({ cols, byFile } = urls.length ? await columnsFromFooters(t, entry, conn, urls) : { cols: (t.fields || []).map((f) => ({ name: f.name, type: sqlTypeOf(f.type) })) });
  const typed = (expr, c) => (c.type && !nested(c.type) ? `CAST(${expr} AS ${engineType(c.type)})` : expr);
  const missing = (c) => `CAST(${c.initial_default === undefined || c.initial_default === null ? 'NULL' : sqlString(c.initial_default)} AS ${engineType(c.type || 'VARCHAR')})`;
  if (!urls.length) return `SELECT ${cols.map((c) => `${missing({ ...c, initial_default: null })} AS ${ident(c.name)}`).join(', ') || '1 AS empty'} LIMIT 0`;
  const deleted = entry.files.filter((f) => f.deletes)
    .map((f) => `SELECT ${sqlString(fileUrl(base, dataDir, f.path))} AS fdl_file, pos AS fdl_pos FROM read_parquet(${sqlString(fileUrl(base, dataDir, f.deletes.path))})`);
  const from = (list) => `read_parquet([${list.map(sqlString).join(', ')}], hive_partitioning = false` +
    (deleted.length ? ', filename = true, file_row_number = true) d ' +
      `LEFT JOIN (${deleted.join(' UNION ALL ')}) x ON d.filename = x.fdl_file AND d.file_row_number = x.fdl_pos WHERE x.fdl_pos IS NULL` : ') d');
  if (!entry.schema_changed && !byFile && !entry.renamed_columns) {
    // every file holds every column under its current name and type
    return `SELECT ${cols.map((c) => `${typed(`d.${ident(c.name)}`, c)} AS ${ident(c.name)}`).join(', ')} FROM ${from(urls)}`;
  }
  // each file's columns mapped by field id
  if (!byFile) byFile = await fileColumns(conn, urls);
  return urls.map((u) => {
    const file = byFile.get(u);
    const select = cols.map((c) => {
      const name = file && file.ids.get(Number(c.field_id));
      return `${name === undefined ? missing(c) : typed(`d.${ident(name)}`, c)} AS ${ident(c.name)}`;
    }).join(', ');
    return `SELECT ${select} FROM ${from([u])}`;
  }).join(' UNION ALL ');
}
