// One headless Chromium for many runs of e2e.mjs (tests/interop/test_web.py
// starts it once per pytest worker): prints its WebSocket endpoint on one
// line, then serves until its standard input closes. e2e.mjs connects to
// it when FDL_TEST_BROWSER holds the endpoint; each run opens its own
// browser context (no cookies, storage or cache shared with another run).
//   node browser.mjs
import { chromium } from 'playwright-core';

const server = await chromium.launchServer({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-dev-shm-usage'] });
console.log(server.wsEndpoint());
process.stdin.resume();
process.stdin.on('end', async () => {
  await server.close();
  process.exit(0);
});
