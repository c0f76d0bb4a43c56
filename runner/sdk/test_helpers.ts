// Assertions for the SDK's own tests; the SDK may not import @std.

export function assert(cond: unknown, msg = "assertion failed"): asserts cond {
  if (!cond) throw new Error(msg);
}

export function assertEquals(actual: unknown, expected: unknown, msg = ""): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${msg ? msg + ": " : ""}expected ${e}, got ${a}`);
}

/** assertRejects awaits fn and returns what it threw; it fails when fn does not throw. */
export async function assertRejects(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (e) {
    assert(e instanceof Error, `threw a non-Error: ${String(e)}`);
    return e;
  }
  throw new Error("expected a rejection, but it resolved");
}
