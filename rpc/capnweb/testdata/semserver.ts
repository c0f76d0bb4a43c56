// The reference for the differential test: the semantics API of
// semantics_test.go served by the capnweb JavaScript server in Deno.
// Usage: deno run --allow-net=127.0.0.1 semserver.ts
// Prints "LISTEN <port>" once it accepts connections.
import { newWebSocketRpcSession, RpcTarget } from "npm:capnweb@0.12.0";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function spin(ms: number) {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* a method that does not await */ }
}

class Counter extends RpcTarget {
  #n: number;
  disposed = false;
  constructor(n: number) {
    super();
    this.#n = n;
  }
  increment(by: number) { this.#n += by; return this.#n; }
  value() { return this.#n; }
  [Symbol.dispose]() { this.disposed = true; }
}

class Store extends RpcTarget {
  #m = new Map<string, unknown>();
  set(k: string, v: unknown, spinMs: number) { spin(spinMs); this.#m.set(k, v); }
  get(k: string) { return this.#m.get(k); }
}

class Api extends RpcTarget {
  #counters: Counter[] = [];
  #signal: (() => void) | null = null;
  #arrived = 0;
  #rendezvous: (() => void)[] = [];
  #store = new Store();

  add(a: number, b: number) { return a + b; }
  hello(name: string) { return `Hello, ${name}!`; }
  echo(v: unknown) { return v; }
  keys(o: Record<string, unknown>) { return Object.keys(o); }
  getUser() { return { name: "Ada", age: 36 }; }
  ids(n: number) { return Array.from({ length: n }, (_, i) => i + 1); }
  delay(ms: number) { return sleep(ms).then(() => ms); }
  async sleepAdd(a: number, b: number, ms: number) { await sleep(ms); return a + b; }
  makeCounter(n: number) { const c = new Counter(n); this.#counters.push(c); return c; }
  lastCounterId() { return this.#counters.length; }
  // The stub c arrives as an argument; the client disposes its own
  // reference right after sending. The call must still see it alive.
  async readAfter(_p: unknown, c: any) {
    const v = await c.value();
    const last = this.#counters[this.#counters.length - 1];
    return { v, disposed: last.disposed };
  }
  // Returns a stub (a promise for the callback's result) it obtained.
  pipeBack(cb: any) { return { p: cb("x") }; }
  throwValue() { throw 42; }
  throwObject() { throw { n: 1, list: [1, 2] }; }
  empty() {
    return { floats: [], ints: {}, anys: [], anym: {}, bytes: new Uint8Array(0) };
  }
  store() { return this.#store; }
  waitSignal() { return new Promise<string>((r) => { this.#signal = () => r("signalled"); }); }
  signal() { this.#signal?.(); return "sent"; }
  // Resolves once n calls have arrived: calls that wait on each other.
  rendezvous(i: number, n: number) {
    return new Promise<number>((r) => {
      this.#rendezvous.push(() => r(i));
      if (++this.#arrived === n) {
        for (const f of this.#rendezvous) f();
        this.#arrived = 0;
        this.#rendezvous = [];
      }
    });
  }
  fail(code: string) {
    const e: any = new RangeError("out of range");
    e.code = code;
    throw e;
  }
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`LISTEN ${port}`),
}, (req) => {
  const { socket, response } = Deno.upgradeWebSocket(req);
  socket.addEventListener("open", () => newWebSocketRpcSession(socket, new Api()));
  return response;
});
