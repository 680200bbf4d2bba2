// The repository's own page (fdl site's index.html) with scripts on: its
// first rows come with the HTML, before the script, and stay while the script
// takes the page over. Prints what it saw as one JSON object
// (tests/interop/test_web.py):
//   node first.mjs URL
// {before: {rows: {"schema.table": [[cell, ...], ...]}, requests: [paths asked for before
//    the rows were seen, app.js held back]},
//  after: {rows: ..., sources: {"schema.table": data-source}, ready},
//  gone: whether the first rows ever left the page once shown, scripts: <script>
//  elements inside <main> (any time), requests: every path asked for, consoleErrors}
// FDL_TEST_BROWSER: a Chromium already running (browser.mjs).
import { chromium } from 'playwright-core';
import { PATIENCE, patient } from './patience.mjs';

const [url] = process.argv.slice(2);
const FIRST = '#card-tables .viewer[data-source="preview"][data-rows]';
const browser = process.env.FDL_TEST_BROWSER
  ? await chromium.connect(process.env.FDL_TEST_BROWSER)
  : await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const seen = { consoleErrors: [], requests: [] };
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // in the page before its scripts: whether the first rows, once there, ever
  // leave it, and whether <main> ever holds a <script>
  await context.addInitScript((sel) => {
    window.fdlWatch = { shown: false, gone: false, scripts: 0 };
    new MutationObserver(() => {
      const w = window.fdlWatch;
      const rows = document.querySelectorAll(`${sel} table.rows tbody tr`).length;
      if (rows) w.shown = true;
      else if (w.shown) w.gone = true;
      w.scripts = Math.max(w.scripts, document.querySelectorAll('main script').length);
    }).observe(document, { childList: true, subtree: true });
  }, FIRST);
  const page = patient(await context.newPage()); // every wait: a safety net (patience.mjs)
  page.on('console', (m) => { if (m.type() === 'error') seen.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => seen.consoleErrors.push(String(e)));
  page.on('request', (r) => { if (/^https?:/.test(r.url())) seen.requests.push(new URL(r.url()).pathname); });
  // the script held back until the first rows were seen without it
  let release;
  const held = new Promise((f) => { release = f; });
  await page.route('**/_fdl/app.js', async (route) => { await held; await route.continue(); });
  const rowsOf = () => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#card-tables section.table')]
    .map((s) => [s.dataset.table, [...s.querySelectorAll('.viewer table.rows tbody tr')]
      .map((tr) => [...tr.children].map((td) => td.textContent))])));
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForSelector(FIRST, { timeout: PATIENCE });
  seen.before = { rows: await rowsOf(), requests: seen.requests.slice() };
  release();
  await page.waitForSelector('body[data-ready="#/"]', { timeout: PATIENCE });
  seen.after = { rows: await rowsOf(), ready: true,
    sources: await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#card-tables section.table')]
      .map((s) => [s.dataset.table, (s.querySelector('.viewer') || { dataset: {} }).dataset.source || null]))) };
  const w = await page.evaluate(() => window.fdlWatch);
  seen.gone = w.gone;
  seen.scripts = w.scripts;
  await context.close();
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
