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
 * what a script with the clipboard permission gets; pass permissions (the
 * script's // @permissions line) to change that. Values cross it the way
 * they cross the real connection, copied, so a value the app could not
 * receive fails here too.
 *
 * It includes a fake browser: tabs held in memory (goto changes a tab's
 * URL, open and close add and remove tabs), a record of every action with
 * the values typed, and failures scripted per method, tab, target or URL,
 * so the script's handling of not_committed or a timeout can be tested:
 *
 * ```ts
 * import { installFakeHost } from "tranquil/automation/testing";
 *
 * Deno.test("keeps what the shop allows", async () => {
 *   using host = installFakeHost({
 *     permissions: "browser forms sites=shop.example",
 *     tabs: [{ url: "https://shop.example/cart", title: "Cart" }],
 *     failures: [{ method: "fill", target: { label: "Quantity" }, error: { code: "not_committed", kept: "10" } }],
 *   });
 *   await import("./order.ts");
 *   const fills = host.browser.actions.filter((a) => a.method === "fill");
 *   if (fills[0]?.outcome !== "not_committed") throw new Error("the script never tried");
 * });
 * ```
 *
 * The fake has no pages: tab.evaluate is answered by the evaluate option,
 * and a click navigates only when onAction (or the test) calls
 * host.browser.navigate.
 *
 * @module
 */

import { FakeBrowser, type FakeBrowserOptions } from "./fake_browser.ts";
import { type Capability, install, type JournalEntry, Runtime } from "./runtime.ts";
import { copy, served } from "./served.ts";

export { FakeBrowser, FakeTab, siteAllowed } from "./fake_browser.ts";
export type {
  FakeAction,
  FakeBrowserOptions,
  FakeErrorInit,
  FakeFailure,
  FakeMethod,
  FakeReader,
  FakeTabInit,
} from "./fake_browser.ts";

/** The keys that Deno enforces itself; the fake host accepts and ignores them. */
const DENO_KEYS = new Set(["net", "import", "run", "read", "write", "env"]);

/**
 * parsePermissions maps a // @permissions line's keys to the capabilities
 * and sites= the app derives from them, and lists its read= grants (as
 * declared), which the fake's setFiles is held to.
 */
export function parsePermissions(
  line: string,
): { grant: Capability[]; sites: string[] | undefined; read: string[] } {
  const caps = new Set<Capability>(["ui", "config", "context", "paneControls"]);
  let sites: string[] | undefined;
  const read: string[] = [];
  for (const word of line.trim().split(/\s+/).filter((w) => w !== "")) {
    const eq = word.indexOf("=");
    if (eq >= 0) {
      const k = word.slice(0, eq);
      if (k === "sites") {
        sites = [...(sites ?? []), ...word.slice(eq + 1).split(",").filter((s) => s !== "")];
      } else if (k === "read") {
        read.push(...word.slice(eq + 1).split(",").filter((s) => s !== ""));
      } else if (!DENO_KEYS.has(k)) {
        throw new TypeError(`unknown permission "${k}=" in "${line}"`);
      }
      continue;
    }
    switch (word) {
      case "none":
        break;
      case "browser":
        caps.add("tabs").add("tab").add("workspace");
        break;
      case "forms":
        caps.add("forms").add("tabs").add("tab");
        break;
      case "page-js":
        caps.add("pageJs").add("tabs").add("tab");
        break;
      case "clipboard":
        caps.add("clipboard");
        break;
      default:
        throw new TypeError(`unknown permission "${word}" in "${line}"`);
    }
  }
  return { grant: [...caps], sites, read };
}

/** Options of {@link installFakeHost}. */
export interface FakeHostOptions extends FakeBrowserOptions {
  /** The run's ID. Default "test-run". */
  runId?: string;
  /** The script's directory, for files and relative paths. Default: the working directory. */
  scriptDir?: string;
  /** context.trigger. Default undefined. */
  trigger?: string;
  /**
   * The script's permissions, as its // @permissions line would give them,
   * such as "browser forms sites=shop.example": they choose the
   * capabilities the run gets, the sites= that page actions are limited
   * to, and the read= grants that setFiles may hand a page (relative to
   * scriptDir). The other keys that Deno enforces itself (net=, write=, …)
   * are accepted and ignored. Default "clipboard". Not together with
   * grant.
   */
  permissions?: string;
  /** The capabilities the run gets, by the host's names, for a test that needs an exact set. Not together with permissions. */
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
  /** The fake browser: its tabs, the script's actions, scripted failures. */
  readonly browser: FakeBrowser;
  readonly #rt: Runtime;
  readonly #uninstall: () => void;

  constructor(opts: FakeHostOptions = {}) {
    this.clipboard = opts.clipboard ?? "";
    this.config = new Map(Object.entries(copy(opts.config ?? {})));
    const scriptDir = opts.scriptDir ?? defaultDir();
    const projectDir = opts.projectDir ?? scriptDir;
    if (opts.grant !== undefined && opts.permissions !== undefined) {
      throw new TypeError("installFakeHost takes permissions or grant, not both");
    }
    const perms = parsePermissions(opts.permissions ?? "clipboard");
    this.browser = new FakeBrowser(opts, perms.sites, { scriptDir, grants: perms.read });
    const main = {
      ...this.browser.api(),
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
      granted: opts.grant ?? perms.grant,
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
    this.browser.dispose();
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
