// How the fake host of tranquil/automation/testing answers a call: later,
// with copies, as the real connection does.

/** copy returns a structured clone of v, as values crossing the connection are copied. */
export function copy<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
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
    const a = clone ? args.map(copy) as A : args;
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
