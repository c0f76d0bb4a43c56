/**
 * tranquil/automation/testing: an offline stand-in for the app, so a
 * script's logic can be tested with `deno test` and no app running.
 *
 * ```ts
 * import { installFakeHost } from "tranquil/automation/testing";
 *
 * Deno.test("copies the greeting", async () => {
 *   using host = installFakeHost({
 *     script: import.meta.resolve("./my_script.ts"),
 *     clipboard: "hello",
 *     config: { greeting: "hi" },
 *   });
 *   await host.run();
 *   if (host.notifications[0]?.message !== "hi hello") throw new Error("wrong notification");
 * });
 * ```
 *
 * The fake host answers the same calls the app does (the two are held to
 * one list of the host's methods), records what the script asked for, and
 * enforces the same grants. Given the script, it reads its header as the
 * app does before a run, refuses (throws the app's HeaderError) where the
 * app would, and grants what the header declares; it refuses remote
 * imports the run could not load (a RemoteImportError: an @std module,
 * say, when the header has no import=) as the app refuses the run;
 * host.run() runs the script, from the top at every call, and is the one
 * way to run it: a module runs once per test file, so a plain
 * import("./script.ts") in a second test would run nothing, and the fake
 * host refuses the script's calls from such an import (and every later
 * installFakeHost for that script) with a StrayImportError. The header,
 * sites= and import rules are the app's own Go code, compiled to
 * WebAssembly (rules.wasm.gz, read when this module loads: the test needs
 * --allow-read for the SDK's folder, as for the script). Without a script it grants what a script with the
 * clipboard permission gets; pass permissions (a // @permissions line's
 * keys) to change that. Values cross it the way
 * they cross the real connection, copied, so a value the app could not
 * receive fails here too.
 *
 * It includes a fake browser: tabs held in memory (goto changes a tab's
 * URL, open and close add and remove tabs), a record of every action with
 * the values typed, and failures scripted per method, tab, target or URL,
 * so the script's handling of not_committed or a timeout can be tested:
 *
 * ```ts
 * import { installFakeHost } from "tranquil/automation/testing";
 *
 * Deno.test("keeps what the shop allows", async () => {
 *   using host = installFakeHost({
 *     script: import.meta.resolve("./order.ts"), // its header: // @permissions browser forms sites=shop.example
 *     tabs: [{ url: "https://shop.example/cart", title: "Cart" }],
 *     failures: [{ method: "fill", target: { label: "Quantity" }, error: { code: "not_committed", kept: "10" } }],
 *   });
 *   await host.run();
 *   const fills = host.browser.actions.filter((a) => a.method === "fill");
 *   if (fills[0]?.outcome !== "not_committed") throw new Error("the script never tried");
 * });
 * ```
 *
 * The fake has no pages: tab.evaluate is answered by the evaluate option,
 * and a click navigates only when onAction (or the test) calls
 * host.browser.navigate.
 *
 * @module
 */

import { FakeBrowser, type FakeBrowserOptions } from "./fake_browser.ts";
import { type Capability, install, type JournalEntry, Runtime } from "./runtime.ts";
import {
  capabilities,
  type Header,
  importRefusal,
  parseHeader,
  RemoteImportError,
  UndeclaredImportError,
} from "./kit_rules.ts";
import { copy, cutText, MAX_LINE_BYTES, MAX_REPORT_BYTES, MAX_STEP_NAME_BYTES, serve } from "./served.ts";
import { dirPath, fileUrl, fromFileUrl, pathContains, workingDir } from "./path.ts";
import sdkConfig from "./deno.json" with { type: "json" };

export { FakeBrowser, FakeTab } from "./fake_browser.ts";
export { type RealHostOptions, type RealRun, runOnRealHost } from "./realhost.ts";
export {
  capabilities,
  type Header,
  HeaderError,
  type HeaderErrorKind,
  importRefusal,
  parseHeader,
  RemoteImportError,
  siteAllowed,
  UndeclaredImportError,
} from "./kit_rules.ts";
export type {
  FakeAction,
  FakeBrowserOptions,
  FakeErrorInit,
  FakeFailure,
  FakeMethod,
  FakeReader,
  FakeReaderCall,
  FakeTabInit,
} from "./fake_browser.ts";

/**
 * parsePermissions reads a // @permissions line's keys as the app does (a
 * line the app refuses throws its HeaderError) and returns the
 * capabilities and sites= the run gets, and its read= grants, resolved
 * against scriptDir (default: the working directory), which the fake's
 * setFiles is held to.
 */
export function parsePermissions(
  line: string,
  scriptDir = workingDir(),
): { grant: Capability[]; sites: string[] | undefined; read: string[] } {
  return grants(parseHeader(`// @permissions ${line}\n`, `${scriptDir}/script.ts`));
}

/** grants is what a run with header h gets: its capabilities, sites= (undefined: any site) and read= grants. */
function grants(h: Header): { grant: Capability[]; sites: string[] | undefined; read: string[] } {
  return { grant: capabilities(h), sites: h.sites.length > 0 ? h.sites : undefined, read: h.read };
}

/** Options of {@link installFakeHost}. */
export interface FakeHostOptions extends FakeBrowserOptions {
  /** The run's ID. Default "test-run". */
  runId?: string;
  /**
   * The script under test: a file: URL (such as
   * import.meta.resolve("./order.ts")) or a path. The fake host reads its
   * header as the app does before a run: a header the app refuses throws
   * the app's HeaderError here, and the header's permissions are the run's
   * (so not together with permissions or grant). It reads the modules the
   * script imports too (its local ones, in turn, and dynamic imports of a
   * string literal), and throws a RemoteImportError for code the run could
   * not load, by the table the app's plan applies (see importRefusal): any
   * http:, https: or jsr: module when neither the header's import= nor
   * defaultImports name a host (an @std one unless stdModules, and then
   * only at the version the SDK pins), one from a host they do not name
   * otherwise, an npm: package other than the SDK's own when no host is
   * named, a bare name the SDK's import map does not map, a blob: URL or
   * another scheme deno does not load; an UndeclaredImportError for a
   * local file outside the SDK its read= grants do not cover. host.run()
   * then runs it, again at each call.
   */
  script?: string | URL;
  /**
   * The hosts the app lets every run import code from
   * (runner.Config.DefaultImports), on top of the script's import=.
   * Default none, as in an app that sets none.
   */
  defaultImports?: string[];
  /**
   * Whether the app names a JSR registry (runner.Config.JSR), so that the
   * @std packages of the SDK's import map load for every run, at the
   * versions it pins. Default false, as in an app that names none.
   */
  stdModules?: boolean;
  /** The script's directory, for files and relative paths. Default: the script's, else the working directory. */
  scriptDir?: string;
  /** context.trigger. Default undefined. */
  trigger?: string;
  /** context.payload: what the trigger carried, a JSON value. Default undefined. */
  payload?: unknown;
  /**
   * The script's permissions, as its // @permissions line would give them,
   * such as "browser forms sites=shop.example": they choose the
   * capabilities the run gets, the sites= that page actions are limited
   * to, and the read= grants that setFiles may hand a page (relative to
   * scriptDir). They are checked as the app checks them, so a line the app
   * refuses (such as "none browser") throws its HeaderError. The keys that
   * Deno enforces itself (net=, write=, …) are checked and otherwise
   * ignored. Default "clipboard". Not together with grant or script.
   */
  permissions?: string;
  /** The capabilities the run gets, by the host's names, for a test that needs an exact set. Not together with permissions. */
  grant?: readonly Capability[];
  /** The clipboard's initial text. Default "". */
  clipboard?: string;
  /** The script's stored config. Default empty. */
  config?: Record<string, unknown>;
  /** What workspace.projectDir returns. Default: scriptDir. */
  projectDir?: string;
  /**
   * Steps an earlier attempt of the run finished, for a test of a resumed
   * run: each such step returns its journaled value once, without running,
   * as the steps a host.run() finished do in the next host.run(). Default
   * none.
   */
  journal?: JournalEntry[];
}

/** A notification the script showed. */
export interface Notification {
  message: string;
  level: string;
}

/** A step's start, retry or end, as the app's run events get it. */
export interface StepReport {
  name: string;
  kind: "do" | "sleep" | "waitForEvent";
  phase: "start" | "retry" | "end";
  /** The attempt starting (for start and retry) or the last one (for end). */
  attempt: number;
  /** For end: whether the step succeeded. */
  ok?: boolean;
  /** For retry and a failed end: why the attempt failed. */
  error?: string;
}

/** A context.progress report. */
export interface ProgressReport {
  message: string;
  /** How much is done, from 0 to 1, when the script said. */
  fraction?: number;
}

/** A file the script asked the app to open. */
export interface OpenedFile {
  path: string;
  split?: string;
}

/**
 * FakeHost records what a script did. Dispose it (or call uninstall) to
 * restore whatever host was installed before.
 */
export class FakeHost implements Disposable {
  /** Notifications, in order. */
  readonly notifications: Notification[] = [];
  /** Files opened with ui.open, in order. */
  readonly opened: OpenedFile[] = [];
  /** Every context.result value, in order. */
  readonly results: unknown[] = [];
  /** context.log lines, in order. */
  readonly logs: string[] = [];
  /** The steps' reports (start, retry, end), in order. */
  readonly stepReports: StepReport[] = [];
  /** context.progress reports, in order. */
  readonly progress: ProgressReport[] = [];
  /** The script's config as the app would store it. */
  readonly config: Map<string, unknown>;
  /** Registered pane controls by name. */
  readonly controls: Map<string, () => unknown> = new Map();
  /** The clipboard's text. */
  clipboard: string;
  /** The fake browser: its tabs, the script's actions, scripted failures. */
  readonly browser: FakeBrowser;
  /** The script's header as the app read it, when installFakeHost was given a script. */
  readonly header: Header | undefined;
  readonly #script: URL | undefined;
  readonly #rt: FakeRuntime;
  readonly #uninstall: () => void;
  #exit: RunExit | undefined;
  #module = "";
  #onExit: (e: RunExit) => void = () => {};
  readonly #restoreExit: () => void;

  constructor(opts: FakeHostOptions = {}) {
    this.clipboard = opts.clipboard ?? "";
    this.config = new Map(Object.entries(copy(opts.config ?? {})));
    if ([opts.grant, opts.permissions, opts.script].filter((o) => o !== undefined).length > 1) {
      throw new TypeError("installFakeHost takes one of script, permissions or grant");
    }
    let scriptDir = opts.scriptDir ?? workingDir();
    let perms: ReturnType<typeof grants>;
    if (opts.script !== undefined) {
      this.#script = fileUrl(opts.script);
      if (strays.has(this.#script.href)) throw new StrayImportError(this.#script);
      const path = fromFileUrl(this.#script);
      scriptDir = opts.scriptDir ?? dirPath(path);
      this.header = parseHeader(Deno.readFileSync(path), path);
      const imports = [...this.header.import, ...(opts.defaultImports ?? [])];
      checkImports(this.#script, imports, opts.stdModules ?? false, this.header.read);
      perms = grants(this.header);
    } else perms = parsePermissions(opts.permissions ?? "clipboard", scriptDir);
    const { grant, sites, read } = perms;
    const projectDir = opts.projectDir ?? scriptDir;
    this.browser = new FakeBrowser(opts, sites, { scriptDir, grants: read });
    const push = <T>(list: T[]) => (v: T) => void list.push(v);
    const own: Record<string, Record<string, (...args: never[]) => unknown>> = {
      ui: {
        notify: (message: string, o?: { level?: string }) =>
          push(this.notifications)({ message: cutText(message, MAX_LINE_BYTES), level: o?.level ?? "info" }),
        open: (path: string, o?: { split?: string }) =>
          push(this.opened)(o?.split === undefined ? { path } : { path, split: o.split }),
      },
      clipboard: {
        read: () => this.clipboard,
        write: (text: string) => void (this.clipboard = text),
      },
      workspace: { projectDir: () => projectDir },
      config: {
        get: (key: string) => this.config.get(key),
        set: (key: string, value: unknown) => void this.config.set(key, value),
        delete: (key: string) => void this.config.delete(key),
        keys: () => [...this.config.keys()].sort(),
      },
      paneControls: {
        register: (name: string, action: () => unknown) => void this.controls.set(name, action),
        unregister: (name: string) => void this.controls.delete(name),
      },
      context: {
        result: push(this.results),
        log: (line: string) => push(this.logs)(cutText(line, MAX_LINE_BYTES)),
        payload: () => opts.payload,
        step: (report: StepReport) => {
          const r = { ...report, name: cutText(report.name, MAX_STEP_NAME_BYTES) };
          if (r.error !== undefined) r.error = cutText(r.error, MAX_REPORT_BYTES);
          this.stepReports.push(r);
        },
        progress: (report: ProgressReport) =>
          push(this.progress)({ ...report, message: cutText(report.message, MAX_REPORT_BYTES) }),
      },
    };
    const main = { ...this.browser.api(), ...serve(Object.keys(own), (cap, name) => own[cap][name]) };
    this.#rt = new FakeRuntime(this.#script, () => this.#exitedModule(), {
      runId: opts.runId ?? "test-run",
      scriptDir,
      trigger: opts.trigger,
      payload: copy(opts.payload),
      granted: opts.grant ?? grant,
      main,
      journal: opts.journal,
    });
    this.#uninstall = install(this.#rt);
    this.#restoreExit = replaceExit((code) => this.#exitScript(code));
  }

  /**
   * run runs the script installFakeHost was given, as the app starts a
   * run: from the top, every time it is called (an await import() of the
   * same module runs it only once). The modules the script imports are
   * not run again. It resolves when the script's top level has finished
   * and its context.result and context.log calls are handled, with
   * undefined; or, when the script ended itself with Deno.exit(code) or
   * context.exit(code), with that code, as the app would (0: succeeded,
   * else failed with the code). While the host is installed, Deno.exit
   * ends the fake run, never the test.
   *
   * An error the script's top level ends with is thrown as the script
   * threw it, with its class and code (a TabError stays a TabError).
   *
   * Each call is an attempt of one run that resumes the last: the steps
   * an earlier call finished (see host.journal) return their journaled
   * values without running, and within the call each step name is used
   * once, as in the app.
   */
  async run(): Promise<RunExit | undefined> {
    if (this.#script === undefined) throw new TypeError("installFakeHost was given no script to run");
    this.#rt.stepNames.clear();
    const url = new URL(this.#script);
    // Unique across hosts: a second test's host must not get the first's module.
    url.searchParams.set("fake-run", String(++fakeRuns));
    this.#exit = undefined;
    this.#module = url.href;
    const exited = new Promise<RunExit>((resolve) => this.#onExit = resolve);
    this.#rt.thrownErrors.length = 0;
    try {
      // An exit from a timer or an un-awaited promise ends the run too.
      await Promise.race([import(url.href), exited]);
    } catch (e) {
      if (!(e instanceof ScriptExit)) throw this.#rt.original(e);
    }
    await this.settled();
    return this.#exit;
  }

  /**
   * exitScript ends the current run as the app ends a script that calls
   * Deno.exit or context.exit: the first code is the run's, and the
   * script stops (ScriptExit is thrown, here and at each later call it
   * makes).
   */
  #exitScript(code?: number): never {
    const n = (code ?? Deno.exitCode ?? 0) & 0xff;
    if (this.#exit === undefined) {
      this.#exit = { code: n };
      this.#onExit(this.#exit);
    }
    throw new ScriptExit(this.#exit.code);
  }

  /** exitedModule is the module URL of the run that ended itself, if it did. */
  #exitedModule(): string | undefined {
    return this.#exit === undefined ? undefined : this.#module;
  }

  /** The last context.result value, or undefined. */
  get result(): unknown {
    return this.results.at(-1);
  }

  /** context.signal of the fake run. */
  get signal(): AbortSignal {
    return this.#rt.signal;
  }

  /** cancel does what the app's Stop button does: aborts context.signal. */
  cancel(reason = "cancelled by the test"): void {
    this.#rt.cancel(reason);
  }

  /** sendEvent delivers an event the script may wait for with step.waitForEvent. */
  sendEvent(type: string, payload?: unknown): void {
    this.#rt.deliver(type, copy(payload));
  }

  /** click runs the pane control called name, as a user's click would, and returns its result. */
  async click(name: string): Promise<unknown> {
    const action = this.controls.get(name);
    if (!action) throw new Error(`no pane control called "${name}" is registered`);
    return await action();
  }

  /** journal lists the steps the script finished. */
  get journal(): JournalEntry[] {
    return [...this.#rt.journal.values()];
  }

  /** settled resolves once every context.result and context.log call has been handled. */
  settled(): Promise<void> {
    return this.#rt.settled();
  }

  /** uninstall removes this host; the SDK then uses the one installed before, if any. */
  uninstall(): void {
    this.browser.dispose();
    this.#uninstall();
    this.#restoreExit();
  }

  [Symbol.dispose](): void {
    this.uninstall();
  }
}

/**
 * StrayImportError is thrown when the script given to installFakeHost was
 * run by a plain import rather than host.run(): deno runs a module once per
 * test file, so such a test would pass in one test and run nothing in the
 * next. The script's calls from that import throw it, and so does every
 * later installFakeHost for the same script.
 */
export class StrayImportError extends Error {
  override name = "StrayImportError";
  /** The script's file: URL. */
  readonly script: string;
  constructor(script: URL) {
    super(
      `${fromFileUrl(script)} was run by an import, not host.run(): a module runs once per test file, ` +
        `so the next test's import would run nothing; call host.run() instead`,
    );
    this.script = script.href;
  }
}

/** How a fake run ended itself: the code of its Deno.exit or context.exit. */
export interface RunExit {
  code: number;
}

/**
 * ScriptExit is what Deno.exit and context.exit throw in a fake run, to
 * stop the script where the app would have ended its process. A script
 * that catches it is stopped at its next call to the SDK.
 */
export class ScriptExit extends Error {
  override name = "ScriptExit";
  readonly code: number;
  constructor(code: number) {
    super(`the script ended itself with exit code ${code}`);
    this.code = code;
  }
}

/**
 * replaceExit makes Deno.exit call exit until the returned function is
 * called, and keeps a ScriptExit that reaches the top (from a timer or an
 * un-awaited promise) from failing the test.
 */
function replaceExit(exit: (code?: number) => never): () => void {
  const prev = Deno.exit;
  const mine = (code?: number): never => exit(code);
  Deno.exit = mine;
  const quiet = (ev: Event) => {
    const e = ev instanceof ErrorEvent ? ev.error : (ev as PromiseRejectionEvent).reason;
    if (e instanceof ScriptExit) ev.preventDefault();
  };
  globalThis.addEventListener("error", quiet);
  globalThis.addEventListener("unhandledrejection", quiet);
  return () => {
    if (Deno.exit === mine) Deno.exit = prev;
    globalThis.removeEventListener("error", quiet);
    globalThis.removeEventListener("unhandledrejection", quiet);
  };
}

/** How many of a run's host-call errors the fake keeps to give back (FakeRuntime.original). */
const MAX_KEPT_ERRORS = 64;

/** The runs of every fake host in this test file, for each run's module URL. */
let fakeRuns = 0;

/** The scripts a test ran by a plain import; see StrayImportError. */
const strays = new Set<string>();

/**
 * FakeRuntime is the fake host's runtime: it refuses the calls of a
 * script run by a plain import of its module instead of host.run(), whose
 * frames name the module without run()'s query.
 */
class FakeRuntime extends Runtime {
  readonly #script: URL | undefined;
  readonly #exited: () => string | undefined;
  /** The errors host calls of the current run threw to the script, newest last. */
  readonly thrownErrors: Error[] = [];

  constructor(
    script: URL | undefined,
    exited: () => string | undefined,
    init: ConstructorParameters<typeof Runtime>[0],
  ) {
    super(init);
    this.#script = script;
    this.#exited = exited;
  }

  override thrown(e: unknown): unknown {
    if (e instanceof Error) {
      this.thrownErrors.push(e);
      if (this.thrownErrors.length > MAX_KEPT_ERRORS) this.thrownErrors.shift();
    }
    return e;
  }

  /**
   * original is the error the script's top level ended with, for e, what
   * the import of the script rejected with. Deno hands the importer of a
   * module with top-level await a plain Error (code ERR_MODULE_NOT_FOUND,
   * the same message) in place of one whose stack was rewritten, as the
   * SDK rewrites its errors' to point at the script's line; the host
   * call's error with that message is the script's.
   */
  original(e: unknown): unknown {
    if (!(e instanceof Error) || e.constructor !== Error || (e as { code?: unknown }).code !== "ERR_MODULE_NOT_FOUND") {
      return e;
    }
    return this.thrownErrors.findLast((t) => t.message === e.message) ?? e;
  }

  // deno-lint-ignore no-explicit-any
  override capability(cap: Capability, api: string): any {
    if (this.#script !== undefined) {
      // V8's limit, which the DOM lib does not declare: the script's frame may be deep.
      const v8 = Error as unknown as { stackTraceLimit: number };
      const limit = v8.stackTraceLimit;
      v8.stackTraceLimit = 100;
      const stack = new Error().stack ?? "";
      v8.stackTraceLimit = limit;
      // A frame of the plain module is "<url>:line:col"; host.run()'s is "<url>?fake-run=N:line:col".
      if (stack.includes(`${this.#script.href}:`)) {
        strays.add(this.#script.href);
        throw new StrayImportError(this.#script);
      }
      // A run that ended itself makes no more calls (the test's own still go through).
      const exited = this.#exited();
      if (exited !== undefined && stack.includes(`${exited}:`)) Deno.exit();
    }
    return super.capability(cap, api);
  }
}

/** The SDK's import map, as deno reads it: the keys a script may import by name. */
const IMPORT_MAP: Readonly<Record<string, string>> = sdkConfig.imports;
const SDK_URL = new URL(".", import.meta.url).href;

/** resolveSpecifier resolves a specifier a module at base names, through the SDK's import map as deno would. */
function resolveSpecifier(spec: string, base: URL): string {
  if (/^(\.{1,2}\/|\/)/.test(spec)) return new URL(spec, base).href;
  let target = IMPORT_MAP[spec];
  if (target === undefined) {
    const prefix = Object.keys(IMPORT_MAP).filter((k) => k.endsWith("/") && spec.startsWith(k))
      .sort((a, b) => b.length - a.length)[0];
    if (prefix !== undefined) target = IMPORT_MAP[prefix] + spec.slice(prefix.length);
  }
  if (target !== undefined) return target.startsWith("./") ? new URL(target, SDK_URL).href : target;
  return spec; // a URL, or a bare name deno cannot resolve either (importRefusal refuses it)
}

/**
 * specifiersOf lists the modules a source file names: static imports and
 * re-exports (type-only ones included, as the app's module graph has them)
 * and dynamic imports of a string literal. Comments are left out.
 */
function specifiersOf(src: string): string[] {
  const code = src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const re = /\b(?:import|export)\s*(?:[\w$*{}\s,]*?\bfrom\s*)?["']([^"'\n]+)["']|\bimport\s*\(\s*["']([^"'\n]+)["']/g;
  return [...code.matchAll(re)].map((m) => m[1] ?? m[2]);
}

/**
 * checkImports throws a RemoteImportError when the script at url, or a
 * local module it imports, names remote code a run with these import
 * hosts could not load, and an UndeclaredImportError for a local file
 * outside the SDK that no read= grant covers. Modules it cannot read are
 * not followed; the SDK's own are not checked.
 */
function checkImports(url: URL, imports: readonly string[], stdModules: boolean, reads: readonly string[]): void {
  const cached = Object.values(IMPORT_MAP).filter((v) => v.startsWith("npm:"));
  // The SDK's pinned @std packages ("jsr:@std/x@1.2.3"), not their "@std/x/" prefixes.
  const registry = stdModules
    ? Object.entries(IMPORT_MAP).filter(([k, v]) => !k.endsWith("/") && v.startsWith("jsr:")).map(([, v]) => v)
    : [];
  const refused: { specifier: string; why: string }[] = [];
  const seen = new Set<string>();
  const visit = (file: URL) => {
    if (seen.has(file.href) || file.href.startsWith(SDK_URL)) return;
    seen.add(file.href);
    let src: string;
    try {
      src = Deno.readTextFileSync(file);
    } catch {
      return;
    }
    for (const spec of specifiersOf(src)) {
      const resolved = resolveSpecifier(spec, file);
      if (resolved.startsWith("file:")) {
        const local = new URL(resolved);
        if (!local.href.startsWith(SDK_URL) && local.href !== url.href && !granted(fromFileUrl(local), reads)) {
          throw new UndeclaredImportError(fromFileUrl(local));
        }
        if (/\.[cm]?[jt]sx?$/.test(local.pathname)) visit(local);
        continue;
      }
      const why = importRefusal(resolved, imports, cached, registry);
      if (why !== undefined && !refused.some((r) => r.specifier === resolved)) {
        refused.push({ specifier: resolved, why });
      }
    }
  };
  visit(url);
  if (refused.length > 0) throw new RemoteImportError(refused);
}

/**
 * granted reports whether a read= grant covers path once its links are
 * resolved, as the app checks it; a path that cannot be resolved is not
 * covered.
 */
function granted(path: string, reads: readonly string[]): boolean {
  let real: string;
  try {
    real = Deno.realPathSync(path);
  } catch {
    return false;
  }
  return reads.some((r) => pathContains(r, real));
}

/** installFakeHost makes a new FakeHost the SDK's host until it is disposed. */
export function installFakeHost(opts: FakeHostOptions = {}): FakeHost {
  return new FakeHost(opts);
}
