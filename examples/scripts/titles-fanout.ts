// Tranquil automation. How to write one: ../../runner/sdk/writing-automations.md
// @permissions browser page-js sites=127.0.0.1,localhost
//
// Reads the links of the page in the active tab, opens every page they
// point to on the same site in a background tab, and collects the titles.
// All tabs are asked for at once: the app opens a few at a time and queues
// the rest in order, so the fan-out needs no pool of its own.
import { context, tabs } from "tranquil/automation";

const start = await tabs.active();
const here = new URL(await start.url());
const links = await start.evaluate(() =>
  Array.from(document.querySelectorAll("a[href]"), (a) => (a as HTMLAnchorElement).href)
);
const pages = [...new Set(links)].filter((href) => new URL(href).origin === here.origin);

async function titleOf(url: string): Promise<{ url: string; title: string }> {
  // `await using` closes the tab as soon as this function returns.
  await using tab = await tabs.open(url, { background: true });
  await tab.waitFor("h1");
  return { url: new URL(url).pathname, title: await tab.title() };
}

const rows = await Promise.all(pages.map(titleOf));
for (const row of rows) console.log(`${row.title}\t${row.url}`);
await context.result(rows);
