// Durable-style steps with an in-memory journal. A step's name is its
// identity: the journal keeps a finished step's result under its name, so
// that an attempt that resumes the run (a durable engine's replay, the
// testing kit's host.run() again) returns it without running the step. In
// one attempt a name is used once: a second step of the same name is
// refused, never answered with the first one's result. Here the journal
// lives as long as the run.

import { invalid, knownKeys, StepTimeoutError, TerminalError } from "./errors.ts";
import { type JournalEntry, type RunEvent, runtime } from "./runtime.ts";
import { cutText, MAX_REPORT_BYTES, MAX_STEP_NAME_BYTES } from "./served.ts";

/** How step.do retries a failed attempt. */
export interface StepOptions {
  /** Extra attempts after the first fails. Default 0. A TerminalError is never retried. */
  retries?: number;
  /** How the delay grows between attempts. Default "exponential". */
  backoff?: "constant" | "linear" | "exponential";
  /** The delay before the first retry, in milliseconds. Default 1000. */
  delay?: number;
  /** The longest delay between attempts, in milliseconds. Default 60000. */
  maxDelay?: number;
  /** A limit on each attempt, in milliseconds. Default none. */
  timeout?: number;
}

/** What a step.do function receives. */
export interface StepAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborts when the attempt times out or the run is cancelled. */
  signal: AbortSignal;
}

/** Options of step.waitForEvent. */
export interface WaitOptions {
  /** The event type to wait for. Default: the step's name. */
  type?: string;
  /** How long to wait, in milliseconds. Default: until the run ends. */
  timeout?: number;
}

/**
 * phase reports a step's start, retry or end to the app's run events, for
 * its runs panel. Replayed steps report nothing: they do not run.
 */
function phase(
  name: string,
  kind: JournalEntry["kind"],
  what: "start" | "retry" | "end",
  attempt: number,
  err?: unknown,
): void {
  // Cut as the app would, so that a huge name or error never crosses the connection.
  const ev: Record<string, unknown> = { name: cutText(name, MAX_STEP_NAME_BYTES), kind, phase: what, attempt };
  if (err !== undefined) ev.error = cutText(err instanceof Error ? err.message : String(err), MAX_REPORT_BYTES);
  if (what === "end") ev.ok = err === undefined;
  runtime().report("step", ev);
}

function checkName(name: string): void {
  if (typeof name !== "string" || name === "") throw invalid("a step needs a non-empty name");
}

function checkMillis(what: string, v: number | undefined): void {
  if (v !== undefined && !(Number.isFinite(v) && v >= 0)) {
    throw invalid(`${what} must be a finite number of milliseconds ≥ 0, got ${v}`, "RangeError");
  }
}

/**
 * claim takes name for a step of kind in this attempt and returns what an
 * earlier attempt journaled under it, if anything. A name this attempt
 * used already is refused with "invalid": answering with that step's
 * result would give a loop's first result for every turn.
 */
function claim(name: string, kind: JournalEntry["kind"]): JournalEntry | undefined {
  const rt = runtime();
  if (rt.stepNames.has(name)) {
    throw invalid(
      `step name "${name}" is already used in this run; each step needs a name of its own (the journal keeps ` +
        `a finished step's result under its name). In a loop, put what changes into the name: ` +
        `step.${kind}(\`${name} \${id}\`, …)`,
    );
  }
  const e = rt.journal.get(name);
  if (e && e.kind !== kind) {
    throw invalid(`step name "${name}" was already used by step.${e.kind}; step names must be unique`);
  }
  rt.stepNames.add(name);
  return e;
}

function record(name: string, kind: JournalEntry["kind"], attempts: number, value: unknown, startedAt: Date): void {
  let stored: unknown;
  try {
    stored = structuredClone(value);
  } catch (e) {
    throw new TerminalError(`step "${name}" returned a value that cannot be journaled: ${(e as Error).message}`, {
      cause: e,
    });
  }
  runtime().journal.set(name, { name, kind, attempts, value: stored, startedAt, endedAt: new Date() });
}

/** sleepFor waits ms, or rejects with signal's reason when it aborts first. */
function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function backoffDelay(opts: StepOptions, retry: number): number {
  const base = opts.delay ?? 1000;
  const max = opts.maxDelay ?? 60_000;
  const kind = opts.backoff ?? "exponential";
  const d = kind === "constant" ? base : kind === "linear" ? base * retry : base * 2 ** (retry - 1);
  return Math.min(d, max);
}

async function attempt<T>(
  name: string,
  fn: (a: StepAttempt) => T | Promise<T>,
  n: number,
  timeout: number | undefined,
  run: AbortSignal,
): Promise<T> {
  const ac = new AbortController();
  const onRun = () => ac.abort(run.reason);
  run.addEventListener("abort", onRun, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const work = Promise.resolve().then(() => fn({ attempt: n, signal: ac.signal }));
    if (timeout === undefined) return await work;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new StepTimeoutError(name, timeout);
        ac.abort(err);
        reject(err);
      }, timeout);
    });
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    run.removeEventListener("abort", onRun);
  }
}

/** step groups the durable-style primitives. */
export const step = {
  /**
   * do runs fn as the step called name, retrying a failure as opts say.
   * A TerminalError, or cancellation of the run, ends it at once. The last
   * error is thrown unchanged when every attempt failed. The result must be
   * structured-clonable, since the journal keeps it.
   *
   * A step's name is its identity, and a run uses each name once (step.do,
   * step.sleep and step.waitForEvent alike, whether the step succeeded or
   * failed): a second step of a name already used in the run throws
   * "invalid" rather than run, so a loop names each turn's step apart:
   * `` for (const id of ids) await step.do(`read invoice ${id}`, …) ``. The
   * journal keeps what a step returned under its name so that a resumed
   * run (the testing kit's host.run() again, or its journal option)
   * returns it without running the step again.
   */
  async do<T>(name: string, fn: (a: StepAttempt) => T | Promise<T>, opts: StepOptions = {}): Promise<T> {
    checkName(name);
    if (typeof fn !== "function") {
      const swapped = typeof opts === "function" ? ": the options come after the function" : "";
      throw invalid(`step.do("${name}", fn, opts): fn must be a function, got ${typeof fn}${swapped}`);
    }
    knownKeys("step.do", "its options", opts, ["retries", "backoff", "delay", "maxDelay", "timeout"]);
    const retries = opts.retries ?? 0;
    if (!Number.isInteger(retries) || retries < 0) {
      throw invalid(`retries must be a whole number ≥ 0, got ${retries}`, "RangeError");
    }
    checkMillis("delay", opts.delay);
    checkMillis("maxDelay", opts.maxDelay);
    checkMillis("timeout", opts.timeout);
    const done = claim(name, "do");
    if (done) return structuredClone(done.value) as T;
    const rt = runtime();
    const startedAt = new Date();
    phase(name, "do", "start", 1);
    for (let n = 1;; n++) {
      try {
        rt.signal.throwIfAborted();
        const value = await attempt(name, fn, n, opts.timeout, rt.signal);
        record(name, "do", n, value, startedAt);
        phase(name, "do", "end", n);
        return value;
      } catch (e) {
        if (e instanceof TerminalError || rt.signal.aborted || n > retries) {
          phase(name, "do", "end", n, e);
          throw e;
        }
        phase(name, "do", "retry", n + 1, e);
      }
      await sleepFor(backoffDelay(opts, n), rt.signal);
    }
  },

  /**
   * sleep waits ms as the step called name (used once per run, as for
   * step.do); cancellation of the run ends it early.
   */
  async sleep(name: string, ms: number): Promise<void> {
    checkName(name);
    checkMillis("ms", ms);
    if (claim(name, "sleep")) return;
    const startedAt = new Date();
    phase(name, "sleep", "start", 1);
    try {
      await sleepFor(ms, runtime().signal);
    } catch (e) {
      phase(name, "sleep", "end", 1, e);
      throw e;
    }
    record(name, "sleep", 1, undefined, startedAt);
    phase(name, "sleep", "end", 1);
  },

  /**
   * waitForEvent waits for the next event of a type (default: name)
   * delivered to this run, as the step called name (used once per run,
   * as for step.do). It throws StepTimeoutError when opts.timeout passes
   * first.
   */
  async waitForEvent(name: string, opts: WaitOptions = {}): Promise<RunEvent> {
    checkName(name);
    knownKeys("step.waitForEvent", "its options", opts, ["type", "timeout"]);
    checkMillis("timeout", opts.timeout);
    const done = claim(name, "waitForEvent");
    if (done) return structuredClone(done.value) as RunEvent;
    const rt = runtime();
    const startedAt = new Date();
    const ac = new AbortController();
    const onRun = () => ac.abort(rt.signal.reason);
    rt.signal.addEventListener("abort", onRun, { once: true });
    if (rt.signal.aborted) onRun();
    const timer = opts.timeout === undefined
      ? undefined
      : setTimeout(() => ac.abort(new StepTimeoutError(name, opts.timeout!)), opts.timeout);
    phase(name, "waitForEvent", "start", 1);
    try {
      const ev = await rt.nextEvent(opts.type ?? name, ac.signal);
      record(name, "waitForEvent", 1, ev, startedAt);
      phase(name, "waitForEvent", "end", 1);
      return ev;
    } catch (e) {
      phase(name, "waitForEvent", "end", 1, e);
      throw e;
    } finally {
      clearTimeout(timer);
      rt.signal.removeEventListener("abort", onRun);
    }
  },

  /** journal lists the finished steps of this run, oldest first. */
  journal(): JournalEntry[] {
    return [...runtime().journal.values()].map((e) => structuredClone(e));
  },
};
