// One number for docs/web.md: milliseconds from navigation to the landing
// page ready (body[data-ready]), or to SELECTOR drawn, best of RUNS cold
// loads.  node timing.mjs URL [RUNS] [SELECTOR]
import { chromium } from 'playwright-core';
const [url, runs = '5', selector = 'body[data-ready="#/"]'] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const times = [];
try {
  for (let i = 0; i < Number(runs); i++) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForSelector(selector, { timeout: 30000 });
    times.push(Date.now() - t0);
    await ctx.close();
  }
} finally { await browser.close(); }
console.log(JSON.stringify({ times, best: Math.min(...times), median: times.sort((a, b) => a - b)[times.length >> 1] }));
