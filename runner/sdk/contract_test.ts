// The host API is described once, in contract.json, which a Go test
// generates from the host's capability objects. These tests hold the two
// TypeScript sides to it: the fake host of tranquil/automation/testing
// implements exactly its methods, and the SDK calls only its methods (each
// with no more arguments than it takes) and every one of them.

import contract from "./contract.json" with { type: "json" };
import { installFakeHost } from "./testing.ts";
import { type Capability, IMPLEMENTED, runtime } from "./runtime.ts";
import { assert, assertEquals } from "./test_helpers.ts";
import type * as host from "./contract_types.ts";
import type {
  ClickOptions,
  DblclickOptions,
  DialogAnswer,
  DialogType,
  DownloadOptions,
  DownloadResult,
  ExpectRequest,
  FieldState,
  FormOptions,
  HoverOptions,
  NavigationOptions,
  NavigationResponse,
  OpenOptions,
  PressOptions,
  ReadOptions,
  ScreenshotOptions,
  TabInfo,
  TableRows,
  Target,
  TypeOptions,
  URLMatchRequest,
  WaitForOptions,
} from "./browser.ts";
import type { ui } from "./mod.ts";

type Methods = Record<string, { params: string[]; result: string }>;
const CAPS = contract.capabilities as Record<string, Methods>;
const REGEN = "go test ./runner -run TestContractIsCurrent -update";

/** contractMethods lists "capability.method" for every method of the host. */
function contractMethods(): Map<string, { params: string[] }> {
  const out = new Map<string, { params: string[] }>();
  for (const [cap, methods] of Object.entries(CAPS)) {
    for (const [name, m] of Object.entries(methods)) out.set(`${cap}.${name}`, m);
  }
  return out;
}

/** A host call the SDK makes: where, and how many arguments reach the host (undefined when spread). */
interface Call {
  method: string;
  at: string;
  args: number | undefined;
}

/**
 * The ways the SDK calls the host, each with the number of its own
 * arguments before the host's: hostCall(cap, method, api, tab, ...),
 * runtime().call(cap, method, ...), report(kind, event) (context.step and
 * context.progress), and the bootstrap's main.cap.method(...).
 */
const CALL_FORMS: { re: RegExp; lead: number; cap?: string }[] = [
  { re: /\bhostCall\s*(?:<[^()]*?>)?\(\s*"(\w+)"\s*,\s*"(\w+)"/g, lead: 4 },
  { re: /(?:\bruntime\(\)|\brt)\.call\s*(?:<[^()]*?>)?\(\s*"(\w+)"\s*,\s*"(\w+)"/g, lead: 2 },
  { re: /\.report\(\s*"(\w+)"/g, lead: 1, cap: "context" },
  { re: /\bmain\.(\w+)\.(\w+)\(/g, lead: 0 },
];

/** Any call of those forms, literal names or not: one the patterns above miss is a call this test cannot see. */
const ANY_CALL =
  /\bhostCall\s*(?:<[^()]*?>)?\(|(?:\bruntime\(\)|\brt)\.call\s*(?:<[^()]*?>)?\(|\.report\(|\bmain\.\w+\.\w+\(/g;

/** stripComments blanks comments, keeping offsets, so examples in them are not calls. */
function stripComments(src: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, " ");
  return src.replace(/\/\*[\s\S]*?\*\//g, blank).replace(/^\s*\/\/.*$/gm, blank);
}

/**
 * argCount counts the arguments of the call whose "(" is at src[open], or
 * returns undefined when one is spread. It skips strings, template
 * literals and nested brackets.
 */
function argCount(src: string, open: number): number | undefined {
  let depth = 0, n = 0, any = false;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (c === '"' || c === "'" || c === "`") {
      for (i++; i < src.length && src[i] !== c; i++) if (src[i] === "\\") i++;
      any = true;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") {
      if (depth++ > 0) any = true;
      continue;
    }
    if (c === ")" || c === "]" || c === "}") {
      if (--depth === 0) return any ? n + 1 : n;
      continue;
    }
    if (depth !== 1) continue;
    if (c === ",") {
      n++;
      any = false;
    } else if (src.startsWith("...", i)) {
      return undefined;
    } else if (!/\s/.test(c)) {
      any = true;
    }
  }
  return undefined;
}

/** sdkCalls finds every host call in the modules a run loads (the SDK's own tests aside). */
function sdkCalls(): { calls: Call[]; unseen: string[] } {
  const dir = new URL(".", import.meta.url);
  const calls: Call[] = [];
  const unseen: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (!e.name.endsWith(".ts") || e.name.endsWith("_test.ts") || e.name === "test_helpers.ts") continue;
    const src = stripComments(Deno.readTextFileSync(new URL(e.name, dir)));
    const lineOf = (i: number) => `${e.name}:${src.slice(0, i).split("\n").length}`;
    const seen = new Set<number>();
    for (const form of CALL_FORMS) {
      for (const m of src.matchAll(form.re)) {
        const [cap, method] = form.cap ? [form.cap, m[1]] : [m[1], m[2]];
        const q = m[0].indexOf('"'); // the call's "(" is the last one before its first name
        const open = m.index + (q >= 0 ? m[0].lastIndexOf("(", q) : m[0].length - 1);
        const total = argCount(src, open);
        calls.push({
          method: `${cap}.${method}`,
          at: lineOf(m.index),
          args: total === undefined ? undefined : Math.max(0, total - form.lead),
        });
        seen.add(m.index);
      }
    }
    for (const m of src.matchAll(ANY_CALL)) {
      const start = m.index;
      if (seen.has(start)) continue;
      if (/function\s+$/.test(src.slice(Math.max(0, start - 9), start))) continue; // hostCall's own definition
      unseen.push(`${lineOf(start)}: ${src.slice(start, start + 40).split("\n")[0]}`);
    }
  }
  return { calls, unseen };
}

Deno.test("the SDK calls only the host's methods, and every one", () => {
  const methods = contractMethods();
  const { calls, unseen } = sdkCalls();
  assertEquals(
    unseen,
    [],
    "host calls whose capability or method is not a string literal, which this test cannot check",
  );
  for (const c of calls) {
    const m = methods.get(c.method);
    assert(m !== undefined, `${c.at} calls ${c.method}, which the host does not have (contract.json; ${REGEN})`);
    assert(
      c.args === undefined || c.args <= m.params.length,
      `${c.at} passes ${c.args} arguments to ${c.method}, which takes ${m.params.length}: ${m.params.join(", ")}`,
    );
  }
  const called = new Set(calls.map((c) => c.method));
  for (const m of methods.keys()) assert(called.has(m), `the host has ${m}, which the SDK never calls`);
});

Deno.test("the SDK implements the host's capabilities", () => {
  assertEquals([...IMPLEMENTED].sort(), Object.keys(CAPS).sort());
});

Deno.test("the fake host implements exactly the host's methods", () => {
  const caps = Object.keys(CAPS) as Capability[];
  using _host = installFakeHost({ grant: caps });
  for (const cap of caps) {
    const obj = runtime().capability(cap, cap) as Record<string, unknown>;
    assert(obj !== undefined, `the fake host has no ${cap}`);
    const have = Object.keys(obj).sort();
    const want = Object.keys(CAPS[cap]).sort();
    assertEquals(have, want, `the fake host's ${cap} (testing.ts, fake_browser.ts) against contract.json`);
    for (const name of have) {
      assert(typeof obj[name] === "function", `the fake host's ${cap}.${name} is not a function`);
    }
  }
});

Deno.test("the call finder counts arguments", () => {
  const src = `f(a, "x,y", [1, 2], { b: (c, d) => c }, \`\${e, f}\`)`;
  assertEquals(argCount(src, 1), 5);
  assertEquals(argCount("g()", 1), 0);
  assertEquals(argCount("g(a, ...rest)", 1), undefined);
  assertEquals(argCount("g(a,\n  b,\n)", 1), 2);
});

/** Keys lists the keys of every member of a union. */
type Keys<T> = T extends unknown ? keyof T : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** What the host takes for T: undefined, which counts as absent, anywhere a value goes. */
type Sendable<T> = T extends (infer E)[] ? Sendable<E>[]
  : T extends object ? { [K in keyof T]?: Sendable<T[K]> | undefined }
  : T;
/** A request type: the SDK's has the host's keys, and whatever it allows the host takes. */
type Request<Sdk, Host> = Same<Keys<Sdk>, keyof Host> extends true ? (Sdk extends Sendable<Host> ? true : false)
  : false;

/** mirrors compiles only when T is true: deno check fails the test module otherwise. */
function mirrors<T extends true>(): boolean {
  return true as T;
}

/**
 * The SDK's types of the contract's objects. Most are the generated types
 * themselves (contract_types.ts, written with contract.json from the Go
 * types), exported by browser.ts under the names scripts use: those must
 * stay the same type. The SDK's own (a target, dialog answers, ui's
 * options) are held to the contract type they mirror: a key the host
 * takes or sends that the SDK's type lacks, or one it has that the host
 * does not, or a shape that does not fit, fails type checking here.
 */
const MIRRORED: Record<string, boolean> = {
  NavigationOptions: mirrors<Same<NavigationOptions, host.NavigationOptions>>(),
  WaitForOptions: mirrors<Same<WaitForOptions, host.WaitForOptions>>(),
  ReadOptions: mirrors<Same<ReadOptions, host.ReadOptions>>(),
  Expectation: mirrors<Same<ExpectRequest, host.Expectation>>(),
  UrlMatch: mirrors<Same<URLMatchRequest, host.UrlMatch>>(),
  TextPattern: mirrors<Same<NonNullable<ExpectRequest["pattern"]>, host.TextPattern>>(),
  ScreenshotOptions: mirrors<Same<ScreenshotOptions, host.ScreenshotOptions>>(),
  FormOptions: mirrors<Same<FormOptions, host.FormOptions>>(),
  PressOptions: mirrors<Same<PressOptions, host.PressOptions>>(),
  HoverOptions: mirrors<Same<HoverOptions, host.HoverOptions>>(),
  DblclickOptions: mirrors<Same<DblclickOptions, host.DblclickOptions>>(),
  ClickOptions: mirrors<Same<ClickOptions, host.ClickOptions>>(),
  TypeOptions: mirrors<Same<TypeOptions, host.TypeOptions>>(),
  Position: mirrors<Same<NonNullable<HoverOptions["position"]>, host.Position>>(),
  Response: mirrors<Same<NavigationResponse, host.Response>>(),
  FieldState: mirrors<Same<FieldState, host.FieldState>>(),
  Table: mirrors<Same<TableRows, host.Table>>(),
  TabInfo: mirrors<Same<TabInfo, host.TabInfo>>(),
  DownloadOptions: mirrors<Same<DownloadOptions, host.DownloadOptions>>(),
  DownloadResult: mirrors<Same<DownloadResult, host.DownloadResult>>(),
  Locator: mirrors<Request<Target, host.Locator>>(),
  // seq is the SDK's own: it numbers background opens (see tabs.open).
  OpenTabOptions: mirrors<Request<OpenOptions & { seq?: number }, host.OpenTabOptions>>(),
  NotifyOptions: mirrors<Request<NonNullable<Parameters<typeof ui.notify>[1]>, host.NotifyOptions>>(),
  OpenOptions: mirrors<Request<NonNullable<Parameters<typeof ui.open>[1]>, host.OpenOptions>>(),
  DialogAnswer: mirrors<Request<Extract<DialogAnswer, object>, host.DialogAnswer>>(),
  DialogAnswers: mirrors<Request<Partial<Record<DialogType, DialogAnswer>>, host.DialogAnswers>>(),
};

/** Contract types the SDK has no declared type for: it builds these reports as records (step.ts, mod.ts). */
const UNTYPED = ["ProgressEvent", "StepEvent"];

Deno.test("every type of the contract is mirrored by a type of the SDK", () => {
  for (const name of Object.keys(contract.types)) {
    assert(
      name in MIRRORED || UNTYPED.includes(name),
      `contract.json has type ${name}: declare it in the SDK and add it to MIRRORED in contract_test.ts`,
    );
  }
  for (const name of [...Object.keys(MIRRORED), ...UNTYPED]) {
    assert(name in contract.types, `contract_test.ts mirrors ${name}, which contract.json no longer has (${REGEN})`);
  }
});
