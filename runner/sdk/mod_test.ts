import {
  CancelledError,
  clipboard,
  config,
  context,
  files,
  NoHostError,
  NotGrantedError,
  paneControls,
  tabs,
  ui,
  workspace,
} from "./mod.ts";
import { resolvePath } from "./path.ts";
import { installFakeHost } from "./testing.ts";
import { assert, assertEquals, assertRejects } from "./test_helpers.ts";

Deno.test("without a host every API says how to get one", async () => {
  const e = await assertRejects(() => ui.notify("x"));
  assert(e instanceof NoHostError);
  assert(e.message.includes("installFakeHost"));
});

Deno.test("ui, config, clipboard and context reach the host", async () => {
  using host = installFakeHost({ clipboard: "abc", config: { n: 1 }, runId: "r1", scriptDir: "/scripts" });
  await ui.notify("hi");
  await ui.notify("careful", { level: "warning" });
  await ui.open("out/report.md", { split: "down" });
  await ui.open("/abs/x.txt");
  assertEquals(await clipboard.read(), "abc");
  await clipboard.write("xyz");
  await config.set("n", (await config.get<number>("n"))! + 1);
  await config.set("list", [1, "two", { three: 3 }]);
  await config.set("tmp", true);
  await config.delete("tmp");
  assertEquals(await config.get("missing"), undefined);
  assertEquals(await config.keys(), ["list", "n"]);
  context.log("count", 2, { ok: true });
  await context.result({ done: true });
  await host.settled();
  assertEquals(host.notifications, [{ message: "hi", level: "info" }, { message: "careful", level: "warning" }]);
  assertEquals(host.opened, [{ path: "/scripts/out/report.md", split: "down" }, { path: "/abs/x.txt" }]);
  assertEquals(host.clipboard, "xyz");
  assertEquals(Object.fromEntries(host.config), { n: 2, list: [1, "two", { three: 3 }] });
  assertEquals(host.logs, ["count 2 { ok: true }"]);
  assertEquals(host.result, { done: true });
  assertEquals([context.runId, context.scriptDir, context.trigger], ["r1", "/scripts", undefined]);
});

Deno.test("values are copied across the host boundary", async () => {
  using host = installFakeHost();
  const v = { a: [1] };
  await config.set("v", v);
  v.a.push(2);
  assertEquals(await config.get("v"), { a: [1] });
  const e = await assertRejects(() => context.result({ f: () => 1 } as never));
  // As the app refuses it: only data crosses.
  assert(e instanceof TypeError && (e as TypeError & { code?: string }).code === "not_serializable", String(e));
  assertEquals(host.results, []);
});

Deno.test("an ungranted capability names the permission to add", async () => {
  using _host = installFakeHost({ grant: ["ui", "config", "context", "paneControls"] });
  let e = await assertRejects(() => clipboard.read());
  assert(e instanceof NotGrantedError);
  assertEquals(e.message, 'clipboard.read is not granted to this script: add "clipboard" to its // @permissions line');
  assertEquals([e.capability, e.permission], ["clipboard", "clipboard"]);
  e = await assertRejects(() => workspace.projectDir());
  assert(e instanceof NotGrantedError && e.permission === "browser", e.message);
  e = await assertRejects(() => tabs.active());
  assert(e instanceof NotGrantedError && e.message.includes('add "browser"'), e.message);
});

Deno.test("a capability every run gets but the host withheld is reported as unavailable", async () => {
  using _host = installFakeHost({ grant: ["context"] });
  const e = await assertRejects(() => ui.notify("x"));
  assert(e instanceof NotGrantedError && e.permission === undefined);
  assert(e.message.includes('did not provide "ui"'), e.message);
});

Deno.test("workspace reaches the host when granted", async () => {
  using _host = installFakeHost({ grant: ["workspace"], projectDir: "/proj" });
  assertEquals(await workspace.projectDir(), "/proj");
});

Deno.test("pane controls are callable by the host", async () => {
  using host = installFakeHost();
  let n = 0;
  await paneControls.register("Bump", () => ++n);
  assertEquals(await host.click("Bump"), 1);
  assertEquals(await host.click("Bump"), 2);
  await paneControls.unregister("Bump");
  await assertRejects(() => host.click("Bump"));
  await assertRejects(() => paneControls.register("bad", "not a function" as never));
});

Deno.test("cancel aborts context.signal with a CancelledError", () => {
  using host = installFakeHost();
  assert(!context.signal.aborted);
  host.cancel("user pressed stop");
  assert(context.signal.aborted);
  const r = context.signal.reason;
  assert(r instanceof CancelledError && r.message === "user pressed stop");
});

Deno.test("a nested fake host shadows the outer one until disposed", async () => {
  using outer = installFakeHost({ runId: "outer" });
  {
    using inner = installFakeHost({ runId: "inner" });
    await ui.notify("to inner");
    assertEquals(inner.notifications.length, 1);
  }
  assertEquals(context.runId, "outer");
  assertEquals(outer.notifications.length, 0);
});

Deno.test("files resolve against the script directory", () => {
  const dir = Deno.makeTempDirSync();
  try {
    using _host = installFakeHost({ scriptDir: dir });
    const p = files.write("note.txt", "hello");
    assertEquals(p, resolvePath(dir, "note.txt"));
    assertEquals(files.read("./sub/../note.txt"), "hello");
    assertEquals(Deno.readTextFileSync(p), "hello");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
