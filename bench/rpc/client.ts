// Benchmark client: the capnweb client in Deno calling add(a, b) and
// echo(1 KiB), or (floor) raw one-frame round trips to an echo server.
//
// deno run --allow-net=... client.ts <url> <rpc|floor> <ws|nodelay> <seconds>
// Prints one JSON object with p50/p99 sequential latency (ms) and calls/s
// with 64 calls in flight, for "add" and "echo".
import { RpcSession } from "npm:capnweb@0.12.0";

const [url, kind, transportKind, secondsArg, phases = "seq,rate"] = Deno.args;
const doSeq = phases.includes("seq");
const doRate = phases.includes("rate");
const seconds = Number(secondsArg || "3");
const KIB = "x".repeat(1024);
const INFLIGHT = 64;

// A minimal WebSocket client over Deno.connect, so that TCP_NODELAY can be
// set: the stock WebSocket leaves Nagle's algorithm on. Frames sent in the
// same turn of the event loop leave in one write, which is what Nagle's
// algorithm would have done for them without its wait.
const encoder = new TextEncoder();
const decoder = new TextDecoder();

class NoDelaySocket {
  #conn!: Deno.TcpConn;
  #buf = new Uint8Array(1 << 16);
  #start = 0; // unread bytes are #buf[#start, #end)
  #end = 0;
  #waiters: ((m: string) => void)[] = [];
  #queue: string[] = [];
  #closed: Error | null = null;
  #failers: ((e: Error) => void)[] = [];
  #out: Uint8Array[] = [];
  #outBytes = 0;
  #writing = false;

  static async connect(u: string): Promise<NoDelaySocket> {
    const s = new NoDelaySocket();
    const { hostname, port, pathname } = new URL(u);
    s.#conn = await Deno.connect({ hostname, port: Number(port) });
    s.#conn.setNoDelay(true);
    const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
    const req = `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\n` +
      `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    await s.#conn.write(encoder.encode(req));
    // Read the response head.
    while (true) {
      const text = decoder.decode(s.#buf.subarray(s.#start, s.#end));
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        if (!text.startsWith("HTTP/1.1 101")) throw new Error(`upgrade failed: ${text}`);
        s.#start += end + 4;
        break;
      }
      await s.#fill(1);
    }
    s.#readLoop();
    return s;
  }

  // #fill reads until at least need unread bytes are buffered.
  async #fill(need: number) {
    while (this.#end - this.#start < need) {
      if (this.#start + need > this.#buf.length || this.#end === this.#buf.length) {
        // Move the unread bytes to the front, into a bigger buffer if needed.
        const b = need * 2 > this.#buf.length ? new Uint8Array(need * 2) : this.#buf;
        b.set(this.#buf.subarray(this.#start, this.#end));
        this.#end -= this.#start;
        this.#start = 0;
        this.#buf = b;
      }
      const n = await this.#conn.read(this.#buf.subarray(this.#end));
      if (n === null) throw new Error("connection closed");
      this.#end += n;
    }
  }

  async #readLoop() {
    try {
      while (true) {
        await this.#fill(2);
        const b = this.#buf, at = this.#start;
        const op = b[at] & 0x0f;
        let len = b[at + 1] & 0x7f;
        let head = 2;
        if (len === 126) {
          await this.#fill(4);
          len = (this.#buf[this.#start + 2] << 8) | this.#buf[this.#start + 3];
          head = 4;
        } else if (len === 127) {
          await this.#fill(10);
          len = Number(new DataView(this.#buf.buffer, this.#start + 2, 8).getBigUint64(0));
          head = 10;
        }
        await this.#fill(head + len);
        const from = this.#start + head;
        this.#start = from + len;
        if (op === 8) throw new Error("peer closed");
        if (op !== 1) continue;
        const msg = decoder.decode(this.#buf.subarray(from, from + len));
        const w = this.#waiters.shift();
        if (w) w(msg); else this.#queue.push(msg);
      }
    } catch (e) {
      this.#closed = e as Error;
      for (const f of this.#failers) f(this.#closed);
    }
  }

  send(msg: string) {
    const payload = encoder.encode(msg);
    const n = payload.length;
    const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const frame = new Uint8Array(head + 4 + n);
    frame[0] = 0x81;
    if (n < 126) frame[1] = 0x80 | n;
    else if (n < 65536) { frame[1] = 0x80 | 126; frame[2] = n >> 8; frame[3] = n & 0xff; }
    else { frame[1] = 0x80 | 127; new DataView(frame.buffer).setBigUint64(2, BigInt(n)); }
    const mask = crypto.getRandomValues(new Uint8Array(4));
    frame.set(mask, head);
    const body = frame.subarray(head + 4);
    body.set(payload);
    for (let i = 0; i < n; i++) body[i] ^= mask[i & 3];
    this.#out.push(frame);
    this.#outBytes += frame.length;
    if (!this.#writing) {
      this.#writing = true;
      queueMicrotask(() => this.#flush());
    }
  }

  async #flush() {
    try {
      while (this.#out.length > 0) {
        let data: Uint8Array;
        if (this.#out.length === 1) {
          data = this.#out[0];
        } else {
          data = new Uint8Array(this.#outBytes);
          let off = 0;
          for (const f of this.#out) { data.set(f, off); off += f.length; }
        }
        this.#out = [];
        this.#outBytes = 0;
        let off = 0;
        while (off < data.length) off += await this.#conn.write(data.subarray(off));
      }
    } finally {
      this.#writing = false;
    }
  }

  receive(): Promise<string> {
    const m = this.#queue.shift();
    if (m !== undefined) return Promise.resolve(m);
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      this.#waiters.push(resolve);
      this.#failers.push(reject);
    });
  }

  abort() { try { this.#conn.close(); } catch { /* already closed */ } }
}

// The stock WebSocket as a message source with the same shape.
async function stockSocket(u: string) {
  const ws = new WebSocket(u);
  await new Promise((res, rej) => { ws.onopen = res; ws.onerror = rej; });
  const queue: string[] = [];
  const waiters: ((m: string) => void)[] = [];
  ws.onmessage = (e) => {
    const w = waiters.shift();
    if (w) w(e.data); else queue.push(e.data);
  };
  return {
    send: (m: string) => ws.send(m),
    receive: () => {
      const m = queue.shift();
      return m !== undefined ? Promise.resolve(m) : new Promise<string>((r) => waiters.push(r));
    },
    abort: () => ws.close(),
  };
}

async function open(u: string) {
  return transportKind === "nodelay" ? await NoDelaySocket.connect(u) : await stockSocket(u);
}

function pct(xs: number[], p: number) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}

async function sequential(call: () => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await call(); // warm up
  const lat: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (lat.length < 5000 && performance.now() < end) {
    const t0 = performance.now();
    await call();
    lat.push(performance.now() - t0);
  }
  return { p50: pct(lat, 0.5), p99: pct(lat, 0.99), n: lat.length };
}

async function throughput(call: () => Promise<unknown>) {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: INFLIGHT }, async () => {
    while (performance.now() < end) {
      await call();
      done++;
    }
  }));
  return done / ((performance.now() - t0) / 1000);
}

const result: Record<string, unknown> = {};
if (kind === "rpc") {
  const sock = await open(url);
  const session = new RpcSession<any>(sock as any);
  const api: any = session.getRemoteMain();
  let i = 0;
  const add = async () => {
    const a = i++;
    const r = await api.add(a, 1);
    if (r !== a + 1) throw new Error(`add(${a}, 1) returned ${r}`);
  };
  const echo = async () => {
    const r = await api.echo(KIB);
    if (r.length !== 1024) throw new Error("echo mismatch");
  };
  if (doSeq) {
    result.add = await sequential(add);
    result.echo = await sequential(echo);
  }
  if (doRate) {
    result.addRate = await throughput(add);
    result.echoRate = await throughput(echo);
  }
  api[Symbol.dispose]();
} else {
  // Floor: one frame out, one frame back, no RPC. Replies match requests
  // in order, so 64 in flight is 64 outstanding frames.
  const sock = await open(url);
  const roundTrip = (payload: string) => async () => {
    sock.send(payload);
    await sock.receive();
  };
  // Frames the size of the add call and of the echo call.
  const small = `["push",["pipeline",0,["add"],[1,1]]]`;
  const big = `["push",["pipeline",0,["echo"],["${KIB}"]]]`;
  if (doSeq) {
    result.add = await sequential(roundTrip(small));
    result.echo = await sequential(roundTrip(big));
  }
  if (doRate) {
    result.addRate = await throughput(roundTrip(small));
    result.echoRate = await throughput(roundTrip(big));
  }
  sock.abort();
}
console.log(JSON.stringify(result));
Deno.exit(0);
