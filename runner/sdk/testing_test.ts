import { config, context, NotGrantedError, TabError, tabs, ui } from "./mod.ts";
import {
  HeaderError,
  installFakeHost,
  parsePermissions,
  RemoteImportError,
  ScriptExit,
  StrayImportError,
  UndeclaredImportError,
} from "./testing.ts";
import { resolvePath, toFileUrl } from "./path.ts";
import { assert, assertEquals, assertRejects } from "./test_helpers.ts";

function script(text: string, files: Record<string, string> = {}): string {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/job.ts`;
  Deno.writeTextFileSync(path, text);
  for (const [name, src] of Object.entries(files)) Deno.writeTextFileSync(`${dir}/${name}`, src);
  return path;
}

/** refusedImports installs a fake host for a script and returns the specifiers it refused ([] for none). */
function refusedImports(
  header: string,
  body: string,
  opts: { files?: Record<string, string>; defaultImports?: string[] } = {},
): string[] {
  try {
    using _host = installFakeHost({
      script: script(`${header}\n${body}`, opts.files),
      defaultImports: opts.defaultImports,
    });
  } catch (e) {
    if (e instanceof RemoteImportError) return e.specifiers;
    throw e;
  }
  return [];
}

const BODY = `
import { context, ui } from "tranquil/automation";
await ui.notify("ran");
await context.result(1);
`;

Deno.test("the kit's rules leave nothing on the global object", () => {
  // testing.ts has loaded the rules by now (parsePermissions answers from
  // them); the program ran in a scope of its own.
  assert(parsePermissions("browser").grant.includes("tabs"));
  const g = globalThis as Record<string, unknown>;
  for (const name of ["tranquilRules", "fs", "Go"]) assertEquals(g[name], undefined, name);
  assert(!("tranquilRules" in globalThis));
});

Deno.test("the fake host refuses a header the app refuses", () => {
  for (
    const [header, kind] of [
      ["// @permissions none browser", "syntax"],
      ["// @permissions brwoser", "unknown_key"],
      ["// @permissions read=.", "blanket_path"],
      ["// @permissions sites=shop.example clipboard", "bad_value"],
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

Deno.test("every test's host runs the script from the top", async () => {
  const path = script(`// @permissions none\n${BODY}`);
  for (let test = 1; test <= 3; test++) {
    using host = installFakeHost({ script: path });
    await host.run();
    assertEquals(host.notifications.map((n) => n.message), ["ran"], `test ${test}`);
  }
});

Deno.test("a script run by a plain import fails loudly, in that test and the next", async () => {
  const path = script(`// @permissions none\n${BODY}`);
  {
    using host = installFakeHost({ script: path });
    const e = await assertRejects(() => import(toFileUrl(path).href));
    assert(e instanceof StrayImportError, String(e));
    assertEquals(host.notifications, []);
  }
  // A second test's import would run nothing (deno has the module): its host is refused instead.
  let err: unknown;
  try {
    installFakeHost({ script: path });
  } catch (e) {
    err = e;
  }
  assert(err instanceof StrayImportError && err.message.includes("host.run()"), String(err));
});

Deno.test("a script that ends itself ends the fake run with its code, and runs no further", async () => {
  const exit = Deno.exit;
  const none = '// @permissions none\nimport { context, ui } from "tranquil/automation";\n';
  for (
    const [body, code, notes, results] of [
      [`await ui.notify("a");\nDeno.exit(3);\nawait ui.notify("b");`, 3, ["a"], []],
      [`await context.result(1);\nawait context.exit();\nawait ui.notify("b");`, 0, [], [1]],
      [`context.log("x");\nawait context.exit(7);\nawait ui.notify("b");`, 7, [], []],
      // Caught, the exit still ends the run: the script's next call stops it.
      [`try { Deno.exit(2); } catch { /* ignored */ }\nawait ui.notify("b");`, 2, [], []],
      [`await ui.notify("a");`, undefined, ["a"], []],
    ] as const
  ) {
    using host = installFakeHost({ script: script(none + body) });
    const end = await host.run();
    assertEquals(end?.code, code, body);
    assertEquals(host.notifications.map((n) => n.message), [...notes], body);
    assertEquals(host.results, [...results], body);
  }
  assert(Deno.exit === exit, "Deno.exit was not put back");
});

Deno.test("an exit from a timer ends the fake run, not the test", async () => {
  using host = installFakeHost({
    script: script(`// @permissions none
import { ui } from "tranquil/automation";
setTimeout(() => Deno.exit(4), 0);
await new Promise((r) => setTimeout(r, 50));
try {
  await ui.notify("late");
} catch (e) {
  (globalThis as { caught?: unknown }).caught = e;
}
await ui.notify("later");
`),
  });
  assertEquals((await host.run())?.code, 4);
  await new Promise((r) => setTimeout(r, 100));
  assertEquals(host.notifications, []);
  const caught = (globalThis as { caught?: unknown }).caught;
  assert(caught instanceof ScriptExit && caught.code === 4, String(caught));
});

Deno.test("context.exit refuses a code the process could not carry", async () => {
  using _host = installFakeHost({ permissions: "none" });
  for (const code of [-1, 256, 1.5]) await assertRejects(() => context.exit(code));
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

Deno.test("the fake host refuses remote imports a run without import= could not load", () => {
  const none = "// @permissions none";
  assertEquals(refusedImports(none, `import { assert } from "@std/assert";`), ["jsr:@std/assert@1.0.10"]);
  assertEquals(refusedImports(none, `import { red } from "@std/fmt/colors";`), ["jsr:/@std/fmt@1.0.8/colors"]);
  assertEquals(refusedImports(none, `import x from "https://esm.sh/x@1";\nimport "http://cdn.example/y.js";`), [
    "https://esm.sh/x@1",
    "http://cdn.example/y.js",
  ]);
  assertEquals(refusedImports(none, `import type { T } from "jsr:@scope/t";\nexport * from "npm:left-pad@1";`), [
    "jsr:@scope/t",
    "npm:left-pad@1",
  ]);
  assertEquals(refusedImports(none, `const m = await import("jsr:@std/path");`), ["jsr:@std/path"]);
  // Through a local module, in turn.
  assertEquals(
    refusedImports("// @permissions read=helper.ts", `import "./helper.ts";`, {
      files: { "helper.ts": `export { join } from "@std/path";\n` },
    }),
    ["jsr:@std/path@1.0.9"],
  );
  // What every run may load: the SDK, its own npm package, Deno's built-ins, declared local files; and comments.
  assertEquals(
    refusedImports(
      "// @permissions read=data.json",
      [
        `import { ui } from "tranquil/automation";`,
        `import { RpcTarget } from "capnweb";`,
        `import "npm:capnweb@0.12.0";`,
        `import { readFileSync } from "node:fs";`,
        `import data from "./data.json" with { type: "json" };`,
        `// import "jsr:@std/assert";`,
        `/* import "https://esm.sh/x"; */`,
      ].join("\n"),
      { files: { "data.json": "{}" } },
    ),
    [],
  );
  const e = (() => {
    try {
      installFakeHost({ script: script(`${none}\nimport "@std/assert";`) });
    } catch (e) {
      return e;
    }
  })();
  assert(e instanceof RemoteImportError && e.code === "refused", String(e));
  assert(
    e.message.includes(
      "jsr:@std/assert@1.0.10 cannot be loaded: this app names no JSR registry, so its scripts have no @std packages",
    ),
    e.message,
  );
});

Deno.test("the fake host refuses a local file no read= grant covers, as the app does", () => {
  const files = { "helper.ts": "export const v = 1;\n", "notes.txt": "secret" };
  for (
    const [header, body, refused] of [
      ["// @permissions none", `import { v } from "./helper.ts";`, "helper.ts"],
      ["// @permissions none", `import s from "./notes.txt" with { type: "text" };`, "notes.txt"],
      ["// @permissions read=helper.ts", `import { v } from "./helper.ts";`, ""],
    ] as const
  ) {
    const path = script(`${header}\n${body}`, files);
    let err: unknown;
    try {
      using _host = installFakeHost({ script: path });
    } catch (e) {
      err = e;
    }
    if (refused === "") {
      assertEquals(err, undefined);
      continue;
    }
    assert(err instanceof UndeclaredImportError && err.code === "refused", String(err));
    assertEquals(err.path, resolvePath(Deno.realPathSync(path.slice(0, path.lastIndexOf("/"))), refused));
  }
});

Deno.test("the fake host lets a run import from its import= hosts only", () => {
  const header = "// @permissions import=esm.sh,*.example.com";
  assertEquals(refusedImports(header, `import "https://esm.sh/x@1";\nimport "https://cdn.example.com/y.js";`), []);
  assertEquals(refusedImports(header, `import "npm:left-pad@1";`), [], "npm: packages are fetched once any host is");
  assertEquals(refusedImports(header, `import "https://deno.land/x/z.ts";\nimport "@std/assert";`), [
    "https://deno.land/x/z.ts",
    "jsr:@std/assert@1.0.10",
  ]);
  assertEquals(refusedImports("// @permissions none", `import "@std/assert";`, { defaultImports: ["jsr.io"] }), []);
});

Deno.test("the fake host cuts long text and refuses functions as the app does", async () => {
  using host = installFakeHost({ permissions: "none" });
  context.log("x".repeat(100_000));
  await ui.notify("é".repeat(50_000));
  const fn = () => 1;
  const e = await assertRejects(() => config.set("k", { fn } as never));
  assert(e instanceof TypeError && (e as TypeError & { code?: string }).code === "not_serializable", String(e));
  await assertRejects(() => context.result([fn] as never));
  await host.settled();
  const line = host.logs[0];
  assert(line.endsWith(`… [${100_000 - (64 << 10) + 40} bytes cut]`), line.slice(-40));
  assert(new TextEncoder().encode(line).length <= 64 << 10);
  const note = host.notifications[0].message;
  assert(new TextEncoder().encode(note).length <= 64 << 10 && note.endsWith(" bytes cut]"), note.slice(-40));
  assert(!note.includes("\ufffd"), "cut inside a character");
  assertEquals(await config.get("k"), undefined);
});

Deno.test("the fake host keeps values as JSON does, as the app does", async () => {
  using host = installFakeHost({ permissions: "none" });
  await config.set("k", { a: 1, gone: undefined, list: [1, undefined, { b: undefined }] } as never);
  assertEquals(await config.get("k"), { a: 1, list: [1, null, {}] });
  await config.set("n", null);
  assertEquals(await config.get("n"), null, "a stored null is null, not missing");
  assertEquals(await config.get("missing"), undefined);
  for (
    const [bad, words] of [[new Map(), "the value is a Map (send Object.fromEntries(map))"], [
      { at: [new Date(0)] },
      "the value.at[0] is a Date",
    ], [{ n: NaN }, "the value.n is NaN"]] as const
  ) {
    const e = await assertRejects(() => config.set("bad", bad as never));
    assert(e instanceof TypeError && (e as TypeError & { code?: string }).code === "not_serializable", String(e));
    assert(e.message.startsWith(`config.set: ${words}`), e.message);
  }
  const r = await assertRejects(() => context.result({ s: new Set([1]) } as never));
  assert(r.message.startsWith("context.result: the value.s is a Set"), r.message);
  await host.settled();
  assertEquals(host.config.has("bad"), false);
});

Deno.test("host.run() again resumes the run: the steps it finished return their results without running", async () => {
  using host = installFakeHost({
    script: script(`// @permissions none
import { context, step } from "tranquil/automation";
let ran = 0;
const a = await step.do("first", () => { ran++; return "a"; });
const b = await step.do("second", () => { ran++; return "b"; });
await context.result({ a, b, ran });
`),
  });
  await host.run();
  assertEquals(host.result, { a: "a", b: "b", ran: 2 });
  await host.run();
  assertEquals(host.result, { a: "a", b: "b", ran: 0 }, "a resumed run skips the steps it finished");
  assertEquals(host.journal.map((e) => e.name), ["first", "second"]);
});

Deno.test("host.run() rethrows the script's error with its class and code", async () => {
  using host = installFakeHost({
    script: script(`// @permissions browser forms
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.click({ label: "Go" });
`),
    tabs: [{ url: "https://shop.example/" }],
    failures: [{ method: "click", error: { code: "not_found" } }],
  });
  for (const attempt of [1, 2]) {
    const e = await assertRejects(() => host.run());
    assert(e instanceof TabError, `attempt ${attempt}: ${e.constructor.name}: ${e.message}`);
    assertEquals([e.code, e.api], ["not_found", "tab.click"]);
    assert(e.message.includes("the fake browser failed the call (not_found)"), e.message);
    assert(e.message.includes(`fake-run=`), e.message);
  }
});
