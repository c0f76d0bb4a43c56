// The bootstrap every run starts with, preloaded (deno run --preload) before
// the script, which is deno's main module (so import.meta.main is true in
// it). It connects to the host, proves the run's token, starts Cap'n Web and
// installs the SDK's runtime; deno then evaluates the script, and once it
// has (the "load" event), the bootstrap settles the run and exits. Exit
// codes:
//
//   0  the script finished
//   1  the script threw (printed with the script's own file:line first,
//      never the SDK's; for a selection, its source file's), or ended by an error after it was cancelled
//      (printed as the reason it was cancelled)
//   3  the host refused to run this script with this SDK (DENY)
//   4  the host could not be reached, or the handshake failed
//   5  the host closed the connection while the script ran
//
// A script that ends itself (Deno.exit(n), context.exit(n)) exits with its
// own n; a non-zero one is named on stderr first (exitLine), so that the
// host does not read the script's 3 as the bootstrap's.
//
// The SDK is imported statically, so the script's own import of
// "tranquil/automation" resolves to the same, already loaded module.
// TRANQUIL_ENTRY names the script, whose frames error reports keep.

import { RpcSession, RpcTarget } from "capnweb";
import "./mod.ts";
import { NotGrantedError, scriptFrames, setSourceOf, siteOf, TabError } from "./errors.ts";
import { type HostMain, IMPLEMENTED, install, Runtime } from "./runtime.ts";
import { cleanPath, isAbsolute, pathContains, toFileUrl } from "./path.ts";
import { CloseCode, connect } from "./transport.ts";
import { SDK_VERSION } from "./version.ts";

// The script's Deno.exit is replaced below; the bootstrap's own exits are these.
const realExit: (code: number) => never = Deno.exit.bind(Deno);
const EXIT_DENIED = 3;
const EXIT_CONNECT = 4;
const EXIT_HOST_GONE = 5;
/** The cut-off calls named one by one; the rest are counted. */
const MAX_CUT_OFF = 10;
/**
 * Starts a stderr line with the site of a call no later call carried
 * (runner/trace.go siteLinePrefix), written as the process ends.
 */
const SITE_LINE = "tranquil: site ";

function fail(code: number, message: string): never {
  console.error(`tranquil: ${message}`);
  realExit(code);
}

function env(name: string): string {
  const v = Deno.env.get(name);
  if (!v) fail(EXIT_CONNECT, `${name} is not set: scripts are started by the app`);
  return v;
}

/**
 * permissionWords rewrites deno's refusal ("Requires write access to
 * "/…/out/a.txt", run again with the --allow-write flag"), which names a
 * flag the author cannot pass, as the @permissions key that grants it,
 * with deno's words after.
 */
function permissionWords(message: string): string {
  const m = /^Requires (\w+) access to (?:"(.*?)"|(\S+?)),? run again with the --allow-\w+ flag/.exec(message);
  if (!m) return message;
  const [, kind] = m;
  let what = m[2] ?? m[3];
  const deno = `(deno: ${message})`;
  if (kind === "read" || kind === "write") {
    // A relative path is already the script folder's: runs start there.
    if (isAbsolute(what)) {
      const abs = cleanPath(what);
      const dir = cleanPath(scriptDir);
      what = pathContains(dir, abs) && abs !== dir ? abs.slice(dir.length + 1).replaceAll("\\", "/") : abs;
    }
  } else if (!["net", "import", "env", "run"].includes(kind)) {
    return `${kind} access to ${what} is not granted, and no @permissions key grants it ${deno}`;
  }
  return `${kind} access to ${what} is not granted: add ${kind}=${what} to the script's // @permissions line ${deno}`;
}

/** The host calls the script was waiting for when the run was cancelled. */
let waitingAtCancel: { api: string; stack: string }[] | undefined;

/**
 * Control is the run's main object: what the host may call on the run. It
 * exists before the session, and the runtime only once the trigger's
 * payload has been read, so a cancel or an event that arrives in between
 * waits here for it.
 */
class Control extends RpcTarget {
  #rt: Runtime | undefined;
  #early: ((rt: Runtime) => void)[] = [];
  attach(rt: Runtime): void {
    this.#rt = rt;
    for (const f of this.#early.splice(0)) f(rt);
  }
  #with(f: (rt: Runtime) => void): void {
    if (this.#rt) f(this.#rt);
    else this.#early.push(f);
  }
  /**
   * cancel aborts context.signal with a CancelledError carrying reason,
   * and notes the host calls the script was waiting for then: the host
   * cuts them short next, and a run that ends so says what it waited for.
   */
  cancel(reason: string): void {
    this.#with((rt) => {
      waitingAtCancel ??= rt.inflight();
      rt.cancel(String(reason ?? ""));
    });
  }
  /** event delivers an event to step.waitForEvent. */
  event(type: string, payload?: unknown): void {
    this.#with((rt) => rt.deliver(String(type), payload));
  }
}

const entry = env("TRANQUIL_ENTRY");
const url = env("TRANQUIL_RPC_URL");
const token = env("TRANQUIL_RPC_TOKEN");
const runId = env("TRANQUIL_RUN_ID");
const scriptDir = env("TRANQUIL_SCRIPT_DIR");
const trigger = Deno.env.get("TRANQUIL_TRIGGER") || undefined;
const entryUrl = toFileUrl(entry).href;
// A run from a selection executes <source dir>/.runs/<run ID>--<source
// name>, the selected text at its own lines of the source: its frames
// name the source file instead.
const selection = new RegExp(`/\\.runs/${runId.replace(/[^\w-]/g, "\\$&")}--([^/]+)$`).exec(entryUrl);
const sourceUrl = selection ? entryUrl.slice(0, selection.index + 1) + selection[1] : entryUrl;
setSourceOf(entryUrl, sourceUrl);
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
// The host's main object, typed as the runtime uses it.
const main = session.getRemoteMain() as unknown as HostMain;
// The trigger's payload is read before the script starts, so
// context.payload is a plain value rather than a promise.
// A host without the method (an older one, a test's) has no payload.
const payload = await main.context.payload().catch(() => undefined);
// A host that keeps no trace says so: its calls then carry no site.
const siteDir = Deno.env.get("TRANQUIL_CALL_SITES") === "off"
  ? undefined
  : toFileUrl(cleanPath(scriptDir)).href.replace(/\/?$/, "/");
const rt = new Runtime({ runId, scriptDir, trigger, payload, granted, main, siteDir, ownerFormatsSites: true });
// Calls' sites are read once a call has been written, while the host
// answers it, a batch at a time.
transport.onWritten = () => rt.formatSites();
control.attach(rt);
install(rt);

// A script that ends itself ends the run at once with its code; the host
// reads a non-zero one from the line before it (runner's exitLine).
Deno.exit = (code?: number): never => {
  const n = (code ?? Deno.exitCode) & 0xff; // what the process's parent sees
  warnCutOff();
  if (n !== 0) console.error(`tranquil: the script ended itself with exit code ${n}`);
  return exitWithSites(n);
};

// Any end of the connection before the script finished means the host is
// gone or aborted the session, including an abort that Cap'n Web answers by
// closing the transport itself: exit rather than linger as an orphan.
let finishing = false;
transport.closed.then((info) => {
  if (finishing) return;
  const why = `${info.code}${info.reason ? ` ${info.reason}` : ""}`;
  // A close of this side's own for a frame it refused, not one answering
  // the host's abort.
  const refused = info.local && info.code !== CloseCode.rpcAbort && info.code !== CloseCode.normal;
  fail(
    EXIT_HOST_GONE,
    refused
      ? `the script's side closed the connection to the host, refusing what it sent (${why})`
      : `the host closed the connection (${why})`,
  );
});

// The Cache API has no quota in deno: a script could fill the disk through
// it. The runner makes deno refuse to open it for this script's origin
// (that also covers workers, which get a fresh global); removing it here
// as well gives the script a plain "caches is not defined".
for (const name of ["caches", "CacheStorage", "Cache"]) Reflect.deleteProperty(globalThis, name);

// An uncaught error anywhere (the script's top level, a timer, a promise
// nobody awaited) ends the run the same way: one report, then exit 1.
globalThis.addEventListener("error", (ev) => {
  ev.preventDefault();
  report(ev.error);
});
globalThis.addEventListener("unhandledrejection", (ev) => {
  ev.preventDefault();
  report(ev.reason);
});

// Deno runs the script only once this module's work is done and nothing
// keeps the event loop busy; the open connection must not count. While
// the script's top level is being evaluated, deno waits for it whatever
// holds it up, so a call waiting on the host still gets its answer.
transport.unref();

// "load" follows the script's evaluation, top-level awaits included. From
// then on deno would end the program as soon as nothing but the
// connection is left, with the last reports unanswered: it counts again.
// deno dispatches an error that ended the evaluation as a rejection only
// after the timers already due, so a script's setTimeout(() =>
// Deno.exit(0)) would turn its failure into a success (plain deno does).
// Importing the main module again yields the evaluation's outcome before
// any timer runs; the settling waits one turn to let report() take over.
globalThis.addEventListener("load", () => {
  transport.ref();
  import(Deno.mainModule).catch(report);
  setTimeout(finish, 0);
});

async function finish(): Promise<void> {
  await rt.settled();
  await rt.flushSites();
  warnCutOff();
  finishing = true;
  await transport.close(CloseCode.normal, "done", 500);
  realExit(0);
}

/**
 * report prints an error that ended the script the way its author needs
 * it: the error's name, code and message, then the script's own frames
 * (the SDK's and capnweb's say nothing about the script), then exits 1
 * with the last call sites (exitWithSites).
 * A cancelled run prints only the reason it was cancelled.
 */
function report(e: unknown): void {
  if (rt.signal.aborted) {
    const why = (rt.signal.reason as Error)?.message ?? "the run was cancelled";
    console.error(`tranquil: cancelled: ${why}${waitingWords(waitingAtCancel ?? rt.inflight())}`);
    warnCutOff();
    exitWithSites(1);
  }
  const err = e instanceof Error ? e : undefined;
  const code = typeof (e as { code?: unknown })?.code === "string" ? ` (${(e as { code: string }).code})` : "";
  let message = err ? err.message : typeof e === "string" ? e : Deno.inspect(e, { colors: false });
  if (err && (err.name === "NotCapable" || err.name === "PermissionDenied")) message = permissionWords(message);
  const frames = scriptFrames(err?.stack ?? "");
  // The frame below says where already.
  const site = siteOf(err);
  if (site && frames[0]?.endsWith(site) && message.endsWith(` (at ${site})`)) {
    message = message.slice(0, -` (at ${site})`.length);
  }
  console.error(`error: ${err?.name ?? "Uncaught"}${code}: ${message}`);
  for (const f of frames) console.error(`    at ${f}`);
  // The host's own error is the cause of the SDK's typed ones: it repeats
  // the message with capnweb's frames. Any other cause is the script's.
  const cause = err?.cause;
  if (cause instanceof Error && !(err instanceof TabError) && !(err instanceof NotGrantedError)) {
    console.error(`Caused by: ${cause.name}: ${cause.message}`);
    for (const f of scriptFrames(cause.stack ?? "")) console.error(`    at ${f}`);
  }
  warnCutOff();
  exitWithSites(1);
}

/**
 * exitWithSites writes the call sites no call has carried to stderr, for
 * the host's trace, then exits with code at once: the call that failed,
 * or the last before Deno.exit, is the one the trace most needs to
 * place, and a write to stderr, unlike the connection's, is done before
 * the process ends.
 */
function exitWithSites(code: number): never {
  finishing = true;
  const lines = rt.takeSites().map((s) => SITE_LINE + s + "\n").join("");
  let b = new TextEncoder().encode(lines);
  try {
    while (b.length > 0) b = b.subarray(Deno.stderr.writeSync(b));
  } catch { /* stderr is gone: so is whoever would read the sites */ }
  return realExit(code);
}

/**
 * waitingWords says which host calls, at which lines of the script, a
 * cancelled script was waiting for: ", while waiting for tab.expect (at
 * file:///…/job.ts:12:9)", the first three and how many more.
 */
function waitingWords(calls: { api: string; stack: string }[]): string {
  if (calls.length === 0) return "";
  const named = calls.slice(0, 3).map((c) => c.api + lineOf(c.stack));
  const more = calls.length > 3 ? ` and ${calls.length - 3} more` : "";
  return `, while waiting for ${named.join(", ")}${more}`;
}

/** lineOf is " (the script's own frame of stack)", or "" when it has none. */
function lineOf(stack: string): string {
  const at = scriptFrames(stack).find((f) => f.includes(sourceUrl));
  return at ? ` (${at})` : "";
}

/**
 * warnCutOff names every host call still running as the script ends: a
 * call the script did not await (a forgotten await) is cut off, and
 * would otherwise look as if it succeeded. The runner keeps these lines as
 * the run's warnings.
 */
function warnCutOff(): void {
  const calls = rt.inflight();
  for (const c of calls.slice(0, MAX_CUT_OFF)) {
    console.error(
      `tranquil: warning: ${c.api} was still running when the script ended and was cut off${lineOf(c.stack)}: await it`,
    );
  }
  if (calls.length > MAX_CUT_OFF) {
    console.error(`tranquil: warning: ${calls.length - MAX_CUT_OFF} more calls were cut off`);
  }
}
