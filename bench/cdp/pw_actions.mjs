// Measures Playwright's locator actions (fill, check, selectOption, click)
// on the page the Go harness serves, in a Chromium Playwright launches
// itself (over its pipe, as it does by default) with the harness's flags.
// Targets are found as a script would name them: by label and role, and by
// test id. Prints JSON: {"<action> <finder>": [ms, …], …}.
import { chromium } from "playwright-core";

const [executablePath, pageURL, nStr, warmStr, flags] = process.argv.slice(2);
const n = Number(nStr), warm = Number(warmStr);
const browser = await chromium.launch({ executablePath, headless: true, args: JSON.parse(flags) });
const page = await browser.newPage();
await page.goto(pageURL);

const finders = {
  label: {
    fill: page.getByLabel("Email", { exact: true }),
    check: page.getByLabel("I agree"),
    select: page.getByLabel("Country"),
    click: page.getByRole("button", { name: "Save" }),
  },
  testId: {
    fill: page.getByTestId("email"),
    check: page.getByTestId("agree"),
    select: page.getByTestId("country"),
    click: page.getByTestId("save"),
  },
};
const act = {
  fill: (l, i) => l.fill(i % 2 ? "ada@example.com" : "grace@example.org"),
  check: (l, i) => l.setChecked(i % 2 === 0),
  select: (l, i) => l.selectOption({ label: i % 2 ? "France" : "Germany" }),
  click: (l) => l.click(),
};
const out = {};
for (const [finder, locs] of Object.entries(finders)) {
  for (const [name, run] of Object.entries(act)) {
    const samples = [];
    for (let i = 0; i < warm + n; i++) {
      const t0 = performance.now();
      await run(locs[name], i);
      const dt = performance.now() - t0;
      if (i >= warm) samples.push(dt);
    }
    out[name + " " + finder] = samples;
  }
}
if ((await page.getByTestId("email").inputValue()) === "") throw new Error("fill had no effect");
if ((await page.getByTestId("save").getAttribute("data-clicks")) === null) throw new Error("click had no effect");
await browser.close();
console.log(JSON.stringify(out));
