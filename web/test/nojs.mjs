// Opens a page with JavaScript disabled in Debian's Chromium (playwright-core)
// and prints what a visitor without scripts sees, as one JSON object:
// {title, h1, text, tables: [qualified names], rows: {"schema.table": [[cell, ...], ...]},
//  scripts: how many <script> elements the page holds}
//   node nojs.mjs URL
// (tests/interop/test_findable.py). FDL_TEST_BROWSER: a Chromium already
// running (browser.mjs).
import { chromium } from 'playwright-core';
import { patient } from './patience.mjs';

const [url] = process.argv.slice(2);
const browser = process.env.FDL_TEST_BROWSER
  ? await chromium.connect(process.env.FDL_TEST_BROWSER)
  : await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'] });
try {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = patient(await context.newPage()); // its navigation's wait: a safety net (patience.mjs)
  const response = await page.goto(url);
  const seen = await page.evaluate(() => ({
    title: document.title,
    h1: document.querySelector('h1') ? document.querySelector('h1').textContent : null,
    text: document.body.innerText,
    tables: [...document.querySelectorAll('section.table')].map((s) => s.dataset.table),
    rows: Object.fromEntries([...document.querySelectorAll('section.table')].map((s) => [s.dataset.table,
      [...s.querySelectorAll('table.rows tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent))])),
    scripts: document.querySelectorAll('script').length,
  }));
  seen.status = response.status();
  await context.close();
  console.log(JSON.stringify(seen));
} finally {
  await browser.close();
}
