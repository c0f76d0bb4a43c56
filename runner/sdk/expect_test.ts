// Tab.expect, the readers' timeouts and waitFor's states, against the
// fake host: what the SDK sends, what it refuses before sending, and the
// fake's own retrying.

import { ExpectationError, Expectations, Tab, TabError, tabs } from "./mod.ts";
import { type FakeHostOptions, installFakeHost } from "./testing.ts";
import { assert, assertEquals, assertRejects } from "./test_helpers.ts";

const PAGE = "https://shop.example/cart";

function oneTab(read?: FakeHostOptions["read"]) {
  return installFakeHost({ permissions: "browser", tabs: [{ url: PAGE }], read });
}

Deno.test("expectations pass once the page shows what they expect", async () => {
  let text = "Saving…";
  setTimeout(() => text = "  Saved\n at 10:00 ", 60);
  using host = oneTab((_tab, reader, target) => {
    switch (reader) {
      case "text":
        return text;
      case "value":
        return "ada@example.com";
      case "checked":
        return text !== "Saving…";
      case "visible":
        return "role" in target;
      case "count":
        return 3;
    }
  });
  const tab = await tabs.active();
  const status = tab.expect({ role: "status" });
  assert(status instanceof Expectations);
  await status.toHaveText("Saved at 10:00", { timeout: 2000 });
  await status.toHaveText(/^\s*saved/i);
  await status.toContainText("at 10");
  await tab.expect({ label: "Email" }).toHaveValue("ada@example.com");
  await tab.expect({ label: "Email" }).toHaveValue(/@example\.com$/);
  await tab.expect({ label: "Agree" }).toBeChecked();
  await tab.expect({ role: "dialog" }).toBeVisible();
  await tab.expect({ selector: "#gone" }).toBeHidden();
  await tab.expect({ selector: "li" }).toHaveCount(3);
  const expects = host.browser.actions.filter((a) => a.method === "expect");
  assertEquals(expects.map((a) => a.value), [
    "text",
    "text",
    "containsText",
    "value",
    "value",
    "checked",
    "visible",
    "hidden",
    "count",
  ]);
  assert(expects.every((a) => a.outcome === "ok"));
});

Deno.test("an expectation that never holds rejects with an ExpectationError saying what it saw", async () => {
  using _host = oneTab(() => "Saving…");
  const tab = await tabs.active();
  const start = Date.now();
  const e = await assertRejects(() => tab.expect({ role: "status" }).toHaveText("Saved", { timeout: 100 }));
  assert(Date.now() - start >= 90, "it kept checking until its timeout");
  assert(e instanceof ExpectationError && e instanceof TabError, String(e));
  assertEquals([e.code, e.api, e.name], ["expectation_failed", "tab.expect", "ExpectationError"]);
  assert(e.message.includes(`"Saving…"`), e.message);
});

Deno.test("readers take a timeout and waitFor a state", async () => {
  using host = oneTab(() => "x");
  const tab = await tabs.active();
  await tab.text({ testId: "t" }, { timeout: 250 });
  await tab.waitFor({ role: "dialog" }, { state: "hidden", timeout: 1000 });
  await tab.waitFor("#x");
  assertEquals(
    host.browser.actions.map((a) => [a.method, a.value]),
    [["text", undefined], ["waitFor", "hidden"], ["waitFor", undefined]],
  );
});

Deno.test("bad arguments to expect, the readers and waitFor are refused before the page is read", async () => {
  using host = oneTab(() => "x");
  const tab = await tabs.active();
  const status = tab.expect({ role: "status" });
  const cases: [() => Promise<unknown>, string][] = [
    [() => tab.text({ testId: "t" }, { timout: 5 } as never), 'unknown key "timout"'],
    [() => tab.value({ testId: "t" }, { timeout: -1 }), "timeout must be a positive"],
    [() => tab.attribute({ testId: "t" }, "href", { wait: true } as never), 'unknown key "wait"'],
    [() => tab.checked({ testId: "t" }, 5 as never), "options must be an object, not a number"],
    [
      () => tab.waitFor("#x", { state: "gone" as never }),
      'state must be "visible", "hidden", "attached" or "detached"',
    ],
    [() => tab.waitFor("#x", { visible: true } as never), 'unknown key "visible"'],
    [() => status.toHaveText(5 as never), "tab.expect(…).toHaveText: argument 1 must be a string, not a number"],
    [() => status.toHaveText("x", { timeout: -1 }), "timeout must be a positive"],
    [() => status.toHaveText("x", { retries: 3 } as never), 'unknown key "retries"'],
    [() => status.toBeChecked({ checked: "yes" as never }), "checked must be true or false"],
    [() => status.toBeVisible({ checked: true } as never), 'unknown key "checked"'],
    [() => status.toHaveCount(-1), "count expects a number of elements, 0 or more"],
    [() => status.toHaveCount(1.5), "tab.expect(…).toHaveCount: argument 1 must be a whole number"],
    [() => status.toHaveAttribute("id", 5 as never), "tab.expect(…).toHaveAttribute: argument 2 must be a string"],
    [() => status.toHaveCount(2, { timeout: -1 }), "tab.expect(…).toHaveCount: options.timeout must be a positive"],
    [() => tab.expectPage().toHaveURL(5 as never), "tab.expectPage().toHaveURL: argument 1 must be a string"],
  ];
  for (const [call, why] of cases) {
    const e = await assertRejects(call);
    assert((e instanceof TypeError || e instanceof RangeError) && e.message.includes(why), `${why}: ${e.message}`);
    if (why.startsWith("unknown key")) assertEquals((e as { code?: unknown }).code, "invalid", why);
  }
  // A matcher's refusal names the matcher's own argument, as the script passed it.
  const count = await assertRejects(() => status.toHaveCount(1.5));
  assertEquals([(count as { argument?: unknown }).argument, (count as { path?: unknown }).path], [1, ""]);
  const timeout = await assertRejects(() => status.toBeVisible({ timeout: "soon" as never }));
  assertEquals([(timeout as { argument?: unknown }).argument, (timeout as { path?: unknown }).path], [1, ".timeout"]);
  const target = await assertRejects(() => tab.expect({ css: "#x" } as never).toBeVisible());
  assert(target instanceof TypeError && target.message.includes('unknown key "css" in target'), target.message);
  assertEquals(host.browser.actions, []);
});

Deno.test("a closed tab's expectation rejects with the tab's error", async () => {
  using host = oneTab(() => "x");
  const tab = new Tab("tab-1");
  host.browser.tab("tab-1")!.closed = true;
  const e = await assertRejects(() => tab.expect({ role: "status" }).toBeVisible());
  assert(e instanceof TabError && e.code === "closed", String(e));
});

Deno.test("reload, goBack, goForward and waitForURL move through the fake tab's history", async () => {
  using host = installFakeHost({
    permissions: "browser",
    tabs: [{ url: PAGE }],
    responses: { "https://shop.example/gone": { status: 404 } },
  });
  const tab = await tabs.active();
  assertEquals(await tab.goBack(), null);
  await tab.goto("https://shop.example/gone");
  await tab.goto("https://shop.example/checkout/pay");
  assertEquals(await tab.goBack(), { status: 404, url: "https://shop.example/gone" });
  assertEquals(await tab.goBack({ waitUntil: "domcontentloaded" }), { status: 200, url: PAGE });
  assertEquals(await tab.goForward(), { status: 404, url: "https://shop.example/gone" });
  assertEquals(await tab.reload(), { status: 404, url: "https://shop.example/gone" });
  await tab.goto(PAGE);
  assertEquals(await tab.goForward(), null, "a goto drops the entries ahead");

  await tab.waitForURL(PAGE);
  await tab.waitForURL("https://shop.example/*");
  await tab.waitForURL(/CART$/i);
  setTimeout(() => host.browser.navigate(tab.id, "https://shop.example/checkout/done"), 40);
  await tab.waitForURL("**/checkout/*", { timeout: 2000 });
  const late = await assertRejects(() => tab.waitForURL("https://shop.example/*", { timeout: 60 }));
  assert(late instanceof TabError && late.code === "timeout", String(late));
  assert(late.message.includes("checkout/done"), late.message);

  const before = host.browser.actions.length;
  const url = await assertRejects(() => tab.waitForURL(42 as never));
  assert(url instanceof TypeError && url.message.includes("options.url must be a string"), String(url));
  const until = await assertRejects(() => tab.goBack({ waitUntil: "idle" as never }));
  assert(until instanceof RangeError && until.message.includes('not "idle"'), String(until));
  assertEquals(host.browser.actions.length, before, "refused before the host was called");
  assertEquals(
    host.browser.actions.filter((a) => a.method === "waitForURL").map((a) => a.value),
    [PAGE, "https://shop.example/*", "/CART$/i", "**/checkout/*", "https://shop.example/*"],
  );
});

Deno.test(".not, the state and attribute matchers, and the page's expectations against the fake", async () => {
  let enabled = false;
  setTimeout(() => enabled = true, 60);
  using host = oneTab((_tab, reader, target, name) => {
    switch (reader) {
      case "text":
        return "Saved";
      case "visible":
        return false;
      case "enabled":
        return enabled;
      case "focused":
        return "label" in target;
      case "editable":
        return true;
      case "attribute":
        return name === "href" ? "/next" : name === "class" ? "btn primary" : null;
    }
  });
  const tab = await tabs.active();
  const button = tab.expect({ role: "button" });
  await button.toBeEnabled({ timeout: 2000 });
  await button.not.toBeDisabled();
  await button.not.toBeVisible();
  await button.not.not.toBeHidden();
  await button.toHaveAttribute("href");
  await button.toHaveAttribute("href", "/next");
  await button.toHaveAttribute("href", /^\/n/);
  await button.not.toHaveAttribute("target");
  await button.toHaveClass("btn primary");
  await button.toHaveClass(/\bprimary\b/);
  await tab.expect({ label: "Email" }).toBeFocused();
  await tab.expect({ label: "Email" }).toBeEditable();
  await button.not.toBeFocused();
  await tab.expect({ role: "status" }).not.toHaveText("Saving…");

  await tab.expectPage().toHaveURL(PAGE);
  await tab.expectPage().toHaveURL(/\/cart$/);
  await tab.expectPage().not.toHaveURL("https://shop.example/login");
  await tab.expectPage().toHaveTitle(PAGE); // the fake's title is the URL
  await tab.expectPage().not.toHaveTitle(/sign in/i);

  const e = await assertRejects(() => tab.expect({ role: "status" }).not.toHaveText("Saved", { timeout: 60 }));
  assert(e instanceof ExpectationError, String(e));
  assert(e.message.includes(`not text "Saved"`) && e.message.includes(`last seen "Saved"`), e.message);
  const p = await assertRejects(() => tab.expectPage().toHaveTitle("Checkout", { timeout: 60 }));
  assert(p instanceof ExpectationError && p.message.includes("the page"), String(p));

  const sent = host.browser.actions.filter((a) => a.method === "expect").map((a) => a.value);
  assertEquals(sent.slice(0, 5), ["enabled", "disabled", "visible", "hidden", "attribute"]);
  assert(sent.includes("url") && sent.includes("title") && sent.includes("class"), String(sent));

  for (
    const [bad, want] of [
      [() => button.toHaveAttribute(""), "attribute expects an attribute name of 1 to 1024 bytes"],
      [() => button.toHaveAttribute(3 as never), "must be a string"],
      [() => button.toHaveClass(["a"] as never), "toHaveClass: argument 1 must be a string, not a list"],
      [() => tab.expectPage().toHaveURL(null as never), "url expects a text or a pattern"],
      [() => button.not.toBeEnabled({ wait: 1 } as never), 'unknown key "wait"'],
    ] as [() => Promise<unknown>, string][]
  ) {
    const err = await assertRejects(bad);
    assert(err instanceof TypeError && err.message.includes(want), `${want}: ${err}`);
  }
});
