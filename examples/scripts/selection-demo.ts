// Tranquil automation. How to write one: ../../runner/sdk/writing-automations.md
// @permissions browser
//
// Run the whole file, or select one block below (from its "{" line to its
// "}" line) and run only the selection: it runs under this file's header
// and approval. Each block imports what it needs, so it stands alone.
// With the example host: run --lines 15-21 selection-demo.ts

{
  const { tabs } = await import("tranquil/automation");
  const tab = await tabs.active();
  console.log(`active tab: ${await tab.title()}`);
}

{
  const { context, tabs } = await import("tranquil/automation");
  const all = await tabs.all();
  const titles = await Promise.all(all.map((t) => t.title()));
  console.log(`${all.length} tab(s) open: ${titles.join(", ")}`);
  await context.result({ tabs: titles });
}
