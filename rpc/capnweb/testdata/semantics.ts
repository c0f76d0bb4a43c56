// Scenarios a script author relies on, run by the real capnweb client
// against one server: the Go server (semantics_test.go) or the JavaScript
// reference (semserver.ts). The differential test runs both and compares.
// Usage: deno run --allow-net=127.0.0.1:PORT semantics.ts ws://127.0.0.1:PORT/
// Prints one JSON line per scenario: {"name", "ok", "value", "detail"}.
// "value" is a typed rendering of what the script saw; "ok" is whether it
// is what JavaScript semantics promise.
import { newWebSocketRpcSession, RpcStub, RpcTarget } from "npm:capnweb@0.12.0";

const url = Deno.args[0];

// render shows a value with everything the script could observe: key
// order, undefined, NaN, bigint, dates, bytes, error names and codes.
function render(v: unknown): string {
  if (v === undefined) return "undefined";
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "function") return "function";
  if (v === null || typeof v !== "object") return String(v);
  if (v instanceof Date) return `Date(${v.getTime()})`;
  if (v instanceof Uint8Array) return `bytes[${Array.from(v).join(",")}]`;
  if (v instanceof Error) {
    const code = (v as any).code;
    return `${v.name}: ${v.message}` + (code === undefined ? "" : ` code=${render(code)}`);
  }
  if (v instanceof RpcStub) return "stub";
  if (Array.isArray(v)) return `[${v.map(render).join(",")}]`;
  return `{${Object.keys(v).map((k) => `${JSON.stringify(k)}:${render((v as any)[k])}`).join(",")}}`;
}

async function scenario(name: string, fn: () => Promise<unknown>, want?: string) {
  let value: string, ok: boolean, detail = "";
  try {
    value = render(await fn());
    ok = want === undefined || value === want;
    if (!ok) detail = `want ${want}`;
  } catch (e) {
    value = "threw " + render(e);
    ok = false;
    detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  }
  console.log(JSON.stringify({ name, ok, value, detail }));
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: number;
  const timeout = new Promise<T>((_, reject) => {
    t = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(t));
}

const api: any = newWebSocketRpcSession(url);

await scenario("values round trip", () =>
  api.echo({
    u: undefined, nul: null, nan: NaN, inf: Infinity, big: 12345678901234567890n,
    date: new Date(1700000000000), bytes: new Uint8Array([0, 1, 255]),
    nested: [[1, [2, "s"]], { a: null }, []], str: "héllo \u2028", neg: -0.25,
  }));

await scenario("pipelining", async () => {
  using c = api.makeCounter(1);
  return [await c.increment(2), await api.add(api.getUser().age, 1)];
}, "[3,37]");

await scenario("error name and code", async () => {
  try {
    await api.fail("E_X");
  } catch (e) {
    return e;
  }
}, "RangeError: out of range code=\"E_X\"");

await scenario("property of a pending result", () => api.hello(api.getUser().name), '"Hello, Ada!"');

await scenario("index into a pending array", () => api.ids(3)[1]);

await scenario("map over null passes it through", () => api.echo(null).map((x: any) => api.add(x, 1)), "null");

await scenario("map over an object runs once", () =>
  api.getUser().map((u: any) => ({ who: u.name, next: api.add(u.age, 1) })), '{"who":"Ada","next":37}');

await scenario("undefined argument and result", () => api.echo(undefined), "undefined");

await scenario("missing method", async () => {
  try {
    await api.nonexistent(1);
  } catch (e) {
    return e;
  }
}, "TypeError: 'nonexistent' is not a function.");

await scenario("a reserved name is not a method", async () => {
  try {
    await api.constructor();
  } catch (e) {
    return e instanceof TypeError;
  }
}, "true");

await scenario("1 a stub argument outlives the caller's release", async () => {
  const c = await api.makeCounter(5);
  // The call waits for its first argument; the client drops its own
  // reference to c at once.
  const r = api.readAfter(api.delay(50), c);
  c[Symbol.dispose]();
  return await r;
}, '{"v":5,"disposed":false}');

await scenario("2 a method returns a stub it obtained", async () => {
  const r = await api.pipeBack((s: string) => `got ${s}`);
  return r;
}, '{"p":"got x"}');

await scenario("3 a thrown number", async () => {
  try {
    await api.throwValue();
  } catch (e) {
    return e;
  }
}, "42");

await scenario("3 a thrown object", async () => {
  try {
    await api.throwObject();
  } catch (e) {
    return e;
  }
}, '{"n":1,"list":[1,2]}');

await scenario("5 empty lists and maps", () => api.empty(),
  '{"floats":[],"ints":{},"anys":[],"anym":{},"bytes":bytes[]}');

await scenario("6 keys JavaScript drops, session lives on", async () => {
  const scraped = JSON.parse('{"__proto__":{"x":1},"constructor":1,"toString":2,"toJSON":3,"ok":4}');
  const back = await api.echo(scraped);
  return [back, await api.add(1, 2)];
}, '[{"ok":4},3]');

await scenario("7 key order round trip", () =>
  api.echo({ b: 1, a: 2, 10: "ten", 2: "two", nested: { z: 1, y: [{ d: 1, c: 2 }] } }),
  '{"2":"two","10":"ten","b":1,"a":2,"nested":{"z":1,"y":[{"d":1,"c":2}]}}');

await scenario("7 key order seen by the server", () => api.keys({ b: 1, a: 2, c: 3 }), '["b","a","c"]');

await scenario("7 key order of a returned record", () => api.getUser(), '{"name":"Ada","age":36}');

await scenario("8 unawaited calls on one object apply in order", async () => {
  using store = api.store();
  // The first set computes for a while without awaiting.
  const p1 = store.set("k", 1, 30);
  const p2 = store.set("k", 2, 0);
  await Promise.all([p1, p2]);
  return await store.get("k");
}, "2");

await scenario("8 calls on one object return in order", async () => {
  using c = api.makeCounter(0);
  const ps = [];
  for (let i = 0; i < 40; i++) ps.push(c.increment(1));
  return (await Promise.all(ps)).every((v: number, i: number) => v === i + 1);
}, "true");

await scenario("8 a call that waits does not hold the next", async () => {
  const w = api.waitSignal();
  const s = await withTimeout(api.signal(), 5000, "signal behind waitSignal");
  return [s, await withTimeout(w, 5000, "waitSignal")];
}, '["sent","signalled"]');

await scenario("9 map elements run concurrently", () =>
  withTimeout(api.ids(3).map((i: any) => api.rendezvous(i, 3)), 5000, "map over rendezvous"),
  "[1,2,3]");

await scenario("10 more calls in flight than the limit", async () => {
  const ps = [];
  for (let i = 0; i < 1100; i++) ps.push(api.sleepAdd(i, 1, 20));
  const r = await Promise.all(ps);
  return [r.length, r[0], r[1099], await api.add(2, 2)];
}, "[1100,1,1100,4]");

await scenario("11 a method named as a JavaScript server names it", async () => {
  using c = api.makeCounter(1);
  await c.value();
  return typeof (await api.lastCounterId());
}, '"number"');

api[Symbol.dispose]();
