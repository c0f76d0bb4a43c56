// pick.ts
// @permissions browser forms
import { context, tabs } from "tranquil/automation";

const tab = await tabs.active();
const nav = tab.waitForNavigation();
await tab.click({ role: "link", name: "Details", nth: 1 }); // the second product
await nav;
await context.result(await tab.text({ role: "heading" }));
