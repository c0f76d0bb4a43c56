import { context, NotGrantedError, tabs, ui } from "./mod.ts";
import { HeaderError, installFakeHost, parsePermissions } from "./testing.ts";
import { assert, assertEquals, assertRejects } from "./test_helpers.ts";

function script(text: string): string {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/job.ts`;
  Deno.writeTextFileSync(path, text);
  return path;
}

const BODY = `
import { context, ui } from "tranquil/automation";
await ui.notify("ran");
await context.result(1);
`;

Deno.test("the fake host refuses a header the app refuses", () => {
  for (
    const [header, kind] of [
      ["// @permissions none browser", "syntax"],
      ["// @permissions brwoser", "unknown_key"],
      ["// @permissions read=.", "blanket_path"],
      ["// @permissions sites=shop.example browser", "bad_value"],
      ["// @permissions env=DENO_DIR", "reserved"],
      ["// @permissions none\n// @timeout 90", "timeout"],
      ["const x = 1;\n// @permissions none", "no_header"],
    ]
  ) {
    let err: unknown;
    try {
      installFakeHost({ script: script(`${header}\n${BODY}`) });
    } catch (e) {
      err = e;
    }
    assert(err instanceof HeaderError && err.kind === kind, `${header}: ${err}`);
  }
  let err: unknown;
  try {
    parsePermissions("none browser");
  } catch (e) {
    err = e;
  }
  assert(err instanceof HeaderError && err.line === 1 && err.column === 22, String(err));
});

Deno.test("the fake host grants what the script's header declares", async () => {
  const path = script(`// @permissions clipboard\n${BODY}`);
  using host = installFakeHost({ script: `file://${path}` });
  assertEquals(host.header?.clipboard, true);
  await host.run();
  assertEquals(host.notifications.map((n) => n.message), ["ran"]);
  const e = await assertRejects(() => tabs.active());
  assert(e instanceof NotGrantedError && e.permission === "browser", e.message);
});

Deno.test("run runs the script again each time", async () => {
  using host = installFakeHost({ script: script(`// @permissions none\n${BODY}`) });
  await host.run();
  await host.run();
  assertEquals(host.notifications.length, 2);
  assertEquals(host.results, [1, 1]);
});

Deno.test("a host given no script cannot run one", async () => {
  using host = installFakeHost({ permissions: "none" });
  const e = await assertRejects(() => host.run());
  assert(e instanceof TypeError, e.message);
  // ui and context are every run's.
  await ui.notify("x");
  await context.result(2);
  await host.settled();
  assertEquals(host.results, [2]);
});
