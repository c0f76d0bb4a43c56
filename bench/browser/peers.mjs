// Peers for the browser benchmarks, on the same Chromium and page as the
// script under test: puppeteer-core's page.evaluate and Playwright's
// locator.fill. Usage: node peers.mjs <ws endpoint> <page url> <n>
// Prints {"evaluate": [µs…], "fill": [µs…]}.
import puppeteer from "puppeteer-core";
import { chromium } from "playwright-core";

const [endpoint, pageURL, nArg] = process.argv.slice(2);
const n = Number(nArg);
const now = () => Number(process.hrtime.bigint()) / 1000;

const browser = await puppeteer.connect({ browserWSEndpoint: endpoint, defaultViewport: null });
const page = (await browser.pages()).find((p) => p.url() === pageURL);
if (!page) throw new Error("page not found: " + pageURL);
const evaluate = [];
for (let i = 0; i < n; i++) {
  const t = now();
  await page.evaluate((a, b) => a + b, i, 1);
  evaluate.push(now() - t);
}
await browser.disconnect();

const pw = await chromium.connectOverCDP(endpoint);
const pwPage = pw.contexts()[0].pages().find((p) => p.url() === pageURL);
if (!pwPage) throw new Error("playwright: page not found: " + pageURL);
const field = pwPage.getByLabel("Card holder");
const fill = [];
for (let i = 0; i < n; i++) {
  const t = now();
  await field.fill("Ada Lovelace " + i);
  fill.push(now() - t);
}
await pw.close();
console.log(JSON.stringify({ evaluate, fill }));
