import { CancelledError, StepTimeoutError, TerminalError } from "./errors.ts";
import { install, Runtime } from "./runtime.ts";
import { step } from "./step.ts";
import { installFakeHost } from "./testing.ts";
import { assert, assertEquals, assertRejects } from "./test_helpers.ts";

Deno.test("step.do retries until it succeeds, then journals the result", async () => {
  using host = installFakeHost();
  const seen: number[] = [];
  const v = await step.do("flaky", ({ attempt }) => {
    seen.push(attempt);
    if (attempt < 3) throw new Error(`attempt ${attempt} failed`);
    return { attempt };
  }, { retries: 5, delay: 1, backoff: "constant" });
  assertEquals(v, { attempt: 3 });
  assertEquals(seen, [1, 2, 3]);
  assertEquals(host.journal.map((e) => [e.name, e.kind, e.attempts, e.value]), [["flaky", "do", 3, { attempt: 3 }]]);
});

Deno.test("step.do with its options before its function is refused, not run as a step that cannot fail", async () => {
  using host = installFakeHost();
  const swapped = step.do as unknown as (name: string, opts: object, fn: () => number) => Promise<number>;
  const e = await assertRejects(() => swapped("flaky", { retries: 5 }, () => 1));
  assert(e instanceof TypeError && (e as { code?: string }).code === "invalid", String(e));
  assert(e.message.includes("fn must be a function, got object: the options come after the function"), e.message);
  assertEquals(host.journal.length, 0);
});

Deno.test("a step name used again in the run is refused, never answered with the first result", async () => {
  using host = installFakeHost();
  const invoices: Record<number, string> = { 1: "first", 2: "second", 3: "third" };
  const read: string[] = [];
  const refused: unknown[] = [];
  for (const id of [1, 2, 3]) {
    try {
      read.push(await step.do("read invoice", () => invoices[id]));
    } catch (e) {
      refused.push(e);
    }
  }
  assertEquals(read, ["first"]);
  assertEquals(refused.length, 2);
  for (const e of refused) {
    assert(e instanceof TypeError && (e as { code?: string }).code === "invalid", String(e));
    assert(e.message.includes(`step name "read invoice" is already used in this run`), e.message);
    assert(e.message.includes("step.do(`read invoice ${id}`"), e.message);
  }
  // Named apart, each turn runs.
  for (const id of [1, 2, 3]) read.push(await step.do(`read invoice ${id}`, () => invoices[id]));
  assertEquals(read, ["first", "first", "second", "third"]);
  // A failed step's name is used too, and so is a name across kinds.
  await assertRejects(() => step.do("flaky", () => Promise.reject(new Error("down"))));
  const again = await assertRejects(() => step.do("flaky", () => 1));
  assert(again.message.includes("already used in this run"), again.message);
  const other = await assertRejects(() => step.sleep("read invoice 1", 1));
  assert(other.message.includes("already used in this run"), other.message);
  assertEquals(host.journal.map((e) => e.name), ["read invoice", "read invoice 1", "read invoice 2", "read invoice 3"]);
});

Deno.test("a resumed run skips the steps its earlier attempt finished, once each", async () => {
  const at = new Date(0);
  using host = installFakeHost({
    journal: [
      { name: "read invoice 1", kind: "do", attempts: 1, value: { total: 10 }, startedAt: at, endedAt: at },
      { name: "nap", kind: "sleep", attempts: 1, value: undefined, startedAt: at, endedAt: at },
    ],
  });
  let runs = 0;
  const one = await step.do("read invoice 1", () => ({ total: ++runs }));
  const two = await step.do("read invoice 2", () => ({ total: ++runs }));
  await step.sleep("nap", 60_000); // journaled: does not wait
  assertEquals([one, two, runs], [{ total: 10 }, { total: 1 }, 1]);
  await host.settled();
  assertEquals(host.stepReports.map((r) => [r.name, r.phase]), [["read invoice 2", "start"], [
    "read invoice 2",
    "end",
  ]]);
  // In this attempt the name is used now.
  const e = await assertRejects(() => step.do("read invoice 1", () => 0));
  assert(e.message.includes("already used in this run"), e.message);
  // A journaled step of another kind keeps its name.
  const kind = await assertRejects(() => step.do("nap", () => 0));
  assert(kind.message.includes("already used"), kind.message);
});

Deno.test("the last error is thrown unchanged once retries run out", async () => {
  using host = installFakeHost();
  let n = 0;
  const e = await assertRejects(() =>
    step.do("always", () => {
      throw new RangeError(`failure ${++n}`);
    }, { retries: 2, delay: 1 })
  );
  assert(e instanceof RangeError && e.message === "failure 3", e.message);
  assertEquals(host.journal, []);
});

Deno.test("TerminalError stops retries at once", async () => {
  using _host = installFakeHost();
  let n = 0;
  const e = await assertRejects(() =>
    step.do("terminal", () => {
      n++;
      throw new TerminalError("do not retry");
    }, { retries: 5, delay: 1 })
  );
  assert(e instanceof TerminalError);
  assertEquals(n, 1);
});

Deno.test("a timed-out attempt is aborted and retried", async () => {
  using _host = installFakeHost();
  const aborted: unknown[] = [];
  const v = await step.do("slow", async ({ attempt, signal }) => {
    if (attempt === 1) {
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
      aborted.push(signal.reason);
      return "too late";
    }
    return "fast";
  }, { retries: 1, timeout: 20, delay: 1 });
  assertEquals(v, "fast");
  assert(aborted[0] instanceof StepTimeoutError);
});

Deno.test("backoff delays grow as asked", async () => {
  using _host = installFakeHost();
  const at: number[] = [];
  await assertRejects(() =>
    step.do("grow", () => {
      at.push(performance.now());
      throw new Error("no");
    }, { retries: 3, delay: 20, backoff: "exponential" })
  );
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  assert(gaps[0] >= 19 && gaps[1] >= 39 && gaps[2] >= 79, `gaps ${gaps}`);
});

Deno.test("bad options are refused before anything runs", async () => {
  using _host = installFakeHost();
  let ran = false;
  for (const opts of [{ retries: -1 }, { retries: 1.5 }, { timeout: -5 }, { delay: Infinity }]) {
    const e = await assertRejects(() => step.do("x", () => ran = true, opts));
    assert(e instanceof RangeError, e.message);
  }
  await assertRejects(() => step.do("", () => ran = true));
  assert(!ran);
});

Deno.test("a result that cannot be journaled fails the step", async () => {
  using _host = installFakeHost();
  const e = await assertRejects(() => step.do("fn", () => () => 1, { retries: 3, delay: 1 }));
  assert(e instanceof TerminalError && e.message.includes("cannot be journaled"), e.message);
});

Deno.test("cancellation ends retries and sleeps", async () => {
  using host = installFakeHost();
  setTimeout(() => host.cancel("stop"), 20);
  const e = await assertRejects(() =>
    step.do("forever", () => {
      throw new Error("again");
    }, { retries: 1000, delay: 5, backoff: "constant" })
  );
  assert(e instanceof CancelledError && e.message === "stop", e.message);
  const s = await assertRejects(() => step.sleep("nap", 60_000));
  assert(s instanceof CancelledError);
});

Deno.test("step.sleep waits and journals", async () => {
  using host = installFakeHost();
  const t0 = performance.now();
  await step.sleep("pause", 30);
  assert(performance.now() - t0 >= 29);
  const e = await assertRejects(() => step.sleep("pause", 30));
  assert(e.message.includes("already used in this run"), e.message);
  assertEquals(host.journal.map((e) => e.kind), ["sleep"]);
});

Deno.test("step.waitForEvent takes queued and later events by type", async () => {
  using host = installFakeHost();
  host.sendEvent("other", 0);
  host.sendEvent("approved", { by: "ada" });
  const first = await step.waitForEvent("approval", { type: "approved" });
  assertEquals([first.type, first.payload], ["approved", { by: "ada" }]);
  setTimeout(() => host.sendEvent("second", 2), 10);
  const second = await step.waitForEvent("second");
  assertEquals(second.payload, 2);
  const again = await assertRejects(() => step.waitForEvent("approval", { type: "approved" }));
  assert(again.message.includes(`step name "approval" is already used in this run`), again.message);
  const e = await assertRejects(() => step.waitForEvent("never", { timeout: 10 }));
  assert(e instanceof StepTimeoutError && e.step === "never", e.message);
  const other = await step.waitForEvent("other");
  assertEquals(other.payload, 0);
});

Deno.test("steps report their start, retries and end to the host", async () => {
  const events: Record<string, unknown>[] = [];
  const rt = new Runtime({
    runId: "r",
    scriptDir: "/",
    granted: ["context"],
    main: { context: { step: (ev: Record<string, unknown>) => events.push(ev) } },
  });
  const uninstall = install(rt);
  try {
    await step.do("fetch", ({ attempt }) => {
      if (attempt === 1) throw new Error("flaky");
      return attempt;
    }, { retries: 1, delay: 1 });
    await rt.settled();
    assertEquals(events, [
      { name: "fetch", kind: "do", phase: "start", attempt: 1 },
      { name: "fetch", kind: "do", phase: "retry", attempt: 2, error: "flaky" },
      { name: "fetch", kind: "do", phase: "end", attempt: 2, ok: true },
    ]);
  } finally {
    uninstall();
  }
});
