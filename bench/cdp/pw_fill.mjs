// Measures Playwright's locator.fill on the page the Go harness serves, in
// a Chromium Playwright launches itself (over its pipe, as it does by
// default) with the harness's flags. Prints JSON samples (ms).
import { chromium } from "playwright-core";

const [executablePath, pageURL, nStr, warmStr, flags] = process.argv.slice(2);
const n = Number(nStr), warm = Number(warmStr);
const browser = await chromium.launch({ executablePath, headless: true, args: JSON.parse(flags) });
const page = await browser.newPage();
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
await browser.close();
console.log(JSON.stringify(samples));
