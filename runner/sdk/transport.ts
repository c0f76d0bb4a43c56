// A WebSocket client (RFC 6455) over a plain TCP connection with
// TCP_NODELAY set, exposed as a Cap'n Web transport.
//
// Why not Deno's built-in WebSocket: the bootstrap runs as a --preload
// module, and deno starts the script only once nothing keeps its event
// loop busy. An open WebSocket (or WebSocketStream) always does and cannot
// be unref'ed, so the script would never start; a Deno.Conn can. Owning the
// socket also lets the SDK switch Nagle off and send a whole call (and the
// previous call's release) in one write. The framing is the standard one,
// so the host needs nothing special; it acknowledges unanswered frames at
// once for clients with Nagle on (package rpc/wsconn).

import type { RpcTransport } from "capnweb";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** Largest message accepted from the host, as in Cap'n Web itself. */
export const DEFAULT_MAX_MESSAGE = 32 << 20;

/**
 * How long a message the host never answers (Cap'n Web's release) may wait
 * for the next message to travel with, in milliseconds.
 */
const HOLD_MS = 5;

/**
 * How long a write that failed because the host reset the connection
 * waits for the read side to deliver the host's close frame, in
 * milliseconds. A host that aborts while we write may close with our
 * bytes unread; the reset then fails our write, though the abort and its
 * close frame, which say why, arrived just before it.
 */
const RESET_GRACE_MS = 250;

/** Largest HTTP response head accepted during the upgrade. */
const MAX_RESPONSE_HEAD = 16 << 10;

const OP_CONT = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

/** Close codes this client sends (RFC 6455 §7.4.1). */
export const CloseCode = {
  normal: 1000,
  protocolError: 1002,
  unsupportedData: 1003,
  noStatus: 1005,
  abnormal: 1006,
  invalidPayload: 1007,
  tooBig: 1009,
  /** What Cap'n Web sends when its session aborts. */
  rpcAbort: 3000,
} as const;

/** How a connection ended. */
export interface CloseInfo {
  code: number;
  reason: string;
  /** True when this side started the close. */
  local: boolean;
}

/** WebSocketError reports a failed upgrade or a broken connection. */
export class WebSocketError extends Error {
  readonly code: number;
  constructor(message: string, code: number = CloseCode.abnormal) {
    super(message);
    this.name = "WebSocketError";
    this.code = code;
  }
}

/** One complete frame read off the wire. */
export interface Frame {
  fin: boolean;
  opcode: number;
  payload: Uint8Array;
}

/**
 * encodeFrame builds one client frame: FIN set, payload masked with a fresh
 * random key, as RFC 6455 §5.3 requires of clients: key's 4 bytes, which
 * must be random and used once, or new ones.
 */
export function encodeFrame(opcode: number, payload: Uint8Array, key?: Uint8Array): Uint8Array {
  const n = payload.length;
  const p = n < 126 ? 2 : n < 65536 ? 4 : 10; // where the key starts
  const out = new Uint8Array(p + 4 + n);
  out[0] = 0x80 | opcode;
  out[1] = 0x80 | (p === 2 ? n : p === 4 ? 126 : 127);
  if (p === 4) new DataView(out.buffer).setUint16(2, n);
  if (p === 10) new DataView(out.buffer).setBigUint64(2, BigInt(n));
  const mask = out.subarray(p, p + 4);
  if (key) mask.set(key);
  else crypto.getRandomValues(mask);
  for (let i = 0; i < n; i++) out[p + 4 + i] = payload[i] ^ mask[i & 3];
  return out;
}

/**
 * FrameDecoder turns a byte stream from the host into frames. Bytes may
 * arrive in any chunking; push feeds them and next returns each complete
 * frame. A protocol violation throws a WebSocketError carrying the close
 * code to answer with.
 *
 * The bytes pushed are read in place, not copied, until next has
 * returned every complete frame (then a partial frame left is copied): a
 * reader may reuse its buffer once next returns undefined. So is a
 * frame's payload valid only until then; one kept longer is copied.
 */
export class FrameDecoder {
  #buf: Uint8Array = new Uint8Array(0);
  /** Whether #buf is the caller's chunk, not a copy of the decoder's own. */
  #borrowed = false;
  #maxFrame: number;

  constructor(maxFrame: number = DEFAULT_MAX_MESSAGE) {
    this.#maxFrame = maxFrame;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.#buf.length === 0) {
      this.#buf = chunk;
      this.#borrowed = true;
      return;
    }
    const b = new Uint8Array(this.#buf.length + chunk.length);
    b.set(this.#buf);
    b.set(chunk, this.#buf.length);
    this.#buf = b;
    this.#borrowed = false;
  }

  /** next returns the next complete frame, or undefined when more bytes are needed. */
  next(): Frame | undefined {
    const f = this.#frame();
    if (f === undefined && this.#borrowed) {
      // The caller may now reuse its chunk: keep what is left of it.
      this.#buf = this.#buf.slice();
      this.#borrowed = false;
    }
    return f;
  }

  #frame(): Frame | undefined {
    const b = this.#buf;
    if (b.length < 2) return undefined;
    const fin = (b[0] & 0x80) !== 0;
    if ((b[0] & 0x70) !== 0) {
      throw new WebSocketError("reserved bits set without a negotiated extension", CloseCode.protocolError);
    }
    const opcode = b[0] & 0x0f;
    if ((b[1] & 0x80) !== 0) {
      throw new WebSocketError("the server sent a masked frame", CloseCode.protocolError);
    }
    let n = b[1] & 0x7f;
    const p = n < 126 ? 2 : n === 126 ? 4 : 10; // where the payload starts
    if (b.length < p) return undefined;
    if (p > 2) {
      const v = new DataView(b.buffer, b.byteOffset, p);
      const big = p === 4 ? v.getUint16(2) : v.getBigUint64(2);
      if (p === 10 && big > this.#maxFrame) throw new WebSocketError("message too big", CloseCode.tooBig);
      n = Number(big);
    }
    if (opcode >= 0x8) {
      if (!fin || n > 125) {
        throw new WebSocketError("control frame fragmented or longer than 125 bytes", CloseCode.protocolError);
      }
    } else if (opcode !== OP_CONT && opcode !== OP_TEXT && opcode !== OP_BINARY) {
      throw new WebSocketError(`unknown opcode ${opcode}`, CloseCode.protocolError);
    }
    if (n > this.#maxFrame) throw new WebSocketError("message too big", CloseCode.tooBig);
    if (b.length < p + n) return undefined;
    const payload = b.subarray(p, p + n);
    this.#buf = b.subarray(p + n);
    return { fin, opcode, payload };
  }
}

/**
 * MessageAssembler joins data frames into messages and answers control
 * frames. It enforces the message size limit across fragments and strict
 * UTF-8 in text messages.
 */
export class MessageAssembler {
  #parts: Uint8Array[] = [];
  #size = 0;
  #opcode = -1;
  #max: number;
  #utf8 = new TextDecoder("utf-8", { fatal: true });

  constructor(maxMessage: number = DEFAULT_MAX_MESSAGE) {
    this.#max = maxMessage;
  }

  /**
   * add takes one data frame and returns the finished text message, or
   * undefined while a fragmented message is still incomplete.
   */
  add(f: Frame): string | undefined {
    if (f.opcode === OP_CONT) {
      if (this.#opcode < 0) throw new WebSocketError("continuation without a message", CloseCode.protocolError);
    } else {
      if (this.#opcode >= 0) throw new WebSocketError("new message inside a fragmented one", CloseCode.protocolError);
      if (f.opcode === OP_BINARY) {
        throw new WebSocketError("binary messages are not part of this protocol", CloseCode.unsupportedData);
      }
      this.#opcode = f.opcode;
    }
    this.#size += f.payload.length;
    if (this.#size > this.#max) throw new WebSocketError("message too big", CloseCode.tooBig);
    // A fragment waits for the next frames: its bytes outlive the
    // decoder's (see FrameDecoder).
    this.#parts.push(f.fin ? f.payload : f.payload.slice());
    if (!f.fin) return undefined;
    const parts = this.#parts;
    this.#parts = [];
    this.#size = 0;
    this.#opcode = -1;
    const whole = parts.length === 1 ? parts[0] : concat(parts);
    try {
      return this.#utf8.decode(whole);
    } catch {
      throw new WebSocketError("text message is not valid UTF-8", CloseCode.invalidPayload);
    }
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** parseClose reads the code and reason of a close frame's payload. */
export function parseClose(payload: Uint8Array): { code: number; reason: string } {
  if (payload.length === 0) return { code: CloseCode.noStatus, reason: "" };
  if (payload.length === 1) throw new WebSocketError("close frame with a one-byte body", CloseCode.protocolError);
  const code = (payload[0] << 8) | payload[1];
  let reason: string;
  try {
    reason = new TextDecoder("utf-8", { fatal: true }).decode(payload.subarray(2));
  } catch {
    throw new WebSocketError("close reason is not valid UTF-8", CloseCode.invalidPayload);
  }
  return { code, reason };
}

function closePayload(code: number, reason: string): Uint8Array {
  // A control frame holds at most 125 bytes: 2 for the code, 123 for text.
  let r = new TextEncoder().encode(reason);
  if (r.length > 123) {
    let cut = 123;
    while (cut > 0 && (r[cut] & 0xc0) === 0x80) cut--; // keep whole UTF-8 sequences
    r = r.subarray(0, cut);
  }
  const out = new Uint8Array(2 + r.length);
  out[0] = code >>> 8;
  out[1] = code & 0xff;
  out.set(r, 2);
  return out;
}

/** acceptKey computes the Sec-WebSocket-Accept value a server must return for key. */
export async function acceptKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(key + GUID));
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

/** Options of {@link connect}. */
export interface ConnectOptions {
  /** Largest message accepted from the server. Default {@link DEFAULT_MAX_MESSAGE}. */
  maxMessage?: number;
  /** Bound on the TCP connect plus upgrade, in milliseconds. Default 5000. */
  timeout?: number;
}

/**
 * connect opens a WebSocket to a ws:// URL on a TCP connection with
 * TCP_NODELAY set. It sends no Origin: the host refuses any request that
 * looks like it came from a browser.
 */
export async function connect(url: string, opts: ConnectOptions = {}): Promise<SocketTransport> {
  const u = new URL(url);
  if (u.protocol !== "ws:") throw new WebSocketError(`unsupported URL scheme ${u.protocol} (want ws:)`);
  const signal = AbortSignal.timeout(opts.timeout ?? 5000);
  const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port || "80"), signal });
  // Closing the connection ends a read that waits for the response.
  const onAbort = () => conn.close();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    conn.setNoDelay(true);
    const rest = await upgrade(conn, u);
    return new SocketTransport(conn, rest, opts.maxMessage ?? DEFAULT_MAX_MESSAGE);
  } catch (e) {
    try {
      conn.close();
    } catch { /* already closed */ }
    throw signal.aborted ? new WebSocketError("timed out waiting for the upgrade response") : e;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

async function upgrade(conn: Deno.Conn, u: URL): Promise<Uint8Array> {
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  await writeAll(
    conn,
    new TextEncoder().encode(
      `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ),
  );
  // Latin-1 keeps one character a byte, so the head's end is the bytes' too.
  const latin1 = new TextDecoder("latin1");
  let head: Uint8Array = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  let end = -1;
  while (end < 0) {
    if (head.length > MAX_RESPONSE_HEAD) throw new WebSocketError("upgrade response head too large");
    const n = await conn.read(chunk);
    if (n === null) throw new WebSocketError("connection closed during the upgrade");
    head = concat([head, chunk.subarray(0, n)]);
    end = latin1.decode(head).indexOf("\r\n\r\n");
  }
  const text = latin1.decode(head.subarray(0, end));
  const status = text.slice(0, text.indexOf("\r\n") >>> 0);
  if (!/^HTTP\/1\.1 101\b/.test(status)) throw new WebSocketError(`upgrade refused: ${status}`);
  const header = (name: string) => new RegExp(`\r\n${name}:[ \t]*([^\r]*?)[ \t]*(?:\r|$)`, "i").exec(text)?.[1];
  if (header("upgrade")?.toLowerCase() !== "websocket") {
    throw new WebSocketError("upgrade response lacks Upgrade: websocket");
  }
  if (!header("connection")?.toLowerCase().split(/\s*,\s*/).includes("upgrade")) {
    throw new WebSocketError("upgrade response lacks Connection: Upgrade");
  }
  if (header("sec-websocket-accept") !== await acceptKey(key)) {
    throw new WebSocketError("upgrade response has a wrong Sec-WebSocket-Accept");
  }
  if (header("sec-websocket-extensions") !== undefined) {
    throw new WebSocketError("the server chose an extension this client never offered");
  }
  return head.slice(end + 4);
}

async function writeAll(conn: Deno.Conn, b: Uint8Array): Promise<void> {
  let off = 0;
  while (off < b.length) off += await conn.write(b.subarray(off));
}

/**
 * SocketTransport is an open WebSocket connection. It is a Cap'n Web
 * RpcTransport (send, receive, abort), plus close and a promise that
 * settles when the connection is gone.
 *
 * Frames queued in the same tick leave in one write: Cap'n Web sends a
 * call as two frames (push, pull) and they then travel as one TCP segment.
 * A release, which the host never answers, waits up to HOLD_MS for the
 * next message and leaves with it: a sequential call then costs one write
 * and one wake-up of the host, as a raw round trip does, rather than two.
 */
export class SocketTransport implements RpcTransport {
  #conn: Deno.Conn;
  #decoder: FrameDecoder;
  #assembler: MessageAssembler;
  #inbox: string[] = [];
  #waiters: { resolve: (m: string) => void; reject: (e: unknown) => void }[] = [];
  #outbox: Uint8Array[] = [];
  #flushing: Promise<void> | undefined;
  /**
   * The hold's timer and when the releases held now must leave. The timer
   * is not cleared when they leave with a call: a sequential call would
   * otherwise set and clear one each; one due finds nothing held, or sets
   * itself again for what is left of a later hold.
   */
  #hold: number | undefined;
  #holdUntil = 0;
  #error: Error | undefined;
  /** Why the last write failed, while the read side may still say why (RESET_GRACE_MS). */
  #writeError: Error | undefined;
  #grace: number | undefined;
  #closeSent = false;
  #info: CloseInfo | undefined;
  #closedResolve!: (info: CloseInfo) => void;
  #encoder = new TextEncoder();
  /** Random bytes for the frames' keys, 4 a frame: one call for random bytes serves a thousand frames. */
  #keys = new Uint8Array(4096);
  #keyAt = this.#keys.length;

  /**
   * onWritten, when set, is called each time queued messages have been
   * written, while the host works on them: the SDK's deferred work (the
   * calls' sites) then runs in the wait for the answer, not after it and
   * with no timer of its own. It must not throw.
   */
  onWritten: (() => void) | undefined;

  /** closed settles once the connection is gone, with how it ended. It never rejects. */
  readonly closed: Promise<CloseInfo>;

  constructor(conn: Deno.Conn, leftover: Uint8Array, maxMessage: number = DEFAULT_MAX_MESSAGE) {
    this.#conn = conn;
    this.#decoder = new FrameDecoder(maxMessage);
    this.#assembler = new MessageAssembler(maxMessage);
    this.closed = new Promise((r) => this.#closedResolve = r);
    this.#decoder.push(leftover);
    this.#readLoop();
  }

  /**
   * unref lets deno end the program while the connection is open and
   * idle; a read in progress still keeps a waiting script alive.
   */
  unref(): void {
    this.#conn.unref();
  }

  /** ref makes the open connection keep deno running again. */
  ref(): void {
    this.#conn.ref();
  }

  /** send queues one text message. It throws once the connection is closing. */
  send(message: string): void {
    if (this.#error || this.#writeError || this.#closeSent) {
      throw this.#error ?? this.#writeError ?? new WebSocketError("connection closed");
    }
    this.#outbox.push(this.#frame(OP_TEXT, this.#encoder.encode(message)));
    if (!message.startsWith('["release",')) return this.#write();
    // A release alone is held; one queued behind others leaves with them.
    if (this.#flushing || this.#outbox.length > 1) return;
    this.#holdUntil = performance.now() + HOLD_MS;
    if (this.#hold === undefined) this.#holdFor(HOLD_MS);
  }

  #frame(opcode: number, payload: Uint8Array): Uint8Array {
    if (this.#keyAt === this.#keys.length) {
      crypto.getRandomValues(this.#keys);
      this.#keyAt = 0;
    }
    this.#keyAt += 4;
    return encodeFrame(opcode, payload, this.#keys.subarray(this.#keyAt - 4, this.#keyAt));
  }

  #holdFor(ms: number): void {
    this.#hold = setTimeout(() => {
      this.#hold = undefined;
      if (this.#flushing || this.#outbox.length === 0) return;
      const left = this.#holdUntil - performance.now();
      if (left > 0) this.#holdFor(left);
      else this.#write();
    }, ms);
    Deno.unrefTimer(this.#hold); // a release alone keeps no program running
  }

  /** receive resolves with the next text message, or rejects once the connection ended. */
  receive(): Promise<string> {
    const m = this.#inbox.shift();
    if (m !== undefined) return Promise.resolve(m);
    if (this.#error) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** abort sends what is queued, then closes with Cap'n Web's abort code. */
  abort(reason: unknown): void {
    const msg = reason instanceof Error ? reason.message : String(reason);
    void this.close(CloseCode.rpcAbort, msg);
  }

  /** flush resolves once every queued frame has been written. */
  async flush(): Promise<void> {
    this.#write();
    while (this.#flushing) await this.#flushing;
  }

  /**
   * close sends a close frame after everything queued and waits for the
   * server's answer, at most timeout milliseconds, then drops the socket.
   */
  async close(code: number = CloseCode.normal, reason = "", timeout = 1000): Promise<CloseInfo> {
    if (!this.#closeSent && !this.#error) {
      await this.#sendClose(code, reason);
      let t: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((r) => t = setTimeout(r, timeout));
      await Promise.race([this.closed, late]);
      clearTimeout(t);
      this.#finish({ code, reason, local: true }, new WebSocketError(`connection closed: ${code} ${reason}`, code));
    }
    return this.closed;
  }

  /** sendClose writes a close frame after everything queued; nothing is sent after it. */
  #sendClose(code: number, reason: string): Promise<void> {
    this.#closeSent = true;
    this.#outbox.push(this.#frame(OP_CLOSE, closePayload(code, reason)));
    return this.flush();
  }

  /** write starts writing the outbox, unless a write is under way (it takes what was queued meanwhile). */
  #write(): void {
    if (this.#writeError) this.#outbox = []; // nothing more can be written
    if (!this.#flushing && this.#outbox.length > 0) this.#flushing = this.#writeLoop();
  }

  async #writeLoop(): Promise<void> {
    // Let the rest of this tick queue its frames first. Cap'n Web sends
    // a call's pull one or two microtasks after its push (when the
    // caller's await reaches the promise's then): wait a few.
    for (let i = 0; i < 3; i++) await null;
    try {
      while (this.#outbox.length > 0) {
        const batch = this.#outbox.length === 1 ? this.#outbox[0] : concat(this.#outbox);
        this.#outbox = [];
        await writeAll(this.#conn, batch);
        this.onWritten?.();
      }
    } catch (e) {
      this.#writeFailed(asError(e));
    } finally {
      this.#flushing = undefined;
    }
  }

  /**
   * writeFailed ends the connection on a failed write. After a reset the
   * host's close frame may be unread yet: the read side gets
   * RESET_GRACE_MS to deliver it (#drain then finishes with the host's
   * code and reason), writing nothing meanwhile.
   */
  #writeFailed(e: Error): void {
    const info = { code: CloseCode.abnormal, reason: String(e), local: false };
    const reset = e instanceof Deno.errors.ConnectionReset || e instanceof Deno.errors.BrokenPipe;
    if (!reset || this.#info) return this.#finish(info, e);
    this.#writeError = e;
    this.#outbox = [];
    this.#grace = setTimeout(() => this.#finish(info, e), RESET_GRACE_MS);
  }

  async #readLoop(): Promise<void> {
    const buf = new Uint8Array(64 << 10);
    try {
      for (;;) {
        if (this.#drain()) return;
        const n = await this.#conn.read(buf);
        if (n === null) {
          const e = new WebSocketError("the host closed the connection without a close frame");
          return this.#finish({ code: CloseCode.abnormal, reason: "connection lost", local: false }, e);
        }
        this.#decoder.push(buf.subarray(0, n));
      }
    } catch (e) {
      if (e instanceof WebSocketError && e.code !== CloseCode.abnormal && !this.#closeSent) {
        // The server broke the protocol: say why, then drop it.
        await this.#sendClose(e.code, e.message);
        return this.#finish({ code: e.code, reason: e.message, local: true }, e);
      }
      this.#finish({ code: CloseCode.abnormal, reason: String(e), local: false }, asError(e));
    }
  }

  /** drain handles every complete frame; it returns true once the connection is closed. */
  #drain(): boolean {
    for (;;) {
      if (this.#info) return true;
      const f = this.#decoder.next();
      if (!f) return false;
      if (f.opcode === OP_PING) {
        if (!this.#closeSent) this.#outbox.push(this.#frame(OP_PONG, f.payload));
        this.#write();
      } else if (f.opcode === OP_CLOSE) {
        const { code, reason } = parseClose(f.payload);
        const local = this.#closeSent;
        const err = new WebSocketError(
          `${local ? "connection closed" : "the host closed the connection"}: ${code} ${reason}`,
          code,
        );
        const done = () => this.#finish({ code, reason, local }, err);
        // Echo the host's close (RFC 6455 §5.5.1), then the connection is over.
        if (local) done();
        else this.#sendClose(code === CloseCode.noStatus ? CloseCode.normal : code, "").finally(done);
        return true;
      } else if (f.opcode !== OP_PONG) {
        const m = this.#assembler.add(f);
        if (m === undefined) continue;
        const w = this.#waiters.shift();
        if (w) w.resolve(m);
        else this.#inbox.push(m);
      }
    }
  }

  #finish(info: CloseInfo, err: Error): void {
    if (this.#info) return;
    this.#info = info;
    this.#error = err;
    this.#outbox = [];
    clearTimeout(this.#hold);
    clearTimeout(this.#grace);
    try {
      this.#conn.close();
    } catch { /* already closed */ }
    for (const w of this.#waiters.splice(0)) w.reject(err);
    this.#closedResolve(info);
  }
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
