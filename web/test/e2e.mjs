// Drives Debian's Chromium (headless, through playwright-core) over the page
// `fdl serve` shows, the way a person would: the overview, then versions, a
// query typed in the SQL box and run. Prints what it saw as one JSON object;
// the pytest side (tests/interop/test_web.py) checks it against stock DuckDB.
//   node e2e.mjs BASE_URL ARTIFACT_DIR PLAN_JSON
// FDL_PAGE_TOKEN (environment): the token to type when the page asks for one.
// PLAN_JSON: {"queries": [{"seq": 3, "sql": "SELECT count(*) FROM population", "csv": true}, ...],
//             "viewers": [{"seq": 2, "table": "main.towns", "stats": true}, ...],  (optional: the rows shown,
//                 from the version's preview at once or read on a click; each has `drawn`, what viewerOf saw)
//             "compares": [2, ...],  (optional: "Compare with the parent" on these versions)
//             "downloads": [{"seq": 1, "table": "main.towns"}, ...],  (optional: a data file's link clicked)
//             "cardQueries": ["SELECT ...", ...],  (optional: the landing card's SQL box)
//             "pages": [{"id": "<version id>", "name": "withdrawn"}, ...]}  (optional: opened by id)
// The browser runs in the time zone FDL_TEST_TZ (default Asia/Tokyo, never
// UTC), as a visitor abroad would. Each page is also shot at phone width
// (390 px) as <name>-phone.png; `clipped` lists what a phone cannot see
// (a table wider than the screen outside a scrolling box).
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { PATIENCE, patient } from './patience.mjs';

const [base, artifacts, planText] = process.argv.slice(2);
const plan = JSON.parse(planText);
mkdirSync(artifacts, { recursive: true });
const seen = { consoleErrors: [], queries: [] };

// FDL_TEST_BROWSER: the endpoint of a Chromium already running (browser.mjs);
// close() then only ends this run's connection and its context
const browser = process.env.FDL_TEST_BROWSER
  ? await chromium.connect(process.env.FDL_TEST_BROWSER)
  : await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true,
    timezoneId: process.env.FDL_TEST_TZ || 'Asia/Tokyo' });
  patient(page); // every wait below is a safety net (patience.mjs), never the outcome
  // an element that may be absent, read without waiting: the page marks
  // body[data-ready] only once it has drawn everything (app.js route()), so
  // what is not there by then never comes; page.textContent() would wait
  // its 30 s default for each absent one
  const textOf = (sel) => page.$eval(sel, (e) => e.textContent).catch(() => null);
  const attrOf = (sel, name) => page.$eval(sel, (e, n) => e.getAttribute(n), name).catch(() => null);
  seen.timeZone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  seen.clipped = [];
  // what a phone cannot see: a table wider than the screen with no scrolling box around it;
  // image: false checks the same without the screenshot (one a later shot replaces)
  const phoneShot = async (name, image = true) => {
    await page.setViewportSize({ width: 390, height: 844 });
    if (image) await page.screenshot({ path: `${artifacts}/${name}-phone.png`, fullPage: true });
    const clipped = await page.evaluate(() => [...document.querySelectorAll('main table, main pre')].filter((t) => {
      for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) {
        const o = getComputedStyle(e).overflowX;
        if (o === 'auto' || o === 'scroll') return false;
      }
      return t.getBoundingClientRect().right > window.innerWidth + 1 || t.scrollWidth > t.clientWidth + 1;
    }).map((t) => t.id || t.className || t.tagName));
    const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    for (const c of clipped) seen.clipped.push(`${name}: ${c}`);
    if (over > 0) seen.clipped.push(`${name}: page ${over}px wider than the screen`);
    await page.setViewportSize({ width: 1280, height: 900 });
  };
  const runSql = async (sql, csv) => {
    await page.fill('#sql', sql);
    await page.click('#run');
    await page.waitForFunction(() => {
      const s = document.getElementById('query-status');
      return s && (s.dataset.rows !== undefined || s.className === 'error');
    }, null, { timeout: PATIENCE });
    const got = { sql };
    got.status = await page.textContent('#query-status');
    got.header = await page.$$eval('#result-table thead th', (ths) => ths.map((t) => t.textContent));
    got.rows = await page.$$eval('#result-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    got.nulls = await page.$$eval('#result-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.classList.contains('null'))));
    // values with no white space that the page broke across lines (a date as 2025- / 12-01)
    got.broken = await page.$$eval('#result-table tbody td', (tds) => tds.filter((td) => {
      if (/\s/.test(td.textContent) || !td.firstChild) return false;
      const r = document.createRange();
      r.selectNodeContents(td);
      return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1;
    }).map((td) => td.textContent));
    got.csvLink = (await page.$('#csv')) !== null;
    if (csv && got.csvLink) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
      // saved beside the screenshots: path() has no file when the browser
      // runs in another process (FDL_TEST_BROWSER)
      const { readFileSync } = await import('node:fs');
      const file = `${artifacts}/download-${download.suggestedFilename()}`;
      await download.saveAs(file);
      got.csv = readFileSync(file).toString('base64');
    }
    return got;
  };
  // a version without a preview answers 404 for previews/<id>.json (previews
  // are opt-in, docs/format.md), a repository without a landing card for
  // previews/HEAD.json, and one whose HEAD names another branch than main
  // may for refs/heads/main (index.html asks for it at once): Chromium logs
  // each such 404 as an error, which is expected; every other console
  // error is kept
  // (dropped from consoleErrors, one for each such response, before the report)
  seen.absentPreviews = [];
  page.on('response', (r) => {
    if (r.status() === 404 && /\/previews\/([0-9a-f-]+|HEAD)\.json$|\/refs\/heads\/main$/.test(new URL(r.url()).pathname))
      seen.absentPreviews.push(r.url());
  });
  page.on('console', (m) => { if (m.type() === 'error') seen.consoleErrors.push(m.text()); });
  // every URL the page asked for: DuckDB-Wasm's files must not be among
  // them before a query when the versions have previews
  seen.requests = [];
  page.on('request', (r) => seen.requests.push(r.url()));
  // a table section's viewer as drawn: its rows, where they came from, its
  // statistics (the four cells the browser computes, then the preview's more)
  const viewerOf = (section) => section.evaluate((s) => {
    const v = s.querySelector('.viewer');
    const box = s.querySelector('.stats-box');
    return {
      source: v ? v.dataset.source || null : null,
      header: [...s.querySelectorAll('table.rows thead th')].map((t) => t.firstChild.textContent),
      rows: [...s.querySelectorAll('table.rows tbody tr')].map((tr) => [...tr.cells].map((c) => (c.classList.contains('null') ? null : c.textContent))),
      statsSource: box ? box.dataset.source || null : null,
      stats: [...s.querySelectorAll('table.stats tbody tr')].map((tr) => ({
        cells: [...tr.cells].slice(0, 4).map((c) => c.textContent.trim()),
        nullMin: tr.cells[2] ? tr.cells[2].classList.contains('null') : false,
        nullMax: tr.cells[3] ? tr.cells[3].classList.contains('null') : false,
        distinct: tr.querySelector('td.distinct') ? tr.querySelector('td.distinct').textContent : null,
        histogram: [...tr.querySelectorAll('.hist .bin')].map((b) => [b.dataset.upto, Number(b.dataset.count)]),
        top: [...tr.querySelectorAll('ol.top li')].map((li) => [li.querySelector('.value').textContent, Number(li.dataset.count)]),
        lengths: tr.querySelector('.lengths') ? { ...tr.querySelector('.lengths').dataset } : null })),
    };
  });
  page.on('pageerror', (e) => seen.consoleErrors.push(String(e)));

  await page.goto(base, { waitUntil: 'load' });
  if (process.env.FDL_PAGE_TOKEN) { // a private host: the page asks once, as a reader answers
    await page.waitForSelector('#token', { timeout: PATIENCE });
    seen.askedForToken = await page.textContent('#token-form');
    await page.fill('#token', process.env.FDL_PAGE_TOKEN);
    await page.click('#token-go');
  }
  await page.waitForSelector('body[data-ready="#/"]', { timeout: PATIENCE });
  seen.title = await page.textContent('#title');
  seen.history = await page.$$eval('#history tr.version', (rows) => rows.map((r) => ({
    seq: Number(r.cells[0].textContent), message: r.cells[4].textContent,
    breaking: r.querySelectorAll('.breaking').length })));
  seen.branches = await page.$$eval('#branches tbody tr', (rows) => rows.map((r) => r.cells[0].textContent));
  seen.overviewText = await page.textContent('main');
  seen.card = await page.evaluate(() => {
    const text = (sel) => { const e = document.querySelector(sel); return e ? e.textContent : null; };
    const d = document.getElementById('description');
    return {
      version: text('#card-version'),
      descriptionHtml: d ? d.innerHTML : null,
      scripts: document.querySelectorAll('main script').length,
      hrefs: [...document.querySelectorAll('main a')].map((a) => a.getAttribute('href')),
      tables: [...document.querySelectorAll('#card-tables section.table')].map((s) => ({
        table: s.dataset.table, facts: s.querySelector('.facts').textContent,
        columns: [...s.querySelectorAll('table.columns tbody tr')].map((r) => r.cells[0].textContent) })),
      duckdb: text('#use-duckdb'), fdl: text('#use-fdl'), python: text('#use-python'),
      bibtex: text('#cite-bibtex'), cff: text('#cite-cff'),
      historyIds: [...document.querySelectorAll('#history .id-chip a')].map((a) => a.title),
    };
  });
  // the landing card's tables as drawn before anything is clicked
  seen.cardViewers = [];
  for (const section of await page.locator('#card-tables section.table').all()) {
    seen.cardViewers.push({ table: await section.getAttribute('data-table'), ...(await viewerOf(section)) });
  }
  seen.duckdbBeforeClick = seen.requests.filter((u) => u.includes('/_fdl/duckdb/'));
  await page.click('#chart-button');
  await page.waitForSelector('#rows-chart[data-series]', { timeout: PATIENCE });
  seen.chart = JSON.parse(await page.getAttribute('#rows-chart', 'data-series'));
  seen.cardQueries = [];
  for (const sql of plan.cardQueries || []) seen.cardQueries.push(await runSql(sql, true));
  seen.tipOffline = await textOf('#tip-offline');
  seen.cardHasSql = (await page.$('#sql')) !== null;
  await page.screenshot({ path: `${artifacts}/overview.png`, fullPage: true });
  await phoneShot('overview');
  seen.phoneOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

  // open version `seq` from the history list, as a reader would. The
  // first time, from a fresh load of the page (what a private host's token
  // and every early answer must survive: a reload); after that, back to the
  // list in the same document (only the fragment changes, as the page's own
  // links do), so the page's one DuckDB-Wasm and the extensions it loaded
  // serve each later version, as they serve a reader going from version to
  // version (a reload for each had Chromium instantiate DuckDB-Wasm and load
  // httpfs and ducklake again, most of the browser's CPU: issue 55)
  let reloaded = false;
  const openVersion = async (seq) => {
    if (!reloaded) {
      await page.goto(base, { waitUntil: 'load' });
      reloaded = true;
    } else if (await page.evaluate(() => location.hash !== '' && location.hash !== '#/')) {
      await page.evaluate(() => { location.hash = '#/'; });
    }
    await page.waitForSelector('body[data-ready="#/"]', { timeout: PATIENCE });
    const row = page.locator('#history tr.version', { has: page.locator(`td:first-child:text-is("${seq}")`) });
    await row.locator('a.version-link').click();
    await page.waitForFunction(() => (document.body.dataset.ready || '').startsWith('#/v/'), null, { timeout: PATIENCE });
  };
  seen.viewers = [];
  for (const w of plan.viewers || []) {
    await openVersion(w.seq);
    const section = page.locator(`section.table[data-table="${w.table}"]`);
    // with a preview the rows are there at once, with no button
    if (await section.locator('button.show-rows').count()) await section.locator('button.show-rows').click();
    await page.waitForFunction((t) => {
      const s = document.querySelector(`section.table[data-table="${t}"]`);
      return s && (s.querySelector('.viewer[data-rows]') || s.querySelector('.error'));
    }, w.table, { timeout: PATIENCE });
    if (w.stats && await section.locator('button.show-stats').count()) {
      await section.locator('button.show-stats').click();
      await page.waitForFunction((t) => {
        const s = document.querySelector(`section.table[data-table="${t}"]`);
        return s && s.querySelector('.stats-box[data-ready]');
      }, w.table, { timeout: PATIENCE });
    }
    seen.viewers.push({ ...w, drawn: await viewerOf(section),
      stats: await section.locator('table.stats tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].slice(0, 4).map((c) => c.textContent.trim()))),
      changesNote: await textOf('#changes-note'),
      header: await section.locator('table.rows thead th').evaluateAll((ths) => ths.map((t) => t.firstChild.textContent)),
      types: await section.locator('table.rows thead th .type').allTextContents(),
      rows: await section.locator('table.rows tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))),
      error: await section.locator('.error').allTextContents() });
    await page.screenshot({ path: `${artifacts}/viewer-${w.seq}.png`, fullPage: true });
    await phoneShot(`viewer-${w.seq}`);
  }

  // "downloads": [{"seq": 1, "table": "main.population"}]: a data file's link clicked, what was saved
  seen.downloads = [];
  for (const d of plan.downloads || []) {
    await openVersion(d.seq);
    const section = page.locator(`section.table[data-table="${d.table}"]`);
    await section.locator('details summary', { hasText: 'Files' }).click();
    const link = section.locator('td.path a').first();
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const { readFileSync } = await import('node:fs');
    seen.downloads.push({ ...d, name: download.suggestedFilename(), path: await link.textContent(),
      bytes: readFileSync(await download.path()).length });
  }

  seen.compares = [];
  for (const seq of plan.compares || []) {
    await openVersion(seq);
    await page.click('#compare-button');
    await page.waitForSelector('#compare-out[data-done]', { timeout: PATIENCE });
    seen.compares.push({ seq, done: await page.getAttribute('#compare-out', 'data-done'),
      rows: await page.$$eval('#compare tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))) });
    await page.screenshot({ path: `${artifacts}/compare-${seq}.png`, fullPage: true });
  }
  // queries on one version, one after another in the plan, are typed into
  // the same page, as a reader asks a second question without going back to
  // the list; its screenshots are taken after the last of them (each shot
  // of a version's page replaced the one before), what a phone cannot see
  // is checked after each
  for (const [i, q] of plan.queries.entries()) {
    const prev = plan.queries[i - 1];
    const next = plan.queries[i + 1];
    const last = !next || next.seq !== q.seq;
    if (!prev || prev.seq !== q.seq) await openVersion(q.seq);
    const got = { seq: q.seq, sql: q.sql };
    got.heading = await page.textContent('h1');
    got.attach = await page.textContent('#attach-version');
    got.notQueryable = await page.$$eval('section.table', (ss) => ss
      .filter((s) => s.querySelector('.not-queryable'))
      .map((s) => ({ table: s.dataset.table, why: s.querySelector('.not-queryable').textContent })));
    Object.assign(got, await runSql(q.sql, q.csv));
    if (last) await page.screenshot({ path: `${artifacts}/version-${q.seq}.png`, fullPage: true });
    await phoneShot(`version-${q.seq}`, last);
    seen.queries.push(got);
  }
  seen.pages = [];
  seen.storage = await page.evaluate(() => ({ session: Object.keys(sessionStorage), local: Object.keys(localStorage),
    url: location.href }));
  for (const pg of plan.pages || []) {
    // from one version's page to another only the fragment changes: the
    // document stays, so wait for this version's own ready mark
    await page.goto(`${base}#/v/${pg.id}`, { waitUntil: 'load' });
    await page.waitForFunction((want) => document.body.dataset.ready === want, `#/v/${pg.id}`, { timeout: PATIENCE });
    seen.pages.push({ ...pg,
      text: await page.textContent('main'),
      notice: await textOf('#offline-notice'),
      newestLive: await attrOf('#newest-live', 'href'),
      latestOffline: await textOf('#latest-offline'),
      latestLive: await attrOf('#latest-offline a', 'href'),
      attach: (await page.$('#attach-version')) !== null || (await page.$('#attach-latest')) !== null,
      snippets: await page.$$eval('main .snippet', (bs) => bs.map((b) => b.querySelector('pre').id)),
      compare: (await page.$('#compare-button')) !== null,
      sql: (await page.$('#sql')) !== null,
      viewers: await page.$$eval('button.show-rows', (bs) => bs.length) });
    await page.screenshot({ path: `${artifacts}/${pg.name}.png`, fullPage: true });
    await phoneShot(pg.name);
  }
} finally {
  await browser.close();
}
for (let n = seen.absentPreviews.length, i = seen.consoleErrors.length - 1; i >= 0 && n > 0; i--)
  if (/status of 404/.test(seen.consoleErrors[i])) { seen.consoleErrors.splice(i, 1); n--; }
console.log(JSON.stringify(seen));
