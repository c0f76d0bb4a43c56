// The bootstrap every run starts in. It connects to the host, proves the
// run's token, starts Cap'n Web, then imports the script. Exit codes:
//
//   0  the script finished
//   1  the script threw (Deno prints the error with its file:line)
//   3  the host refused to run this script with this SDK (DENY)
//   4  the host could not be reached, or the handshake failed
//   5  the host closed the connection while the script ran
//
// The SDK is imported statically, so the script's own import of
// "tranquil/automation" resolves to the same, already loaded module.

import { RpcSession, RpcTarget } from "capnweb";
import "./mod.ts";
import { IMPLEMENTED, install, Runtime } from "./runtime.ts";
import { toFileUrl } from "./path.ts";
import { CloseCode, connect } from "./transport.ts";
import { SDK_VERSION } from "./version.ts";

const EXIT_DENIED = 3;
const EXIT_CONNECT = 4;
const EXIT_HOST_GONE = 5;

function fail(code: number, message: string): never {
  console.error(`tranquil: ${message}`);
  Deno.exit(code);
}

function env(name: string): string {
  const v = Deno.env.get(name);
  if (!v) fail(EXIT_CONNECT, `${name} is not set: scripts are started by the app`);
  return v;
}

/**
 * Control is the run's main object: what the host may call on the run. It
 * is created before the session and attached to the runtime right after,
 * in the same tick, so no call from the host can arrive in between.
 */
class Control extends RpcTarget {
  #rt: Runtime | undefined;
  attach(rt: Runtime): void {
    this.#rt = rt;
  }
  /** cancel aborts context.signal with a CancelledError carrying reason. */
  cancel(reason: string): void {
    this.#rt?.cancel(String(reason ?? ""));
  }
  /** event delivers an event to step.waitForEvent. */
  event(type: string, payload?: unknown): void {
    this.#rt?.deliver(String(type), payload);
  }
}

const entry = env("TRANQUIL_ENTRY");
const url = env("TRANQUIL_RPC_URL");
const token = env("TRANQUIL_RPC_TOKEN");
const runId = env("TRANQUIL_RUN_ID");
const scriptDir = env("TRANQUIL_SCRIPT_DIR");
const trigger = Deno.env.get("TRANQUIL_TRIGGER") || undefined;
// The token is single-use and claimed below; the script has no need for it.
Deno.env.delete("TRANQUIL_RPC_TOKEN");

const transport = await connect(url).catch((e) => fail(EXIT_CONNECT, `cannot reach the host: ${e.message}`));
const hello = { protocol: 1, sdk: SDK_VERSION, capabilities: IMPLEMENTED };
transport.send(`AUTH ${token} ${JSON.stringify(hello)}`);
const reply = await transport.receive().catch((e) =>
  fail(EXIT_CONNECT, `the host refused the connection: ${e.message}`)
);
if (reply.startsWith("DENY ")) {
  let reason = reply.slice(5);
  try {
    reason = String(JSON.parse(reason).reason ?? reason);
  } catch { /* print the raw text */ }
  fail(EXIT_DENIED, `this script cannot run: ${reason}`);
}
let granted: string[] = [];
try {
  if (!reply.startsWith("OK ")) throw new Error("not OK");
  const g = JSON.parse(reply.slice(3)).granted;
  if (!Array.isArray(g) || !g.every((c) => typeof c === "string")) throw new Error("bad granted list");
  granted = g;
} catch {
  fail(EXIT_CONNECT, `unexpected handshake reply from the host: ${JSON.stringify(reply.slice(0, 200))}`);
}

const control = new Control();
const session = new RpcSession(transport, control);
const rt = new Runtime({ runId, scriptDir, trigger, granted, main: session.getRemoteMain() });
control.attach(rt);
install(rt);

// Any end of the connection before the script finished means the host is
// gone or aborted the session, including an abort that Cap'n Web answers by
// closing the transport itself: exit rather than linger as an orphan.
let finishing = false;
transport.closed.then((info) => {
  if (finishing) return;
  fail(EXIT_HOST_GONE, `the host closed the connection (${info.code}${info.reason ? ` ${info.reason}` : ""})`);
});

// The Cache API has no quota in deno: a script could fill the disk through
// it. The runner makes deno refuse to open it for this script's origin
// (that also covers workers, which get a fresh global); removing it here
// as well gives the script a plain "caches is not defined".
for (const name of ["caches", "CacheStorage", "Cache"]) Reflect.deleteProperty(globalThis, name);

await import(toFileUrl(entry).href);

await rt.settled();
finishing = true;
await transport.close(CloseCode.normal, "done", 500);
Deno.exit(0);
