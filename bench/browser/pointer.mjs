// Playwright's pointer verbs and bulk read on the page of the cdp package's
// BenchmarkPointerVerbs: locator.hover, locator.dblclick, locator.dragTo
// (HTML drag and drop) and allTextContents over a 1,000 x 5 table. Usage:
//   node pointer.mjs <chromium> <page url> <n> <flags JSON>
// Prints {"hover": [µs…], "dblclick": […], "dragTo": […], "texts": […]}.
import { chromium } from "playwright-core";

const [executablePath, pageURL, nArg, flagsArg] = process.argv.slice(2);
const n = Number(nArg);
const args = JSON.parse(flagsArg);
const now = () => Number(process.hrtime.bigint()) / 1000;

const browser = await chromium.launch({ executablePath, headless: true, args });
const page = await browser.newPage();
await page.goto(pageURL);
const out = { hover: [], dblclick: [], dragTo: [], texts: [] };
const time = async (name, f) => {
  for (let i = 0; i < n; i++) {
    const t = now();
    const v = await f(i);
    out[name].push(now() - t);
    if (name === "texts" && v.length !== 5000) throw new Error(`read ${v.length} cells`);
  }
};
await time("hover", (i) => page.locator(i % 2 ? "#h1" : "#h2").hover());
await time("dblclick", () => page.locator("#dbl").dblclick());
await time("dragTo", () => page.locator("#drag li").first().dragTo(page.locator("#drag li").last()));
await time("texts", () => page.locator("#grid td").allTextContents());
const drops = await page.evaluate(() => window.drops);
if (drops !== n) throw new Error(`${drops} drops of ${n}`);
await browser.close();
console.log(JSON.stringify(out));
