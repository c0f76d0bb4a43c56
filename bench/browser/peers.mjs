// Peers for the browser benchmarks, on the same page as the script under
// test: puppeteer-core's page.evaluate (of a number and of a small
// object) and Playwright's locator.fill. Each launches its own Chromium
// over a pipe (as the host's is), with the host's flags.
// Usage: node peers.mjs <chromium> <page url> <n> <flags JSON> [evaluate]
// Prints {"evaluate": [µs…], "evaluateObject": [µs…], "fill": [µs…]};
// with "evaluate" last, no fill.
import puppeteer from "puppeteer-core";
import { chromium } from "playwright-core";

const [executablePath, pageURL, nArg, flagsArg, only] = process.argv.slice(2);
const n = Number(nArg);
const args = JSON.parse(flagsArg);
const now = () => Number(process.hrtime.bigint()) / 1000;

const browser = await puppeteer.launch({ executablePath, pipe: true, headless: true, args, defaultViewport: null });
const page = (await browser.pages())[0] ?? (await browser.newPage());
await page.goto(pageURL);
const evaluate = [], evaluateObject = [];
for (let i = 0; i < n; i++) {
  const t = now();
  await page.evaluate((a, b) => a + b, i, 1);
  evaluate.push(now() - t);
}
for (let i = 0; i < n; i++) {
  const t = now();
  await page.evaluate((a, b) => ({ a, b, c: [a, b] }), i, "x");
  evaluateObject.push(now() - t);
}
await browser.close();
if (only === "evaluate") {
  console.log(JSON.stringify({ evaluate, evaluateObject }));
  process.exit(0);
}

const pw = await chromium.launch({ executablePath, headless: true, args }); // a pipe by default
const pwPage = await pw.newPage();
await pwPage.goto(pageURL);
const field = pwPage.getByLabel("Card holder");
const fill = [];
for (let i = 0; i < n; i++) {
  const t = now();
  await field.fill("Ada Lovelace " + i);
  fill.push(now() - t);
}
await pw.close();
console.log(JSON.stringify({ evaluate, evaluateObject, fill }));
