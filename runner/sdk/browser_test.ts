import { browserError } from "./browser.ts";
import { targetWrong } from "./served.ts";
import locatorCases from "../../cdp/testdata/locators.json" with { type: "json" };
import {
  EvaluateError,
  NotCommittedError,
  NotGrantedError,
  step,
  Tab,
  TabError,
  tabs,
  type Target,
  ui,
} from "./mod.ts";
import { installFakeHost, parsePermissions, siteAllowed } from "./testing.ts";
import { assert, assertEquals, assertRejects } from "./test_helpers.ts";

const SHOP = "https://shop.example/cart";
const NEWS = "https://news.example/today";

function twoTabs(permissions = "browser forms page-js") {
  return installFakeHost({
    permissions,
    tabs: [{ url: SHOP, title: "Cart" }, { id: "news", url: NEWS, title: "Today", active: true, triggered: true }],
    titles: { "https://shop.example/pay": "Pay" },
  });
}

Deno.test("tabs returns handles on the host's tabs", async () => {
  using host = twoTabs();
  const active = await tabs.active();
  assert(active instanceof Tab);
  assertEquals([active.id, await active.url(), await active.title()], ["news", NEWS, "Today"]);
  assertEquals((await tabs.all()).map((t) => t.id), ["tab-1", "news"]);
  assertEquals((await tabs.find("shop.")).map((t) => t.id), ["tab-1"]);
  assertEquals((await tabs.find("Today")).map((t) => t.id), ["news"], "find matches titles too");
  assertEquals(await tabs.find("nowhere"), []);
  assertEquals((await tabs.triggered())?.id, "news");
  assertEquals(host.browser.actions, [], "reads are not actions");
});

Deno.test("triggered is undefined for a run no tab started", async () => {
  using _host = installFakeHost({ permissions: "browser", tabs: [{ url: SHOP }] });
  assertEquals(await tabs.triggered(), undefined);
});

Deno.test("goto keeps the tab's id and url and title read the tab live", async () => {
  using host = twoTabs();
  const [tab] = await tabs.find("shop");
  for (const url of ["https://shop.example/pay", "https://shop.example/done"]) await tab.goto(url);
  assertEquals(tab.id, "tab-1");
  assertEquals(await tab.url(), "https://shop.example/done");
  assertEquals(await tab.title(), "https://shop.example/done", "a page without a title shows its URL");
  await tab.goto("https://shop.example/pay", { waitUntil: "domcontentloaded", timeout: 5000 });
  assertEquals(await tab.title(), "Pay");
  assertEquals(host.browser.actions.map((a) => [a.method, a.value, a.outcome]), [
    ["goto", "https://shop.example/pay", "ok"],
    ["goto", "https://shop.example/done", "ok"],
    ["goto", "https://shop.example/pay", "ok"],
  ]);
});

Deno.test("open, close and await using", async () => {
  using host = twoTabs();
  const bg = await tabs.open("https://shop.example/pay", { background: true });
  assertEquals((await tabs.active()).id, "news", "a background tab does not take focus");
  assertEquals(await bg.title(), "Pay");
  {
    await using fg = await tabs.open("https://example.org/");
    assertEquals((await tabs.active()).id, fg.id);
    assertEquals(host.browser.open.length, 4);
  }
  assertEquals(host.browser.open.map((t) => t.id), ["tab-1", "news", bg.id]);
  await bg.close();
  const e = await assertRejects(() => bg.url());
  assert(e instanceof TabError && e.code === "closed" && e.tab === bg.id, e.message);
  assertEquals(host.browser.tab(bg.id)?.openedByScript, true);
  assertEquals(host.browser.tab(bg.id)?.background, true);
});

Deno.test("await using tolerates a tab that is already gone, and only that", async () => {
  using host = twoTabs();
  {
    await using tab = await tabs.open("https://example.org/");
    await tab.close();
  }
  {
    await using tab = await tabs.open("https://example.org/");
    host.browser.tab(tab.id)!.closed = true; // the user closed it
  }
  const tab = await tabs.open("https://example.org/");
  host.browser.fail({ method: "close", tab: tab.id, error: { code: "timeout", message: "the browser hung" } });
  const e = await assertRejects(() => tab[Symbol.asyncDispose]());
  assert(e instanceof TabError && e.code === "timeout", e.message);
  assertEquals(host.browser.actions.filter((a) => a.method === "close").map((a) => a.outcome), [
    "ok",
    "closed",
    "timeout",
  ]);
});

Deno.test("a tab the host does not know is not_found", async () => {
  using _host = twoTabs();
  const e = await assertRejects(() => new Tab("nope").title());
  assert(e instanceof TabError && e.code === "not_found" && e.api === "tab.title", e.message);
  {
    using _empty = installFakeHost({ permissions: "browser" });
    const a = await assertRejects(() => tabs.active());
    assert(a instanceof TabError && a.code === "not_found", a.message);
  }
});

Deno.test("form actions reach the page and are recorded", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  const state = await tab.fill({ label: "Email" }, "ada@example.com");
  assertEquals(state, { value: "ada@example.com", invalid: false, validationMessage: "", errorText: "" });
  await tab.check({ role: "checkbox", name: "Remember me" });
  await tab.check({ name: "newsletter" }, false);
  await tab.select({ label: "Country" }, "Norway", { parts: { trigger: ".dd", option: ".dd li" } });
  await tab.click({ text: "Sign in" }, { timeout: 1000 });
  await tab.press("Enter", { target: { placeholder: "Search" }, modifiers: ["Shift"] });
  await tab.press("Tab");
  const f = host.browser.tab("news")!;
  assertEquals(
    [f.value({ label: "Email" }), f.value({ name: "Remember me", role: "checkbox" }), f.value({ name: "newsletter" })],
    ["ada@example.com", true, false],
  );
  assertEquals(f.value({ label: "Country" }), "Norway");
  assertEquals(host.browser.actions.map((a) => [a.method, a.target, a.value, a.outcome]), [
    ["fill", { label: "Email" }, "ada@example.com", "ok"],
    ["check", { role: "checkbox", name: "Remember me" }, true, "ok"],
    ["check", { name: "newsletter" }, false, "ok"],
    ["select", { label: "Country" }, "Norway", "ok"],
    ["click", { text: "Sign in" }, undefined, "ok"],
    ["press", { placeholder: "Search" }, "Enter", "ok"],
    ["press", undefined, "Tab", "ok"],
  ]);
});

Deno.test("a dry run checks and records but changes nothing", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  await tab.fill({ label: "Amount" }, "10");
  const state = await tab.fill({ label: "Amount" }, "99", { dryRun: true });
  assertEquals(state.value, "10");
  await tab.select({ testId: "plan" }, "Pro", { dryRun: true });
  assertEquals(host.browser.tab("news")!.value({ testId: "plan" }), undefined);
  assertEquals(host.browser.actions.map((a) => [a.outcome, a.dryRun]), [["ok", undefined], ["dry-run", true], [
    "dry-run",
    true,
  ]]);
});

Deno.test("bad targets are refused before anything is sent", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  const bad: [unknown, string][] = [
    ["#email", "target must be an object, not a string"],
    [null, "names no element"],
    [["label"], "target must be an object, not a list"],
    [{}, "names no element"],
    [{ label: "A", text: "B" }, "more than one way"],
    [{ name: "q", label: "Q" }, "more than one way"],
    [{ css: "#x" }, 'unknown key "css" in target'],
    [{ label: "" }, "names no element"],
    [{ selector: 3 }, "target.selector must be a string, not a number"],
    [{ frame: 3, label: "A" }, "target.frame must be a string"],
    [{ label: "A", exact: "yes" }, "target.exact must be true or false, not a string"],
  ];
  for (const [target, why] of bad) {
    for (const call of [() => tab.fill(target as Target, "x"), () => tab.click(target as Target)]) {
      const e = await assertRejects(call);
      assert(e instanceof TypeError && e.message.includes(why), `${JSON.stringify(target)}: ${e.message}`);
      assert(e.message.includes("a target is one of {label}"), "the message says what a target is");
      assertEquals((e as { code?: string }).code, "invalid");
    }
  }
  const p = await assertRejects(() => tab.press("Enter", { target: { id: "x" } as never }));
  assert(p instanceof TypeError, p.message);
  assertEquals(host.browser.actions, []);
});

Deno.test("the fake host's target check is cdp's Locator.Check, over cdp/testdata/locators.json", () => {
  const cases = locatorCases.cases as { target: Record<string, unknown>; ok?: boolean; invalid?: string }[];
  assert(cases.length > 0);
  for (const c of cases) {
    const why = targetWrong(c.target);
    const what = `${JSON.stringify(c.target)}: ${why}`;
    assert(c.ok ? why === undefined : why?.includes(c.invalid!), what);
  }
});

Deno.test("bad options and arguments are refused before anything is sent", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  const cases: [() => Promise<unknown>, string][] = [
    [() => tab.goto("shop.example/x"), "not an absolute URL"],
    [() => tab.goto(42 as never), "tab.goto: argument 1 must be a string, not a number"],
    [() => tabs.open("/relative"), "not an absolute URL"],
    [() => tabs.open(SHOP, { background: "yes" as never }), "options.background must be true or false, not a string"],
    [() => tab.fill({ label: "A" }, 5 as never), "tab.fill: argument 2 must be a string, not a number"],
    [() => tab.fill({ label: "A" }, "x", { dryRun: 1 as never }), "options.dryRun must be true or false, not a number"],
    [() => tab.select({ label: "A" }, "x", { parts: { option: 1 as never } }), "options.parts.option must be a string"],
    [() => tab.check({ label: "A" }, "on" as never), "tab.check: argument 2 must be true or false, not a string"],
    [() => tab.press("a", { modifiers: "Shift" as never }), "options.modifiers must be a list, not a string"],
    [() => tab.press("a", { modifiers: ["Shift", 1 as never] }), "options.modifiers[1] must be a string, not a number"],
    [() => tab.click({ label: "A" }, { clickCount: 1.5 }), "options.clickCount must be a whole number, not a number"],
    [() => tab.screenshot({ fullPage: "yes" as never }), "options.fullPage must be true or false, not a string"],
    [() => tabs.find(3 as never), "tabs.find: argument 1 must be a string, not a number"],
    [() => tab.fill({ label: "A" }, "x", { timeout: () => 1 } as never), "tab.fill: options holds a function"],
  ];
  for (const [call, why] of cases) {
    const e = await assertRejects(call);
    assert((e instanceof TypeError || e instanceof TabError) && e.message.includes(why), `${why}: ${e.message}`);
    assertEquals((e as { code?: string }).code, why.includes("function") ? "not_serializable" : "invalid", why);
  }
  assertEquals(host.browser.actions, []);
  assertEquals(host.browser.open.length, 2);
});

Deno.test("an unknown key of options or of a target is refused at run time, naming the closest known key", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  const cases: [() => unknown, string][] = [
    [() => tab.waitFor("#x", { timout: 5 } as never), 'unknown key "timout"; did you mean "timeout"?'],
    [() => tab.goto(SHOP, { waitUnitl: "load" } as never), 'unknown key "waitUnitl"; did you mean "waitUntil"?'],
    [() => tab.fill({ label: "A" }, "x", { dryrun: true } as never), 'unknown key "dryrun"; did you mean "dryRun"?'],
    [() => tab.click({ label: "A" }, { timeOut: 5 } as never), 'unknown key "timeOut"; did you mean "timeout"?'],
    [() => tab.press("a", { modifier: ["Shift"] } as never), 'unknown key "modifier"; did you mean "modifiers"?'],
    [() => tab.text({ label: "A" }, { timout: 5 } as never), 'unknown key "timout"; did you mean "timeout"?'],
    [() => tab.screenshot({ fullpage: true } as never), 'unknown key "fullpage"; did you mean "fullPage"?'],
    [() => tabs.open(SHOP, { backgroud: true } as never), 'unknown key "backgroud"; did you mean "background"?'],
    [() => tab.expect({ label: "A" }).toHaveText("x", { timeuot: 5 } as never), 'did you mean "timeout"?'],
    [() => tab.click({ rol: "button" } as never), 'unknown key "rol"; did you mean "role"?'],
    [() => tab.click({ label: "A", hastext: "x" } as never), 'unknown key "hastext"; did you mean "hasText"?'],
    [() => tab.click({ role: "row", within: { lable: "x" } } as never), 'unknown key "lable"; did you mean "label"?'],
    [() => tab.click({ label: "A", zzzzzz: 1 } as never), 'unknown key "zzzzzz"'],
    [() => step.do("s", () => 1, { retrys: 2 } as never), 'unknown key "retrys"; did you mean "retries"?'],
    [() => ui.notify("x", { levle: "info" } as never), 'unknown key "levle"; did you mean "level"?'],
  ];
  for (const [call, why] of cases) {
    let e: unknown;
    try {
      await call();
    } catch (err) {
      e = err;
    }
    // The host's words: unknown key "k" in options (it takes …); did you mean "key"?
    assert(e instanceof TypeError && why.split("; ").every((w) => e.message.includes(w)), `${why}: ${e}`);
    assertEquals((e as { code?: string }).code, "invalid", why);
  }
  assertEquals(host.browser.actions, []);
});

Deno.test("scripted failures arrive as typed errors with their code", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  host.browser.fail({
    method: "fill",
    target: { label: "Qty" },
    error: { code: "not_committed", message: "the page did not keep the value", kept: "10" },
  });
  for (const code of ["stale_ref", "timeout", "navigation", "ambiguous", "obscured", "hidden"]) {
    host.browser.fail({ method: "click", target: { testId: code }, error: { code, candidates: [code] } });
  }
  const e = await assertRejects(() => tab.fill({ label: "Qty" }, "12"));
  assert(e instanceof NotCommittedError && e instanceof TabError, e.message);
  assertEquals([e.code, e.kept, e.api, e.tab], ["not_committed", "10", "tab.fill", "news"]);
  assertEquals(e.message, "tab.fill: the page did not keep the value");
  assert(e.cause instanceof Error && !(e.cause instanceof TabError), "the host's error is the cause");
  for (const code of ["stale_ref", "timeout", "navigation", "ambiguous", "obscured", "hidden"]) {
    const c = await assertRejects(() => tab.click({ testId: code }));
    assert(c instanceof TabError && c.name === "TabError" && c.code === code, c.message);
    assertEquals(c.details, { candidates: [code] });
  }
  assertEquals(host.browser.actions.map((a) => a.outcome), [
    "not_committed",
    "stale_ref",
    "timeout",
    "navigation",
    "ambiguous",
    "obscured",
    "hidden",
  ]);
  assertEquals(host.browser.actions[0].value, "12", "the fake records the value, unlike the app's log");
});

Deno.test("a scripted refusal of an argument arrives as the app's does, its fields in details", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  const takes = ["dryRun", "parts", "timeout"];
  host.browser.fail({
    method: "click",
    error: {
      code: "invalid",
      message: 'tab.click: unknown key "dryrn" in options (it takes dryRun, parts, timeout)',
      argument: 3,
      path: "",
      key: "dryrn",
      takes,
      closest: "dryRun",
    },
  });
  const e = await assertRejects(() => tab.click({ label: "A" }));
  assert(e instanceof TabError && e.code === "invalid", String(e));
  assertEquals(
    e.message.split(" (at ")[0],
    'tab.click: unknown key "dryrn" in options (it takes dryRun, parts, timeout); did you mean "dryRun"?',
  );
  assertEquals(e.details, { argument: 3, path: "", key: "dryrn", takes, closest: "dryRun" });
});

Deno.test("a failure scripted for some calls lets a retry succeed", async () => {
  using host = installFakeHost({
    permissions: "forms",
    tabs: [{ url: SHOP }],
    failures: [{ method: "click", times: 2, error: { code: "obscured" } }],
  });
  const tab = await tabs.active();
  let tries = 0;
  for (;;) {
    tries++;
    try {
      await tab.click({ role: "button", name: "Pay" });
      break;
    } catch (e) {
      if (!(e instanceof TabError) || e.code !== "obscured") throw e;
    }
  }
  assertEquals(tries, 3);
  assertEquals(host.browser.actions.map((a) => a.outcome), ["obscured", "obscured", "ok"]);
});

Deno.test("a goto or open that fails is scripted by URL", async () => {
  using host = twoTabs();
  host.browser.fail({
    url: "https://down.example/",
    error: { code: "navigation", message: "net::ERR_NAME_NOT_RESOLVED" },
  });
  const tab = await tabs.active();
  const e = await assertRejects(() => tab.goto("https://down.example/"));
  assert(e instanceof TabError && e.code === "navigation" && e.message.includes("ERR_NAME"), e.message);
  assertEquals(await tab.url(), NEWS, "a failed goto leaves the tab where it was");
  const o = await assertRejects(() => tabs.open("https://down.example/"));
  assert(o instanceof TabError && o.code === "navigation" && o.api === "tabs.open", o.message);
  assertEquals(host.browser.tabs.length, 2, "a tab that failed to open is gone");
});

Deno.test("a missing permission names its key, before and at the host", async () => {
  {
    using host = installFakeHost({ permissions: "clipboard", tabs: [{ url: SHOP }] });
    for (const call of [() => tabs.active(), () => tabs.all(), () => new Tab("tab-1").url()]) {
      const e = await assertRejects(call);
      assert(e instanceof NotGrantedError && e.code === "not_granted" && e.permission === "browser", e.message);
    }
    assertEquals(host.browser.actions, []);
  }
  {
    using host = installFakeHost({ permissions: "browser", tabs: [{ url: SHOP }] });
    const tab = await tabs.active();
    const f = await assertRejects(() => tab.fill({ label: "A" }, "x"));
    assert(f instanceof NotGrantedError && f.code === "not_granted" && f.capability === "forms", f.message);
    assertEquals(f.message, 'tab.fill is not granted to this script: add "forms" to its // @permissions line');
    const v = await assertRejects(() => tab.evaluate(() => 1));
    assert(v instanceof NotGrantedError && v.permission === "page-js", v.message);
    assertEquals(host.browser.actions, []);
  }
  {
    // The host refuses too, for example when the approval changed meanwhile.
    using host = twoTabs();
    host.browser.fail({ method: "fill", error: { code: "not_granted", message: "forms is not granted" } });
    const tab = await tabs.active();
    const h = await assertRejects(() => tab.fill({ label: "A" }, "x"));
    assert(h instanceof NotGrantedError && h.permission === "forms" && h.cause instanceof Error, h.message);
  }
});

Deno.test("sites= limits form actions and evaluate, not reading or navigating", async () => {
  using host = installFakeHost({
    permissions: "browser forms page-js sites=shop.example,*.cdn.example",
    tabs: [{ url: NEWS }],
    evaluate: () => "ran",
  });
  const tab = await tabs.active();
  assertEquals(await tab.title(), NEWS);
  for (const call of [() => tab.fill({ label: "A" }, "x"), () => tab.evaluate(() => 1), () => tab.press("Enter")]) {
    const e = await assertRejects(call);
    assert(e instanceof TabError && e.code === "site_not_allowed", e.message);
  }
  await tab.goto(SHOP);
  await tab.fill({ label: "A" }, "x");
  await tab.goto("https://img.cdn.example/x");
  assertEquals(await tab.evaluate(() => 1), "ran");
  assertEquals(host.browser.actions.map((a) => [a.method, a.outcome]), [
    ["fill", "site_not_allowed"],
    ["evaluate", "site_not_allowed"],
    ["press", "site_not_allowed"],
    ["goto", "ok"],
    ["fill", "ok"],
    ["goto", "ok"],
    ["evaluate", "ok"],
  ]);
});

Deno.test("siteAllowed matches hosts as sites= does", () => {
  const sites = ["Shop.Example.", "*.cdn.example"];
  for (const url of ["https://shop.example/", "http://SHOP.example:8080/x", "https://a.b.cdn.example/"]) {
    assert(siteAllowed(url, sites), url);
  }
  for (const url of ["https://cdn.example/", "https://evil-shop.example/", "file:///shop.example", "not a url"]) {
    assert(!siteAllowed(url, sites), url);
  }
  assert(!siteAllowed("https://shop.example.evil/", sites));
});

Deno.test("evaluate sends the function's source and its arguments by value", async () => {
  const seen: [string, string, unknown[]][] = [];
  using host = installFakeHost({
    permissions: "page-js",
    tabs: [{ url: SHOP }],
    evaluate: (tab, source, args) => {
      seen.push([tab.id, source, args]);
      return { links: 3, args };
    },
  });
  const tab = await tabs.active();
  const arg = { sel: "a[href]", deep: [1, { x: null }], gone: undefined };
  const r = await tab.evaluate((o: typeof arg, n: number) => document.querySelectorAll(o.sel).length + n, arg, 2);
  assertEquals(seen[0][0], "tab-1");
  assertEquals(seen[0][1], "(o, n)=>document.querySelectorAll(o.sel).length + n");
  assertEquals(seen[0][2], [{ sel: "a[href]", deep: [1, { x: null }] }, 2]);
  assertEquals(r, { links: 3, args: [{ sel: "a[href]", deep: [1, { x: null }] }, 2] } as never);
  await tab.evaluate(async function named(x: string) {
    return await Promise.resolve(x);
  }, "y");
  assert(seen[1][1].startsWith("async function named(x)"), seen[1][1]);
  assertEquals(host.browser.actions.map((a) => a.method), ["evaluate", "evaluate"]);
});

Deno.test("evaluate refuses what cannot run or travel, clearly", async () => {
  using host = installFakeHost({ permissions: "page-js", tabs: [{ url: SHOP }], evaluate: () => null });
  const tab = await tabs.active();
  const fns: [unknown, string][] = [
    ["document.title", "needs a function, such as () => document.title, got a string"],
    [undefined, "got undefined"],
    [Math.max, "built-in or bound function"],
    [(() => 1).bind(null), "built-in or bound function"],
    [class Foo {}, "a class cannot run in the page"],
  ];
  for (const [fn, why] of fns) {
    const e = await assertRejects(() => tab.evaluate(fn as () => void));
    assert(e instanceof TypeError && e.message.includes(why), e.message);
  }
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const args: [unknown, string][] = [
    [() => 1, "argument 1 is a function"],
    [new Date(0), "argument 1 is a Date"],
    [new Map(), "argument 1 is a Map"],
    [NaN, "argument 1 is NaN"],
    [undefined, "argument 1 is undefined"],
    [[1, undefined], "argument 1[1] is undefined"],
    [{ a: { b: 1n } }, "argument 1.a.b is a bigint"],
    [Symbol("s"), "argument 1 is a symbol"],
    [cyclic, "argument 1.self is a circular reference"],
  ];
  for (const [arg, why] of args) {
    const e = await assertRejects(() => tab.evaluate((_x: unknown) => 1, arg));
    assert(e instanceof TypeError && e.message.includes(why) && e.message.includes("JSON values"), e.message);
  }
  const shared = { n: 1 };
  await tab.evaluate((_a: unknown, _b: unknown) => 1, shared, [shared]);
  assertEquals(host.browser.actions.length, 1, "only the last call was sent: a shared object is no cycle");
});

Deno.test("a page error arrives as an EvaluateError", async () => {
  using _host = installFakeHost({
    permissions: "page-js",
    tabs: [{ url: SHOP }],
    evaluate: () => {
      throw Object.assign(new Error("TypeError: x is undefined"), {
        code: "eval_error",
        remoteName: "TypeError",
        remoteMessage: "x is undefined",
        line: 1,
        column: 14,
      });
    },
  });
  const tab = await tabs.active();
  const e = await assertRejects(() => tab.evaluate(() => (undefined as unknown as { y: number }).y));
  assert(e instanceof EvaluateError && e instanceof TabError, e.message);
  assertEquals([e.code, e.remoteName, e.remoteMessage, e.line, e.column], [
    "eval_error",
    "TypeError",
    "x is undefined",
    1,
    14,
  ]);
});

Deno.test("the fake without an evaluate option says so", async () => {
  using _host = installFakeHost({ permissions: "page-js", tabs: [{ url: SHOP }] });
  const e = await assertRejects(async () => await (await tabs.active()).evaluate(() => 1));
  assert(!(e instanceof TabError) && e.message.includes("pass evaluate to installFakeHost"), e.message);
});

Deno.test("waitForNavigation, started before the click that navigates", async () => {
  using host = installFakeHost({
    permissions: "forms page-js",
    tabs: [{ url: SHOP }],
    titles: { "https://shop.example/pay": "Pay" },
    onAction: (a, tab) => {
      if (a.method === "click" && a.target && "text" in a.target && a.target.text === "Checkout") {
        setTimeout(() => host.browser.navigate(tab.id, "https://shop.example/pay"), 5);
      }
    },
  });
  const tab = await tabs.active();
  const nav = tab.waitForNavigation({ waitUntil: "load", timeout: 2000 });
  await tab.click({ text: "Checkout" });
  await nav;
  assertEquals([await tab.url(), await tab.title()], ["https://shop.example/pay", "Pay"]);
  assertEquals(host.browser.actions.map((a) => [a.method, a.outcome]), [["click", "ok"], ["waitForNavigation", "ok"]]);
});

Deno.test("a navigation that never comes times out, thrown where it is awaited", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  const nav = tab.waitForNavigation({ timeout: 10 });
  // The rejection arrives while nothing awaits it yet: it must not count as unhandled.
  await new Promise((r) => setTimeout(r, 50));
  const e = await assertRejects(() => nav);
  assert(e instanceof TabError && e.code === "timeout" && e.api === "tab.waitForNavigation", e.message);
  const bad = tab.waitForNavigation({ waitUntil: 5 as never });
  assert((await assertRejects(() => bad)) instanceof TypeError);
  const closing = tab.waitForNavigation();
  await tab.close();
  const c = await assertRejects(() => closing);
  assert(c instanceof TabError && c.code === "closed", c.message);
  assertEquals(host.browser.actions.map((a) => [a.method, a.outcome]), [
    ["waitForNavigation", "timeout"],
    ["close", "ok"],
    ["waitForNavigation", "closed"],
  ]);
});

Deno.test("waitFor and screenshot", async () => {
  using host = twoTabs();
  host.browser.fail({ method: "waitFor", target: { selector: "#never" }, error: { code: "timeout" } });
  const tab = await tabs.active();
  await tab.waitFor("#ready", { timeout: 100 });
  const e = await assertRejects(() => tab.waitFor("#never"));
  assert(e instanceof TabError && e.code === "timeout", e.message);
  const png = await tab.screenshot({ fullPage: true });
  assert(png instanceof Uint8Array);
  assertEquals([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assertEquals(host.browser.actions.map((a) => [a.method, a.outcome]), [
    ["waitFor", "ok"],
    ["waitFor", "timeout"],
    ["screenshot", "ok"],
  ]);
});

Deno.test("browserError leaves errors without a code alone", () => {
  const plain = new Error("connection lost");
  assert(browserError(plain, "tab.url", "tab") === plain);
  assert(browserError("text", "tab.url", "tab") === "text");
  const empty = Object.assign(new Error("x"), { code: "" });
  assert(browserError(empty, "tab.url", "tab") === empty);
  const odd = browserError(Object.assign(new TypeError("odd"), { code: "future_code", kept: 1 }), "tab.fill", "forms");
  assert(odd instanceof TabError && odd.code === "future_code" && odd.details.kept === 1);
  const nc = browserError(Object.assign(new Error("nc"), { code: "not_committed", kept: 5 }), "tab.fill", "forms");
  assert(
    nc instanceof NotCommittedError && nc.kept === undefined && nc.details.kept === 5,
    "a non-string kept stays in details",
  );
  const ev = browserError(Object.assign(new Error("boom"), { code: "eval_error" }), "tab.evaluate", "pageJs");
  assert(ev instanceof EvaluateError && ev.remoteMessage === "boom" && ev.line === 0 && ev.remoteName === "");
});

Deno.test("an argument the host refuses is an invalid TypeError with the host's fields, the closest key said from them", () => {
  const takes = ["dryRun", "parts", "timeout"];
  const refused = Object.assign(
    new TypeError('tab.click: unknown key "timout" in options (it takes dryRun, parts, timeout)'),
    { code: "invalid", argument: 2, path: "", key: "timout", takes, closest: "timeout" },
  );
  type Refused = TypeError & { code: string; details: Record<string, unknown> } & Record<string, unknown>;
  const e = browserError(refused, "tab.click", "forms", "t1") as Refused;
  assert(e instanceof TypeError && !(e instanceof TabError) && e.code === "invalid", String(e));
  assertEquals(
    e.message,
    'tab.click: unknown key "timout" in options (it takes dryRun, parts, timeout); did you mean "timeout"?',
    "the API said once, the suggestion from closest",
  );
  assertEquals(e.details, { argument: 2, path: "", key: "timout", takes, closest: "timeout" });
  assert(e.key === "timout" && (e.takes as string[])[1] === "parts" && e.argument === 2, "the fields on the error too");
  assert(e.cause === refused);

  // The suggestion is the field's, never read from the message.
  const far = browserError(
    Object.assign(new TypeError('tab.click: unknown key "timout" in options (it takes timeout)'), {
      code: "invalid",
      key: "timout",
      takes: ["timeout"],
    }),
    "tab.click",
    "forms",
  );
  assert(far instanceof TypeError && !far.message.includes("did you mean"), String(far));

  const typed = browserError(
    Object.assign(new TypeError("tab.goto: options.timeout must be a number, not a string"), {
      code: "invalid",
      argument: 3,
      path: ".timeout",
      want: "a number",
      got: "a string",
    }),
    "tab.goto",
    "tab",
  );
  assert(typed instanceof TypeError && (typed as Refused).code === "invalid", String(typed));
  assertEquals(typed.message, "tab.goto: options.timeout must be a number, not a string");
  const d = (typed as Refused).details;
  assert(d.path === ".timeout" && d.want === "a number" && d.got === "a string");
  const range = browserError(
    Object.assign(new RangeError("tab.goto: timeout must be a positive, finite number of milliseconds"), {
      code: "invalid",
    }),
    "tab.goto",
    "tab",
  );
  assert(range instanceof RangeError && (range as Refused).code === "invalid", String(range));

  // The bridge's own refusal names only the argument, with no code.
  const bridge = Object.assign(new TypeError("argument 2 must be a string, not a number"), { argument: 2 });
  const b = browserError(bridge, "tab.goto", "tab") as Refused;
  assert(b instanceof TypeError && b.code === "invalid" && b.details.argument === 2 && b.argument === 2, String(b));
  const other = new TypeError("argument 1: x is not a function");
  assert(
    browserError(other, "tab.click", "forms") === other,
    "only a refusal with its fields; the message is not read",
  );
});

Deno.test("permissions map to capabilities as the app maps them", () => {
  assertEquals(parsePermissions("none").grant.sort(), ["config", "context", "paneControls", "ui"]);
  assertEquals(parsePermissions("forms net=example.com read=./data").grant.sort(), [
    "config",
    "context",
    "forms",
    "paneControls",
    "tab",
    "tabs",
    "ui",
  ]);
  assertEquals(parsePermissions("browser").grant.includes("workspace"), true);
  assertEquals(parsePermissions("page-js sites=a.example sites=*.b.example").sites, ["*.b.example", "a.example"]);
  assertEquals(parsePermissions("page-js").sites, undefined);
  for (const bad of ["brwoser", "cookies=all"]) {
    let threw = false;
    try {
      parsePermissions(bad);
    } catch (e) {
      threw = e instanceof TypeError && e.message.includes("unknown key");
    }
    assert(threw, bad);
  }
  let both = false;
  try {
    installFakeHost({ permissions: "browser", grant: ["tabs"] });
  } catch (e) {
    both = e instanceof TypeError;
  }
  assert(both);
});

Deno.test("fake tabs need distinct ids", () => {
  let threw = false;
  try {
    installFakeHost({ permissions: "browser", tabs: [{ id: "a", url: SHOP }, { id: "a", url: NEWS }] });
  } catch (e) {
    threw = e instanceof TypeError && e.message.includes('"a"');
  }
  assert(threw);
});

Deno.test("goto resolves to the response's status and the address after redirects", async () => {
  using _host = installFakeHost({
    permissions: "browser",
    tabs: [{ url: SHOP }],
    responses: {
      "https://shop.example/gone": { status: 404 },
      "https://shop.example/old": { status: 200, url: "https://shop.example/new" },
    },
  });
  const tab = await tabs.active();
  assertEquals(await tab.goto("https://shop.example/pay"), { status: 200, url: "https://shop.example/pay" });
  assertEquals(await tab.goto("https://shop.example/gone"), { status: 404, url: "https://shop.example/gone" });
  assertEquals(await tab.goto("https://shop.example/old"), { status: 200, url: "https://shop.example/new" });
  assertEquals(await tab.url(), "https://shop.example/new");
});

Deno.test("readers need only browser, are held to sites= and are recorded", async () => {
  using host = installFakeHost({
    permissions: "browser forms sites=shop.example",
    tabs: [{ url: SHOP }],
    read: (_tab, reader, target, name) => {
      if (reader === "text") return `text of ${JSON.stringify(target)}`;
      if (reader === "attribute") return name === "href" ? "/pay" : null;
      if (reader === "visible") return true;
      if (reader === "count") return 3;
      return undefined;
    },
  });
  const tab = await tabs.active();
  host.browser.tab(tab.id)!.setValue({ label: "Email" }, "ada@example.com");
  host.browser.tab(tab.id)!.setValue({ label: "Agree" }, true);
  assertEquals(await tab.text({ testId: "total" }), `text of {"testId":"total"}`);
  assertEquals(await tab.attribute({ role: "link", name: "Pay" }, "href"), "/pay");
  assertEquals(await tab.attribute({ role: "link", name: "Pay" }, "title"), null);
  assertEquals(await tab.visible({ text: "Sold out" }), true);
  assertEquals(await tab.count({ selector: "li.item" }), 3);
  await tab.waitFor({ role: "button", name: "Pay" }, { timeout: 100 });

  using plain = installFakeHost({ permissions: "browser", tabs: [{ url: NEWS }] });
  const other = await tabs.active();
  plain.browser.tab(other.id)!.setValue({ label: "Email" }, "ada@example.com");
  assertEquals(await other.value({ label: "Email" }), "ada@example.com", "value reads what the page holds");
  assertEquals(await other.checked({ label: "Agree" }), false);
  const noRead = await assertRejects(() => other.text({ testId: "x" }));
  assert(noRead.message.includes("pass read to installFakeHost"), noRead.message);
  assertEquals(plain.browser.actions.map((a) => [a.method, a.outcome]), [
    ["value", "ok"],
    ["checked", "ok"],
    ["text", "error"],
  ]);
  plain.uninstall();

  await tab.goto(NEWS);
  const e = await assertRejects(() => tab.text({ testId: "total" }));
  assert(e instanceof TabError && e.code === "site_not_allowed", e.message);
  const bad = await assertRejects(() => tab.attribute({ testId: "total" }, 5 as never));
  assert(bad instanceof TypeError, bad.message);
  assertEquals(host.browser.actions.map((a) => a.method), [
    "text",
    "attribute",
    "attribute",
    "visible",
    "count",
    "waitFor",
    "goto",
    "text",
  ]);
  assertEquals(host.browser.actions.at(-1)?.outcome, "site_not_allowed");
});

Deno.test("select takes a list of options for a multiple select", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  assertEquals(await tab.select({ label: "Size" }, "M"), "M");
  assertEquals(await tab.select({ label: "Toppings" }, ["Olives", "Basil"]), ["Olives", "Basil"]);
  assertEquals(host.browser.tab(tab.id)!.value({ label: "Toppings" }), ["Olives", "Basil"]);
  const e = await assertRejects(() => tab.select({ label: "Toppings" }, ["Olives", 3 as unknown as string]));
  assert(e instanceof TypeError, e.message);
});

Deno.test("setFiles hands a page only files under read=", async () => {
  using host = installFakeHost({
    permissions: "browser forms read=uploads,cv.pdf",
    scriptDir: "/home/ada/scripts",
    tabs: [{ url: SHOP }],
  });
  const tab = await tabs.active();
  await tab.setFiles({ label: "CV" }, "cv.pdf");
  await tab.setFiles({ label: "Photos" }, ["uploads/a.png", "/home/ada/scripts/uploads/b.png"]);
  await tab.setFiles({ label: "Photos" }, []);
  const e = await assertRejects(() => tab.setFiles({ label: "CV" }, ["../secrets.txt"]));
  assert(e instanceof NotGrantedError, e.message);
  assertEquals(e.permission, "read=../secrets.txt");
  assert(e.message.includes('add "read=../secrets.txt"'), e.message);
  const bad = await assertRejects(() => tab.setFiles({ label: "CV" }, [3 as never]));
  assert(bad instanceof TypeError, bad.message);
  assertEquals(host.browser.actions.map((a) => [a.method, a.value, a.outcome]), [
    ["setFiles", ["cv.pdf"], "ok"],
    ["setFiles", ["uploads/a.png", "/home/ada/scripts/uploads/b.png"], "ok"],
    ["setFiles", [], "ok"],
    ["setFiles", ["../secrets.txt"], "not_granted"],
  ]);
  const none = installFakeHost({ permissions: "browser read=cv.pdf", tabs: [{ url: SHOP }] });
  try {
    const denied = await assertRejects(() => tab.setFiles({ label: "CV" }, "cv.pdf"));
    assert(denied instanceof NotGrantedError && denied.permission === "forms", denied.message);
  } finally {
    none.uninstall();
  }
});

Deno.test("onDialog sets how a tab answers dialogs", async () => {
  using host = twoTabs();
  const tab = await tabs.active();
  assertEquals(host.browser.dialog(tab.id, "confirm"), { accept: false }, "dismissed by default");
  await tab.onDialog("accept");
  assertEquals(host.browser.dialog(tab.id, "alert"), { accept: true });
  await tab.onDialog({ prompt: { accept: true, promptText: "Ada" }, beforeunload: "accept" });
  assertEquals(host.browser.dialog(tab.id, "prompt"), { accept: true, promptText: "Ada" });
  assertEquals(host.browser.dialog(tab.id, "beforeunload"), { accept: true });
  assertEquals(host.browser.dialog(tab.id, "confirm"), { accept: false }, "types left out are dismissed");
  await tab.onDialog({ accept: true, promptText: "Bob" });
  assertEquals(host.browser.dialog(tab.id, "prompt"), { accept: true, promptText: "Bob" });
  for (const bad of ["yes", {}, { popup: "accept" }, { confirm: "maybe" }, { accept: "true" }, null]) {
    const e = await assertRejects(() => tab.onDialog(bad as never));
    assert(e instanceof TypeError, e.message);
  }
  using _browserOnly = installFakeHost({ permissions: "browser", tabs: [{ url: SHOP }] });
  const e = await assertRejects(() => tab.onDialog("accept"));
  assert(e instanceof NotGrantedError && e.permission === "forms", e.message);
});

Deno.test("waitForDownload runs its action between watching and waiting, and gives up when the action fails", async () => {
  const order: string[] = [];
  using host = installFakeHost({
    permissions: "browser forms write=downloads",
    tabs: [{ url: SHOP }],
    download: (_tab, path) => {
      order.push(`download ${path}`);
      return { name: "report.csv", size: 12 };
    },
  });
  const tab = await tabs.active();
  const file = await tab.waitForDownload(() => {
    order.push("action");
  }, { path: "downloads/" });
  assertEquals(file, { name: "report.csv", size: 12, path: "downloads/report.csv" });
  assertEquals(order, ["action", "download downloads/"]);
  const boom = await assertRejects(() =>
    tab.waitForDownload(() => {
      throw new Error("boom");
    }, { path: "downloads/" })
  );
  assertEquals(boom.message, "boom", "the action's own error");
  assertEquals(order.length, 2, "a failed action downloads nothing");
  assertEquals(host.browser.actions.map((a) => [a.method, a.value, a.outcome]), [["download", "downloads/", "ok"]]);
  for (
    const [bad, why] of [[undefined, "{ path } names the folder"], ["", "{ path } names the folder"], [
      3,
      "options.path must be a string, not a number",
    ]]
  ) {
    const e = await assertRejects(() => tab.waitForDownload(() => {}, { path: bad } as never));
    assert(e instanceof TypeError && e.message.includes(why as string), e.message);
  }
  const flag = await assertRejects(() => tab.waitForDownload(() => {}, { path: "d/", overwrite: "yes" } as never));
  assert(flag instanceof TypeError && flag.message.includes("options.overwrite must be true or false"), flag.message);
  const fn = await assertRejects(() => tab.waitForDownload("click" as never, { path: "d/" }));
  assert(fn instanceof TypeError && fn.message.includes("the action that downloads"), fn.message);
  assertEquals(order.length, 2, "no refused call reached the page");
});
