/**
 * tranquil/automation: what an automation script imports to talk to the
 * app that runs it.
 *
 * ```ts
 * // @permissions clipboard
 * import { clipboard, context, ui } from "tranquil/automation";
 *
 * const text = await clipboard.read();
 * await ui.notify(`${text.length} characters on the clipboard`);
 * await context.result({ length: text.length });
 * ```
 *
 * Every API that reaches the app checks the script's grants first: a call
 * the script's // @permissions line does not allow throws NotGrantedError
 * naming the key to add. Files are read and written with Deno's own file
 * system access, relative to the script's directory, under its read= and
 * write= grants.
 *
 * The browser is reached through the app too: `tabs` finds or opens tabs
 * (browser), a `Tab` reads, navigates and screenshots its page (browser),
 * fills forms (forms) and runs functions in the page (page-js). Form
 * actions and evaluate also need the page to be on one of the script's
 * sites=, when it lists any.
 *
 * ```ts
 * // @permissions browser forms sites=shop.example
 * import { NotCommittedError, tabs } from "tranquil/automation";
 *
 * const tab = await tabs.active();
 * try {
 *   await tab.fill({ label: "Quantity" }, "12");
 * } catch (e) {
 *   if (!(e instanceof NotCommittedError)) throw e;
 *   console.log(`the page kept ${e.kept}`);
 * }
 * const nav = tab.waitForNavigation(); // before the click that navigates
 * await tab.click({ role: "button", name: "Add to cart" });
 * await nav;
 * ```
 *
 * Browser failures are typed errors with a code to branch on (see
 * TabErrorCode): TabError, and its kinds NotCommittedError (kept: what the
 * field holds) and EvaluateError (the page's error); a missing permission
 * is a NotGrantedError, whose code is "not_granted".
 *
 * @module
 */

import { invalid, jsonData, knownKeys } from "./errors.ts";
import { resolvePath } from "./path.ts";
import { runtime } from "./runtime.ts";
import { cutText, MAX_LINE_BYTES, MAX_REPORT_BYTES } from "./served.ts";

export { Expectations, PageExpectations, Tab, tabs } from "./browser.ts";
// TabCalls, ExpectationCalls and PageExpectationCalls are the generated
// bases: deno doc lists a class's own methods, so Tab's generated ones are
// documented on TabCalls.
export type {
  CheckedExpectOptions,
  ClickOptions,
  DblclickOptions,
  DialogAnswer,
  DialogPolicy,
  DialogType,
  DownloadOptions,
  DownloadResult,
  ExpectationCalls,
  ExpectOptions,
  FieldState,
  FormOptions,
  HoverOptions,
  NavigationOptions,
  NavigationResponse,
  OpenOptions,
  PageExpectationCalls,
  PressOptions,
  ReadOptions,
  ScreenshotOptions,
  TabCalls,
  TableRows,
  Target,
  TypeOptions,
  WaitForOptions,
  WaitState,
  WaitUntil,
} from "./browser.ts";
export {
  CancelledError,
  EvaluateError,
  ExpectationError,
  NoHostError,
  NotCommittedError,
  NotGrantedError,
  StepTimeoutError,
  TabError,
  TerminalError,
} from "./errors.ts";
export type { ArgumentErrorDetails, TabErrorCode, TabErrorDetails } from "./errors.ts";
export type { Capability, JournalEntry, RunEvent } from "./runtime.ts";
export { step } from "./step.ts";
export type { StepAttempt, StepOptions, WaitOptions } from "./step.ts";
export { SDK_VERSION } from "./version.ts";

/** A notification's severity. */
export type Level = "info" | "success" | "warning" | "error";

/** Where ui.open shows a file relative to the current pane. */
export type Split = "left" | "right" | "up" | "down";

const SPLITS: readonly unknown[] = ["left", "right", "up", "down"];

/** A value the host can store: anything JSON can express. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The run itself: who it is, why it started, whether it was cancelled, and its outcome. */
export const context = {
  /** The run's ID, as the app's run history shows it. */
  get runId(): string {
    return runtime().runId;
  },
  /** The absolute directory of the script; files and relative paths resolve against it. */
  get scriptDir(): string {
    return runtime().scriptDir;
  },
  /** What started the run, as the app described it; undefined for a manual run. */
  get trigger(): string | undefined {
    return runtime().trigger;
  },
  /** What the trigger carried (a JSON value the app passed with it); undefined when it carried nothing. */
  get payload(): JsonValue | undefined {
    return runtime().payload as JsonValue | undefined;
  },
  /**
   * Aborts when the run is cancelled (by the user, a timeout or a revoked
   * approval). Its reason is a CancelledError. Pass it to fetch and other
   * APIs that take a signal, or check it between steps; a script that
   * ignores it is stopped by force shortly after.
   */
  get signal(): AbortSignal {
    return runtime().signal;
  },
  /**
   * result records the run's outcome in the app's run history. Calling it
   * again replaces the earlier result. value must be JSON-compatible.
   */
  result(value: JsonValue | undefined): Promise<void> {
    const rt = runtime();
    let data;
    try {
      data = value === undefined ? value : jsonData("context.result", value);
    } catch (e) {
      return Promise.reject(e);
    }
    return rt.track(rt.call<void>("context", "result", data));
  },
  /**
   * exit ends the run now, once the results, logs and reports already
   * made have reached the app: with code 0 (the default) the run's history
   * says succeeded, with any other code (1 to 255) failed, with that code.
   * Await it: nothing after it runs. Deno.exit(code) ends the run the same
   * way but at once, cutting off calls still under way. In the fake host
   * of tranquil/automation/testing, host.run() resolves with the code.
   */
  async exit(code = 0): Promise<never> {
    if (!Number.isInteger(code) || code < 0 || code > 255) {
      throw invalid(`context.exit: code must be an integer from 0 to 255, got ${code}`, "RangeError");
    }
    await runtime().settled();
    // Looked up now: the app's bootstrap and the fake host each put their own in.
    Deno.exit(code);
  },
  /**
   * progress tells the app how far the run is, for its runs panel: a short
   * message and, when known, the fraction done (0 to 1). Like log, it
   * does not wait.
   */
  progress(message: string, fraction?: number): void {
    if (fraction !== undefined && !(Number.isFinite(fraction) && fraction >= 0 && fraction <= 1)) {
      throw invalid(`context.progress: fraction must be a number from 0 to 1, got ${fraction}`, "RangeError");
    }
    const ev: Record<string, unknown> = { message: cutText(String(message), MAX_REPORT_BYTES) };
    if (fraction !== undefined) ev.fraction = fraction;
    runtime().report("progress", ev);
  },
  /**
   * log adds a line to the run's log in the app. Arguments are formatted
   * like console.log's. It does not wait: the run sends every pending line
   * before it ends. A line over 64 KiB is cut, and lines past 300 a second
   * are dropped and counted (see the guide's Limits).
   */
  log(...args: unknown[]): void {
    const rt = runtime();
    // Cut here as the app would: what it would cut need not cross the connection.
    const line = cutText(
      args.map((a) => typeof a === "string" ? a : Deno.inspect(a, { colors: false })).join(" "),
      MAX_LINE_BYTES,
    );
    rt.track(rt.call<void>("context", "log", line)).catch((e) => {
      console.error(`tranquil: context.log failed: ${(e as Error).message}`);
    });
  },
};

/** The app's user interface. */
export const ui = {
  /**
   * notify shows a notification in the app. A message over 64 KiB is cut;
   * notifications past 10 a second are dropped and counted (see the
   * guide's Limits).
   */
  notify(message: string, opts: { level?: Level } = {}): Promise<void> {
    knownKeys("ui.notify", "its options", opts, ["level"]);
    return runtime().call("ui", "notify", cutText(String(message), MAX_LINE_BYTES), { level: opts.level ?? "info" });
  },
  /**
   * open shows a file in the app's editor, optionally in a split pane. A
   * relative path resolves against the script's directory.
   */
  open(path: string, opts: { split?: Split } = {}): Promise<void> {
    knownKeys("ui.open", "its options", opts, ["split"]);
    const rt = runtime();
    const o: { split?: Split } = {};
    if (opts.split !== undefined) {
      if (!SPLITS.includes(opts.split)) {
        throw invalid(
          `ui.open: split must be left, right, up or down, not ${JSON.stringify(opts.split)}`,
          "RangeError",
        );
      }
      o.split = opts.split;
    }
    return rt.call("ui", "open", resolvePath(rt.scriptDir, path), o);
  },
};

/**
 * Files relative to the script's directory, through Deno's file system
 * API: reads need a read= grant and writes a write= grant for the file.
 */
export const files = {
  /** read returns a text file's contents. */
  read(name: string): string {
    return Deno.readTextFileSync(resolvePath(runtime().scriptDir, name));
  },
  /**
   * write replaces a text file's contents and returns its absolute path.
   * Missing folders on the way are made, each inside a write= grant.
   */
  write(name: string, text: string): string {
    const path = resolvePath(runtime().scriptDir, name);
    try {
      Deno.writeTextFileSync(path, text);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      makeFolders(parentOf(path));
      Deno.writeTextFileSync(path, text);
    }
    return path;
  },
};

/** parentOf is the folder that holds path, or path itself for a root. */
function parentOf(path: string): string {
  const i = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  if (i <= 0) return path.slice(0, i + 1) || path;
  const p = path.slice(0, i);
  return /^[A-Za-z]:$/.test(p) ? p + "\\" : p;
}

/**
 * makeFolders makes dir and the folders missing above it, one at a time:
 * deno checks each against the write= grants, so none is made outside
 * them (a grant's own parents included, which a recursive mkdir would
 * make). Each folder it builds on must lie, links followed, inside a
 * write= grant too, where the script may read it to tell: a link in a
 * grant that leads out of it is refused.
 */
function makeFolders(dir: string): void {
  const parent = parentOf(dir);
  let blind = false;
  if (parent !== dir) {
    const there = folderThere(parent);
    if (there === false) makeFolders(parent);
    refuseLinkOut(parent);
    blind = there === undefined;
  }
  try {
    Deno.mkdirSync(dir);
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return;
    if (blind && e instanceof Deno.errors.NotFound) {
      throw new Deno.errors.NotCapable(
        `files.write: ${parent} is missing and outside the script's write= grants, so ${dir} cannot be made`,
      );
    }
    throw e;
  }
}

/**
 * folderThere reports whether dir exists: by a look where the script may
 * read, else by making it, which deno allows only inside a write= grant.
 * Where the script may do neither (its own folder, the folder above a
 * grant) it cannot tell, and answers undefined: the grant's folder is then
 * made or found missing on its own.
 */
function folderThere(dir: string): boolean | undefined {
  try {
    if (readable(dir)) Deno.statSync(dir);
    else if (Deno.permissions.querySync({ name: "write", path: dir }).state === "granted") Deno.mkdirSync(dir);
    else return undefined;
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) return true;
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

function readable(path: string): boolean {
  return Deno.permissions.querySync({ name: "read", path }).state === "granted";
}

/** refuseLinkOut throws when folder resolves, through a link, to a place outside the write= grants. */
function refuseLinkOut(folder: string): void {
  if (!readable(folder)) return;
  const real = Deno.realPathSync(folder);
  if (real !== folder && Deno.permissions.querySync({ name: "write", path: real }).state !== "granted") {
    throw new Deno.errors.NotCapable(
      `files.write: ${folder} leads through a link to ${real}, outside the script's write= grants`,
    );
  }
}

/** The system clipboard. Needs the clipboard permission. */
export const clipboard = {
  /** read returns the clipboard's text. */
  read(): Promise<string> {
    return runtime().call("clipboard", "read");
  },
  /** write replaces the clipboard's text. */
  write(text: string): Promise<void> {
    return runtime().call("clipboard", "write", String(text));
  },
};

/** The app's workspace. Needs the browser permission. */
export const workspace = {
  /** projectDir returns the absolute directory of the open project. */
  projectDir(): Promise<string> {
    return runtime().call("workspace", "projectDir");
  },
};

/**
 * Per-script settings the app keeps between runs. Values must be
 * JSON-compatible. Each script sees only its own keys.
 */
export const config = {
  /** get returns the value stored under key, or undefined. */
  async get<T extends JsonValue = JsonValue>(key: string): Promise<T | undefined> {
    // undefined when key is not stored; null when null is.
    return await runtime().call<T | undefined>("config", "get", key);
  },
  /** set stores value under key. */
  async set(key: string, value: JsonValue): Promise<void> {
    return await runtime().call("config", "set", key, jsonData("config.set", value));
  },
  /** delete removes key. */
  delete(key: string): Promise<void> {
    return runtime().call("config", "delete", key);
  },
  /** keys lists the stored keys. */
  async keys(): Promise<string[]> {
    return (await runtime().call<string[] | null>("config", "keys")) ?? [];
  },
};

/**
 * Buttons the script adds to the app's pane. The app calls action when the
 * user clicks it, for as long as the run lasts: a script that registers
 * controls keeps running (for example with // @timeout none, awaiting
 * context.signal) and the app drops them when the run ends.
 */
export const paneControls = {
  /** register adds or replaces the control called name. */
  register(name: string, action: () => unknown): Promise<void> {
    if (typeof action !== "function") throw invalid("paneControls.register needs a function");
    return runtime().call("paneControls", "register", name, action);
  },
  /** unregister removes the control called name. */
  unregister(name: string): Promise<void> {
    return runtime().call("paneControls", "unregister", name);
  },
};
