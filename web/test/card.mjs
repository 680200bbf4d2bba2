// The script's page (web/index.html, a repository without fdl site pages):
// what it asked for before the landing card's first rows were drawn, and
// what the card then shows. Prints one JSON object (tests/interop/test_web.py):
//   node card.mjs URL
// {before: [paths asked for before the first rows were seen], requests: [every
//  path], rows: {"schema.table": [[cell, ...], ...]}, sources: {"schema.table":
//  data-source}, version: the card's "Latest on ..." line, consoleErrors}
// FDL_TEST_BROWSER: a Chromium already running (browser.mjs).
import { chromium } from 'playwright-core';

const [url] = process.argv.slice(2);
const FIRST = '#card-tables .viewer[data-source="preview"][data-rows]';
const browser = process.env.FDL_TEST_BROWSER
  ? await chromium.connect(process.env.FDL_TEST_BROWSER)
  : await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const seen = { consoleErrors: [], requests: [] };
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // the requests made before the first frame that holds the rows, noted in
  // the page (Resource Timing), so no polling delay adds any
  await context.addInitScript((sel) => {
    const look = () => {
      if (document.querySelector(sel)) {
        window.fdlBefore = performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname);
        return;
      }
      requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  }, FIRST);
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') seen.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => seen.consoleErrors.push(String(e)));
  page.on('request', (r) => { if (/^https?:/.test(r.url())) seen.requests.push(new URL(r.url()).pathname); });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="#/"]', { timeout: 120000 });
  await page.waitForFunction(() => window.fdlBefore, null, { timeout: 60000 }).catch(() => null);
  Object.assign(seen, await page.evaluate(() => ({
    before: window.fdlBefore || null,
    version: (document.getElementById('card-version') || {}).textContent || null,
    rows: Object.fromEntries([...document.querySelectorAll('#card-tables section.table')]
      .map((s) => [s.dataset.table, [...s.querySelectorAll('.viewer table.rows tbody tr')]
        .map((tr) => [...tr.children].map((td) => td.textContent))])),
    sources: Object.fromEntries([...document.querySelectorAll('#card-tables section.table')]
      .map((s) => [s.dataset.table, (s.querySelector('.viewer') || { dataset: {} }).dataset.source || null])),
  })));
  await context.close();
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
