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

/**
 * serve makes the host objects of caps from the host's method list
 * (contract.json): each method is what handler gives for it, served. A
 * method handler does not answer fails installFakeHost, so the fake host
 * cannot fall behind the app's.
 */
export function serve(
  caps: readonly string[],
  handler: (cap: string, name: string, params: string[]) => ((...args: never[]) => unknown) | undefined,
): Record<string, Record<string, (...args: never[]) => Promise<unknown>>> {
  const host = contract.capabilities as Record<string, Record<string, { params: string[] }>>;
  return Object.fromEntries(caps.map((cap) => [
    cap,
    Object.fromEntries(
      Object.entries(host[cap]).map(([name, m]) => {
        const f = handler(cap, name, m.params);
        if (f === undefined) throw new Error(`the fake host does not answer ${cap}.${name}`);
        // Functions (pane control actions) travel by reference.
        return [name, served(f, !m.params.includes("function"))];
      }),
    ),
  ]));
}
