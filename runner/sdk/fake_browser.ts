// The fake browser of tranquil/automation/testing: tabs in memory, a record
// of every action, and failures a test scripts per method, tab or target.
// It answers the same host calls (tabs, tab, pageJs, forms) the app does.

import type { DialogAnswer, DialogPolicy, DialogType, ExpectRequest, NavigationResponse, Target } from "./browser.ts";
import { pathContains, resolvePath } from "./path.ts";
import { siteAllowed } from "./kit_rules.ts";
import { serve } from "./served.ts";
import contract from "./contract.json" with { type: "json" };

/** A tab the fake browser starts with. */
export interface FakeTabInit {
  /** Its ID. Default "tab-1", "tab-2", … in order. */
  id?: string;
  /** The address it shows. */
  url: string;
  /** Its title. Default: the title of url in FakeBrowserOptions.titles, else url. */
  title?: string;
  /** Whether it is the active tab. Default: the first tab is. */
  active?: boolean;
  /** Whether it started the run, for tabs.triggered(). Default false. */
  triggered?: boolean;
}

type Host = typeof contract.capabilities;

/**
 * The methods the fake browser records: those of forms; those of tab but
 * url, title and the two of downloads (expectPage is recorded as
 * "expect"); tabs.open and pageJs.evaluate; and the page's dialogs and
 * downloads.
 */
export type FakeMethod =
  | keyof Host["forms"]
  | Exclude<keyof Host["tab"], "url" | "title" | "expectPage" | "expectDownload" | "waitForDownload">
  | "open"
  | "evaluate"
  | "dialog"
  | "download";

/** The readers a script calls, each recorded as a method of its own. */
export type FakeReaderCall =
  | "text"
  | "value"
  | "attribute"
  | "checked"
  | "visible"
  | "count"
  | "texts"
  | "values"
  | "table";

/** The readers, and the states tab.expect reads, as FakeBrowserOptions.read gets them. */
export type FakeReader = FakeReaderCall | "enabled" | "focused" | "editable";

/**
 * One recorded call. Unlike the app's action log, the fake keeps the value
 * typed or chosen, so a test can check it.
 */
export interface FakeAction {
  method: FakeMethod;
  /** The tab's ID. */
  tab: string;
  /** The target of a form action, reader, expect or press, or { selector } for waitFor given a selector. */
  target?: Target;
  /**
   * What fill or type typed, select chose (a list, for several), check set, press
   * pressed, goto and open loaded, waitForURL waited for (a glob, or
   * /source/flags), setFiles set (the paths as given), waitForDownload
   * saved to (the path as given, recorded as "download"), the
   * type of a dialog, the state a waitFor was given, or the kind of check
   * of an expect ("text", "visible", …).
   */
  value?: string | boolean | string[];
  /** Whether the call was a dry run. */
  dryRun?: boolean;
  /** Where dragTo dropped: its second target. */
  to?: Target;
  /** "ok", "dry-run", or the code of the error the call failed with. */
  outcome: string;
}

/** The error a scripted failure throws: a code, and any other properties the app would attach (such as kept). */
export interface FakeErrorInit {
  code: string;
  message?: string;
  [prop: string]: unknown;
}

/** A scripted failure: calls matching every given field fail with error. */
export interface FakeFailure {
  method?: FakeMethod;
  /** The tab's ID. */
  tab?: string;
  /** The target, compared by value ({ selector } for waitFor). */
  target?: Target;
  /** The URL of a goto or open. */
  url?: string;
  /** How many matching calls fail. Default: all of them. */
  times?: number;
  error: FakeErrorInit;
}

/** Options of the fake browser, part of installFakeHost's options. */
export interface FakeBrowserOptions {
  /** The tabs open at the start. Default none. */
  tabs?: FakeTabInit[];
  /** Page titles by URL, for tabs that navigate there. Default: a page's title is its URL. */
  titles?: Record<string, string>;
  /**
   * Answers tab.evaluate: gets the tab, the function's source and the
   * arguments, and returns the result. Default: evaluate fails, saying so.
   */
  evaluate?: (tab: FakeTab, source: string, args: unknown[]) => unknown;
  /**
   * Runs after each successful action, for a test to play the page's part:
   * for example, to navigate when a link is clicked (browser.navigate). An
   * error it throws fails the call.
   */
  onAction?: (action: FakeAction, tab: FakeTab) => void;
  /**
   * Answers the readers (text, value, attribute, checked, visible,
   * count, and texts, values and table, which return a list of strings,
   * a list and { headers, rows }) and the states tab.expect asks of an element (enabled,
   * focused, editable: a boolean; class is read as the attribute
   * "class"): gets the tab, the reader, the target and, for attribute,
   * the name, and returns what the page would show (null for an attribute
   * not there). Default: value and checked
   * answer what fill, select or check last committed to the target (or
   * FakeTab.setValue gave it); the others fail, saying so. tab.expect
   * asks it again and again, every 20 ms, until its check holds or its
   * timeout passes; an error with code "not_found" counts as no element
   * there yet. The fake's readers answer at once: they do not wait.
   */
  read?: (tab: FakeTab, reader: FakeReader, target: Target, name?: string) => unknown;
  /**
   * What goto answers, by URL: a status (default 200) and the address the
   * page ends up at after redirects (default the URL, where the tab then
   * is).
   */
  responses?: Record<string, Partial<NavigationResponse>>;
  /** How long waitForNavigation waits when the script gives no timeout, in ms. Default 5000. */
  navigationTimeout?: number;
  /** Scripted failures, as if added with FakeBrowser.fail. */
  failures?: FakeFailure[];
  /**
   * Answers tab.waitForDownload once its action has run: gets the tab
   * and the path the script gave, and returns the file the page
   * downloaded. Default: a file named "download" of 0 bytes. The fake
   * saves nothing and checks no write= grant; script a failure of method
   * "download" to play a refusal.
   */
  download?: (tab: FakeTab, path: string) => { name?: string; size?: number };
}

/** A 1×1 PNG, what the fake's screenshots return. */
const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);

/** hostError builds an error the way one arrives from the app: an Error with own properties. */
function hostError(init: FakeErrorInit): Error {
  const { code, message, ...props } = init;
  return Object.assign(new Error(message ?? `the fake browser failed the call (${code})`), props, { code });
}

/** key identifies a target by value, whatever the order of its keys (within and has included). */
function key(t: unknown): string {
  if (t === undefined) return "";
  const sorted = (v: unknown): unknown =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a < b ? -1 : 1).map(([k, x]) => [k, sorted(x)])
      : v;
  return JSON.stringify(sorted(t));
}

type Pattern = { source: string; flags: string };
/** regExp is a pattern as the app matches it: flags g and y mean nothing to a single test. */
const regExp = (p: Pattern) => new RegExp(p.source, p.flags.replace(/[gy]/g, ""));

/** poll checks held every 20 ms until it holds, or throws timeout() once ms have passed. */
async function poll(ms: number, held: () => boolean, timeout: () => Error): Promise<void> {
  for (const end = Date.now() + ms; !held();) {
    const left = end - Date.now();
    if (left <= 0) throw timeout();
    await new Promise((r) => setTimeout(r, Math.min(20, left)));
  }
}

/**
 * valueOf is the value a call records (see FakeAction.value): its first
 * argument of plain data, an expectation's kind or a waitForURL's match,
 * found by the arguments' types in contract.json.
 */
function valueOf(types: string[], args: unknown[]): FakeAction["value"] {
  const i = types.findIndex((t) => /^(string|boolean|string\[\]|string \| string\[\]|Expectation|UrlMatch)$/.test(t));
  const v = args[i] as { kind?: string; url?: string; pattern?: Pattern };
  if (types[i] === "Expectation") return v.kind;
  return types[i] === "UrlMatch" ? v.url ?? `/${v.pattern?.source}/${v.pattern?.flags}` : v as FakeAction["value"];
}

const info = (t: FakeTab) => ({ id: t.id, url: t.url, title: t.title });

/** A tab of the fake browser. */
export class FakeTab {
  /** Whether it has been closed. */
  closed = false;
  /** The addresses of its history (goto and navigate add one; goBack and goForward move through them), and which it shows. */
  history: string[];
  at = 0;
  /** Whether the script opened it, and whether in the background. */
  readonly openedByScript: boolean;
  readonly background: boolean;
  /** Whether it started the run. */
  readonly triggered: boolean;
  /** How the script said to answer dialogs (tab.onDialog); undefined dismisses them. */
  dialogs: DialogPolicy | undefined;
  readonly #values = new Map<string, string | boolean | string[]>();

  constructor(
    /** The tab's ID. */
    readonly id: string,
    /** The address it shows now. */
    public url: string,
    /** Its title now. */
    public title: string,
    init: { opened?: boolean; background?: boolean; triggered?: boolean },
  ) {
    this.history = [url];
    this.openedByScript = init.opened ?? false;
    this.background = init.background ?? false;
    this.triggered = init.triggered ?? false;
  }

  /** value returns what fill, select, check or setFiles last committed to target on this tab. */
  value(target: Target): string | boolean | string[] | undefined {
    return this.#values.get(key(target));
  }

  /** setValue sets what a target holds, as the page (or a test playing it) would. */
  setValue(target: Target, value: string | boolean | string[]): void {
    this.#values.set(key(target), value);
  }
}

/** A recorded call, as a method's code gets it: the arguments after the tab's ID, and its options ({} for none). */
interface Call {
  tab: FakeTab;
  args: unknown[];
  target?: Target;
  opts: Record<string, unknown>;
}

/**
 * FakeBrowser is the browser of a FakeHost: its tabs, the actions the
 * script took, and the failures a test scripted.
 */
export class FakeBrowser {
  /** Every tab, open or closed, in the order they appeared. */
  readonly tabs: FakeTab[] = [];
  /** Every recorded call, in order. */
  readonly actions: FakeAction[] = [];
  /** The active tab's ID, if any tab is open. */
  activeId: string | undefined;
  readonly #opts: FakeBrowserOptions;
  readonly #sites: readonly string[] | undefined;
  readonly #failures: FakeFailure[] = [];
  /** The waitForNavigation calls of each tab, each ended by calling it (with an error, failed). */
  readonly #waiters = new Map<string, Set<(err?: Error) => void>>();
  readonly #downloads = new Map<string, { tab: string; path: string }>();
  readonly #read: { dir: string; grants: readonly string[] };
  #next = 1;
  #nextDownload = 1;

  /**
   * A fake browser for a script with these sites= (undefined: any site)
   * and read= grants (as declared, relative to scriptDir), which setFiles
   * is held to.
   */
  constructor(
    opts: FakeBrowserOptions,
    sites: readonly string[] | undefined,
    read: { scriptDir: string; grants: readonly string[] } = { scriptDir: "/", grants: [] },
  ) {
    this.#opts = opts;
    this.#sites = sites;
    this.#read = { dir: read.scriptDir, grants: read.grants.map((g) => resolvePath(read.scriptDir, g)) };
    for (const f of opts.failures ?? []) this.fail(f);
    for (const t of opts.tabs ?? []) {
      const tab = new FakeTab(t.id ?? this.#newId(), t.url, t.title ?? this.#titleOf(t.url), {
        triggered: t.triggered,
      });
      if (this.tabs.some((x) => x.id === tab.id)) throw new TypeError(`two fake tabs have the ID "${tab.id}"`);
      this.tabs.push(tab);
      if (t.active || this.activeId === undefined) this.activeId = tab.id;
    }
  }

  /** tab returns the tab with this ID, open or closed. */
  tab(id: string): FakeTab | undefined {
    return this.tabs.find((t) => t.id === id);
  }

  /** open lists the tabs not closed. */
  get open(): FakeTab[] {
    return this.tabs.filter((t) => !t.closed);
  }

  /** fail makes calls that match f fail with f.error, f.times times (default always). */
  fail(f: FakeFailure): void {
    if (typeof f?.error?.code !== "string") throw new TypeError("a fake failure needs error.code");
    this.#failures.push({ ...f, times: f.times ?? Infinity });
  }

  /**
   * navigate moves a tab to url, as a link, a form or the page's own script
   * would, and completes any waitForNavigation on it.
   */
  navigate(id: string, url: string, title?: string): void {
    const tab = this.#open(id);
    tab.history.splice(tab.at + 1, Infinity, url);
    tab.at = tab.history.length - 1;
    this.#show(tab, url, title);
  }

  /** show makes a tab show url, completing any waitForNavigation on it. */
  #show(tab: FakeTab, url: string, title?: string): void {
    tab.url = url;
    tab.title = title ?? this.#titleOf(url);
    for (const end of this.#waiters.get(tab.id) ?? []) end();
  }

  /**
   * dialog opens a dialog in a tab, as the page would, and returns how the
   * script's tab.onDialog answers it (dismissed by default). It is
   * recorded as a "dialog" action whose outcome is "accepted" or
   * "dismissed".
   */
  dialog(id: string, type: DialogType): { accept: boolean; promptText?: string } {
    const p = this.#open(id).dialogs;
    let a: DialogAnswer = "dismiss";
    if (typeof p === "string" || (p !== undefined && "accept" in p)) a = p as DialogAnswer;
    else if (p !== undefined) a = (p as Partial<Record<DialogType, DialogAnswer>>)[type] ?? "dismiss";
    const out = typeof a === "string" ? { accept: a === "accept" } : { ...a };
    if (!out.accept || type !== "prompt") delete (out as { promptText?: string }).promptText;
    this.actions.push({ method: "dialog", tab: id, value: type, outcome: out.accept ? "accepted" : "dismissed" });
    return out;
  }

  /** dispose ends pending waits; FakeHost calls it when it is uninstalled. */
  dispose(): void {
    for (const ws of this.#waiters.values()) for (const end of ws) end(new Error("the fake host was uninstalled"));
  }

  #newId(): string {
    let id: string;
    do id = `tab-${this.#next++}`; while (this.tabs.some((t) => t.id === id));
    return id;
  }

  #titleOf(url: string): string {
    return this.#opts.titles?.[url] ?? url;
  }

  #open(id: string): FakeTab {
    const tab = this.tab(id);
    if (!tab) throw hostError({ code: "not_found", message: `no tab has the ID "${id}"` });
    if (tab.closed) throw hostError({ code: "closed", message: `the tab "${id}" was closed` });
    return tab;
  }

  /**
   * act runs one recorded call on tab id: the checks the app makes (tab,
   * sites= for page actions, then scripted failures), do, the record and
   * onAction. A wait is recorded when it ends, with how it ended.
   */
  #act(id: string, a: Omit<FakeAction, "outcome" | "tab">, page: boolean, url: unknown, do_: (t: FakeTab) => unknown) {
    const record = (outcome: string) => {
      const rec: FakeAction = { method: a.method, tab: id, outcome };
      for (const [k, v] of Object.entries(a)) if (v !== undefined) Object.assign(rec, { [k]: v });
      this.actions.push(rec);
      return rec;
    };
    const failed = (e: unknown) => {
      record(String((e as { code?: unknown }).code ?? "error"));
      throw e;
    };
    const done = (v: unknown) => {
      const rec = record(a.dryRun ? "dry-run" : "ok");
      this.#opts.onAction?.(rec, tab);
      return v;
    };
    let tab: FakeTab;
    let out: unknown;
    try {
      tab = this.#open(id);
      if (page && this.#sites !== undefined && !siteAllowed(tab.url, this.#sites)) {
        throw hostError({ code: "site_not_allowed", message: `${tab.url} is not on one of the script's sites=` });
      }
      const f = this.#failures.find((f) =>
        f.times! > 0 && (f.method === undefined || f.method === a.method) && (f.tab === undefined || f.tab === id) &&
        (f.target === undefined || key(f.target) === key(a.target)) && (f.url === undefined || f.url === url)
      );
      if (f) {
        f.times!--;
        throw hostError(f.error);
      }
      out = do_(tab);
    } catch (e) {
      return failed(e);
    }
    return out instanceof Promise ? out.then(done, failed) : done(out);
  }

  /** readPage is what the page shows to reader: the read option's answer, or the fake's own. */
  #readPage(tab: FakeTab, reader: FakeReader, target: Target, name?: string): unknown {
    if (this.#opts.read) return this.#opts.read(tab, reader, target, name);
    const v = tab.value(target);
    if (reader === "value") return typeof v === "string" ? v : Array.isArray(v) ? (v[0] ?? "") : "";
    if (reader === "checked") return v === true;
    throw new Error(`the fake host has no page to run tab.${reader} on: pass read to installFakeHost`);
  }

  /**
   * expect checks e on target (or, with no target, on the page) as the
   * app does: again and again until it holds (with not, until it does
   * not) or its timeout passes.
   */
  #expect(tab: FakeTab, target: Target | undefined, e: ExpectRequest): Promise<void> {
    const space = (s: string) => s.split(/\s+/).filter((w) => w !== "").join(" ");
    const re = e.pattern ? regExp(e.pattern) : undefined;
    // A state's kind reads the state, its opposite (hidden, …) the same one; text kinds read their reader.
    const state =
      ({ unchecked: "checked", hidden: "visible", disabled: "enabled" } as Record<string, string>)[e.kind] ??
        e.kind;
    const check = (v: unknown): [boolean, string] => {
      if (["checked", "visible", "enabled", "focused", "editable"].includes(state)) {
        const no = state === "enabled" ? "disabled" : `not ${state}`;
        return [(v === true) === (state === e.kind), v === true ? state : no];
      }
      if (e.kind === "count") return [v === e.count, `${String(v)} elements match`];
      if (e.kind === "attribute") {
        if (v === null || v === undefined) return [false, `no attribute ${JSON.stringify(e.name)}`];
        return [re ? re.test(String(v)) : e.text === undefined || String(v) === e.text, JSON.stringify(String(v))];
      }
      const s = v === null ? "" : String(v);
      const held = re
        ? re.test(s)
        : e.kind === "text" || e.kind === "title"
        ? space(s) === space(e.text ?? "")
        : e.kind === "containsText"
        ? space(s).includes(space(e.text ?? ""))
        : s === e.text;
      return [held, JSON.stringify(s)];
    };
    const reader = (e.kind === "containsText" ? "text" : e.kind === "class" ? "attribute" : state) as FakeReader;
    const look = () =>
      target === undefined
        ? (e.kind === "url" ? tab.url : tab.title)
        : this.#readPage(tab, reader, target, e.kind === "class" ? "class" : e.name);
    const ms = e.timeout ?? 5000;
    let seen = "";
    return poll(ms, () => {
      try {
        const [held, s] = check(look());
        seen = s;
        return held !== (e.not ?? false);
      } catch (err) {
        if ((err as { code?: unknown }).code !== "not_found") throw err;
        seen = "no element matches";
        return false;
      }
    }, () => {
      const want = e.pattern ? `/${e.pattern.source}/${e.pattern.flags}` : JSON.stringify(e.text ?? e.count ?? e.name);
      const of = target === undefined ? "the page" : JSON.stringify(target);
      const message = `expected ${e.not ? "not " : ""}${e.kind} ${want} in ${of}, last seen ${seen} (waited ${ms} ms)`;
      return hostError({ code: "expectation_failed", message });
    });
  }

  /**
   * plain answers the methods that are no recorded action: they read the
   * fake's tabs, or open one (recorded as "open"), or handle downloads.
   */
  #plain(): Record<string, (...args: never[]) => unknown> {
    return {
      active: () => {
        if (this.activeId === undefined) throw hostError({ code: "not_found", message: "no tab is active" });
        return info(this.#open(this.activeId));
      },
      find: (s: string) => this.open.filter((t) => t.url.includes(s) || t.title.includes(s)).map(info),
      all: () => this.open.map(info),
      triggered: () => this.tabs.filter((t) => t.triggered).map(info)[0],
      url: (id: string) => this.#open(id).url,
      title: (id: string) => this.#open(id).title,
      open: (url: string, o?: { background?: boolean }) => {
        const tab = new FakeTab(this.#newId(), url, this.#titleOf(url), { opened: true, background: o?.background });
        this.tabs.push(tab);
        try {
          this.#act(tab.id, { method: "open", value: url }, false, url, () => {});
        } catch (e) {
          this.tabs.splice(this.tabs.indexOf(tab), 1);
          throw e;
        }
        if (!tab.background) this.activeId = tab.id;
        return info(tab);
      },
      expectDownload: (id: string, o: { path: string }) => {
        this.#open(id);
        const ticket = `download-${this.#nextDownload++}`;
        this.#downloads.set(ticket, { tab: id, path: o.path });
        return ticket;
      },
      waitForDownload: (id: string, ticket: string, abandon: boolean) => {
        const d = this.#downloads.get(ticket);
        this.#downloads.delete(ticket);
        if (d === undefined || d.tab !== id) {
          throw hostError({ code: "invalid", message: `no download is expected as "${ticket}"` });
        }
        if (abandon) return null;
        return this.#act(id, { method: "download", value: d.path }, false, undefined, (tab) => {
          const f = this.#opts.download?.(tab, d.path) ?? {};
          const name = f.name ?? "download";
          return { name, size: f.size ?? 0, path: /[\\/]$/.test(d.path) ? d.path + name : d.path };
        });
      },
    };
  }

  /**
   * actions is what the recorded methods do beyond the record, where the
   * fake keeps state (the readers, which read the page, are the tab's
   * methods with a target but expect); the others do nothing.
   */
  #actions(): Record<string, (c: Call) => unknown> {
    const respond = (url: string, to = url) => ({ status: this.#opts.responses?.[url]?.status ?? 200, url: to });
    const wait = (c: Call) => (c.opts.timeout as number | undefined) ?? this.#opts.navigationTimeout ?? 5000;
    const move = ({ tab }: Call, step: number) => {
      const to = tab.history[tab.at + step];
      if (to === undefined) return null;
      tab.at += step;
      this.#show(tab, to);
      return respond(to);
    };
    const set = (c: Call, v: string | boolean | string[]) => {
      if (!c.opts.dryRun) c.tab.setValue(c.target!, v);
      return v;
    };
    return {
      goto: (c) => {
        const url = c.args[0] as string;
        this.navigate(c.tab.id, this.#opts.responses?.[url]?.url ?? url);
        return respond(url, c.tab.url);
      },
      reload: (c) => respond(c.tab.url),
      goBack: (c) => move(c, -1),
      goForward: (c) => move(c, +1),
      waitForURL: ({ tab, args: [m], opts }) => {
        const { url, pattern } = m as { url?: string; pattern?: Pattern };
        const glob = (url ?? "").split(/(\*\*|\*)/)
          .map((p) => p === "**" ? ".*" : p === "*" ? "[^/]*" : p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
        const re = pattern ? regExp(pattern) : new RegExp(`^${glob.join("")}$`);
        const ms = wait({ tab, args: [], opts });
        const message = () => `waited ${ms} ms for the address to match ${url ?? re}; last seen: ${tab.url}`;
        return poll(ms, () => re.test(tab.url), () => hostError({ code: "timeout", message: message() }));
      },
      waitForNavigation: (c) =>
        new Promise<void>((resolve, reject) => {
          const ws = this.#waiters.get(c.tab.id) ?? new Set();
          this.#waiters.set(c.tab.id, ws);
          const ms = wait(c);
          const timer = setTimeout(
            () => end(hostError({ code: "timeout", message: `no navigation within ${ms} ms` })),
            ms,
          );
          const end = (err?: Error) => {
            clearTimeout(timer);
            ws.delete(end);
            if (err) reject(err);
            else resolve();
          };
          ws.add(end);
        }),
      expect: (c) => this.#expect(c.tab, c.target, c.args[1] as ExpectRequest),
      expectPage: (c) => this.#expect(c.tab, undefined, c.args[0] as ExpectRequest),
      screenshot: () => PNG.slice(),
      close: ({ tab }) => {
        tab.closed = true;
        const err = hostError({ code: "closed", message: `the tab "${tab.id}" was closed` });
        for (const end of this.#waiters.get(tab.id) ?? []) end(err);
        if (this.activeId === tab.id) this.activeId = this.open.at(-1)?.id;
      },
      evaluate: (c) => {
        if (!this.#opts.evaluate) {
          throw new Error("the fake host has no page to run tab.evaluate in: pass evaluate to installFakeHost");
        }
        return this.#opts.evaluate(c.tab, c.args[0] as string, c.args[1] as unknown[]);
      },
      fill: (c) => {
        set(c, c.args[1] as string);
        const v = c.tab.value(c.target!);
        return { value: typeof v === "string" ? v : "", invalid: false, validationMessage: "", errorText: "" };
      },
      check: (c) => void set(c, c.args[1] as boolean),
      select: (c) => set(c, c.args[1] as string | string[]),
      setFiles: (c) => {
        for (const p of c.args[1] as string[]) {
          if (!this.#read.grants.some((g) => pathContains(g, resolvePath(this.#read.dir, p)))) {
            const message = `${p} is not under the script's read= grants`;
            throw hostError({ code: "not_granted", permission: `read=${p}`, message });
          }
        }
        set(c, c.args[1] as string[]);
      },
      onDialog: (c) => {
        c.tab.dialogs = c.args[0] as DialogPolicy;
      },
    };
  }

  /**
   * api returns the host objects the fake serves: tabs, tab, pageJs and
   * forms, each method of the host's list (contract.json) answered by
   * plain, or recorded (its target, value and dry run read off its
   * arguments by their types) and answered by actions.
   */
  api(): Record<string, Record<string, (...args: never[]) => Promise<unknown>>> {
    const plain = this.#plain(), acts = this.#actions();
    const api = serve(["tabs", "tab", "pageJs", "forms"], (cap, name, params) => {
      if (plain[name]) return plain[name];
      const types = params.slice(1); // after the tab's ID
      const reader = cap === "tab" && types.includes("Locator") && name !== "expect";
      // Page actions are held to sites=: forms' but onDialog, pageJs', and the tab's with a target or an expectation.
      const page = name !== "onDialog" && (cap !== "tab" || types.some((p) => p === "Locator" || p === "Expectation"));
      return (id: string, ...args: unknown[]) => {
        const targets = args.filter((_, i) => types[i]?.endsWith("Locator"))
          .map((t) => typeof t === "string" ? { selector: t } : t as Target);
        const opts = (args[types.findIndex((p) => p.endsWith("Options"))] ?? {}) as Record<string, unknown>;
        const c = { args, target: targets[0] ?? opts.target as Target | undefined, opts };
        const value = reader || name === "evaluate"
          ? undefined
          : name === "waitFor"
          ? opts.state
          : valueOf(types, args);
        const method = (name === "expectPage" ? "expect" : name) as FakeMethod;
        const a = {
          method,
          target: c.target,
          value: value as FakeAction["value"],
          dryRun: opts.dryRun as boolean,
          to: targets[1],
        };
        return this.#act(
          id,
          a,
          page,
          name === "goto" ? value : undefined,
          (tab) =>
            reader
              ? this.#readPage(tab, name as FakeReader, c.target!, args[1] as string)
              : acts[name]?.({ ...c, tab }),
        );
      };
    });
    const stale = [...Object.keys(plain), ...Object.keys(acts)].filter((n) => !Object.values(api).some((m) => n in m));
    if (stale.length > 0) throw new Error(`the fake browser answers methods the host has not: ${stale.join(", ")}`);
    return api;
  }
}
