// Playwright's getByRole on a big page, for the role benchmark in the cdp
// package: the time to find the one element with a role and name among
// thousands. Usage: node role.mjs <chromium> <page url> <n> <flags JSON>
// Prints {"role": [µs…]}.
import { chromium } from "playwright-core";

const [executablePath, pageURL, nArg, flagsArg] = process.argv.slice(2);
const n = Number(nArg);
const args = JSON.parse(flagsArg);
const now = () => Number(process.hrtime.bigint()) / 1000;

const browser = await chromium.launch({ executablePath, headless: true, args });
const page = await browser.newPage();
await page.goto(pageURL);
const target = page.getByRole("button", { name: "Checkout now" });
const role = [];
for (let i = 0; i < n; i++) {
  const t = now();
  const h = await target.elementHandle();
  role.push(now() - t);
  await h.dispose();
}
await browser.close();
console.log(JSON.stringify({ role }));
