// Errors the SDK throws. Each has its own name, so a script (or a test) can
// tell them apart with instanceof or by err.name.

/**
 * NotGrantedError is thrown by a call to a host API the script's header does
 * not permit. The message names the @permissions key that would grant it.
 */
export class NotGrantedError extends Error {
  /** Always "not_granted", as for every browser error a script branches on by code. */
  readonly code = "not_granted";
  /** The host capability that is missing, such as "clipboard". */
  readonly capability: string;
  /** The @permissions key that grants it, such as "clipboard" or "browser"; undefined for APIs every run gets. */
  readonly permission: string | undefined;

  constructor(api: string, capability: string, permission: string | undefined, options?: ErrorOptions) {
    super(
      permission === undefined
        ? `${api} is not available: the host did not provide "${capability}" to this run`
        : `${api} is not granted to this script: add "${permission}" to its // @permissions line`,
      options,
    );
    this.name = "NotGrantedError";
    this.capability = capability;
    this.permission = permission;
  }
}

/** NoHostError is thrown when the SDK is used outside a run and no fake host is installed. */
export class NoHostError extends Error {
  constructor() {
    super(
      "tranquil/automation is not connected to a host: run this script from the app, " +
        "or call installFakeHost() from tranquil/automation/testing in a test",
    );
    this.name = "NoHostError";
  }
}

/** CancelledError is the reason context.signal carries when the run is cancelled. */
export class CancelledError extends Error {
  constructor(reason: string) {
    super(reason || "the run was cancelled");
    this.name = "CancelledError";
  }
}

/**
 * TerminalError, thrown from a step.do function, fails the step at once:
 * it is never retried.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TerminalError";
  }
}

/** StepTimeoutError reports a step attempt, or a wait for an event, that ran out of time. */
export class StepTimeoutError extends Error {
  /** The step's name. */
  readonly step: string;
  /** The limit that was reached, in milliseconds. */
  readonly timeout: number;

  constructor(step: string, timeout: number) {
    super(`step "${step}" timed out after ${timeout} ms`);
    this.name = "StepTimeoutError";
    this.step = step;
    this.timeout = timeout;
  }
}

/**
 * The codes of browser errors. A script branches on err.code; the host may
 * add codes, so an unknown string is possible too.
 *
 * - not_committed: the page did not keep the value (NotCommittedError)
 * - stale_ref: a { ref } target no longer names an element; resolve it again
 * - not_granted: the script lacks the permission (NotGrantedError), or
 *   tab.setFiles was given a file outside its read= grants
 * - site_not_allowed: the tab's page is outside the script's sites= list
 * - timeout: the wait or action ran out of time
 * - cancelled: the run is ending; the call was cut short (context.signal
 *   has aborted)
 * - expectation_failed: what tab.expect checked did not come true in time
 *   (ExpectationError)
 * - navigation: the page failed to load, or navigated away mid-action
 * - not_found: no element matches the target, no such tab, or no such file
 * - closed: the tab was closed
 * - ambiguous: more than one element matches the target
 * - obscured: another element covers the target
 * - eval_error: the function passed to tab.evaluate threw (EvaluateError)
 * - invalid: the host refused the call's arguments
 * - navigation_blocked: the address is not http or https, or one the host keeps from pages
 * - bad_target: the element is the wrong kind for the call (checked on a
 *   text field, value on a link, setFiles on anything but a file input or
 *   several files for a single one), or the selector is invalid
 * - hidden: the only matches are hidden
 * - disabled: the only matches are disabled
 * - no_option: a select has no such option
 * - not_serializable: what tab.evaluate's function returned cannot travel
 *   back as JSON (a DOM node, a window, a symbol, a circular object), or a
 *   value handed to the app (a config value, a result, options) holds a
 *   function
 * - limit_exceeded: a limit of the app (see the guide's Limits); the
 *   error's details.limit holds it
 *
 * The list is generated from the Go table (package errcode) by
 * go generate ./runner; a test fails until it is.
 */
export type TabErrorCode =
  | "not_found"
  | "ambiguous"
  | "hidden"
  | "disabled"
  | "readonly"
  | "not_editable"
  | "not_focusable"
  | "not_stable"
  | "obscured"
  | "no_option"
  | "not_select"
  | "bad_parts"
  | "missing_part"
  | "bad_target"
  | "stale_ref"
  | "not_committed"
  | "site_not_allowed"
  | "navigation_blocked"
  | "navigation"
  | "timeout"
  | "cancelled"
  | "expectation_failed"
  | "closed"
  | "eval_error"
  | "not_serializable"
  | "invalid"
  | "not_granted"
  | "limit_exceeded"
  | "error"
  // deno-lint-ignore ban-types
  | (string & {});

/**
 * ArgumentErrorDetails are the details of a TabError with code "invalid"
 * for an argument the app refused (a key or a type the SDK's own checks let
 * through): where the refused value is, and either the key the object there
 * does not take or what the value had to be. Other refusals of code
 * "invalid" (a value out of range) have none of them.
 */
export interface ArgumentErrorDetails {
  /** Which argument of the call, from 1. */
  readonly argument?: number;
  /** Where in the argument the value is: "" for the argument itself, else keys and indexes (".target.label", ".modifiers[1]"). */
  readonly path?: string;
  /** A key the object at path does not take, such as "timout". */
  readonly key?: string;
  /** The keys that object takes, in order, when key is set. */
  readonly takes?: readonly string[];
  /** The key of takes nearest to key, when one is near enough to be what was meant. */
  readonly closest?: string;
  /** What the value had to be, when key is not set, such as "a number". */
  readonly want?: string;
  /** What the value is, such as "a string". */
  readonly got?: string;
}

/** TabErrorDetails are a TabError's details: the host's other properties, those of a refused argument typed. */
export interface TabErrorDetails extends ArgumentErrorDetails {
  readonly [prop: string]: unknown;
}

/**
 * TabError is a browser call the host refused or could not carry out. Its
 * code says why; details holds whatever else the host reported (such as
 * the candidates of an ambiguous target, or a refused argument's
 * ArgumentErrorDetails). The host's own error is the cause.
 */
export class TabError extends Error {
  /** Why the call failed, such as "timeout" or "site_not_allowed". */
  readonly code: TabErrorCode;
  /** The API the script called, such as "tab.fill". */
  readonly api: string;
  /** The tab's ID, when the call was about one tab. */
  readonly tab: string | undefined;
  /** The other properties the host attached to its error. */
  readonly details: TabErrorDetails;

  constructor(
    code: TabErrorCode,
    api: string,
    message: string,
    init: { tab?: string; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(`${api}: ${message}`, { cause: init.cause });
    this.name = "TabError";
    this.code = code;
    this.api = api;
    this.tab = init.tab;
    this.details = Object.freeze({ ...init.details }) as TabErrorDetails;
  }
}

/**
 * NotCommittedError reports a field that did not keep what was typed or
 * chosen: a maxlength, an input mask or a script of the page changed it.
 * kept is what the field holds instead.
 */
export class NotCommittedError extends TabError {
  declare readonly code: "not_committed";
  /** The value the field kept, when the host reported it. */
  readonly kept: string | undefined;

  constructor(
    api: string,
    message: string,
    kept: string | undefined,
    init: { tab?: string; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super("not_committed", api, message, init);
    this.name = "NotCommittedError";
    this.kept = kept;
  }
}

/**
 * EvaluateError reports that the function run by tab.evaluate threw, or
 * returned a promise that rejected, inside the page.
 */
export class EvaluateError extends TabError {
  declare readonly code: "eval_error";
  /** The class of what the page threw, such as "TypeError"; "" for a thrown non-Error. */
  readonly remoteName: string;
  /** Its message. */
  readonly remoteMessage: string;
  /** Where it was thrown, 1-based, within the function's source; 0 when unknown. */
  readonly line: number;
  /** The column, 1-based; 0 when unknown. */
  readonly column: number;

  constructor(
    api: string,
    message: string,
    remote: { name: string; message: string; line: number; column: number },
    init: { tab?: string; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super("eval_error", api, message, init);
    this.name = "EvaluateError";
    this.remoteName = remote.name;
    this.remoteMessage = remote.message;
    this.line = remote.line;
    this.column = remote.column;
  }
}

/**
 * ExpectationError reports a check of tab.expect that did not come true
 * before its timeout: the message says what was expected and what the
 * page last showed, such as `expected text "Saved" in role "status", last
 * seen "Saving…" (waited 5 s)`.
 */
export class ExpectationError extends TabError {
  declare readonly code: "expectation_failed";

  constructor(
    api: string,
    message: string,
    init: { tab?: string; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super("expectation_failed", api, message, init);
    this.name = "ExpectationError";
  }
}

/** Frames in here are the SDK's, never the script's. */
const SDK_DIR = new URL(".", import.meta.url).href;

/**
 * The selection file a run from a selection executes, and the source file
 * it was selected from: frames in the one name the other (the runner pads
 * the selection so that its lines and columns are the source's).
 */
let renamed: { entry: string; source: string } | undefined;

/** setSourceOf makes frames in entry (a file URL) name source instead. */
export function setSourceOf(entry: string, source: string): void {
  renamed = entry === source ? undefined : { entry, source };
}

/** Frames of capnweb and of Deno's runtime, which never name the script's lines. */
const NOT_SCRIPT = /\bcapnweb\b|\bext:|node:internal/;

/** A frame's location: its URL, line and column. */
const FRAME_LOCATION = /\(?((?:file|https?|data):[^\s()]+):(\d+):(\d+)\)?\s*$/;

/**
 * scriptFrames picks the stack frames outside the SDK, capnweb and Deno's
 * runtime, which name the script's lines (a selection's as lines of its
 * source file). When there are none (an error thrown inside the SDK with
 * no script frame), it keeps the first frame.
 */
export function scriptFrames(stack: string): string[] {
  const frames = stack.split("\n").filter((l) => /^\s+at /.test(l)).map((l) => l.trim().replace(/^at (async )?/, ""));
  const own = frames.filter((f) => !f.includes(SDK_DIR) && !NOT_SCRIPT.test(f));
  const out = own.length > 0 ? own : frames.slice(0, 1);
  return renamed ? out.map((f) => f.replaceAll(renamed!.entry, renamed!.source)) : out;
}

/**
 * scriptLocation reads the location of stack's first frame outside the
 * SDK, capnweb and Deno's runtime: [, file URL (a selection's as its
 * source file's), line, column], or undefined when no frame is the
 * script's or that frame names no file. Only that frame is looked at, and
 * the stack is not split (a call site is read for every host call).
 */
function scriptLocation(stack: string): [string, string, string] | undefined {
  for (let start = 0; start >= 0;) {
    const end = stack.indexOf("\n", start);
    const line = end < 0 ? stack.slice(start) : stack.slice(start, end);
    start = end < 0 ? -1 : end + 1;
    if (!/^\s+at /.test(line) || line.includes(SDK_DIR) || NOT_SCRIPT.test(line)) continue;
    const m = FRAME_LOCATION.exec(line);
    if (!m) return undefined;
    return [renamed ? m[1].replaceAll(renamed.entry, renamed.source) : m[1], m[2], m[3]];
  }
  return undefined;
}

/** scriptSite is the script's file:line:column in stack, or undefined when no frame is the script's. */
export function scriptSite(stack: string): string | undefined {
  const at = scriptLocation(stack);
  return at && `${at[0]}:${at[1]}:${at[2]}`;
}

/**
 * callSiteText is where the script made a call, for the host's trace: the
 * script's frame of stack (as scriptSite finds it) as "line:column:file",
 * the file relative to dir (a folder's file URL ending in "/") when inside
 * it, as its URL says it (spaces as %20). undefined when no frame is the
 * script's.
 */
export function callSiteText(stack: string, dir: string): string | undefined {
  const at = scriptLocation(stack);
  if (at === undefined) return undefined;
  const [file, line, column] = at;
  return `${line}:${column}:${file.startsWith(dir) ? file.slice(dir.length) : file}`;
}

/** What callSiteOf reads of a V8 call site (Error.prepareStackTrace's frames). */
export interface CallSiteLike {
  getScriptNameOrSourceURL(): string | null | undefined;
  getFileName(): string | null | undefined;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
}

/**
 * callSiteOf is callSiteText for a stack's call sites rather than its
 * text: the first frame outside the SDK, capnweb and Deno's runtime, by
 * its file's URL (which Deno does not source-map), and then only that
 * frame's line and column, which it does. undefined as callSiteText.
 */
export function callSiteOf(frames: readonly CallSiteLike[], dir: string): string | undefined {
  for (const f of frames) {
    const file = f.getScriptNameOrSourceURL() ?? "";
    if (file.includes(SDK_DIR) || NOT_SCRIPT.test(file)) continue;
    if (!/^(?:file|https?|data):/.test(file)) return undefined;
    const line = f.getLineNumber(), column = f.getColumnNumber();
    if (line === null || column === null) return undefined;
    const url = renamed ? file.replaceAll(renamed.entry, renamed.source) : file;
    return `${line}:${column}:${url.startsWith(dir) ? url.slice(dir.length) : url}`;
  }
  return undefined;
}

const LOCATED = Symbol("tranquil.located");

/**
 * locate adds to err's message where the script made the call that
 * failed: " (at file:///…/script.ts:12:5)". at is an Error made when the
 * call was made (a host call fails later, off the script's stack); without
 * it err's own stack is read. With at, err's stack becomes the call's, so
 * an uncaught err is reported at the script's line. An err with no script
 * frame, or already located, is returned as it is.
 */
export function locate<T>(err: T, at?: { readonly stack?: string }): T {
  if (!(err instanceof Error) || (err as unknown as Record<symbol, unknown>)[LOCATED]) return err;
  const site = scriptSite((at ?? err).stack ?? "");
  if (site === undefined) return err;
  err.message += ` (at ${site})`;
  if (at) err.stack = `${err.name}: ${err.message}\n${(at.stack ?? "").split("\n").slice(1).join("\n")}`;
  Object.defineProperty(err, LOCATED, { value: site });
  return err;
}

/** siteOf is where locate placed err, or undefined. */
export function siteOf(err: unknown): string | undefined {
  return err instanceof Error ? (err as unknown as Record<symbol, string | undefined>)[LOCATED] : undefined;
}

/**
 * invalid is the error of an argument the SDK refuses, with code "invalid"
 * as the host's refusals have, and the script's line in its message.
 */
export function invalid(message: string, kind: "TypeError" | "RangeError" = "TypeError"): TypeError | RangeError {
  const e = kind === "RangeError" ? new RangeError(message) : new TypeError(message);
  return locate(Object.assign(e, { code: "invalid" }));
}

/**
 * knownKeys refuses an object with a key not in keys (undefined values
 * aside), such as { timout: 5 }, naming the key and the known key closest
 * to it. what names the object in the message ("options", "the target").
 */
export function knownKeys(api: string, what: string, obj: object, keys: readonly string[]): void {
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || keys.includes(k)) continue;
    const near = closestKey(k, keys);
    throw invalid(
      `${api}: ${what} has an unknown key "${k}"${near ? `; did you mean "${near}"?` : ""} (known keys: ${
        keys.join(", ")
      })`,
    );
  }
}

/** closestKey is the key of keys nearest to k by edits, ignoring case, or undefined when none is near. */
export function closestKey(k: string, keys: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const key of keys) {
    const d = editDistance(k.toLowerCase(), key.toLowerCase());
    if (d < bestD) [best, bestD] = [key, d];
  }
  // A key more than half rewritten is not a typo of it.
  return best !== undefined && bestD <= Math.max(1, Math.floor(best.length / 2)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** How to send what a script most often hands over that JSON cannot hold. */
const TO_JSON_HINT: Record<string, string> = {
  Date: " (send date.toISOString())",
  Map: " (send Object.fromEntries(map))",
  Set: " (send [...set])",
};

/**
 * jsonCopy copies v, refusing through refuse anything JSON cannot hold:
 * what is left are null, booleans, finite numbers, strings, arrays and
 * plain objects. Object members that are undefined are dropped, as
 * JSON.stringify drops them; an undefined array element (or a hole) is
 * null with holes, as there, and refused without. at is where v is, the
 * keys and indexes down to it, pushed and popped as the walk goes and put
 * into words only for a refusal, so a large value builds no path strings.
 */
export function jsonCopy(
  v: unknown,
  at: (string | number)[],
  seen: Set<object>,
  refuse: (at: (string | number)[], what: string) => Error,
  holes: boolean,
): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      if (!Number.isFinite(v)) throw refuse(at, String(v));
      return v;
    case "undefined":
      throw refuse(at, "undefined");
    case "object": {
      if (v === null) return null;
      if (seen.has(v)) throw refuse(at, "a circular reference");
      seen.add(v);
      try {
        if (Array.isArray(v)) {
          const out = new Array(v.length);
          for (let i = 0; i < v.length; i++) {
            if (holes && v[i] === undefined) {
              out[i] = null;
              continue;
            }
            at.push(i);
            out[i] = jsonCopy(v[i], at, seen, refuse, holes);
            at.pop();
          }
          return out;
        }
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) {
          const name: string = v.constructor?.name || "class instance";
          throw refuse(at, `${/^[AEIOU]/i.test(name) ? "an" : "a"} ${name}${TO_JSON_HINT[name] ?? ""}`);
        }
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) {
          if (x === undefined) continue;
          at.push(k);
          out[k] = jsonCopy(x, at, seen, refuse, holes);
          at.pop();
        }
        return out;
      } finally {
        seen.delete(v);
      }
    }
    default:
      throw refuse(at, `a ${typeof v}`);
  }
}

/**
 * jsonData copies value, which a script hands the app to keep (a result, a
 * config value), as JSON.stringify would keep it, refusing what JSON
 * cannot hold with a TypeError whose code is not_serializable, naming where
 * it is: "config.set: the value.when is a Date, …".
 */
export function jsonData(api: string, value: unknown): unknown {
  return jsonCopy(value, [], new Set(), (at, what) => {
    let path = "the value";
    for (const k of at) path += typeof k === "number" ? `[${k}]` : `.${k}`;
    return locate(Object.assign(
      new TypeError(
        `${api}: ${path} is ${what}, which JSON cannot hold; ` +
          `pass null, booleans, finite numbers, strings, arrays and plain objects`,
      ),
      { code: "not_serializable" },
    ));
  }, true);
}
