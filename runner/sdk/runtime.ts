// The state of one run as the SDK sees it: who the host is, what it granted,
// the cancellation signal, events for step.waitForEvent and the step
// journal. The bootstrap installs one when it connects; the fake host of
// tranquil/automation/testing installs one per test.

import {
  type CallSiteLike,
  callSiteOf,
  callSiteText,
  CancelledError,
  locate,
  NoHostError,
  NotGrantedError,
} from "./errors.ts";

/** The @permissions key that grants each host capability; undefined for those every run gets. */
export const PERMISSION_KEY = {
  ui: undefined,
  config: undefined,
  context: undefined,
  paneControls: undefined,
  clipboard: "clipboard",
  workspace: "browser",
  tabs: "browser",
  tab: "browser",
  forms: "forms",
  pageJs: "page-js",
} as const;

/** Host capabilities, as the host names them. */
export type Capability = keyof typeof PERMISSION_KEY;

/** The capabilities this SDK implements, declared to the host in the handshake. */
export const IMPLEMENTED = Object.keys(PERMISSION_KEY) as readonly Capability[];

/**
 * HostMain is the host's main object: one property per granted capability,
 * each holding methods that return promises. Over RPC it is the session's
 * remote main stub; in tests it is a plain object.
 */
// deno-lint-ignore no-explicit-any
export type HostMain = Record<string, any>;

/** An event delivered to the run, for step.waitForEvent. */
export interface RunEvent {
  type: string;
  payload: unknown;
  timestamp: Date;
}

/** One finished step in the in-memory journal. */
export interface JournalEntry {
  name: string;
  kind: "do" | "sleep" | "waitForEvent";
  attempts: number;
  value: unknown;
  startedAt: Date;
  endedAt: Date;
}

/** What a runtime is built from. */
export interface RuntimeInit {
  runId: string;
  scriptDir: string;
  trigger?: string;
  /** What the trigger carried, parsed; undefined for none. */
  payload?: unknown;
  granted: Iterable<string>;
  main: HostMain;
  /**
   * The steps an earlier attempt of this run finished, when it resumes:
   * each returns its journaled result once, without running.
   */
  journal?: Iterable<JournalEntry>;
  /**
   * The script folder's file URL, ending in "/": when set, each host call
   * carries the script's file (relative to it) and line that made it, for
   * the run's trace. A fake host sets none, and its methods get the
   * script's arguments only.
   */
  siteDir?: string;
  /**
   * True when the runtime's owner calls formatSites once each call has
   * left (the bootstrap does, after each write to the host), while the
   * script waits: the sites are then read SITE_BATCH at a time, the last
   * ones SITE_WAIT_MS after the first of them at the latest. False: they
   * are read in a timer as soon as the calls have left.
   */
  ownerFormatsSites?: boolean;
}

/**
 * Set to true on globalThis, it stops the call sites (a benchmark measures
 * what they cost); they are labels, so a script gains nothing by it.
 */
const NO_SITES = Symbol.for("tranquil.noCallSites");

/** An SDK function a host call is made in. */
// deno-lint-ignore no-explicit-any
type SDKFunction = (...args: any[]) => unknown;

/** V8's Error constructor, with what it adds to the standard one. */
const V8Error = Error as unknown as {
  captureStackTrace(into: object, above?: SDKFunction): void;
  prepareStackTrace?: unknown;
};

/** An Error.prepareStackTrace that keeps the frames as they are. */
const keepFrames = (_: unknown, frames: CallSiteLike[]) => frames;

/**
 * CallStack is where the script made a host call: the stack, captured as
 * the call is made (the answer comes later, off the script's stack), and
 * read either as frames, for the call's site in the trace, or as an
 * Error's stack text, for an error or a warning that names the script's
 * line. One capture serves both.
 *
 * Deno formats a stack when it is first read, every frame source-mapped
 * and named, tens of microseconds for a few frames; a site needs one
 * frame's line and column. So the frames are read through a temporary
 * Error.prepareStackTrace: the script's frame is found by its file's URL,
 * which is not mapped, and only its line and column are. Once the frames
 * have been read, V8 keeps them as the stack: the text is then made from
 * them, a frame a line as Deno writes it.
 */
export class CallStack {
  readonly #held: { stack?: unknown } = {};
  #frames: readonly CallSiteLike[] | undefined;
  #text: string | undefined;

  /** The frames of above (an SDK function) and those it made are left out. */
  constructor(above: SDKFunction) {
    V8Error.captureStackTrace(this.#held, above);
  }

  /**
   * frames are the captured frames, innermost first, or undefined when the
   * text was read first or Error.prepareStackTrace cannot be set (a script
   * froze Error).
   */
  frames(): readonly CallSiteLike[] | undefined {
    if (this.#frames === undefined && this.#text === undefined) {
      const prev = V8Error.prepareStackTrace;
      try {
        V8Error.prepareStackTrace = keepFrames;
      } catch {
        return undefined;
      }
      let s: unknown;
      try {
        s = this.#held.stack;
      } finally {
        V8Error.prepareStackTrace = prev;
      }
      if (Array.isArray(s)) this.#frames = s;
      else this.#text = String(s ?? "");
    }
    return this.#frames;
  }

  /** stack is the text of an Error's stack made where the call was: "Error", then "    at …" a frame a line. */
  get stack(): string {
    this.#text ??= this.#frames ? "Error" + this.#frames.map(frameText).join("") : String(this.#held.stack ?? "");
    return this.#text;
  }
}

/**
 * frameText is a frame as a line of Deno's stack text: V8's own, whose
 * location Deno source-maps and, for a file, names by its path; Deno's
 * text names it by its URL.
 */
function frameText(f: CallSiteLike): string {
  let s = String(f);
  const path = f.getFileName(), url = f.getScriptNameOrSourceURL();
  if (path && url && path !== url) s = s.replaceAll(path, url);
  return "\n    at " + s;
}

/** Starts the call-site argument the host takes off each call (runner/trace.go siteMark). */
const SITE_MARK = "\u0000site:";

/** Sites kept waiting to be formatted or sent: past it, calls go without. */
const MAX_UNSENT = 1024;

/**
 * Sites read together (see ownerFormatsSites). Read one a call, in the
 * wait for the host, a site cost a call several times what it costs read
 * in a batch, whose code and data the processor has at hand.
 */
const SITE_BATCH = 32;

/** The longest a site waits for its batch, in milliseconds: fewer calls than a batch are read by then. */
const SITE_WAIT_MS = 20;

/** A host call that has not settled, and where the script made it. */
interface InFlight {
  api: string;
  at: CallStack;
}

/** Events kept for a waiter that has not asked yet; older ones are dropped beyond this. */
const MAX_QUEUED_EVENTS = 1024;

/** Runtime is one run's connection to its host. */
export class Runtime {
  readonly runId: string;
  readonly scriptDir: string;
  readonly trigger: string | undefined;
  readonly payload: unknown;
  readonly granted: ReadonlySet<string>;
  readonly journal: Map<string, JournalEntry> = new Map();
  /** The step names this attempt has used: each is used once (step.ts). */
  readonly stepNames: Set<string> = new Set();
  readonly #main: HostMain;
  readonly #abort = new AbortController();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #events: RunEvent[] = [];
  readonly #waiters = new Set<{ type: string; resolve: (e: RunEvent) => void }>();
  readonly #inflight = new Set<InFlight>();
  readonly #siteDir: string | undefined;
  readonly #ownerFormats: boolean;
  #calls = 0;
  #unsent: { n: number; at: CallStack }[] = [];
  #ready: string[] = [];
  #drain: number | undefined;

  constructor(init: RuntimeInit) {
    this.runId = init.runId;
    this.scriptDir = init.scriptDir;
    this.trigger = init.trigger;
    this.payload = init.payload;
    this.granted = new Set(init.granted);
    this.#main = init.main;
    this.#siteDir = init.siteDir;
    this.#ownerFormats = init.ownerFormatsSites ?? false;
    for (const e of init.journal ?? []) this.journal.set(e.name, structuredClone(e));
  }

  /** signal aborts when the host cancels the run. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** cancel aborts signal with a CancelledError carrying reason. Later calls do nothing. */
  cancel(reason: string): void {
    if (!this.#abort.signal.aborted) this.#abort.abort(new CancelledError(reason));
  }

  /**
   * capability returns the host object for cap, or throws NotGrantedError
   * naming the @permissions key the script lacks. api is what the script
   * called, for the message.
   */
  // deno-lint-ignore no-explicit-any
  capability(cap: Capability, api: string): any {
    if (!this.granted.has(cap)) throw new NotGrantedError(api, cap, PERMISSION_KEY[cap]);
    return this.#main[cap];
  }

  /**
   * site is the arguments of a host call: args, then, when this runtime
   * sends call sites (see siteDir), the call's number and the sites of
   * earlier calls, for the host's trace. at is where the script made the
   * call.
   *
   * Reading even one frame's line costs microseconds, a share of a host
   * round trip: a call's site is read after the call has left, while the
   * script waits for the host (formatSites, a batch at a time), and
   * travels with a later call (see flushSites and takeSites for the last
   * ones).
   */
  site(args: unknown[], at: CallStack): unknown[] {
    if (this.#siteDir === undefined || (globalThis as Record<symbol, unknown>)[NO_SITES] === true) return args;
    const n = ++this.#calls;
    args.push(SITE_MARK + n + (this.#ready.length > 0 ? "\n" + this.#take().join("\n") : ""));
    if (this.#unsent.length < MAX_UNSENT) this.#unsent.push({ n, at });
    if (this.#drain === undefined) {
      this.#drain = setTimeout(() => this.#format(), this.#ownerFormats ? SITE_WAIT_MS : 0);
      Deno.unrefTimer(this.#drain); // formatting keeps no program running
    }
    return args;
  }

  /** take hands over the formatted sites not yet sent. */
  #take(): string[] {
    const ready = this.#ready;
    this.#ready = [];
    return ready;
  }

  /**
   * formatSites formats the captured sites of the calls made so far, for
   * later calls to carry, once they make a batch (SITE_BATCH). A
   * runtime's owner calls it (ownerFormatsSites) once calls have left.
   */
  formatSites(): void {
    if (this.#unsent.length >= SITE_BATCH) this.#format();
  }

  /** format formats the captured sites of the calls made so far. */
  #format(): void {
    clearTimeout(this.#drain);
    this.#drain = undefined;
    for (const { n, at } of this.#unsent) {
      const frames = at.frames();
      const s = frames ? callSiteOf(frames, this.#siteDir!) : callSiteText(at.stack, this.#siteDir!);
      if (s !== undefined && this.#ready.length < MAX_UNSENT) this.#ready.push(`${n}:${s}`);
    }
    this.#unsent = [];
  }

  /**
   * flushSites sends the sites no call has carried yet, as the script
   * ends, with a call the host does not trace (context.payload).
   */
  async flushSites(): Promise<void> {
    const ready = this.takeSites();
    if (ready.length === 0) return;
    // Only the site argument, which the host takes off before the method
    // sees its (no) arguments.
    const args = [SITE_MARK + "0\n" + ready.join("\n")];
    await this.#main.context.payload(...args).catch(() => {});
  }

  /**
   * takeSites formats the sites no call has carried yet and hands them
   * over, "number:line:column:file" each: for flushSites, and for a
   * bootstrap whose process ends before a call could carry them.
   */
  takeSites(): string[] {
    if (this.#siteDir === undefined) return [];
    this.#format();
    return this.#take();
  }

  /** call invokes method on a granted capability. */
  call<T>(cap: Capability, method: string, ...args: unknown[]): Promise<T> {
    // Made now, while the script's call is on the stack, to name its line.
    const at = new CallStack(this.call);
    const api = `${cap}.${method}`;
    let p: PromiseLike<T>;
    try {
      p = this.capability(cap, api)[method](...this.site(args, at));
    } catch (e) {
      throw locate(e); // thrown here, so its own stack has the script's frame
    }
    return this.watch(api, p, at).catch((e) => {
      throw this.thrown(locate(e, at));
    });
  }

  /**
   * thrown is told of each error a host call fails with, as the SDK
   * throws it to the script, and returns it. The testing kit keeps them
   * (see FakeHost.run).
   */
  thrown(e: unknown): unknown {
    return e;
  }

  /**
   * watch keeps a host call the script made as in flight until it settles,
   * with where the script made it, so the bootstrap can say which calls a
   * script that ended without awaiting them cut off.
   */
  watch<T>(api: string, p: PromiseLike<T>, at?: CallStack): Promise<T> {
    // The stack is captured now (or was, in at), while the script's frame
    // is on it; it is formatted only if it is read.
    const call: InFlight = { api, at: at ?? new CallStack(this.watch) };
    this.#inflight.add(call);
    // One then on the host's promise (an RPC promise pulls its result on
    // each); everyone else waits on q.
    const q = Promise.resolve(p);
    const done = () => this.#inflight.delete(call);
    q.then(done, done);
    return q;
  }

  /** inflight lists the host calls that have not settled, oldest first. */
  inflight(): { api: string; stack: string }[] {
    return [...this.#inflight].map((c) => ({ api: c.api, stack: c.at.stack }));
  }

  /**
   * report sends a step or progress event to the host's run events, when
   * the host takes them (a fake host may not). It never fails the script:
   * progress is a display, not an outcome.
   */
  #reports: Promise<unknown> = Promise.resolve();

  report(kind: "step" | "progress", event: Record<string, unknown>): void {
    if (!this.granted.has("context")) return;
    // One at a time, each after the last was taken: the host may run two
    // calls on one object side by side, and a runs panel needs them in
    // order. Called as a method: on an RPC stub, send.call would name a
    // remote method "call". A fake host without the method throws, caught
    // here.
    this.#reports = this.track(this.#reports.then(() => this.#main.context[kind](event)).catch(() => {}));
  }

  /** track keeps p until it settles, so the run does not end before its messages left. */
  track<T>(p: Promise<T>): Promise<T> {
    const quiet = p.then(() => {}, () => {});
    this.#pending.add(quiet);
    quiet.finally(() => this.#pending.delete(quiet));
    return p;
  }

  /** settled resolves once every tracked promise has settled, including ones tracked meanwhile. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** deliver hands an event to a waiter for its type, or queues it. */
  deliver(type: string, payload: unknown): void {
    const ev: RunEvent = { type, payload, timestamp: new Date() };
    for (const w of this.#waiters) {
      if (w.type === type) {
        this.#waiters.delete(w);
        w.resolve(ev);
        return;
      }
    }
    this.#events.push(ev);
    if (this.#events.length > MAX_QUEUED_EVENTS) this.#events.shift();
  }

  /**
   * nextEvent takes the oldest queued event of type, or waits for one. It
   * rejects with signal's reason when signal aborts.
   */
  nextEvent(type: string, signal: AbortSignal): Promise<RunEvent> {
    const i = this.#events.findIndex((e) => e.type === type);
    if (i >= 0) return Promise.resolve(this.#events.splice(i, 1)[0]);
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const w = {
        type,
        resolve: (e: RunEvent) => {
          signal.removeEventListener("abort", onAbort);
          resolve(e);
        },
      };
      const onAbort = () => {
        this.#waiters.delete(w);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.add(w);
    });
  }
}

/**
 * Installed runtimes, innermost last. A fake host installed inside a test
 * shadows the previous one until it is uninstalled.
 */
const installed: Runtime[] = [];

/** install makes rt the active runtime; the returned function removes it again. */
export function install(rt: Runtime): () => void {
  installed.push(rt);
  return () => {
    const i = installed.lastIndexOf(rt);
    if (i >= 0) installed.splice(i, 1);
  };
}

/** runtime returns the active runtime or throws NoHostError. */
export function runtime(): Runtime {
  const rt = installed.at(-1);
  if (!rt) throw new NoHostError();
  return rt;
}
