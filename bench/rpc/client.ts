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
// set: the stock WebSocket leaves Nagle's algorithm on.
class NoDelaySocket {
  #conn!: Deno.TcpConn;
  #buf = new Uint8Array(0);
  #waiters: ((m: string) => void)[] = [];
  #queue: string[] = [];
  #closed: Error | null = null;
  #failers: ((e: Error) => void)[] = [];
  #writing: Promise<void> = Promise.resolve();

  static async connect(u: string): Promise<NoDelaySocket> {
    const s = new NoDelaySocket();
    const { hostname, port, pathname } = new URL(u);
    s.#conn = await Deno.connect({ hostname, port: Number(port) });
    s.#conn.setNoDelay(true);
    const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
    const req = `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\n` +
      `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    await s.#conn.write(new TextEncoder().encode(req));
    // Read the response head.
    while (true) {
      const text = new TextDecoder().decode(s.#buf);
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        if (!text.startsWith("HTTP/1.1 101")) throw new Error(`upgrade failed: ${text}`);
        s.#buf = s.#buf.slice(end + 4);
        break;
      }
      await s.#fill();
    }
    s.#readLoop();
    return s;
  }

  async #fill() {
    const chunk = new Uint8Array(65536);
    const n = await this.#conn.read(chunk);
    if (n === null) throw new Error("connection closed");
    const b = new Uint8Array(this.#buf.length + n);
    b.set(this.#buf);
    b.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = b;
  }

  async #readLoop() {
    try {
      while (true) {
        while (this.#buf.length < 2) await this.#fill();
        const op = this.#buf[0] & 0x0f;
        let len = this.#buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          while (this.#buf.length < 4) await this.#fill();
          len = (this.#buf[2] << 8) | this.#buf[3];
          off = 4;
        } else if (len === 127) {
          while (this.#buf.length < 10) await this.#fill();
          len = Number(new DataView(this.#buf.buffer, this.#buf.byteOffset + 2, 8).getBigUint64(0));
          off = 10;
        }
        while (this.#buf.length < off + len) await this.#fill();
        const payload = this.#buf.slice(off, off + len);
        this.#buf = this.#buf.slice(off + len);
        if (op === 8) throw new Error("peer closed");
        if (op !== 1) continue;
        const msg = new TextDecoder().decode(payload);
        const w = this.#waiters.shift();
        if (w) w(msg); else this.#queue.push(msg);
      }
    } catch (e) {
      this.#closed = e as Error;
      for (const f of this.#failers) f(this.#closed);
    }
  }

  send(msg: string) {
    const payload = new TextEncoder().encode(msg);
    const n = payload.length;
    const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const frame = new Uint8Array(head + 4 + n);
    frame[0] = 0x81;
    if (n < 126) frame[1] = 0x80 | n;
    else if (n < 65536) { frame[1] = 0x80 | 126; frame[2] = n >> 8; frame[3] = n & 0xff; }
    else { frame[1] = 0x80 | 127; new DataView(frame.buffer).setBigUint64(2, BigInt(n)); }
    const mask = crypto.getRandomValues(new Uint8Array(4));
    frame.set(mask, head);
    for (let i = 0; i < n; i++) frame[head + 4 + i] = payload[i] ^ mask[i & 3];
    this.#writing = this.#writing.then(async () => {
      let off = 0;
      while (off < frame.length) off += await this.#conn.write(frame.subarray(off));
    });
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
