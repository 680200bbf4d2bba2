// One number for docs/web.md: milliseconds from navigation to the landing
// page ready (body[data-ready]), best of RUNS cold loads.  node timing.mjs URL [RUNS]
import { chromium } from 'playwright-core';
const [url, runs = '5'] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const times = [];
try {
  for (let i = 0; i < Number(runs); i++) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    const t0 = Date.now();
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForSelector('body[data-ready="#/"]', { timeout: 30000 });
    times.push(Date.now() - t0);
    await ctx.close();
  }
} finally { await browser.close(); }
console.log(JSON.stringify({ times, best: Math.min(...times), median: times.sort((a, b) => a - b)[times.length >> 1] }));
