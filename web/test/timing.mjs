// One number for docs/web.md: milliseconds from the navigation's start to the
// first animation frame whose document holds SELECTOR, visible (the frame
// that paints it), measured in the page (performance.now(), whose origin is
// the navigation's start), over RUNS cold loads (a new browser context each).
//   node timing.mjs URL [RUNS] [SELECTOR]
// Printed, as one JSON object: times, best and median (that in-page figure),
// `wall` (the same from node: goto, then playwright's waitForSelector, which
// polls 0, 20, 50, 100, 100, then every 500 ms, so it rounds a time up by as
// much as half a second), `html` (the HTML's last byte, in-page) and `fcp`
// (Chromium's first contentful paint), each a median.
import { chromium } from 'playwright-core';
const [url, runs = '5', selector = 'body[data-ready="#/"]'] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage'] });
// runs in the page before any of its scripts: checks each frame for SELECTOR
const watch = (sel) => {
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const tick = () => {
    const el = document.querySelector(sel);
    if (el && visible(el)) window.fdlFirstFrame = performance.now();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
};
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const times = [];
const wall = [];
const html = [];
const fcp = [];
try {
  for (let i = 0; i < Number(runs); i++) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await ctx.addInitScript(watch, selector);
    const page = await ctx.newPage();
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForSelector(selector, { timeout: 30000 });
    wall.push(Date.now() - t0);
    await page.waitForFunction(() => window.fdlFirstFrame !== undefined, null, { timeout: 30000 });
    // the first contentful paint is reported a little after its frame
    await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length, null,
      { timeout: 5000 }).catch(() => {});
    const got = await page.evaluate(() => ({ first: window.fdlFirstFrame,
      html: performance.getEntriesByType('navigation')[0].responseEnd,
      fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime }));
    times.push(Math.round(got.first));
    html.push(Math.round(got.html));
    if (got.fcp !== undefined) fcp.push(Math.round(got.fcp));
    await ctx.close();
  }
} finally { await browser.close(); }
console.log(JSON.stringify({ times, best: Math.min(...times), median: median(times),
  wall: { times: wall, best: Math.min(...wall), median: median(wall) },
  html: median(html), fcp: fcp.length ? median(fcp) : null }));
