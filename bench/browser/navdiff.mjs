// Playwright's page.goto as the peer of the cdp package's navigation
// differential test: each page opened in a fresh page of one Chromium.
// Usage: node navdiff.mjs <chromium> <flags JSON> [pages JSON]
// Pages are addresses, or {"url", "waitUntil" (default "load"), "timeout"
// (ms, default 10000), "settle" (an address: after goto, also wait for the
// page to reach it and load, as a user of goto does when the page sends
// itself on)}. With pages JSON it runs those and ends; without, it reads
// one JSON list of pages per line of stdin and runs each list as it comes,
// on the one Chromium, until stdin ends (the test's repeated runs then pay
// for one launch).
// Prints one JSON line per page: {url, status, finalStatus, ms, settleMs,
// error, timeout}: url is page.url() when goto returned, status that of
// goto's response (null when none), finalStatus that of the main frame's
// last document response, ms the milliseconds goto took.
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const [executablePath, flagsArg, pagesArg] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true, args: JSON.parse(flagsArg) });
const context = await browser.newContext();

async function run(pages) {
  for (const p of pages) {
    const { url, waitUntil = "load", timeout = 10000, settle } = typeof p === "string" ? { url: p } : p;
    const page = await context.newPage();
    let finalStatus = null;
    page.on("response", (r) => {
      if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) finalStatus = r.status();
    });
    const out = { url: null, status: null, finalStatus: null, ms: 0, settleMs: null, error: null, timeout: false };
    const t0 = performance.now();
    try {
      const response = await page.goto(url, { waitUntil, timeout });
      out.ms = performance.now() - t0;
      out.url = page.url();
      out.status = response?.status() ?? null;
      if (settle) {
        await page.waitForURL(settle, { waitUntil, timeout });
        out.settleMs = performance.now() - t0;
      }
    } catch (e) {
      out.ms = performance.now() - t0;
      out.error = String(e.message).split("\n")[0];
      out.timeout = e.name === "TimeoutError";
      out.url = page.url();
    }
    out.finalStatus = finalStatus;
    console.log(JSON.stringify(out));
    await page.close();
  }
}

if (pagesArg !== undefined) {
  await run(JSON.parse(pagesArg));
} else {
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim()) await run(JSON.parse(line));
  }
}
await browser.close();
