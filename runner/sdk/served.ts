// How the fake host of tranquil/automation/testing answers a call: later,
// with copies, as the real connection does.

import contract from "./contract.json" with { type: "json" };

/** copy returns a structured clone of v, as values crossing the connection are copied. */
export function copy<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

/**
 * copyData copies an argument the script hands the app: as the app does,
 * it refuses one holding a function (or anything else that is not data)
 * with a TypeError whose code is not_serializable.
 */
function copyData<T>(v: T): T {
  try {
    return copy(v);
  } catch (e) {
    if (!(e instanceof DOMException && e.name === "DataCloneError")) throw e;
    throw Object.assign(new TypeError(`only data (JSON) reaches the app: ${e.message}`), { code: "not_serializable" });
  }
}

/** The app's limits on text a script hands it, which the fake applies too (see the guide's Limits). */
export const MAX_LINE_BYTES = 64 << 10;
/** A context.progress message's and a step error's limit. */
export const MAX_REPORT_BYTES = 1 << 10;
/** A step name's limit. */
export const MAX_STEP_NAME_BYTES = 256;

/**
 * cutText cuts s, as the app does, to at most max bytes of UTF-8, ending
 * in a marker that says how many bytes were cut.
 */
export function cutText(s: string, max: number): string {
  if (s.length * 3 <= max) return s; // a UTF-16 unit is at most 3 bytes of UTF-8
  const bytes = new TextEncoder().encode(s);
  if (bytes.length <= max) return s;
  // The marker is at most 36 bytes; never cut inside a character.
  let keep = max - 40;
  while (keep > 0 && (bytes[keep] & 0xc0) === 0x80) keep--;
  return `${new TextDecoder().decode(bytes.subarray(0, keep))}… [${bytes.length - keep} bytes cut]`;
}

/**
 * served makes f behave like a method of the app: it runs in a later task,
 * gets copies of its arguments and its result (awaited, if f is async) is
 * copied back, as values crossing the real connection are. Functions (pane
 * control actions) travel by reference there, so clone=false leaves
 * arguments alone.
 */
export function served<A extends unknown[], R>(
  f: (...args: A) => R,
  clone = true,
): (...args: A) => Promise<Awaited<R>> {
  return (...args: A) => {
    const a = clone ? args.map(copyData) as A : args;
    return new Promise<Awaited<R>>((resolve, reject) => {
      setTimeout(() => {
        try {
          Promise.resolve(f(...a)).then(copy).then(resolve, reject);
        } catch (e) {
          reject(e);
        }
      }, 0);
    });
  };
}

// The app's strict decoding of arguments (capnweb.StrictArgs, worded by
// runner's argError), from contract.json's shapes: an unknown key, a
// value of the wrong type at any depth, a function where data goes, and a
// target that names no element (cdp's Locator.Check, held to it by
// cdp/testdata/locators.json). The app's other checks of a value (a
// timeout's range, a waitUntil's words, a dialog answer's shape) are its
// own: the fake takes what they would refuse.

type Shapes = Record<string, Record<string, string>>;
const TYPES = contract.types as Shapes;
const WHOLE = new Set<string>(contract.whole);

/** Where a value was refused, as capnweb.DecodeError says it. */
interface Refusal {
  path: string;
  in?: string;
  key?: string;
  takes?: string[];
  want?: string;
  got?: string;
}

/** kindOf names a value's kind as capnweb.KindOf does. */
function kindOf(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  if (typeof v === "function") return "a function";
  if (v instanceof Uint8Array) return "bytes";
  if (v instanceof Date) return "a Date";
  if (v instanceof Error) return "an Error";
  if (typeof v === "object") return "an object";
  return typeof v === "boolean" ? "a boolean" : `a ${typeof v}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof Date) &&
  !(v instanceof Error);

/**
 * decode refuses v where shape goes (slot names it in contract.json's
 * whole list) as capnweb decodes it into its Go type; undefined and null
 * are absent at any depth, and a shape with no Go type to hold it to (a
 * union, any) takes anything.
 */
function decode(
  shape: string,
  v: unknown,
  path: string,
  inType: string | undefined,
  slot: string,
): Refusal | undefined {
  if (v === undefined || v === null) return undefined;
  const refuse = (want: string): Refusal => ({ path, in: inType, want, got: kindOf(v) });
  if (shape === "string") return typeof v === "string" ? undefined : refuse("a string");
  if (shape === "boolean") return typeof v === "boolean" ? undefined : refuse("true or false");
  if (shape === "number") {
    if (!WHOLE.has(slot)) return typeof v === "number" ? undefined : refuse("a number");
    return Number.isInteger(v) && Math.abs(v as number) <= 2 ** 53 ? undefined : refuse("a whole number");
  }
  if (shape.endsWith("[]") && !shape.includes("|")) {
    if (!Array.isArray(v)) return refuse("a list");
    for (const [i, e] of v.entries()) {
      const r = decode(shape.slice(0, -2), e, `${path}[${i}]`, inType, "");
      if (r) return r;
    }
    return undefined;
  }
  const record = /^Record<string, (.*)>$/.exec(shape);
  const fields = TYPES[shape];
  if (!record && !fields) return undefined;
  if (!isObject(v)) return { ...refuse("an object"), in: fields ? shape : inType };
  for (const [k, e] of Object.entries(v)) {
    if (e === undefined || e === null) continue;
    if (record) {
      const r = decode(record[1], e, `${path}.${k}`, inType, "");
      if (r) return r;
    } else if (!(k in fields)) {
      return { path, in: shape, key: k, takes: Object.keys(fields) };
    } else {
      const r = decode(fields[k], e, `${path}.${k}`, shape, `${shape}.${k}`);
      if (r) return r;
    }
  }
  return undefined;
}

/** closest is the key of takes nearest to key, as capnweb.DecodeError.Closest finds it. */
function closest(key: string, takes: readonly string[]): string | undefined {
  const k = [...key.toLowerCase()];
  if (k.length > 64) return undefined;
  let best: string | undefined, bestD = Infinity;
  for (const t of takes) {
    const d = editDistance(k, [...t.toLowerCase()]);
    if (d < bestD) [best, bestD] = [t, d];
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor([...best].length / 2)) ? best : undefined;
}

/** editDistance is the optimal-string-alignment distance of a and b. */
function editDistance(a: string[], b: string[]): number {
  let [prev2, prev] = [[] as number[], Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) cur[j] = Math.min(cur[j], prev2[j - 2] + 1);
    }
    [prev2, prev] = [prev, cur];
  }
  return prev[b.length];
}

/** refused is the error the app rejects a call with: a TypeError with its code and properties. */
function refused(message: string, props: Record<string, unknown>): TypeError {
  return Object.assign(new TypeError(message), props);
}

/** refusalMessage words r with the value called root, as capnweb.DecodeError.Message does. */
function refusalMessage(root: string, r: Refusal): string {
  return r.key !== undefined
    ? `unknown key ${JSON.stringify(r.key)} in ${root}${r.path} (it takes ${r.takes!.join(", ")})`
    : `${root}${r.path} must be ${r.want}, not ${r.got}`;
}

/** refusalProps are r's properties, as capnweb.DecodeError.Props gives them, of the script's argument n (0: none). */
function refusalProps(r: Refusal, n: number): Record<string, unknown> {
  const props: Record<string, unknown> = { path: r.path, ...n > 0 ? { argument: n } : {} };
  if (r.key === undefined) return { ...props, want: r.want, got: r.got };
  const near = closest(r.key, r.takes!);
  return { ...props, key: r.key, takes: r.takes, ...near ? { closest: near } : {} };
}

/**
 * argError words r, a refusal of the script's argument n (from 1; 0 is the
 * tab's ID, which the SDK sends) of shape shape, as runner's argError does.
 */
function argError(api: string, n: number, shape: string, r: Refusal): TypeError {
  const what = shape === "Locator"
    ? "target"
    : shape === "StepEvent" || shape === "ProgressEvent"
    ? "the report"
    : TYPES[shape]
    ? "options"
    : n === 0
    ? "the tab's ID"
    : `argument ${n}`;
  if (r.got === "a function") {
    return refused(`${api}: ${what} holds a function; only data (JSON) reaches the app`, { code: "not_serializable" });
  }
  let msg = refusalMessage(what, r);
  if (r.in === "Locator") msg += `; ${contract.targetHint}`;
  return refused(`${api}: ${msg}`, { ...refusalProps(r, n), code: "invalid" });
}

/** tabFirst says whether a method on the wire ("forms.fill") gets the tab's ID before the script's arguments. */
const tabFirst = (method: string) => /^(tab|forms|pageJs)\./.test(method);

/** TARGET_DEPTH is how deep within and has nest, the outermost target included (cdp's maxLocatorDepth). */
const TARGET_DEPTH = 4;

/** targetWrong is what cdp's Locator.Check says of t (decoded already), or undefined when it names an element. */
export function targetWrong(t: Record<string, unknown>, depth = 0): string | undefined {
  const has = (k: string) => typeof t[k] === "string" && t[k] !== "";
  const n = ["label", "placeholder", "text", "selector", "testId", "ref"].filter(has).length +
    (has("role") || has("name") ? 1 : 0);
  if (n === 0) return "the target names no element";
  if (n > 1) return "the target names more than one way to find the element";
  if (t.exact === true && !has("role") && !has("label")) return `"exact" goes with {role, name} or {label}`;
  for (const part of ["within", "has"]) {
    const p = t[part] as Record<string, unknown> | undefined | null;
    if (p === undefined || p === null) continue;
    if (depth + 1 >= TARGET_DEPTH) return `targets nest at most ${TARGET_DEPTH} deep`;
    if (typeof p.frame === "string" && p.frame !== "") return `"frame" goes on the outermost target, not in "${part}"`;
    const why = targetWrong(p, depth + 1);
    if (why !== undefined) return `its "${part}" part: ${why}`;
  }
  return undefined;
}

/**
 * checkArgs refuses the arguments of method ("tab.goto" on the wire: forms'
 * are "forms.fill") with these params (contract.json's shapes) as the
 * app does, naming it api, or returns.
 */
export function checkArgs(api: string, method: string, params: readonly string[], args: readonly unknown[]): void {
  const targets: unknown[] = [];
  for (const [i, p] of params.entries()) {
    let shape = p;
    if (p === "string | Locator" && isObject(args[i])) shape = "Locator"; // tab.waitFor's target
    const r = decode(shape, args[i], "", undefined, `${method}#${i + 1}`);
    if (r) throw argError(api, tabFirst(method) ? i : i + 1, shape, r);
    if (shape === "Locator") targets.push(args[i] ?? {}); // absent: the zero target, which names nothing
    const pressed = (args[i] as { target?: unknown } | undefined)?.target;
    if (shape === "PressOptions" && pressed !== undefined && pressed !== null) targets.push(pressed);
  }
  for (const t of targets) {
    const why = targetWrong(t as Record<string, unknown>);
    if (why !== undefined) throw refused(`${api}: ${why}; ${contract.targetHint}`, { code: "invalid" });
  }
  checkValues(api, method, params, args);
}

/** invalid is the app's refusal of a value its type lets through: a TypeError or RangeError with code invalid. */
function invalid(range: boolean, message: string, props: Record<string, unknown> = {}): Error {
  return Object.assign(range ? new RangeError(message) : new TypeError(message), props, { code: "invalid" });
}

/** goNumber prints ms as Go's %v does. */
const goNumber = (ms: number) => ms === Infinity ? "+Inf" : ms === -Infinity ? "-Inf" : String(ms);

const MODIFIERS = ["Alt", "Control", "Ctrl", "Meta", "Shift"];
const DIALOG_HINT = `; pass "accept", "dismiss", {accept, promptText}, or those by type ({confirm: "accept"})`;
/** The longest attribute name an expectation may send, in bytes of UTF-8 (runner's maxAttributeName). */
const MAX_ATTRIBUTE_NAME_BYTES = 1 << 10;
const TEXT_KINDS = ["text", "containsText", "value", "class", "url", "title"];

/**
 * checkValues makes the app's own checks of values that decode (runner's
 * facades and cdp's): a timeout's range, the words an option takes, a
 * dialog answer's shape, an expectation's parts. Each says what the app
 * says; the app checks them before it waits for the tab.
 */
function checkValues(api: string, method: string, params: readonly string[], args: readonly unknown[]): void {
  for (const [i, p] of params.entries()) {
    const o = args[i] as Record<string, unknown> | undefined | null;
    if (!TYPES[p] || !isObject(o)) continue;
    const t = o.timeout;
    if ("timeout" in TYPES[p] && typeof t === "number" && t !== 0 && !(t > 0 && t !== Infinity)) {
      throw invalid(
        true,
        `${api}: timeout must be a positive, finite number of milliseconds (or 0 for the default), not ${goNumber(t)}`,
      );
    }
    if (
      p === "NavigationOptions" && o.waitUntil != null &&
      !["", "load", "domcontentloaded"].includes(o.waitUntil as string)
    ) {
      throw invalid(true, `waitUntil must be "load" or "domcontentloaded", not ${JSON.stringify(o.waitUntil)}`);
    }
    if (
      p === "WaitForOptions" && o.state != null &&
      !["", "visible", "hidden", "attached", "detached"].includes(o.state as string)
    ) {
      throw invalid(
        true,
        `${api}: state must be "visible", "hidden", "attached" or "detached", not ${JSON.stringify(o.state)}`,
      );
    }
    for (const m of (o.modifiers as string[] | undefined) ?? []) {
      if (!MODIFIERS.includes(m)) throw invalid(false, `unknown modifier ${m}: use Alt, Control, Meta or Shift`);
    }
    const at = o.position as { x?: number; y?: number } | undefined;
    if (at && ![at.x ?? 0, at.y ?? 0].every(Number.isFinite)) {
      throw invalid(true, `${api}: position must be finite numbers`);
    }
    if (p === "TypeOptions" && o.delay != null && !((o.delay as number) >= 0 && (o.delay as number) <= 10000)) {
      throw invalid(true, `${api}: delay must be from 0 to 10000 milliseconds`);
    }
    if (p === "Expectation") checkExpectation(api, o);
    // cdp's, which reach the script as the browser's errors (a TabError).
    if (o.button != null && !["", "left", "right", "middle"].includes(o.button as string)) {
      throw Object.assign(new Error(`unknown button ${JSON.stringify(o.button)}: use left, right or middle`), {
        code: "invalid",
      });
    }
    if (typeof o.clickCount === "number" && o.clickCount > 3) {
      throw Object.assign(new Error(`clickCount ${o.clickCount} is more than 3`), { code: "invalid" });
    }
  }
  if (method === "tab.expectDownload") {
    const path = (args[1] as { path?: unknown } | undefined)?.path ?? "";
    if (path === "" || (path as string).includes("\0")) {
      throw invalid(false, `{ path } names the folder or file to save the download as, not ${JSON.stringify(path)}`);
    }
  }
  if (method === "forms.select" && Array.isArray(args[2])) {
    const at = args[2].findIndex((o) => typeof o !== "string");
    if (at >= 0) throw invalid(false, `tab.select: option ${at + 1} is not a string`);
  } else if (method === "forms.select" && typeof args[2] !== "string") {
    throw invalid(false, "tab.select takes an option or a list of options");
  }
  if (method === "forms.onDialog") checkDialog(args[1]);
}

/** checkExpectation refuses an expectation as runner's expectation.cdp does, for the parts scripts get wrong. */
function checkExpectation(api: string, e: Record<string, unknown>): void {
  const textual = e.text != null || e.pattern != null;
  if (
    e.kind === "attribute" &&
    (typeof e.name !== "string" || e.name === "" || new TextEncoder().encode(e.name).length > MAX_ATTRIBUTE_NAME_BYTES)
  ) {
    throw invalid(false, `${api}: attribute expects an attribute name of 1 to ${MAX_ATTRIBUTE_NAME_BYTES} bytes`);
  }
  if (TEXT_KINDS.includes(e.kind as string) && (!textual || e.text != null && e.pattern != null)) {
    throw invalid(false, `${api}: ${e.kind} expects a text or a pattern`);
  }
  if (e.kind === "count" && (textual || typeof e.count !== "number" || e.count < 0)) {
    throw invalid(false, `${api}: count expects a number of elements, 0 or more, and nothing else`);
  }
}

/** checkDialog refuses tab.onDialog's answers as runner's dialogPolicyOf does. */
function checkDialog(v: unknown): void {
  const bad = (msg: string, r?: Refusal, under = "") => {
    const props = r ? { ...refusalProps(r, 1), path: under + r.path } : {};
    return invalid(false, `tab.onDialog: ${msg}${DIALOG_HINT}`, props);
  };
  const answer = (a: unknown): string | Refusal | undefined => {
    if (a === "accept" || a === "dismiss") return undefined;
    if (typeof a === "string") return `unknown answer ${JSON.stringify(a)}`;
    if (!isObject(a)) return `an answer is a string or an object, not ${a === null ? "null" : kindOf(a)}`;
    const r = decode("DialogAnswer", a, "", undefined, "");
    if (r) return r;
    return a.accept == null ? "an answer object needs accept" : undefined;
  };
  if (isObject(v) && Object.keys(v).length > 0 && !("accept" in v)) {
    const r = decode("DialogAnswers", v, "", undefined, "");
    if (r) throw bad(refusalMessage("the answers by type", r), r);
    for (const [typ, a] of Object.entries(v)) {
      if (a == null) continue;
      const why = answer(a);
      if (typeof why === "string") throw bad(`${typ}: ${why}`);
      if (why) throw bad(`${typ}: ${refusalMessage("answer", why)}`, why, `.${typ}`);
    }
    return;
  }
  const why = answer(v);
  if (typeof why === "string") throw bad(why);
  if (why) throw bad(refusalMessage("answer", why), why);
}

/**
 * serve makes the host objects of caps from the host's method list
 * (contract.json): each method is what handler gives for it, served,
 * after the app's checks of its arguments (checkArgs). A
 * method handler does not answer fails installFakeHost, so the fake host
 * cannot fall behind the app's.
 */
export function serve(
  caps: readonly string[],
  handler: (cap: string, name: string, params: string[]) => ((...args: never[]) => unknown) | undefined,
): Record<string, Record<string, (...args: never[]) => Promise<unknown>>> {
  const host = contract.capabilities as Record<string, Record<string, { params: string[] }>>;
  const apis = contract.apis as Record<string, string>;
  return Object.fromEntries(caps.map((cap) => [
    cap,
    Object.fromEntries(
      Object.entries(host[cap]).map(([name, m]) => {
        const f = handler(cap, name, m.params);
        if (f === undefined) throw new Error(`the fake host does not answer ${cap}.${name}`);
        // Functions (pane control actions) travel by reference.
        const call = served(f, !m.params.includes("function"));
        const api = apis[`${cap}.${name}`] ?? `${cap}.${name}`;
        return [name, (...args: never[]) => {
          try {
            checkArgs(api, `${cap}.${name}`, m.params, args);
          } catch (e) {
            return new Promise((_, reject) => setTimeout(() => reject(e), 0));
          }
          return call(...args);
        }];
      }),
    ),
  ]));
}
