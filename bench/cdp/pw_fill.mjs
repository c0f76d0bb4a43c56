// Measures Playwright's locator.fill on the page the Go harness serves,
// over CDP to the browser the harness launched. Prints JSON samples (ms).
import { chromium } from "playwright-core";

const [wsURL, pageURL, nStr, warmStr] = process.argv.slice(2);
const n = Number(nStr), warm = Number(warmStr);
const browser = await chromium.connectOverCDP(wsURL);
const context = browser.contexts()[0] ?? (await browser.newContext());
const page = await context.newPage();
await page.goto(pageURL);
const field = page.getByLabel("Email", { exact: true });
const samples = [];
for (let i = 0; i < warm + n; i++) {
  const v = i % 2 ? "ada@example.com" : "grace@example.org";
  const t0 = performance.now();
  await field.fill(v);
  const dt = performance.now() - t0;
  if (i >= warm) samples.push(dt);
}
if ((await field.inputValue()) === "") throw new Error("fill had no effect");
await page.close();
await browser.close(); // over CDP this only disconnects
console.log(JSON.stringify(samples));
