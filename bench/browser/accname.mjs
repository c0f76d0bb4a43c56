// Playwright's getByRole on the WPT accname cases, for BenchmarkWPTAccname
// in the cdp package: how many cases it resolves to the intended element.
// Usage: node accname.mjs <chromium> <cases JSON file> <case attribute> <flags JSON>
// The file lists {file, url, id, name, role}; each page's cases are marked
// as the Go test marks them (data-expectedlabel elements, numbered in
// document order). A case resolves when getByRole(role, {name, exact: true})
// matches one element and it is the marked one, or several and nth(k) of
// them is. Prints {"outcomes": {outcome: count}, "cases": [{file, id, outcome}]}.
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const [executablePath, casesFile, attr, flagsArg] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const args = JSON.parse(flagsArg);

const byURL = new Map();
for (const c of cases) {
  if (!byURL.has(c.url)) byURL.set(c.url, []);
  byURL.get(c.url).push(c);
}

const browser = await chromium.launch({ executablePath, headless: true, args });
const outcomes = {};
const results = [];
for (const [url, list] of byURL) {
  const page = await browser.newPage();
  await page.goto(url);
  await page.evaluate((a) => {
    document.querySelectorAll("[data-expectedlabel]").forEach((el, i) => el.setAttribute(a, String(i)));
  }, attr);
  for (const c of list) {
    let outcome;
    try {
      const loc = page.getByRole(c.role, { name: c.name, exact: true });
      const n = await loc.count();
      if (n === 0) outcome = "not_found";
      else if (n === 1) {
        outcome = (await loc.getAttribute(attr, { timeout: 2000 })) === c.id ? "resolved" : "resolved-other";
      } else {
        outcome = "ambiguous";
        for (let k = 0; k < n; k++) {
          if ((await loc.nth(k).getAttribute(attr, { timeout: 2000 })) === c.id) {
            outcome = "resolved-nth";
            break;
          }
        }
      }
    } catch (e) {
      outcome = "error";
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    results.push({ file: c.file, id: c.id, outcome });
  }
  await page.close();
}
await browser.close();
console.log(JSON.stringify({ outcomes, cases: results }));
