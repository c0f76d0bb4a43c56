// The pointer and keyboard verbs and the bulk readers in the fake host:
// recorded with what they were given, held to forms and sites=, and
// their options checked before anything is sent.

import { TabError, tabs } from "./mod.ts";
import { installFakeHost } from "./testing.ts";
import { assert, assertEquals, assertRejects } from "./test_helpers.ts";

const SHOP = "https://shop.example/cart";

Deno.test("pointer and keyboard verbs are recorded, need forms and keep to sites=", async () => {
  using host = installFakeHost({ permissions: "forms sites=shop.example", tabs: [{ url: SHOP }] });
  const tab = await tabs.active();
  await tab.hover({ role: "button", name: "Account" }, { position: { x: 3, y: 4 } });
  await tab.click({ text: "Ada" }, { button: "right", modifiers: ["Shift"], clickCount: 1 });
  await tab.dblclick({ text: "Ada" });
  await tab.dragTo({ text: "Three" }, { text: "One" });
  await tab.focus({ label: "Search" });
  await tab.type({ role: "textbox", name: "Editor" }, "hello", { delay: 20, dryRun: true });
  assertEquals(host.browser.actions.map((a) => [a.method, a.outcome]), [
    ["hover", "ok"],
    ["click", "ok"],
    ["dblclick", "ok"],
    ["dragTo", "ok"],
    ["focus", "ok"],
    ["type", "dry-run"],
  ]);
  assertEquals(host.browser.actions[3].to, { text: "One" });
  assertEquals(host.browser.actions[5].value, "hello");

  for (
    const [call, kind] of [
      [() => tab.click({ text: "x" }, { button: "fourth" as "left" }), "TabError"],
      [() => tab.click({ text: "x" }, { clickCount: 4 }), "TabError"],
      [() => tab.hover({ text: "x" }, { position: { x: Number.NaN, y: 1 } }), "RangeError"],
      [() => tab.hover({ text: "x" }, { modifiers: [""] }), "TypeError"],
      [() => tab.type({ text: "x" }, "a", { delay: -1 }), "RangeError"],
      [() => tab.dragTo({ text: "x" }, {} as never), "TypeError"],
      [() => tab.dblclick({ text: "x" }, { clickCount: 2 } as never), "TypeError"],
    ] as const
  ) {
    const e = await assertRejects(call);
    assertEquals(e.name, kind, e.message);
    assertEquals((e as { code?: string }).code, "invalid", e.message);
  }
  assertEquals(host.browser.actions.length, 6, "a refused option sends nothing");

  await tab.goto("https://news.example/");
  const off = await assertRejects(() => tab.hover({ text: "x" }));
  assert(off instanceof TabError && off.code === "site_not_allowed", off.message);

  using plain = installFakeHost({ permissions: "browser", tabs: [{ url: SHOP }] });
  const ro = await tabs.active();
  const e = await assertRejects(() => ro.dragTo({ text: "a" }, { text: "b" }));
  assertEquals((e as { code?: string }).code, "not_granted", e.message);
  assertEquals(plain.browser.actions.length, 0);
});

Deno.test("bulk readers answer from read and need only browser", async () => {
  using host = installFakeHost({
    permissions: "browser",
    tabs: [{ url: SHOP }],
    read: (_tab, reader) => {
      if (reader === "texts") return ["One", "Two"];
      if (reader === "values") return ["x"];
      if (reader === "table") return { headers: ["Name"], rows: [["Ada"], ["Bob"]] };
      return undefined;
    },
  });
  const tab = await tabs.active();
  assertEquals(await tab.texts({ selector: "li" }), ["One", "Two"]);
  assertEquals(await tab.values({ selector: "input" }), ["x"]);
  assertEquals(await tab.table({ role: "grid" }, { timeout: 100 }), { headers: ["Name"], rows: [["Ada"], ["Bob"]] });
  assertEquals(host.browser.actions.map((a) => a.method), ["texts", "values", "table"]);
});
