import { assert, assertEquals } from "./test_helpers.ts";
import { callSiteOf } from "./errors.ts";
import { CallStack } from "./runtime.ts";

/** both captures the stack of its caller twice: as a CallStack and as an Error's. */
function both(): [CallStack, string] {
  const at = new CallStack(both);
  const e: { stack?: string } = {};
  (Error as unknown as { captureStackTrace(o: object, f: unknown): void }).captureStackTrace(e, both);
  return [at, e.stack ?? ""];
}

class Caller {
  async method(): Promise<[CallStack, string]> {
    await null;
    return [1].map(() => both())[0];
  }
}

Deno.test("a call's stack read as frames is written as Deno writes an Error's", async () => {
  const [at, text] = await new Caller().method();
  const frames = at.frames();
  assertEquals(frames?.length, text.split("\n").length - 1);
  assertEquals(at.stack, text);
  assert(at.stack.includes("\n    at Array.map (<anonymous>)\n    at Caller.method (file:///"), at.stack);
});

Deno.test("a call's stack read as text first has no frames", () => {
  const [at, text] = both();
  assertEquals(at.stack, text);
  assertEquals(at.frames(), undefined);
  assertEquals(at.stack, text);
});

Deno.test("a call's site is its first frame outside the SDK, relative to the script's folder", () => {
  const [at] = both();
  const here = new URL(import.meta.url);
  const dir = new URL(".", here).href;
  // This file is in the SDK's folder: only a frame outside it is the script's.
  assertEquals(callSiteOf(at.frames()!, dir), undefined);
  const [other] = both();
  const frames = other.frames()!.map((f) => ({
    getScriptNameOrSourceURL: () => f.getScriptNameOrSourceURL()?.replace(dir, "file:///scripts/"),
    getFileName: () => f.getFileName(),
    getLineNumber: () => f.getLineNumber(),
    getColumnNumber: () => f.getColumnNumber(),
  }));
  const site = callSiteOf(frames, "file:///scripts/") ?? "";
  assert(/^\d+:\d+:runtime_test\.ts$/.test(site), site);
});
