// The page of an fdl repository: static files that read the repository's own
// files (fdl.json, HEAD, refs, versions/<id>/*.json) from where the page is
// served, and query a version's Parquet files with DuckDB-Wasm through
// files.json and HTTP ranges. Everything shown comes from those files; all
// text goes into the page as text, never as HTML, except a description's
// Markdown, rendered by markdown-it with raw HTML off, images off (the page
// loads nothing a repository names) and links limited to http(s) and mailto.
import MarkdownIt from 'markdown-it';
import { fileUrl, tableSql, whyNotReadable } from './reading.js';

// DuckDB-Wasm and the reading of its answers (web/src/duckdb.js, built as
// _fdl/duckdb/duckdb.js): imported on the first query, never for a preview.
let wasmModule = null;
const wasm = () => (wasmModule ||= import('./duckdb/duckdb.js'));
const valueText = async (conn, sql) => (await wasm()).valueText(conn, sql);

// A page fdl site wrote names the repository's root and its version
// (site/<id>/index.html: data-fdl-root="../../"); the script takes over there.
const page = document.documentElement.dataset;
const base = new URL(page.fdlRoot || '.', location.href);
const main = document.getElementById('main');
const where = document.getElementById('where');
const HISTORY_PAGE = 50;

// ---- small helpers ---------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// ---- a private repository: the token ----------------------------------------
// A host that answers 401 (fdl serve --token-file) gets a token the reader
// types once: kept in sessionStorage (this tab, until it closes; never in a
// URL or localStorage), sent as `Authorization: Bearer` with every request
// to the page's own origin, by the page and by DuckDB-Wasm's worker.
const TOKEN_KEY = 'fdl-token';
let token = sessionStorage.getItem(TOKEN_KEY);
const earlyToken = token; // the one index.html's requests carried
let asking = null;

function askToken(refused) {
  if (!asking) {
    asking = new Promise((resolve) => {
      const input = h('input', { type: 'password', id: 'token', autocomplete: 'off', 'aria-label': 'Token' });
      const form = h('form', { id: 'token-form', onsubmit: (ev) => {
        ev.preventDefault();
        if (!input.value.trim()) return;
        token = input.value.trim();
        sessionStorage.setItem(TOKEN_KEY, token);
        asking = null;
        resolve();
      } }, h('h2', {}, 'A private repository'),
      h('p', {}, refused ? 'The host refused that token; type another.' : 'This host wants a token to show its data.'),
      h('p', {}, input, ' ', h('button', { class: 'primary', type: 'submit', id: 'token-go' }, 'Open')),
      h('p', { class: 'muted' }, 'Kept for this tab only (sessionStorage), sent to this host alone.'));
      show(form);
      input.focus();
    });
  }
  return asking;
}

// fetch() of a URL of the page's own origin, with the token; asks for one
// on a 401.
// `sent`: the answer to this same request sent earlier (index.html's), used
// as the first one (its 401 refused the token index.html had, not one typed
// since).
async function request(url, init = {}, sent = null) {
  for (;;) {
    const used = sent ? earlyToken : token;
    const headers = new Headers(init.headers || {});
    if (used && new URL(url).origin === base.origin) headers.set('Authorization', `Bearer ${used}`);
    const r = sent || await fetch(url, { ...init, headers });
    sent = null;
    if (r.status !== 401 || new URL(url).origin !== base.origin) return r;
    if (token !== used) continue; // another request was given a token meanwhile
    if (used) sessionStorage.removeItem(TOKEN_KEY);
    token = null;
    await askToken(!!used);
  }
}

// DuckDB-Wasm's worker, its XMLHttpRequests to this origin carrying the
// token: a worker from a Blob that wraps open() and then loads the real one.
function duckWorker(url) {
  if (!token) return new Worker(url);
  const code = `const T = ${JSON.stringify(token)}, O = ${JSON.stringify(base.origin)};
const open = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function (method, u, ...rest) {
  open.call(this, method, u, ...rest);
  try { if (new URL(u, O).origin === O) this.setRequestHeader('Authorization', 'Bearer ' + T); } catch (e) {}
};
importScripts(${JSON.stringify(url)});`;
  const blob = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
  const w = new Worker(blob);
  URL.revokeObjectURL(blob);
  return w;
}

// A link to one of the repository's files: with a token, a click fetches it
// with the token and saves it (a plain link would go without it).
function fileLink(url, text) {
  return h('a', { href: url, onclick: async (ev) => {
    if (!token) return;
    ev.preventDefault();
    const r = await request(url);
    if (!r.ok) return;
    const a = h('a', { href: URL.createObjectURL(await r.blob()), download: url.split('/').pop() });
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  } }, text);
}

// The answers index.html asked for before this script arrived
// (window.fdlEarly: path -> fetch), each taken once, as the first answer
// of the same request (one refused, 401, makes the page ask for the token
// as its own would).
const early = page.fdlRoot ? {} : (window.fdlEarly || {});
async function earlyAnswer(path) {
  const p = early[path];
  if (!p) return null;
  delete early[path];
  return p;
}

async function get(path, kind = 'json') {
  const r = await request(new URL(path, base).href, { cache: 'no-cache' }, await earlyAnswer(path));
  if (!r.ok) {
    const e = new Error(`${path}: HTTP ${r.status}`);
    e.status = r.status;
    throw e;
  }
  return kind === 'json' ? r.json() : r.text();
}

const sqlString = (s) => `'${String(s).replace(/'/g, "''")}'`;
const ident = (s) => `"${String(s).replace(/"/g, '""')}"`;

function bytes(n) {
  if (n === undefined || n === null) return '';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return i ? `${v.toFixed(1)} ${u[i]}` : `${v} B`;
}

const date = (iso) => (iso || '').replace('T', ' ').replace('Z', ' UTC');
const short = (id) => id.slice(0, 13) + '…';

function copyButton(text) {
  return h('button', {
    class: 'copy', title: 'Copy to the clipboard', onclick: async (ev) => {
      try { await navigator.clipboard.writeText(text); ev.target.textContent = 'Copied'; }
      catch { ev.target.textContent = 'Select and copy'; }
      setTimeout(() => { ev.target.textContent = 'Copy'; }, 1500);
    },
  }, 'Copy');
}

const snippet = (text, id) => h('div', { class: 'snippet' }, h('pre', { id }, text), copyButton(text));

// A version id as people copy it: the short form shown, the whole id copied.
const idChip = (id, href) => h('span', { class: 'id-chip' },
  href ? h('a', { href, class: 'version-link', title: id }, short(id)) : h('code', { title: id }, short(id)),
  h('button', { class: 'copy small', title: `Copy ${id}`, 'aria-label': `Copy the version id ${id}`, onclick: async (ev) => {
    try { await navigator.clipboard.writeText(id); ev.target.textContent = 'copied'; } catch { ev.target.textContent = 'select it'; }
    setTimeout(() => { ev.target.textContent = 'copy'; }, 1500);
  } }, 'copy'));

// A description as Markdown: raw HTML is shown as text, images are not
// loaded, and a link goes only to http(s) or mailto, opened without the
// page as its opener.
const markdown = (() => {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
  md.disable(['image']);
  const safe = /^(https?:|mailto:)/i;
  md.validateLink = (url) => safe.test(url.trim());
  const open = md.renderer.rules.link_open || ((tokens, i, opts, env, self) => self.renderToken(tokens, i, opts));
  md.renderer.rules.link_open = (tokens, i, opts, env, self) => {
    tokens[i].attrSet('rel', 'noopener nofollow ugc');
    return open(tokens, i, opts, env, self);
  };
  return md;
})();
function renderMarkdown(text, id) {
  const div = h('div', { class: 'markdown', id });
  div.innerHTML = markdown.render(String(text || ''));
  return div;
}

// Put a page's parts into <main>: arrays flattened, empty parts left out.
function show(...parts) {
  main.replaceChildren(...parts.flat(Infinity).filter((x) => x !== null && x !== undefined && x !== false));
}

function failure(e) {
  show(h('p', { class: 'error' }, `Cannot show this page: ${e.message}`));
}

// ---- the repository's files ---------------------------------------------------

const versions = new Map(); // version.json never changes: read each once
function version(id) {
  if (!versions.has(id)) versions.set(id, get(`versions/${id}/version.json`));
  return versions.get(id);
}

// The history index (docs/format.md, "The history index"): a branch's
// versions in a few files instead of one request per version. It is only a
// shortcut: each entry is kept under its own id, the walk still follows the
// parents each version.json names, and what the index lacks is read as before.
const indexPacks = []; // packs not read yet, newest first
let indexFormat = 2;
// A pack line: format 2 is "<head>\t<sha256>\t<version.json>" (the page
// takes the version.json); format 1 (fdl 0.2) is a whole entry.
function packEntry(line) {
  if (indexFormat === 1) return JSON.parse(line);
  const tab = line.indexOf('\t');
  if (tab < 0 || line[tab + 65] !== '\t') return null;
  const v = JSON.parse(line.slice(tab + 66));
  return { id: v.id, seq: v.seq, version: v };
}
function remember(e) {
  const v = e && e.version;
  if (v && typeof e.id === 'string' && v.id === e.id && v.seq === e.seq && !versions.has(e.id)) {
    versions.set(e.id, Promise.resolve(v));
  }
}
async function useIndex(branch) {
  let ix = null;
  try {
    ix = await get(`history/heads/${branch.split('/').map(encodeURIComponent).join('/')}.json`);
  } catch { return; } // none: read version.json files
  if (!ix || ![1, 2].includes(ix.fdl_history) || !Array.isArray(ix.tail) || !Array.isArray(ix.packs)) return;
  indexFormat = ix.fdl_history;
  ix.tail.forEach(remember);
  for (const p of ix.packs.slice().reverse()) {
    if (/^[0-9a-f]{64}\.jsonl$/.test(p.name || '')) indexPacks.push(p.name);
  }
}
async function indexedVersion(id) {
  while (!versions.has(id) && indexPacks.length) {
    const name = indexPacks.shift();
    try {
      const text = await get(`history/packs/${name}`, 'text');
      for (const line of text.split('\n')) if (line) remember(packEntry(line));
    } catch { /* a shortcut only */ }
  }
  return version(id);
}

let config = null;
async function repoConfig() {
  if (!config) config = get('fdl.json');
  return config;
}

// Branches and tags with their tips. fdl serve lists them (_fdl/refs.json);
// a static host cannot list: there the ref list (history/refs.json, derived,
// docs/format.md "The ref list") names them, HEAD names HEAD's branch, and
// `tipOf(branch)` reads the ref itself (the truth), which a page asks for
// beside the tip's files. Without a list, only HEAD's branch is known.
// `quick` (the landing card): returned once HEAD is read, without waiting
// for the list; `later` settles when the list has named the other branches
// and the tags (at once when fdl serve listed them).
async function refs(quick = false) {
  const listRead = get('history/refs.json').catch(() => null);
  const [served, headText] = await Promise.all([get('_fdl/refs.json').catch(() => null),
    get('HEAD', 'text').catch(() => null)]);
  if (served) return { ...served, tipOf: async (b) => served.branches[b], later: Promise.resolve() };
  const branches = {};
  const tags = {};
  const read = {}; // each ref read once: what it says stands over the list's
  const tipOf = (b) => (read[b] ||= (async () => {
    let tip = null;
    try { tip = (await get(`refs/heads/${b}`, 'text')).trim(); } catch { /* unborn */ }
    if (tip) branches[b] = tip; else delete branches[b];
    return tip;
  })());
  const r = { head: headText ? headText.trim().replace(/^ref: refs\/heads\//, '') : null, branches, tags, tipOf };
  r.later = listRead.then((list) => {
    const named = list && list.fdl_refs === 1 && list.refs && typeof list.refs === 'object' ? Object.entries(list.refs) : [];
    const pick = (prefix) => named.filter(([k, v]) => k.startsWith(prefix) && typeof v === 'string')
      .map(([k, v]) => [k.slice(prefix.length), v]);
    for (const [k, v] of pick('refs/heads/')) if (!(k in read)) branches[k] = v;
    Object.assign(tags, Object.fromEntries(pick('refs/tags/')));
    return list;
  });
  if (r.head && quick) return r;
  const list = await r.later;
  r.head ||= list && list.head;
  if (!r.head) throw new Error('HEAD: cannot be read');
  if (!(r.head in branches)) await tipOf(r.head);
  return r;
}

// ---- the overview --------------------------------------------------------------

function describe(ds) {
  const dl = h('dl', { class: 'meta' });
  const row = (k, v) => { if (v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && !v.length)) dl.append(h('dt', {}, k), h('dd', {}, v)); };
  const link = (url, text) => (/^https?:\/\//.test(url || '') ? h('a', { href: url, rel: 'noopener' }, text || url) : (text || url));
  const licence = (l) => (typeof l === 'string' ? l : link(l.url, l.title || l.spdx || l.id));
  row('Licences', (ds.licenses || []).map((l, i) => [i ? ', ' : '', licence(l)]));
  row('Sources', (ds.sources || []).map((s, i) => [i ? ', ' : '', link(s.path, s.title || s.path)]));
  row('Contributors', (ds.contributors || []).map((c, i) => [i ? ', ' : '', c.title || '',
    c.roles && c.roles.length ? ` (${c.roles.join(', ')})` : '']));
  const t = ds.temporal_coverage;
  row('Period', t ? `${t.start || '…'} – ${t.end || '…'}` : null);
  row('Places', (ds.spatial_coverage || []).join(', '));
  row('Keywords', (ds.keywords || []).map((k) => h('span', { class: 'badge' }, k)));
  row('Homepage', ds.homepage ? link(ds.homepage) : null);
  row('Issued', ds.issued);
  row('Updated', ds.update_frequency);
  row('Language', ds.language);
  return dl;
}

function changeBadges(changes) {
  return (changes || []).map((c) => h('span', {
    class: 'badge' + (c.breaking ? ' breaking' : ''),
    title: c.breaking ? 'breaking: SQL written against the parent may fail' : '',
  }, `${c.kind} ${c.table || ''}${c.column ? '.' + c.column : ''}${c.breaking ? ' (breaking)' : ''}`));
}

async function historyRows(tbody, start, more) {
  let id = start;
  for (let n = 0; id && n < HISTORY_PAGE; n++) {
    const v = await indexedVersion(id);
    tbody.append(h('tr', { class: 'version' },
      h('td', { class: 'num' }, v.seq),
      h('td', {}, idChip(v.id, `#/v/${v.id}`)),
      h('td', {}, date(v.created_at)),
      h('td', {}, v.author ? v.author.name : ''),
      h('td', {}, v.message, ' ', changeBadges(v.changes))));
    id = v.parents && v.parents[0];
  }
  more.replaceChildren();
  if (id) more.append(h('button', { onclick: () => historyRows(tbody, id, more) }, 'Older versions'));
}

// The ways to use a version: stock DuckDB, fdl, Python.
function useBlocks(id, dataDir, branch, firstTable) {
  const attach = attachSql(id, 'lake', dataDir);
  const table = firstTable ? `lake.${ident(firstTable.schema || 'main')}.${ident(firstTable.name)}` : null;
  const py = ['import duckdb', '', 'con = duckdb.connect()', 'con.execute("""', attach, '""")',
    table ? `con.sql('${`SELECT * FROM ${table} LIMIT 10`.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}').show()` : "con.sql('SHOW ALL TABLES').show()"].join('\n');
  return [
    h('h3', {}, 'DuckDB'), snippet(attach + (table ? `\nSELECT * FROM ${table} LIMIT 10;` : ''), 'use-duckdb'),
    h('h3', {}, 'fdl (follows the branch as it moves)'),
    snippet(`fdl attach ${base.href.replace(/\/$/, '')}@${branch} | duckdb`, 'use-fdl'),
    h('h3', {}, 'Python'), snippet(py, 'use-python'),
  ];
}

// A citation made from dataset.json's own fields, the version and the URL.
function citations(ds, v, branch) {
  const url = base.href;
  const title = ds.title || ds.name || 'Untitled dataset';
  const people = (ds.contributors || []).map((c) => c.title).filter(Boolean);
  const year = (v.created_at || '').slice(0, 4);
  const day = (v.created_at || '').slice(0, 10);
  const bib = (x) => String(x).replace(/[{}\\]/g, (c) => `\\${c}`);
  const key = `${(ds.name || 'dataset').replace(/[^A-Za-z0-9]+/g, '_')}_${v.seq}`;
  const bibtex = [`@misc{${key},`, `  title        = {${bib(title)}},`,
    people.length ? `  author       = {${people.map(bib).join(' and ')}},` : null,
    `  year         = {${year}},`, `  version      = {${v.id}},`, `  howpublished = {\\url{${bib(url)}}},`,
    `  note         = {Version ${v.seq} of branch ${bib(branch)}, published with fdl},`, '}']
    .filter((x) => x !== null).join('\n');
  const q = (x) => JSON.stringify(String(x)); // a YAML double-quoted string
  const licences = (ds.licenses || []).map((l) => (typeof l === 'string' ? l : l.spdx || l.id || l.name)).filter(Boolean);
  const cff = ['cff-version: 1.2.0', 'message: "If you use this dataset, please cite it as below."', 'type: dataset',
    `title: ${q(title)}`, `version: ${q(v.id)}`, `date-released: ${q(day)}`, `url: ${q(url)}`,
    ['authors:', ...(people.length ? people : ['Unknown']).map((p) => `  - name: ${q(p)}`)].join('\n'),
    licences.length === 1 ? `license: ${q(licences[0])}` : null,
    (ds.keywords || []).length ? ['keywords:', ...ds.keywords.map((k) => `  - ${q(k)}`)].join('\n') : null]
    .filter((x) => x !== null).join('\n');
  return [h('h3', {}, 'BibTeX'), snippet(bibtex, 'cite-bibtex'), h('h3', {}, 'CITATION.cff'), snippet(cff, 'cite-cff')];
}

// Rows per table across the history: each version's dataset.json (rows as
// the catalog records them), the newest HISTORY_PAGE versions of the branch,
// drawn as one small line per table (the largest eight).
async function rowsChart(tip, out) {
  out.replaceChildren(h('p', { class: 'muted' }, 'Reading the versions…'));
  const points = []; // [{seq, rows: {table: n}}], oldest first
  let id = tip;
  for (let n = 0; id && n < HISTORY_PAGE; n++) {
    const v = await indexedVersion(id);
    const ds = v.dataset ? await get(`versions/${v.id}/${v.dataset.path}`).catch(() => null) : null;
    if (ds) {
      points.unshift({ seq: v.seq, rows: Object.fromEntries((ds.tables || []).filter((t) => t.kind !== 'view' && t.rows !== undefined)
        .map((t) => [qualified(t), t.rows])) });
    }
    id = v.parents && v.parents[0];
  }
  const last = points.length ? points[points.length - 1].rows : {};
  const tables = Object.keys(last).sort((a, b) => last[b] - last[a]).slice(0, 8);
  const W = 600, H = 160, P = 30;
  const seqs = points.map((p) => p.seq);
  const max = Math.max(1, ...points.flatMap((p) => tables.map((t) => p.rows[t] || 0)));
  const x = (s) => P + (seqs.length > 1 ? (s - seqs[0]) / (seqs[seqs.length - 1] - seqs[0]) : 0.5) * (W - 2 * P);
  const y = (r) => H - P + 0 - (r / max) * (H - 2 * P);
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'Rows per table across the versions');
  const colours = ['#1f6feb', '#b42318', '#1a7f37', '#9a6700', '#8250df', '#cf222e', '#0a3069', '#57606a'];
  tables.forEach((t, k) => {
    const line = document.createElementNS(NS, 'polyline');
    line.setAttribute('points', points.filter((p) => p.rows[t] !== undefined).map((p) => `${x(p.seq)},${y(p.rows[t])}`).join(' '));
    line.setAttribute('fill', 'none');
    line.setAttribute('stroke', colours[k]);
    line.setAttribute('stroke-width', '2');
    svg.append(line);
  });
  out.replaceChildren(svg, h('p', { class: 'legend' }, tables.map((t, k) => h('span', {},
    h('span', { class: 'swatch', style: `background:${colours[k]}` }), ` ${t} `))),
  h('p', { class: 'muted' }, `Versions ${seqs[0] ?? ''}–${seqs[seqs.length - 1] ?? ''}; up to ${max} rows.`));
  out.dataset.series = JSON.stringify(points);
}

// The landing card's own file (previews/HEAD.json, docs/format.md "The
// landing card (fdl)"): HEAD's tip with its files and preview in one
// answer, index.html's. Derived, so never the truth: used only for the
// branch and the tip the refs name (the caller reads the ref itself),
// else null.
let cardRead = null;
async function cardOf(branch, tip) {
  cardRead ||= get('previews/HEAD.json').catch(() => null);
  const c = await cardRead;
  return c && c.fdl_card === 1 && c.head === branch && c.tip === tip && c.version && c.version.id === tip ? c : null;
}

// The tip's files, asked for at once: version.json, the preview, and
// dataset.json and files.json by the names fdl gives them (used when
// version.json names them so, else read by the names it gives); or taken
// from the landing card `c` (what it lacks, a large files.json, read).
function tipFiles(tip, c) {
  if (c) {
    if (!versions.has(tip)) versions.set(tip, Promise.resolve(c.version));
    const filesJson = !c.version.files ? null : c.files !== undefined ? c.files
      : get(`versions/${tip}/${c.version.files.path}`).catch(() => null);
    return Promise.all([filesJson, previewFrom(c.preview, tip)]).then(([f, previews]) => ({
      tipVersion: c.version, ds: c.version.dataset ? c.dataset || {} : {}, filesJson: f, previews,
      dataDir: typeof c.data_dir === 'string' ? c.data_dir : null }));
  }
  const guess = (name) => get(`versions/${tip}/${name}`).catch(() => undefined);
  const named = (ref, guessed, name, none) => (!ref ? none : ref.path === name ? guessed.then((x) => (x === undefined ? none : x))
    : get(`versions/${tip}/${ref.path}`).catch(() => none));
  const guessed = { ds: guess('dataset.json'), files: guess('files.json') };
  return Promise.all([version(tip), previewOf(tip)]).then(async ([v, previews]) => {
    const [ds, filesJson] = await Promise.all([named(v.dataset, guessed.ds, 'dataset.json', {}),
      named(v.files, guessed.files, 'files.json', null)]);
    return { tipVersion: v, ds, filesJson, previews };
  });
}

async function showOverview(branchName) {
  const cfgRead = repoConfig();
  const r = await refs(!branchName);
  const branch = branchName || r.head;
  let tip = r.branches[branch];
  // the tip the refs named, its files asked for beside the ref itself
  // (or taken from the landing card when it shows that tip)
  const filesOf = (t) => (t ? cardOf(branch, t).then((c) => tipFiles(t, c)) : null);
  let read = filesOf(tip);
  let indexed = tip ? useIndex(branch) : null;
  const truth = await r.tipOf(branch);
  if (truth !== tip) {
    tip = truth;
    read = filesOf(tip);
    indexed = indexed || (tip ? useIndex(branch) : null);
  }
  where.textContent = '';
  const got = await read;
  // the card says the data folder (fdl.json's data_dir); without it, fdl.json
  const cfg = got && got.dataDir ? { data_dir: got.dataDir } : await cfgRead;
  const dataDir = cfg.data_dir || 'data';
  const { tipVersion = null, ds = {}, filesJson = null, previews = {} } = got || {};
  document.title = ds.title || ds.name || 'fdl repository';
  // the branches' rows come after the card: their tips' version.json files
  // are read together once the card is drawn
  const branches = h('tbody');
  const branchRows = async () => {
    const list = Object.entries(r.branches).sort();
    const vs = await Promise.all(list.map(([, id]) => version(id).catch(() => null)));
    list.forEach(([name, id], i) => branches.append(h('tr', {},
      h('td', {}, h('a', { href: `#/b/${encodeURIComponent(name)}` }, name), name === r.head ? ' (HEAD)' : ''),
      h('td', { class: 'num' }, vs[i] ? vs[i].seq : ''), h('td', {}, idChip(id, `#/v/${id}`)),
      h('td', {}, vs[i] ? date(vs[i].created_at) : ''), h('td', {}, vs[i] ? vs[i].message : ''))));
  };
  // the tags once the ref list has named them (fdl serve's list at once)
  const tagsBox = h('div');
  const tagRows = () => {
    const tags = Object.entries(r.tags || {});
    if (tags.length) tagsBox.replaceChildren(h('h2', {}, 'Tags'), h('ul', {}, tags.map(([t, id]) => h('li', {}, t, ' → ', idChip(id, `#/v/${id}`)))));
  };
  const history = h('tbody', { id: 'history' });
  const more = h('div');
  const gone = tipVersion && tipVersion.files && !filesJson ? await offline(tipVersion) : null;
  const tables = readability(ds, filesJson, !gone);
  const readable = tables.filter((x) => !x.why).map((x) => x.t);
  const blocked = tables.filter((x) => x.why).map((x) => ({ key: qualified(x.t), name: x.t.name, why: x.why }));
  const views = gone ? [] : (ds.tables || []).filter((t) => t.kind === 'view');
  const open = gone ? null : () => connectionFor(tip, readable, filesJson, dataDir, views);
  show(
    h('h1', { id: 'title' }, ds.title || ds.name || 'Untitled dataset'),
    tipVersion ? h('p', { class: 'muted', id: 'card-version' },
      `Latest on ${branch}: version ${tipVersion.seq}, ${date(tipVersion.created_at)} `, idChip(tip, `#/v/${tip}`)) : null,
    gone ? await r.later.then(() => offlineNotice(tipVersion, gone, r, 'tip-offline')) : null,
    ds.description ? renderMarkdown(ds.description, 'description') : null,
    describe(ds),
    tipVersion ? [
      h('h2', {}, 'Tables'),
      tables.length ? h('div', { id: 'card-tables' }, tables.map((x) => tableSection(x.t, filesJson, dataDir, gone ? null : x.why, open, gone ? null : previews[qualified(x.t)])))
        : h('p', { class: 'muted' }, 'No tables.'),
      views.length ? h('p', { class: 'muted' }, `Views: ${views.map((w) => `${w.schema || 'main'}.${w.name}`).join(', ')}`) : null,
      gone ? null : [h('h2', {}, 'Query in the browser'), queryBox(tip, readable, blocked, views, filesJson, dataDir)],
      h('h2', {}, 'Rows over the history'), (() => {
        const out = h('div', { id: 'rows-chart' });
        return [h('p', {}, h('button', { id: 'chart-button', onclick: (ev) => { ev.target.remove(); rowsChart(tip, out); } },
          `Draw the rows per table of the last ${HISTORY_PAGE} versions`)), out];
      })(),
      gone ? null : [h('h2', {}, 'Use this dataset'), useBlocks(tip, dataDir, branch, readable[0] || (tables[0] && tables[0].t)),
        h('h2', {}, 'Cite'), citations(ds, tipVersion, branch)]] : null,
    h('h2', {}, 'Branches'),
    h('div', { class: 'scroll' }, h('table', { id: 'branches' }, h('thead', {}, h('tr', {}, h('th', {}, 'Branch'),
      h('th', { class: 'num' }, 'Seq'), h('th', {}, 'Tip'), h('th', {}, 'Date'), h('th', {}, 'Message'))), branches)),
    tagsBox,
    h('h2', {}, `History of ${branch}`),
    tip ? h('div', { class: 'scroll' }, h('table', {}, h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'Seq'),
      h('th', {}, 'Version'), h('th', {}, 'Date'), h('th', {}, 'Author'), h('th', {}, 'Message and changes'))), history))
      : h('p', { class: 'muted' }, `Branch ${branch} has no version yet.`),
    more);
  await r.later;
  tagRows();
  await branchRows();
  if (tip) {
    await indexed;
    await historyRows(history, tip, more);
  }
}

// ---- one version ----------------------------------------------------------------

const qualified = (t) => `${t.schema || 'main'}.${t.name}`;
const sqlName = (t) => `${ident(t.schema || 'main')}.${ident(t.name)}`;

// A value's text in a cell: NULL shown as NULL (set apart), everything
// else exactly as valueText spells it.
// A value with no white space in it (a number, a date, a UUID) is never
// broken across lines: a phone scrolls the table instead.
const cellOf = (v) => (v === null ? h('td', { class: 'null' }, 'NULL') : h('td', /\s/.test(v) ? {} : { class: 'word' }, v));

// Per-column statistics, computed over every row of the table as the SQL box
// reads it (every file, columns mapped by field id, defaults and deletes
// applied): nulls as count(*) - count(col), min and max, each value's text
// by the one rule. Nested columns get their nulls only.
async function columnStats(conn, t, names, nestedCols) {
  const parts = ['count(*) AS fdl_rows'];
  names.forEach((n, i) => {
    parts.push(`count(*) - count(${ident(n)}) AS n${i}`);
    if (!nestedCols.has(n)) parts.push(`min(${ident(n)}) AS lo${i}`, `max(${ident(n)}) AS hi${i}`);
  });
  const res = await valueText(conn, `SELECT ${parts.join(', ')} FROM ${sqlName(t)}`);
  const row = Object.fromEntries(res.names.map((n, i) => [n, res.rows[0][i]]));
  return names.map((n, i) => ({ name: n, rows: Number(row.fdl_rows), nulls: row[`n${i}`],
    lo: row[`lo${i}`], hi: row[`hi${i}`], nested: nestedCols.has(n) }));
}

function statsTable(stats) {
  const bound = (s, v) => (s.nested ? h('td', { class: 'muted', title: 'not computed for nested values' }, '—') : cellOf(v));
  return h('div', { class: 'scroll' }, h('table', { class: 'stats' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Column'), h('th', {}, 'Nulls'), h('th', {}, 'Min'), h('th', {}, 'Max'))),
    h('tbody', {}, stats.map((s) => {
      const share = s.rows ? Number(s.nulls) / s.rows : 0;
      return h('tr', { 'data-col': s.name }, h('td', {}, h('code', {}, s.name)),
        h('td', { class: 'num' }, s.nulls, ' ',
          h('span', { class: 'bar', title: `${(share * 100).toFixed(1)}% null` }, h('span', { style: `width:${Math.round(share * 100)}%` }))),
        bound(s, s.lo), bound(s, s.hi));
    }))));
}

// A version's preview (docs/format.md "Previews (fdl)"): each table's first
// rows and column statistics, computed when the version was published, read
// as two small JSON files per table and drawn with no DuckDB at all.
// {"schema.table": preview}; {} when the version has none (an older one, or
// a host that lost it): the page then reads the rows itself, on request.
const PREVIEW_KEY = /^previews\/tables\/[0-9a-f]{64}\.json$/;
async function previewOf(id) {
  return previewFrom(await get(`previews/${id}.json`).catch(() => null), id);
}
async function previewFrom(doc, id) {
  try {
    if (!doc || doc.fdl_preview !== 1 || doc.version !== id || !Array.isArray(doc.tables)) return {};
    // each table's file, copied into the version's file ("file") by fdl
    // since issue 58's second pass; a preview without the copy names it
    const entries = doc.tables.filter((t) => PREVIEW_KEY.test(t.key));
    const files = await Promise.all(entries.map((t) => (t.file && typeof t.file === 'object' ? t.file
      : get(t.key).catch(() => null))));
    const out = {};
    entries.forEach((t, i) => {
      const f = files[i];
      if (f && f.name === t.name && f.schema === t.schema && Array.isArray(f.rows) && Array.isArray(f.columns)) {
        out[`${t.schema}.${t.name}`] = f;
      }
    });
    return out;
  } catch (e) {
    return {};
  }
}

// One column's distribution from its preview: a histogram's bars, the most
// frequent values, the lengths of text; every value drawn as text.
function distribution(s) {
  const parts = [];
  if (Array.isArray(s.histogram) && s.histogram.length) {
    const most = Math.max(...s.histogram.map((b) => Number(b.count))) || 1;
    parts.push(h('span', { class: 'hist' }, s.histogram.map((b) => h('span', {
      class: 'bin', title: `up to ${b.upto}: ${b.count}`, 'data-upto': b.upto, 'data-count': String(b.count),
      style: `height:${Math.max(1, Math.round((Number(b.count) / most) * 100))}%` }))));
  }
  if (Array.isArray(s.top) && s.top.length) {
    parts.push(h('ol', { class: 'top' }, s.top.map((v) => h('li', { 'data-count': String(v.count) },
      h('span', { class: 'value' }, v.value), ` ${v.count}`))));
  }
  if (s.lengths) {
    parts.push(h('span', { class: 'lengths muted', 'data-min': String(s.lengths.min), 'data-max': String(s.lengths.max),
      'data-avg': String(s.lengths.avg) }, `length ${s.lengths.min}–${s.lengths.max}, mean ${s.lengths.avg}`));
  }
  return parts;
}

// The statistics of a preview: the browser's four columns first (Column,
// Nulls, Min, Max), then the distinct values and the distribution.
function previewStatsTable(pv) {
  const rows = Number(pv.row_count);
  return h('div', { class: 'scroll' }, h('table', { class: 'stats' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Column'), h('th', {}, 'Nulls'), h('th', {}, 'Min'), h('th', {}, 'Max'),
      h('th', {}, 'Distinct'), h('th', {}, 'Distribution'))),
    h('tbody', {}, pv.stats.map((s) => {
      const share = rows ? Number(s.nulls) / rows : 0;
      const nested = s.distinct === null && s.min === null && s.max === null && /[[(]|^STRUCT|^MAP/.test(s.type || '');
      const bound = (v) => (nested ? h('td', { class: 'muted', title: 'not computed for nested values' }, '—') : cellOf(v));
      return h('tr', { 'data-col': s.name }, h('td', {}, h('code', {}, s.name)),
        h('td', { class: 'num' }, String(s.nulls), ' ',
          h('span', { class: 'bar', title: `${(share * 100).toFixed(1)}% null` }, h('span', { style: `width:${Math.round(share * 100)}%` }))),
        bound(s.min), bound(s.max),
        h('td', { class: 'num distinct' }, s.distinct === null || s.distinct === undefined ? '—' : String(s.distinct)),
        h('td', { class: 'dist' }, distribution(s)));
    }))));
}

// The first rows of a table, a page at a time, with the column types, and
// its column statistics: from the version's preview at once when it has one
// (`pv`; DuckDB-Wasm loads only for the next page), else on request.
function viewer(t, open, pv) {
  const PAGE = 20;
  const box = h('div', { class: 'viewer' });
  const statsBox = h('div', { class: 'stats-box' });
  const status = h('span', { class: 'muted' });
  const types = Object.fromEntries((t.fields || []).map((f) => [f.name, f.type]));
  let offset = 0;
  let load = null;
  const paint = (names, page, more, source) => {
    box.replaceChildren(h('div', { class: 'scroll' }, h('table', { class: 'rows' },
      h('thead', {}, h('tr', {}, names.map((n) => h('th', {}, n, types[n] ? h('span', { class: 'type' }, types[n]) : null)))),
      h('tbody', {}, page.map((r) => h('tr', {}, r.map(cellOf)))))),
    h('p', {}, h('button', { disabled: offset === 0, onclick: () => { offset = Math.max(0, offset - PAGE); load(); } }, 'Previous'), ' ',
      h('button', { class: 'next-page', disabled: !more || !open, onclick: () => { offset += PAGE; load(); } }, 'Next'), ' ',
      h('span', { class: 'muted' }, page.length ? `rows ${offset + 1}–${offset + page.length}` : 'no rows',
        source === 'preview' && pv.row_count !== undefined ? ` of ${pv.row_count}` : '')));
    box.dataset.rows = String(page.length);
    box.dataset.source = source;
  };
  load = async () => {
    if (offset === 0 && pv) { paint(pv.columns.map((c) => c.name), pv.rows.slice(0, PAGE), Number(pv.row_count) > PAGE, 'preview'); return; }
    status.textContent = 'Reading…';
    try {
      const conn = await open();
      const { names, rows } = await valueText(conn, `SELECT * FROM ${sqlName(t)} LIMIT ${PAGE + 1} OFFSET ${offset}`);
      paint(names, rows.slice(0, PAGE), rows.length > PAGE, 'browser');
      status.textContent = '';
    } catch (e) {
      status.textContent = e.message;
      status.className = 'error';
    }
  };
  const stats = async (ev) => {
    ev.target.remove();
    statsBox.replaceChildren(h('p', { class: 'muted' }, 'Reading every row…'));
    try {
      const conn = await open();
      const probe = await conn.query(`SELECT * FROM ${sqlName(t)} LIMIT 0`);
      const names = probe.schema.fields.map((f) => f.name);
      const nestedCols = new Set(probe.schema.fields.filter((f) => f.type.children && f.type.children.length).map((f) => f.name));
      const rows = await columnStats(conn, t, names, nestedCols);
      statsBox.replaceChildren(h('p', { class: 'muted' }, `Column statistics over all ${rows.length ? rows[0].rows : 0} rows, read in the browser:`),
        statsTable(rows));
      statsBox.dataset.ready = '1';
    } catch (e) {
      statsBox.replaceChildren(h('p', { class: 'error' }, `Cannot compute the statistics: ${e.message}`));
      statsBox.dataset.ready = 'error';
    }
  };
  if (pv) {
    load();
    if (pv.stats) {
      statsBox.replaceChildren(h('p', { class: 'muted' }, `Column statistics over all ${pv.row_count} rows, computed when the version was published:`),
        previewStatsTable(pv));
      statsBox.dataset.ready = '1';
      statsBox.dataset.source = 'preview';
    }
    return h('div', {}, !pv.stats && open ? [h('p', { class: 'muted' }, 'Statistics were not computed when this version was published (a large table). '),
      h('button', { class: 'show-stats', onclick: stats }, 'Column statistics'), ' '] : null, status, box, statsBox);
  }
  return h('div', {}, h('button', { class: 'show-rows', onclick: (ev) => { ev.target.remove(); load(); } }, 'Show the first rows'), ' ',
    h('button', { class: 'show-stats', onclick: stats }, 'Column statistics'), ' ', status, box, statsBox);
}

// A table's card: name, title, description, rows, size, columns; its files,
// and its first rows when the browser can read it (`open` gives the
// connection; null: not readable, `why` says why).
function tableSection(t, filesJson, dataDir, why, open, pv) {
  const key = qualified(t);
  const entry = filesJson && filesJson.tables ? filesJson.tables[key] : null;
  const size = entry ? entry.files.reduce((s, f) => s + (f.bytes || 0) + (f.deletes ? f.deletes.bytes || 0 : 0), 0) : null;
  const facts = [t.rows !== undefined ? `${t.rows} rows` : null,
    size !== null ? `${bytes(size)} in ${entry.files.length} file${entry.files.length === 1 ? '' : 's'}` : null,
    `${(t.fields || []).length} column${(t.fields || []).length === 1 ? '' : 's'}`,
    t.primary_key && t.primary_key.length ? `primary key (${t.primary_key.join(', ')})` : null].filter(Boolean).join(' · ');
  return h('section', { class: 'table', 'data-table': key },
    h('h3', {}, key, t.title ? ` — ${t.title}` : ''),
    t.description ? renderMarkdown(t.description) : null,
    h('p', { class: 'muted facts' }, facts),
    why ? h('p', { class: 'notice not-queryable' }, `Not queryable in the browser: ${why}.${open ? ' DuckDB with the ATTACH on this page reads it.' : ''}`) : null,
    h('div', { class: 'scroll' }, h('table', { class: 'columns' }, h('thead', {}, h('tr', {}, h('th', {}, 'Column'), h('th', {}, 'Type'), h('th', {}, 'Null'), h('th', {}, 'Description'))),
      h('tbody', {}, (t.fields || []).map((f) => h('tr', {}, h('td', {}, h('code', {}, f.name), f.title ? ` (${f.title})` : ''),
        h('td', {}, f.type || ''), h('td', {}, f.nullable === false ? 'not null' : f.nullable ? 'yes' : ''), h('td', {}, f.description || '')))))),
    pv || (open && !why) ? viewer(t, why ? null : open, pv) : null,
    entry && entry.files.length ? h('details', {}, h('summary', {}, 'Files'),
      h('div', { class: 'scroll' }, h('table', {}, h('tbody', {}, entry.files.map((f) => h('tr', {},
        h('td', { class: 'path' }, fileLink(fileUrl(base, dataDir, f.path), f.path)), h('td', { class: 'num' }, `${f.rows} rows`),
        h('td', { class: 'num' }, bytes(f.bytes)), h('td', {}, f.deletes ? `deletes: ${f.deletes.rows} rows` : ''))))))) : null);
}

function attachSql(id, alias, dataDir) {
  const root = base.href;
  // a private host: the secret fdl attach prints, the token read where DuckDB runs
  const secret = token ? [`CREATE OR REPLACE SECRET fdl_http (TYPE http, BEARER_TOKEN getenv('FDL_TOKEN'), SCOPE ${sqlString(root)});`] : [];
  return ['INSTALL httpfs;', 'LOAD httpfs;', ...secret, 'LOAD ducklake;',
    `ATTACH ${sqlString(`ducklake:${root}versions/${id}/ducklake.duckdb`)} AS ${alias} ` +
    `(READ_ONLY, DATA_PATH ${sqlString(`${root}${dataDir}/`)}, OVERRIDE_DATA_PATH true);`].join('\n');
}

let dbPromise = null;
function duck() {
  if (!dbPromise) {
    dbPromise = (async () => {
      const dist = new URL('_fdl/duckdb/', base).href;
      const duckdb = await wasm();
      const bundle = await duckdb.selectBundle({
        mvp: { mainModule: dist + 'duckdb-mvp.wasm', mainWorker: dist + 'duckdb-browser-mvp.worker.js' },
        eh: { mainModule: dist + 'duckdb-eh.wasm', mainWorker: dist + 'duckdb-browser-eh.worker.js' },
      });
      const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), duckWorker(bundle.mainWorker));
      await db.instantiate(bundle.mainModule, bundle.pthreadWorker);
      return db;
    })();
  }
  return dbPromise;
}

// A version's tables as the browser reads them: [{t, why}] (why null: readable).
function readability(ds, filesJson, live) {
  return (ds.tables || []).filter((t) => t.kind !== 'view').map((t) => ({ t,
    why: live ? whyNotReadable(t, filesJson, qualified(t)) : 'this version has no catalog any more' }));
}

// Views named <prefix><schema>.<table> over the tables of one version; a
// table whose reading fails (a files.json without columns, say) is named in
// `failed` with the reason.
async function createViews(conn, prefix, tables, filesJson, dataDir, failed) {
  const names = [];
  for (const t of tables) {
    const schema = prefix + (t.schema || 'main');
    const name = `${ident(schema)}.${ident(t.name)}`;
    try {
      if (schema !== 'main') await conn.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
      await conn.query(`CREATE OR REPLACE VIEW ${name} AS ${await tableSql(t, filesJson.tables[qualified(t)], base, dataDir, conn)}`);
      names.push(name);
    } catch (e) {
      failed.push({ key: qualified(t), name: t.name, why: e.message });
    }
  }
  return names;
}

// One connection with a view per queryable table of the version shown, and
// the version's own views over them: their SQL as DuckLake stores it, its
// catalog placeholder pointing at the browser's database. A view whose SQL
// does not run here is left out and named (shown.failed).
let shown = { id: null, conn: null, views: [], failed: [] };
let shownLock = Promise.resolve();
function connectionFor(id, tables, filesJson, dataDir, views = []) {
  const next = shownLock.then(async () => {
    if (shown.id === id) return shown.conn;
    const db = await duck();
    const conn = shown.conn || await db.connect();
    for (const v of shown.views.slice().reverse()) await conn.query(`DROP VIEW IF EXISTS ${v}`);
    shown = { id, conn, views: [], failed: [] };
    shown.views = await createViews(conn, '', tables, filesJson, dataDir, shown.failed);
    const cat = (await conn.query('SELECT current_database() AS c')).toArray()[0].toJSON().c;
    for (const w of views) {
      try {
        if (!w.sql) throw new Error('dataset.json records no SQL for it');
        if ((w.schema || 'main') !== 'main') await conn.query(`CREATE SCHEMA IF NOT EXISTS ${ident(w.schema)}`);
        await conn.query(`CREATE OR REPLACE VIEW ${sqlName(w)} AS ${w.sql.split('{DUCKLAKE_CATALOG}').join(ident(cat))}`);
        shown.views.push(sqlName(w));
      } catch (e) {
        shown.failed.push({ key: qualified(w), name: w.name, why: `it is a view whose SQL does not run over the tables the browser reads (${e.message})` });
      }
    }
    return conn;
  });
  shownLock = next.catch(() => {});
  return next;
}

// "Compare with the parent": per table, the rows added and removed (EXCEPT
// ALL over the columns both versions have, as fdl diff --rows counts them),
// each version's table read as the SQL box reads it (columns by field id,
// deletes applied); a table the browser cannot read in one of them says why.
async function compareWithParent(v, ds, filesJson, dataDir, out) {
  out.replaceChildren(h('p', { class: 'muted' }, 'Comparing…'));
  try {
    const p = await version(v.parents[0]);
    const [pds, pfiles] = await Promise.all([
      p.dataset ? get(`versions/${p.id}/${p.dataset.path}`).catch(() => ({})) : {},
      p.files ? get(`versions/${p.id}/${p.files.path}`).catch(() => null) : null]);
    const mine = (ds.tables || []).filter((t) => t.kind !== 'view');
    const theirs = new Map((pds.tables || []).filter((t) => t.kind !== 'view').map((t) => [qualified(t), t]));
    const conn = await (await duck()).connect();
    const rows = [];
    try {
      for (const t of mine) {
        const key = qualified(t);
        const old = theirs.get(key);
        theirs.delete(key);
        if (!old) { rows.push({ table: key, note: 'new table', after: t.rows }); continue; }
        const why = whyNotReadable(t, filesJson, key) || whyNotReadable(old, pfiles, key);
        if (why) { rows.push({ table: key, before: old.rows, after: t.rows, note: `not readable in the browser: ${why}` }); continue; }
        try {
          const common = (t.fields || []).map((f) => f.name).filter((n) => (old.fields || []).some((f) => f.name === n));
          if (!common.length) throw new Error('no column in common between the two versions');
          const cols = common.map(ident).join(', ');
          await conn.query(`CREATE OR REPLACE TEMP VIEW fdl_before AS ${await tableSql(old, pfiles.tables[key], base, dataDir, conn)}`);
          await conn.query(`CREATE OR REPLACE TEMP VIEW fdl_after AS ${await tableSql(t, filesJson.tables[key], base, dataDir, conn)}`);
          const count = async (x, y) => Number((await conn.query(
            `SELECT count(*) AS n FROM (SELECT ${cols} FROM ${x} EXCEPT ALL SELECT ${cols} FROM ${y})`)).toArray()[0].n);
          rows.push({ table: key, before: old.rows, after: t.rows, added: await count('fdl_after', 'fdl_before'), removed: await count('fdl_before', 'fdl_after') });
        } catch (e) {
          rows.push({ table: key, before: old.rows, after: t.rows, note: `cannot be compared: ${e.message}` });
        }
      }
    } finally { await conn.close(); }
    for (const [key, old] of theirs) rows.push({ table: key, before: old.rows, note: 'dropped' });
    out.replaceChildren(h('div', { class: 'scroll' }, h('table', { id: 'compare' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Table'), h('th', { class: 'num' }, 'Rows before'), h('th', { class: 'num' }, 'Rows now'),
        h('th', { class: 'num' }, 'Added'), h('th', { class: 'num' }, 'Removed'), h('th', {}, ''))),
      h('tbody', {}, rows.map((r) => h('tr', { 'data-table': r.table }, h('td', {}, r.table), h('td', { class: 'num' }, r.before ?? ''),
        h('td', { class: 'num' }, r.after ?? ''), h('td', { class: 'num added' }, r.added ?? ''), h('td', { class: 'num removed' }, r.removed ?? ''),
        h('td', { class: 'muted' }, r.note || '')))))),
    h('p', { class: 'muted' }, `Version ${p.seq} → ${v.seq}; rows compared over the columns both have, as fdl diff --rows does.`));
    out.dataset.done = '1';
  } catch (e) {
    out.replaceChildren(h('p', { class: 'error' }, `Cannot compare: ${e.message}`));
    out.dataset.done = 'error';
  }
}

// DuckDB's "Table with name X does not exist" for a table the page knows
// but cannot read as plain Parquet: say why, and what reads it.
function notQueryableMessage(message, blocked) {
  const m = /Table with name "?([^"\s!]+)"? does not exist/i.exec(message || '');
  if (!m) return null;
  const asked = m[1].toLowerCase();
  const hit = blocked.find((b) => b.name.toLowerCase() === asked || b.key.toLowerCase() === asked);
  return hit ? `${hit.key} cannot be queried in the browser: ${hit.why}. DuckDB with the ATTACH above reads it.` : null;
}

// The SQL box of a live version: a query's rows as a table (the first 1000)
// and as CSV, every value by the one rule (text.js).
function queryBox(id, readable, blocked, views, filesJson, dataDir) {
  const first = readable[0];
  const sqlBox = h('textarea', { id: 'sql', spellcheck: 'false', 'aria-label': 'SQL' },
    first ? `SELECT count(*) FROM ${first.schema && first.schema !== 'main' ? ident(first.schema) + '.' : ''}${ident(first.name)}` : '');
  const out = h('div', { id: 'results' });
  const status = h('p', { id: 'query-status', class: 'muted' });
  const run = async () => {
    status.textContent = 'Starting DuckDB…';
    status.className = 'muted';
    delete status.dataset.rows;
    out.replaceChildren();
    const t0 = performance.now();
    try {
      const conn = await connectionFor(id, readable, filesJson, dataDir, views);
      status.textContent = 'Running…';
      const { names, rows } = await valueText(conn, sqlBox.value);
      const shownRows = rows.slice(0, 1000);
      out.append(h('table', { id: 'result-table' },
        h('thead', {}, h('tr', {}, names.map((n) => h('th', {}, n)))),
        h('tbody', {}, shownRows.map((r) => h('tr', {}, r.map(cellOf))))));
      const csv = (await wasm()).csvText(names, rows);
      const blob = new Blob([csv], { type: 'text/csv' });
      status.replaceChildren(`${rows.length} row${rows.length === 1 ? '' : 's'} in ${Math.round(performance.now() - t0)} ms`,
        rows.length > shownRows.length ? ` (first ${shownRows.length} shown)` : '', ' · ',
        h('a', { href: URL.createObjectURL(blob), download: `fdl-${id.slice(0, 8)}.csv`, id: 'csv' }, 'Download CSV'));
      status.dataset.rows = String(rows.length);
    } catch (e) {
      status.className = 'error';
      status.textContent = notQueryableMessage(e.message, blocked.concat(shown.failed || [])) || e.message;
    }
  };
  sqlBox.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) run(); });
  if (!readable.length) return h('p', { class: 'muted' }, 'No table of this version can be read as plain Parquet; use DuckDB with the ATTACH above.');
  return [h('p', { class: 'muted' }, `DuckDB-Wasm reads the Parquet files listed in files.json with HTTP range requests. Tables: ${readable.map(qualified).join(', ')}${views.length ? `; views: ${views.map(qualified).join(', ')}` : ''}. Ctrl+Enter runs.`),
    sqlBox, h('p', {}, h('button', { class: 'primary', id: 'run', onclick: run }, 'Run')), status, out];
}

// Whether a version can still be read: null, or what expired.json says
// ({text, reason, at}). expired.json is asked for only when a file the
// version lists is gone, as fdl does.
async function offline(v) {
  if (v.files) {
    const ok = await request(new URL(`versions/${v.id}/${v.files.path}`, base).href, { method: 'HEAD', cache: 'no-cache' }).then((r) => r.ok).catch(() => false);
    if (ok) return null;
  }
  try {
    const e = await get(`versions/${v.id}/expired.json`);
    const what = e.reason === 'withdrawn' ? 'Withdrawn' : 'Expired (retention)';
    return { text: `${what} on ${date(e.expired_at)}${e.message ? `: ${e.message}` : ''}`, reason: e.reason, at: e.expired_at };
  } catch {
    return v.files ? { text: 'Its files are gone (no expired.json says why)' } : null;
  }
}

// The newest version of a branch that can still be read, following first
// parents from its tip (at most a page of the history).
async function newestLive(tip) {
  let id = tip;
  for (let n = 0; id && n < HISTORY_PAGE; n++) {
    const v = await indexedVersion(id);
    if (!(await offline(v))) return v;
    id = v.parents && v.parents[0];
  }
  return null;
}

// The branch whose first-parent history holds version id (HEAD's first),
// looked for in the newest page of each history.
async function branchHolding(r, id) {
  const names = Object.keys(r.branches).sort((a, b) => (a === r.head ? -1 : b === r.head ? 1 : a.localeCompare(b)));
  for (const name of names) {
    let at = r.branches[name];
    for (let n = 0; at && n < HISTORY_PAGE; n++) {
      if (at === id) return name;
      const v = await indexedVersion(at);
      at = v.parents && v.parents[0];
    }
  }
  return null;
}

// What a version that cannot be read shows instead of ways to read it: the
// reason and date, and the newest live version of its branch.
async function offlineNotice(v, note, r, id = 'offline-notice') {
  const branch = await branchHolding(r, v.id);
  const live = branch ? await newestLive(r.branches[branch]) : null;
  return h('div', { class: 'notice', id },
    h('p', {}, `This version cannot be read any more. ${note.text}.`),
    h('p', {}, live ? ['The newest version of ', branch, ' that can be read is ', h('a', { href: `#/v/${live.id}`, id: 'newest-live' }, `version ${live.seq}`),
      ` (${date(live.created_at)}).`] : branch ? `No version of ${branch} in its newest ${HISTORY_PAGE} can be read.` : ''));
}

// On a live version's page, when its branch's tip cannot be read: why, and
// the newest version of the branch that can (this one, or a link), instead
// of an ATTACH and an `fdl attach URL@branch` that would fail.
async function tipOfflineNote(id, tip, branch, note) {
  const [t, live] = await Promise.all([version(tip), newestLive(tip)]);
  return h('p', { class: 'notice', id: 'latest-offline' },
    `The tip of ${branch}, version ${t.seq}, cannot be read any more. ${note.text}. `,
    !live ? `No version of ${branch} in its newest ${HISTORY_PAGE} can be read.`
      : live.id === id ? `For now, this version is the newest of ${branch} that can be read.`
        : ['The newest version of ', branch, ' that can be read is ', h('a', { href: `#/v/${live.id}` }, `version ${live.seq}`), ` (${date(live.created_at)}).`]);
}

async function showVersion(id) {
  const [v, cfg, r] = await Promise.all([version(id), repoConfig(), refs()]);
  const dataDir = cfg.data_dir || 'data';
  const listed = Object.entries(r.branches).find(([, tip]) => tip === id);
  const latestBranch = listed ? listed[0] : r.head;
  where.textContent = `/ version ${v.seq}`;
  const [latest, ds, filesJson, note, previews] = await Promise.all([r.tipOf(latestBranch),
    v.dataset ? get(`versions/${id}/${v.dataset.path}`).catch(() => ({})) : Promise.resolve({}),
    v.files ? get(`versions/${id}/${v.files.path}`).catch(() => null) : Promise.resolve(null),
    (async () => (v.files ? null : offline(v)))(),
    previewOf(id)]);
  const branchOf = latest === id ? [latestBranch, id] : null;
  const gone = note || (v.files && !filesJson ? await offline(v) : null);
  // the branch's tip offline: its ATTACH and `fdl attach URL@branch` would fail (exit 7)
  const tipGone = !gone && latest && latest !== id ? await version(latest).then(offline).catch(() => null) : null;
  const tables = readability(ds, filesJson, !gone);
  const readable = tables.filter((x) => !x.why).map((x) => x.t);
  const blocked = tables.filter((x) => x.why).map((x) => ({ key: qualified(x.t), name: x.t.name, why: x.why }));
  const views = (ds.tables || []).filter((t) => t.kind === 'view');
  const liveViews = gone ? [] : views;
  const open = gone ? null : () => connectionFor(id, readable, filesJson, dataDir, liveViews);
  const tableSections = tables.map((x) => tableSection(x.t, filesJson, dataDir, gone ? null : x.why, open, gone ? null : previews[qualified(x.t)]));
  // a version that changed only the description: the parent's data, a new dataset.json
  const parent = (v.parents || []).length ? await version(v.parents[0]).catch(() => null) : null;
  const descriptionOnly = parent && parent.ducklake && parent.ducklake.snapshot_id === v.ducklake.snapshot_id;
  show(
    h('h1', {}, `Version ${v.seq}`, h('span', { class: 'muted' }, ` ${v.id}`), ' ', copyButton(v.id)),
    gone ? await offlineNotice(v, gone, r) : null,
    h('p', {}, v.message),
    h('dl', { class: 'meta' },
      h('dt', {}, 'Author'), h('dd', {}, v.author ? `${v.author.name}${v.author.email ? ` <${v.author.email}>` : ''}` : ''),
      h('dt', {}, 'Date'), h('dd', {}, date(v.created_at)),
      h('dt', {}, 'Parents'), h('dd', {}, (v.parents || []).length ? v.parents.map((p) => [idChip(p, `#/v/${p}`), ' ']) : 'none (first version)'),
      h('dt', {}, 'Catalog'), h('dd', {}, gone ? 'removed' : `${v.catalog.path}, ${bytes(v.catalog.bytes)}, DuckLake ${v.ducklake.format}, snapshot ${v.ducklake.snapshot_id}`),
      branchOf ? [h('dt', {}, 'Tip of'), h('dd', {}, branchOf[0])] : null),
    gone ? null : [h('h2', {}, 'Open it in DuckDB'),
      h('h3', {}, 'This version'), snippet(attachSql(id, 'lake', dataDir), 'attach-version'),
      latest ? [h('h3', {}, `Latest on ${latestBranch}`, latest === id ? ': this version, for now' : ''),
        tipGone ? await tipOfflineNote(id, latest, latestBranch, tipGone) : [
          latest === id ? null : snippet(attachSql(latest, 'lake', dataDir), 'attach-latest'),
          h('p', { class: 'muted' }, 'An ATTACH names one version; to follow the branch as it moves, let fdl resolve it each time:'),
          snippet(`fdl attach ${base.href.replace(/\/$/, '')}@${latestBranch} | duckdb`, 'attach-fdl')]] : null],
    h('h2', {}, 'Changes from the parent'),
    (v.changes || []).length ? h('ul', {}, v.changes.map((c) => h('li', { class: c.breaking ? 'breaking' : '' },
      `${c.kind} ${c.table || ''}${c.column ? '.' + c.column : ''}`, c.breaking ? ' — breaking' : '')))
      : h('p', { class: 'muted', id: 'changes-note' }, descriptionOnly ? 'Description only: the same data as the parent (the same DuckLake snapshot); this version changed dataset.json.'
        : v.parents && v.parents.length ? 'No schema changes.' : 'The first version.'),
    !gone && (v.parents || []).length ? (() => {
      const out = h('div', { id: 'compare-out' });
      return [h('p', {}, h('button', { id: 'compare-button', onclick: (ev) => { ev.target.disabled = true; compareWithParent(v, ds, filesJson, dataDir, out); } },
        'Compare the rows with the parent')), out];
    })() : null,
    gone ? null : [h('h2', {}, 'Query in the browser'), queryBox(id, readable, blocked, liveViews, filesJson, dataDir)],
    h('h2', {}, 'Tables'), tableSections.length ? tableSections : h('p', { class: 'muted' }, 'No tables.'),
    views.length ? [h('h2', {}, 'Views'), views.map((w) => h('section', { class: 'view', 'data-table': qualified(w) }, h('h3', {}, qualified(w)),
      w.description ? renderMarkdown(w.description) : null, h('pre', {}, w.sql || ''),
      liveViews.length ? viewer(w, open) : null))] : null,
    (v.inputs || []).length ? [h('h2', {}, 'Inputs'), h('ul', {}, v.inputs.map((i) => h('li', {}, i.source_id, ' — ',
      i.url ? h('a', { href: i.url, rel: 'noopener' }, i.url) : '', ` (sha256 ${i.sha256.slice(0, 12)}…, ${date(i.retrieved_at)})`)))] : null);
  // warm DuckDB up while the reader reads, unless the preview shows every
  // table: then DuckDB-Wasm loads only for a query or a next page
  if (readable.some((t) => !previews[qualified(t)])) duck().catch(() => {});
}

// ---- routing ---------------------------------------------------------------------

// A page fdl site wrote already shows its rows: it stays as written until
// the script's own page replaces it (never "Loading…" in between), and
// stays if the script cannot draw one.
// So does the landing card's first rows index.html drew from the card
// (window.fdlDrawn); once the script routes, index.html draws no more
// (window.fdlTaken).
let written = page.fdlRoot !== undefined;
let routed = false;
async function route() {
  const m = location.hash.match(/^#\/(v|b)\/(.+)$/);
  const keep = written || (!routed && !!window.fdlDrawn);
  window.fdlTaken = true;
  written = false;
  // index.html's answers serve the first page only: a later one asks anew
  if (routed) for (const k of Object.keys(early)) delete early[k];
  routed = true;
  if (!keep) show(h('p', { class: 'muted' }, 'Loading…'));
  try {
    if (m && m[1] === 'v') await showVersion(decodeURIComponent(m[2]));
    else if (!m && page.fdlVersion) await showVersion(page.fdlVersion);
    else await showOverview(m ? decodeURIComponent(m[2]) : null);
    document.body.dataset.ready = location.hash || '#/';
  } catch (e) {
    if (keep && !document.getElementById('token-form')) main.prepend(h('p', { class: 'error' }, `The script cannot take this page over: ${e.message}`));
    else failure(e);
  }
}

window.addEventListener('hashchange', route);
route();
