/**
 * runOnRealHost runs a script from a `deno test` against the real thing:
 * the library's example host (`host run`), which launches a headless
 * Chromium, serves a folder of the test's pages on 127.0.0.1 and runs the
 * script as the app does, its header applied and consent given by the
 * test. Where the fake host plays the page's part as the test believes
 * it to be, this runs the page: a target that picks the wrong element or
 * a link whose JavaScript goes elsewhere shows in the result.
 *
 * ```ts
 * import { runOnRealHost } from "tranquil/automation/testing";
 *
 * Deno.test("opens the second product", async () => {
 *   const run = await runOnRealHost({
 *     script: import.meta.resolve("./pick.ts"),
 *     pages: import.meta.resolve("./pages/"),
 *   });
 *   if (run.result !== "Coffee") throw new Error(run.explain());
 * });
 * ```
 *
 * The host binary is `host`, else $TRANQUIL_HOST (build it with
 * `go build -o host ./examples/host`); Chromium is `browser`, else the
 * host's own choice ($TRANQUIL_CHROMIUM, then chromium on PATH). The test
 * needs --allow-run (the host), --allow-read, --allow-write (a throwaway
 * data folder) and --allow-env.
 *
 * @module
 */

import { fileUrl, fromFileUrl } from "./path.ts";

/** Options of {@link runOnRealHost}. */
export interface RealHostOptions {
  /** The script: a file: URL (import.meta.resolve("./pick.ts")) or a path. */
  script: string | URL;
  /**
   * A folder served on 127.0.0.1, where the first tab opens (its
   * index.html): a file: URL or a path. Default: none, a blank tab.
   */
  pages?: string | URL;
  /** Whether the test approves the script's permissions. Default true; false: the run is refused. */
  approve?: boolean;
  /** The host executable. Default $TRANQUIL_HOST. */
  host?: string;
  /** The Chromium executable. Default: the host's choice. */
  browser?: string;
  /** The deno the host runs scripts with. Default: the one running the test. */
  deno?: string;
  /** deno's module cache for the run. Default $DENO_DIR, else the host's throwaway data folder. */
  cacheDir?: string;
  /** How long the whole run may take, in ms; the host is stopped after. Default 120000. */
  timeout?: number;
  /** Keep the run's data folder even when it succeeded (see RealRun.dataDir). Default false. */
  keep?: boolean;
}

/** One entry of a run's action log. */
export interface RealAction {
  method: string;
  target?: string;
  site?: string;
  outcome: string;
}

/** One call of the script to the host, from the run's trace. */
export interface RealCall {
  seq: number;
  method: string;
  target?: string;
  page?: string;
  atMs: number;
  durationMs: number;
  code?: string;
  error?: string;
}

/** What the run's trace says: its calls, its tabs' navigations, the pages when calls failed. */
export interface RealTrace {
  calls: RealCall[];
  navigations: { atMs: number; kind: string; url: string }[];
  failures: { seq: number; outline?: string; note?: string }[];
  dropped?: number;
}

/** A run on the real host, as its history records it. */
export interface RealRun {
  id: string;
  /** "succeeded", "failed", "refused", "cancelled" or "timed_out". */
  state: string;
  reason?: string;
  firstError?: string;
  /** What the script gave context.result (undefined if nothing). */
  result?: unknown;
  output: string;
  actions: RealAction[];
  trace?: RealTrace;
  /**
   * The data folder the run's history is in, kept when the run did not
   * succeed (or with keep): `host trace --data <dataDir> <id>` shows its
   * trace in a browser, screenshots included. Undefined when it was
   * removed. Remove it when done with it.
   */
  dataDir?: string;
  /** explain words the run for a failing test: how it ended, its output, actions and trace. */
  explain(): string;
}

/** runOnRealHost runs the script once on the real host and returns what it did. */
export async function runOnRealHost(opts: RealHostOptions): Promise<RealRun> {
  const host = opts.host ?? Deno.env.get("TRANQUIL_HOST");
  if (!host) throw new Error("runOnRealHost needs the host executable: pass host or set TRANQUIL_HOST");
  const data = await Deno.makeTempDir({ prefix: "tranquil-realhost-" });
  const args = ["run", "--data", data, "--json", "--deno", opts.deno ?? Deno.execPath()];
  if (opts.approve ?? true) args.push("--approve");
  if (opts.browser) args.push("--browser", opts.browser);
  if (opts.pages !== undefined) args.push("--serve", fromFileUrl(fileUrl(opts.pages)));
  args.push(fromFileUrl(fileUrl(opts.script)));
  const env: Record<string, string> = {};
  const cache = opts.cacheDir ?? Deno.env.get("DENO_DIR");
  if (cache) env.DENO_DIR = cache;
  // Whatever goes wrong before there is a run to show, the data folder goes.
  let run: RealRun;
  try {
    const out = await new Deno.Command(host, {
      args,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(opts.timeout ?? 120_000),
    }).output();
    const text = new TextDecoder();
    run = readRun(text.decode(out.stdout), text.decode(out.stderr), out.code, data, host);
  } catch (e) {
    await Deno.remove(data, { recursive: true });
    throw e;
  }
  if (run.state === "succeeded" && !opts.keep) {
    await Deno.remove(data, { recursive: true });
    run.dataDir = undefined;
  }
  return run;
}

/**
 * readRun reads what `host run --json` printed: one JSON record of the
 * run. Anything else (nothing, a crash's text, a truncated record) is an
 * error naming the exit code and the host's own words, so a broken host
 * is told apart from a failed run.
 *
 * @internal exported for its test
 */
export function readRun(stdout: string, stderr: string, code: number, data: string, host: string): RealRun {
  const said = () =>
    [stdout.trim() && `stdout:\n${stdout.slice(0, 2000)}`, stderr.trim() && `stderr:\n${stderr.slice(0, 2000)}`].filter(
      Boolean,
    ).join("\n");
  if (stdout.trim() === "") throw new Error(safe(`the host made no run (exit ${code}):\n${said()}`));
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(stdout);
    if (
      rec === null || typeof rec !== "object" || Array.isArray(rec) || typeof rec.id !== "string" ||
      typeof rec.state !== "string"
    ) {
      throw new TypeError("not a run record");
    }
  } catch (e) {
    throw new Error(safe(`the host did not print a run record (exit ${code}: ${(e as Error).message}):\n${said()}`), {
      cause: e,
    });
  }
  const run: RealRun = {
    id: rec.id as string,
    state: rec.state as string,
    reason: rec.reason as string | undefined,
    firstError: rec.firstError as string | undefined,
    result: rec.result,
    output: (rec.output as string | undefined) ?? "",
    actions: (rec.actions as RealAction[] | undefined) ?? [],
    trace: rec.trace as RealTrace | undefined,
    dataDir: data,
    explain: () => explain(run, host),
  };
  return run;
}

/** safe shows control and bidi characters as escapes, so script or page text cannot rewrite the terminal. */
function safe(s: string): string {
  return s.replace(
    // deno-lint-ignore no-control-regex
    /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** explain words run as the Go kit's Result.Explain does. */
function explain(run: RealRun, host: string): string {
  const lines = [`run ${run.id} ${run.state}`];
  if (run.reason) lines.push(`reason: ${run.reason}`);
  if (run.firstError && run.firstError !== run.reason) lines.push(`error: ${run.firstError}`);
  if (run.result !== undefined) lines.push(`result: ${JSON.stringify(run.result)}`);
  const output = run.output.replace(/\n+$/, "");
  if (output) lines.push("output:", ...output.split("\n").map((l) => `  ${l}`));
  if (run.actions.length > 0) lines.push("actions:");
  for (const a of run.actions) lines.push(`  ${a.method} ${a.site ?? ""} ${a.outcome} ${a.target ?? ""}`);
  const t = run.trace;
  if (t && t.calls.length > 0) lines.push("calls:");
  for (const c of t?.calls ?? []) {
    const where = (c.target ? ` ${c.target}` : "") + (c.page ? ` at ${c.page}` : "");
    const outcome = c.code ? `${c.code}: ${c.error ?? ""}` : "ok";
    lines.push(`  ${c.seq} +${(c.atMs / 1000).toFixed(2)}s ${c.method}${where} (${c.durationMs}ms): ${outcome}`);
  }
  if (t && t.navigations.length > 0) lines.push("navigations:");
  for (const n of t?.navigations ?? []) lines.push(`  +${(n.atMs / 1000).toFixed(2)}s ${n.kind} ${n.url}`);
  for (const f of t?.failures ?? []) {
    lines.push(`the page when call ${f.seq} failed:`);
    if (f.note) lines.push(`  (${f.note})`);
    if (f.outline) lines.push(...f.outline.replace(/\n+$/, "").split("\n").map((l) => `  ${l}`));
  }
  if (run.dataDir) lines.push(`the whole trace: ${host} trace --data ${run.dataDir} ${run.id}`);
  return lines.map(safe).join("\n");
}
