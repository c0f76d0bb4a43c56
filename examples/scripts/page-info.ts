// Tranquil automation. How to write one: ../../runner/sdk/writing-automations.md
// @permissions browser page-js write=page-info.txt
//
// Counts the links, images and headings of the page in the active tab,
// writes a summary to page-info.txt beside this script and opens it.
import { context, files, tabs, ui } from "tranquil/automation";

const tab = await tabs.active();
const stats = await tab.evaluate(() => ({
  title: document.title,
  links: document.querySelectorAll("a[href]").length,
  images: document.querySelectorAll("img").length,
  headings: document.querySelectorAll("h1, h2, h3, h4, h5, h6").length,
}));

const summary = `${stats.title}\n\nLinks: ${stats.links}  |  Images: ${stats.images}  |  Headings: ${stats.headings}\n`;
console.log(summary);
await ui.open(files.write("page-info.txt", summary), { split: "down" });
await context.result({ url: await tab.url(), ...stats });
