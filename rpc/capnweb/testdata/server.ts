// Interop server: a capnweb JavaScript server in Deno for a Go client.
// Usage: deno run --allow-net=127.0.0.1 server.ts
// Prints "LISTEN <port>" once it accepts connections.
import { RpcSession, RpcTarget, WebSocketTransport } from "npm:capnweb@0.12.0";

const disposed = new Set<number>();
let nextId = 0;
let mainDisposals = 0;

class Counter extends RpcTarget {
  #id: number;
  #n: number;
  constructor(id: number, n: number) {
    super();
    this.#id = id;
    this.#n = n;
  }
  id() { return this.#id; }
  increment(by: number) { this.#n += by; return this.#n; }
  value() { return this.#n; }
  next() { return makeCounter(this.#n + 100); }
  [Symbol.dispose]() { disposed.add(this.#id); }
}

function makeCounter(start: number) {
  return new Counter(++nextId, start);
}

// A transport that can be made to fail, which makes the session abort
// (sending an abort message to the peer) as a server-side abort would.
class FailableTransport {
  #inner: WebSocketTransport;
  #rejecters: ((e: unknown) => void)[] = [];
  constructor(ws: WebSocket) { this.#inner = new WebSocketTransport(ws); }
  send(m: string) { return this.#inner.send(m); }
  receive(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#rejecters.push(reject);
      this.#inner.receive().then(resolve, reject);
    });
  }
  abort(reason: unknown) { this.#inner.abort(reason); }
  fail(e: unknown) { for (const r of this.#rejecters) r(e); }
}

class Api extends RpcTarget {
  #transport: FailableTransport;
  #socket: WebSocket;
  #listener: any = null;
  constructor(transport: FailableTransport, socket: WebSocket) {
    super();
    this.#transport = transport;
    this.#socket = socket;
  }
  get version() { return "1.0"; }
  add(a: number, b: number) { return a + b; }
  hello(name: string) { return `Hello, ${name}!`; }
  getUser() { return { name: "Ada", age: 36 }; }
  getUserIds() { return [1, 2, 3]; }
  getUserName(id: number) { return `user${id}`; }
  makeCounter(start: number) { return makeCounter(start); }
  wasDisposed(id: number) { return disposed.has(id); }
  mainDisposals() { return mainDisposals; }
  async callMeBack(cb: any, x: number) { return `cb said ${await cb(x)}`; }
  async useTarget(t: any) { return await t.describe("from server"); }
  registerListener(cb: any) { this.#listener = cb.dup(); return "registered"; }
  async notify(m: string) { return await this.#listener(m); }
  dropListener() {
    this.#listener[Symbol.dispose]();
    this.#listener = null;
    return "dropped";
  }
  fail(code: string) {
    const e: any = new RangeError("value out of range");
    e.code = code;
    throw e;
  }
  echo(v: unknown) { return v; }
  // Returns the caller's own object: parameters are disposed after the
  // call, so the result holds duplicates.
  giveBack(s: any) { return { s: s.dup(), list: [s.dup()] }; }
  describe(v: Record<string, unknown>) {
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = x === null ? "null"
        : x instanceof Date ? "Date"
        : x instanceof Uint8Array ? "Uint8Array"
        : Array.isArray(x) ? "Array"
        : typeof x === "number" && Number.isNaN(x) ? "NaN"
        : typeof x;
    }
    return out;
  }
  abortMe(msg: string) {
    setTimeout(() => this.#transport.fail(new Error(msg)), 0);
    return new Promise(() => {});
  }
  // Calls the Go callback, then drops the connection while it runs.
  dropWhileCalling(cb: any) {
    const p = cb("wait");
    p.catch(() => {});
    setTimeout(() => this.#socket.close(1000, "going away"), 200);
    return new Promise(() => {});
  }
  [Symbol.dispose]() { mainDisposals++; }
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`LISTEN ${port}`),
}, (req) => {
  const { socket, response } = Deno.upgradeWebSocket(req);
  const transport = new FailableTransport(socket);
  new RpcSession(transport, new Api(transport, socket));
  return response;
});
