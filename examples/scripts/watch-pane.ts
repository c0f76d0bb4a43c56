// Tranquil automation. How to write one: ../../runner/sdk/writing-automations.md
// @permissions browser
// @timeout none
//
// A watcher: it adds a "Page title" button to the app's pane and stays
// running until it is stopped. Each click reads the active tab's title.
import { context, paneControls, tabs } from "tranquil/automation";

let clicks = 0;
await paneControls.register("Page title", async () => {
  const title = await (await tabs.active()).title();
  clicks++;
  console.log(`active tab: ${title}`);
  return title;
});
console.log(`watching: click "Page title" in the pane; stop the run to end it`);

// Wait until the run is cancelled; the reason says who stopped it.
const reason = await new Promise<unknown>((resolve) => {
  context.signal.addEventListener("abort", () => resolve(context.signal.reason), { once: true });
});
console.log(`stopped after ${clicks} click(s): ${(reason as Error).message}`);
