/**
 * tranquil/automation/testing: an offline stand-in for the app, so a
 * script's logic can be tested with `deno test` and no app running.
 *
 * ```ts
 * import { installFakeHost } from "tranquil/automation/testing";
 *
 * Deno.test("copies the greeting", async () => {
 *   using host = installFakeHost({ clipboard: "hello", config: { greeting: "hi" } });
 *   await import("./my_script.ts");
 *   if (host.notifications[0]?.message !== "hi hello") throw new Error("wrong notification");
 * });
 * ```
 *
 * The fake host answers the same calls the app does, records what the
 * script asked for, and enforces the same grants: by default it grants
 * what a script with the clipboard permission gets; pass grant to narrow
 * it. Values cross it the way they cross the real connection, copied, so a
 * value the app could not receive fails here too.
 *
 * @module
 */

import { type Capability, IMPLEMENTED, install, type JournalEntry, Runtime } from "./runtime.ts";

/** Options of {@link installFakeHost}. */
export interface FakeHostOptions {
  /** The run's ID. Default "test-run". */
  runId?: string;
  /** The script's directory, for files and relative paths. Default: the working directory. */
  scriptDir?: string;
  /** context.trigger. Default undefined. */
  trigger?: string;
  /** The capabilities the run gets. Default: every one but workspace (which needs browser). */
  grant?: readonly Capability[];
  /** The clipboard's initial text. Default "". */
  clipboard?: string;
  /** The script's stored config. Default empty. */
  config?: Record<string, unknown>;
  /** What workspace.projectDir returns. Default: scriptDir. */
  projectDir?: string;
}

/** A notification the script showed. */
export interface Notification {
  message: string;
  level: string;
}

/** A file the script asked the app to open. */
export interface OpenedFile {
  path: string;
  split?: string;
}

function copy<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

/**
 * served makes f behave like a method of the app: it runs in a later task,
 * gets copies of its arguments and its result is copied back, as values
 * crossing the real connection are. Functions (pane control actions) travel
 * by reference there, so clone=false leaves arguments alone.
 */
function served<A extends unknown[], R>(f: (...args: A) => R, clone = true): (...args: A) => Promise<R> {
  return (...args: A) => {
    const a = clone ? args.map(copy) as A : args;
    return new Promise<R>((resolve, reject) => {
      setTimeout(() => {
        try {
          resolve(copy(f(...a)));
        } catch (e) {
          reject(e);
        }
      }, 0);
    });
  };
}

function defaultDir(): string {
  try {
    return Deno.cwd();
  } catch {
    return "/";
  }
}

/**
 * FakeHost records what a script did. Dispose it (or call uninstall) to
 * restore whatever host was installed before.
 */
export class FakeHost implements Disposable {
  /** Notifications, in order. */
  readonly notifications: Notification[] = [];
  /** Files opened with ui.open, in order. */
  readonly opened: OpenedFile[] = [];
  /** Every context.result value, in order. */
  readonly results: unknown[] = [];
  /** context.log lines, in order. */
  readonly logs: string[] = [];
  /** The script's config as the app would store it. */
  readonly config: Map<string, unknown>;
  /** Registered pane controls by name. */
  readonly controls: Map<string, () => unknown> = new Map();
  /** The clipboard's text. */
  clipboard: string;
  readonly #rt: Runtime;
  readonly #uninstall: () => void;

  constructor(opts: FakeHostOptions = {}) {
    this.clipboard = opts.clipboard ?? "";
    this.config = new Map(Object.entries(copy(opts.config ?? {})));
    const scriptDir = opts.scriptDir ?? defaultDir();
    const projectDir = opts.projectDir ?? scriptDir;
    const main = {
      ui: {
        notify: served((message: string, o?: { level?: string }) => {
          this.notifications.push({ message, level: o?.level ?? "info" });
        }),
        open: served((path: string, o?: { split?: string }) => {
          this.opened.push(o?.split === undefined ? { path } : { path, split: o.split });
        }),
      },
      clipboard: {
        read: served(() => this.clipboard),
        write: served((text: string) => {
          this.clipboard = text;
        }),
      },
      workspace: { projectDir: served(() => projectDir) },
      config: {
        get: served((key: string) => this.config.get(key)),
        set: served((key: string, value: unknown) => {
          this.config.set(key, value);
        }),
        delete: served((key: string) => {
          this.config.delete(key);
        }),
        keys: served(() => [...this.config.keys()].sort()),
      },
      paneControls: {
        register: served((name: string, action: () => unknown) => {
          this.controls.set(name, action);
        }, false),
        unregister: served((name: string) => {
          this.controls.delete(name);
        }),
      },
      context: {
        result: served((value: unknown) => {
          this.results.push(value);
        }),
        log: served((line: string) => {
          this.logs.push(line);
        }),
      },
    };
    this.#rt = new Runtime({
      runId: opts.runId ?? "test-run",
      scriptDir,
      trigger: opts.trigger,
      granted: opts.grant ?? IMPLEMENTED.filter((c) => c !== "workspace"),
      main,
    });
    this.#uninstall = install(this.#rt);
  }

  /** The last context.result value, or undefined. */
  get result(): unknown {
    return this.results.at(-1);
  }

  /** context.signal of the fake run. */
  get signal(): AbortSignal {
    return this.#rt.signal;
  }

  /** cancel does what the app's Stop button does: aborts context.signal. */
  cancel(reason = "cancelled by the test"): void {
    this.#rt.cancel(reason);
  }

  /** sendEvent delivers an event the script may wait for with step.waitForEvent. */
  sendEvent(type: string, payload?: unknown): void {
    this.#rt.deliver(type, copy(payload));
  }

  /** click runs the pane control called name, as a user's click would, and returns its result. */
  async click(name: string): Promise<unknown> {
    const action = this.controls.get(name);
    if (!action) throw new Error(`no pane control called "${name}" is registered`);
    return await action();
  }

  /** journal lists the steps the script finished. */
  get journal(): JournalEntry[] {
    return [...this.#rt.journal.values()];
  }

  /** settled resolves once every context.result and context.log call has been handled. */
  settled(): Promise<void> {
    return this.#rt.settled();
  }

  /** uninstall removes this host; the SDK then uses the one installed before, if any. */
  uninstall(): void {
    this.#uninstall();
  }

  [Symbol.dispose](): void {
    this.uninstall();
  }
}

/** installFakeHost makes a new FakeHost the SDK's host until it is disposed. */
export function installFakeHost(opts: FakeHostOptions = {}): FakeHost {
  return new FakeHost(opts);
}
