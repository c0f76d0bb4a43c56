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

/** argError words r, a refusal of argument n (from 1) of shape shape, as runner's argError does. */
function argError(api: string, n: number, shape: string, r: Refusal): TypeError {
  const what = shape === "Locator"
    ? "target"
    : shape === "StepEvent" || shape === "ProgressEvent"
    ? "the report"
    : TYPES[shape]
    ? "options"
    : `argument ${n}`;
  if (r.got === "a function") {
    return refused(`${api}: ${what} holds a function; only data (JSON) reaches the app`, { code: "not_serializable" });
  }
  const props: Record<string, unknown> = { path: r.path, argument: n };
  let msg: string;
  if (r.key !== undefined) {
    msg = `unknown key ${JSON.stringify(r.key)} in ${what}${r.path} (it takes ${r.takes!.join(", ")})`;
    const near = closest(r.key, r.takes!);
    Object.assign(props, { key: r.key, takes: r.takes }, near ? { closest: near } : {});
  } else {
    msg = `${what}${r.path} must be ${r.want}, not ${r.got}`;
    Object.assign(props, { want: r.want, got: r.got });
  }
  if (r.in === "Locator") msg += `; ${contract.targetHint}`;
  return refused(`${api}: ${msg}`, { ...props, code: "invalid" });
}

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
    if (r) throw argError(api, i + 1, shape, r);
    if (shape === "Locator") targets.push(args[i] ?? {}); // absent: the zero target, which names nothing
    const pressed = (args[i] as { target?: unknown } | undefined)?.target;
    if (shape === "PressOptions" && pressed !== undefined && pressed !== null) targets.push(pressed);
  }
  for (const t of targets) {
    const why = targetWrong(t as Record<string, unknown>);
    if (why !== undefined) throw refused(`${api}: ${why}; ${contract.targetHint}`, { code: "invalid" });
  }
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
