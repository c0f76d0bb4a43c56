// Playwright's answer for each target of the locator differential suite
// (cdp/locdiff_test.go). Usage:
//   node locdiff.mjs <chromium> <flags JSON>
// then one request a line on stdin, {"specs", "variants", "parallel"},
// answered by one line on stdout, on the one Chromium, until stdin ends.
// specs maps each page's address to a list of targets in the shape of
// cdp.Locator's JSON. Each page is opened once per request, parallel
// pages at a time (default 1: a benchmark's timings see no other page's
// work); for each target it prints the count, and for a count of one the
// element's data-id and innerText (what Tab.Text reads) and how long
// count() took. With variants, a target that sets a name, label or text
// without exact is also asked with each such string read whole
// ("whole"), the way our lookup prefers a whole match; one with a label,
// with its labels naming fields only ("fields"); one with both, with both
// ("wholeFields").
// Prints {"<page>": [{count, id, text, us, whole: {count, id, text}, …}…]}.
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const [executablePath, flagsArg] = process.argv.slice(2);
const args = JSON.parse(flagsArg);
const now = () => Number(process.hrtime.bigint()) / 1000;

// whole is s as a pattern that takes only the whole string, ignoring case
// and runs of white space.
const whole = (s) => new RegExp("^\\s*" + s.trim().split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+") + "\\s*$", "i");

// build maps a target onto base (the page, or the locator a within part
// found): its within part chains first, then its own way, its filters and
// its nth, as cdp.Locator applies them.
function build(page, base, t, v) {
  let l = t.within ? build(page, base, t.within, v) : base;
  const str = (s) => (v.whole && !t.exact ? whole(s) : s);
  if (t.role) {
    l = t.name !== undefined ? l.getByRole(t.role, t.exact ? { name: t.name, exact: true } : { name: str(t.name) }) : l.getByRole(t.role);
  } else if (t.label !== undefined) {
    l = t.exact ? l.getByLabel(t.label, { exact: true }) : l.getByLabel(str(t.label));
    if (v.fields) l = l.and(page.locator(FIELDS));
  } else if (t.text !== undefined) {
    l = l.getByText(str(t.text));
  } else if (t.testId !== undefined) {
    l = l.getByTestId(t.testId);
  } else if (t.selector !== undefined) {
    l = l.locator(t.selector);
  } else {
    throw new Error("unmapped target " + JSON.stringify(t));
  }
  if (t.hasText) l = l.filter({ hasText: t.hasText });
  if (t.has) l = l.filter({ has: build(page, page, t.has, v) });
  if (t.nth !== undefined && t.nth !== null) l = l.nth(t.nth);
  return l;
}

// FIELDS are the elements a label target names in our lookup (forms.js's
// CONTROLS): fields and widgets, not any element with an aria-label.
const FIELDS = 'input:not([type=hidden]), textarea, select, button, [contenteditable=""], [contenteditable="true"], ' +
  "[role=textbox], [role=combobox], [role=checkbox], [role=radio], [role=switch], [role=listbox], [role=spinbutton], [role=slider]";

// labelled reports whether a target names a label at any level.
const labelled = (t) => !!t && (t.label !== undefined || labelled(t.within) || labelled(t.has));

// loose reports whether a target reads a name, label or text loosely at
// any level.
const loose = (t) => !!t && ((!t.exact && (t.name !== undefined || t.label !== undefined)) || t.text !== undefined || loose(t.within) || loose(t.has));

async function answer(page, t, v) {
  const l = build(page, page, t, v);
  const t0 = now();
  const count = await l.count();
  const us = now() - t0;
  const out = { count, us };
  if (count === 1) {
    const [id, text] = await l.evaluate((e) => [e.getAttribute("data-id"), e.innerText]);
    out.id = id ?? "";
    out.text = text ?? "";
  }
  return out;
}

// run answers one request.
async function run(context, { specs, variants = false, parallel = 1 }) {
  const out = {};
  const queue = Object.entries(specs);
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [url, targets] = next;
      const page = await context.newPage();
      await page.goto(url);
      const res = [];
      for (const t of targets) {
        try {
          const a = await answer(page, t, {});
          for (const [key, v, when] of [["whole", { whole: true }, loose(t)], ["fields", { fields: true }, labelled(t)],
            ["wholeFields", { whole: true, fields: true }, loose(t) && labelled(t)]]) {
            if (!variants || !when) continue;
            const w = await answer(page, t, v);
            delete w.us;
            a[key] = w;
          }
          res.push(a);
        } catch (e) {
          res.push({ count: -1, error: String(e.message || e).split("\n")[0] });
        }
      }
      out[url] = res;
      await page.close();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, worker));
  return out;
}

const browser = await chromium.launch({ executablePath, headless: true, args });
try {
  const context = await browser.newContext();
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim()) console.log(JSON.stringify(await run(context, JSON.parse(line))));
  }
} finally {
  await browser.close();
}
