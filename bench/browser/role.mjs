// Playwright's getByRole on a big page, for the lookup benchmarks in the
// cdp package: the time to find the one element with a role and name among
// thousands ("role"), or the "Edit" button of Ada Lovelace's row in a table
// of orders ("scoped"). Usage:
//   node role.mjs <chromium> <page url> <n> <flags JSON> [role|scoped]
// Prints {"times": [µs…]}.
import { chromium } from "playwright-core";

const [executablePath, pageURL, nArg, flagsArg, mode = "role"] = process.argv.slice(2);
const n = Number(nArg);
const args = JSON.parse(flagsArg);
const now = () => Number(process.hrtime.bigint()) / 1000;

const browser = await chromium.launch({ executablePath, headless: true, args });
const page = await browser.newPage();
await page.goto(pageURL);
const target = mode === "scoped"
  ? page.getByRole("row", { name: "Ada Lovelace" }).getByRole("button", { name: "Edit" })
  : page.getByRole("button", { name: "Checkout now" });
const times = [];
for (let i = 0; i < n; i++) {
  const t = now();
  const h = await target.elementHandle();
  times.push(now() - t);
  await h.dispose();
}
await browser.close();
console.log(JSON.stringify({ times }));
