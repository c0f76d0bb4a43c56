// The fake browser of tranquil/automation/testing: tabs in memory, a record
// of every action, and failures a test scripts per method, tab or target.
// It answers the same host calls (tabs, tab, pageJs, forms) the app does.

import type {
  DialogAnswer,
  DialogPolicy,
  DialogType,
  ExpectRequest,
  NavigationResponse,
  Target,
  WaitForOptions,
} from "./browser.ts";
import { pathContains, resolvePath } from "./path.ts";
import { siteAllowed } from "./kit_rules.ts";
import { served } from "./served.ts";

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

/** The methods the fake browser records. */
export type FakeMethod =
  | "open"
  | "goto"
  | "reload"
  | "goBack"
  | "goForward"
  | "waitForURL"
  | "waitForNavigation"
  | "waitFor"
  | "evaluate"
  | "screenshot"
  | "close"
  | "fill"
  | "check"
  | "select"
  | "click"
  | "dblclick"
  | "hover"
  | "dragTo"
  | "focus"
  | "type"
  | "press"
  | FakeReaderCall
  | "expect"
  | "setFiles"
  | "onDialog"
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

/** A tab of the fake browser. */
export class FakeTab {
  /** The tab's ID. */
  readonly id: string;
  /** The address it shows now. */
  url: string;
  /** Its title now. */
  title: string;
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
    id: string,
    url: string,
    title: string,
    init: { opened?: boolean; background?: boolean; triggered?: boolean },
  ) {
    this.id = id;
    this.url = url;
    this.title = title;
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

/** A waitForNavigation call waiting for its tab's next navigation. */
interface NavWaiter {
  resolve: () => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
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
  readonly #waiters = new Map<string, Set<NavWaiter>>();
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
    const id = tab.id;
    tab.url = url;
    tab.title = title ?? this.#titleOf(url);
    const ws = this.#waiters.get(id);
    this.#waiters.delete(id);
    for (const w of ws ?? []) {
      clearTimeout(w.timer);
      w.resolve();
    }
  }

  /**
   * dialog opens a dialog in a tab, as the page would, and returns how the
   * script's tab.onDialog answers it (dismissed by default). It is
   * recorded as a "dialog" action whose outcome is "accepted" or
   * "dismissed".
   */
  dialog(id: string, type: DialogType): { accept: boolean; promptText?: string } {
    const tab = this.#open(id);
    const p = tab.dialogs;
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
    for (const [, ws] of this.#waiters) {
      for (const w of ws) {
        clearTimeout(w.timer);
        w.reject(new Error("the fake host was uninstalled"));
      }
    }
    this.#waiters.clear();
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

  static #info(t: FakeTab) {
    return { id: t.id, url: t.url, title: t.title };
  }

  /**
   * act runs one recorded call on tab id: the checks the app makes (tab,
   * sites= for page actions, then scripted failures), do, the record and
   * onAction.
   */
  #act<R>(
    id: string,
    a: Omit<FakeAction, "outcome" | "tab">,
    page: boolean,
    url: string | undefined,
    do_: (tab: FakeTab) => R,
  ): R {
    const record = (outcome: string) => {
      const rec: FakeAction = { method: a.method, tab: id, outcome };
      if (a.target !== undefined) rec.target = a.target;
      if (a.value !== undefined) rec.value = a.value;
      if (a.dryRun !== undefined) rec.dryRun = a.dryRun;
      if (a.to !== undefined) rec.to = a.to;
      this.actions.push(rec);
      return rec;
    };
    let tab: FakeTab;
    try {
      tab = this.#open(id);
      if (page && this.#sites !== undefined && !siteAllowed(tab.url, this.#sites)) {
        throw hostError({
          code: "site_not_allowed",
          message: `${tab.url} is not on one of the script's sites=`,
        });
      }
      const f = this.#failures.find((f) =>
        f.times! > 0 && (f.method === undefined || f.method === a.method) && (f.tab === undefined || f.tab === id) &&
        (f.target === undefined || key(f.target) === key(a.target)) && (f.url === undefined || f.url === url)
      );
      if (f) {
        f.times!--;
        throw hostError(f.error);
      }
    } catch (e) {
      record(String((e as { code?: unknown }).code ?? "error"));
      throw e;
    }
    const done = () => {
      const rec = record(a.dryRun ? "dry-run" : "ok");
      this.#opts.onAction?.(rec, tab);
    };
    let out: R;
    try {
      out = do_(tab);
    } catch (e) {
      record(String((e as { code?: unknown }).code ?? "error"));
      throw e;
    }
    if (out instanceof Promise) {
      // A wait is recorded when it ends, with how it ended.
      return out.then((v) => {
        done();
        return v;
      }, (e) => {
        record(String((e as { code?: unknown }).code ?? "error"));
        throw e;
      }) as R;
    }
    done();
    return out;
  }

  /** reader answers one reader call, as a page action (held to sites=). */
  #reader(id: string, reader: FakeReaderCall, target: Target, name?: string): unknown {
    return this.#act(
      id,
      { method: reader, target },
      true,
      undefined,
      (tab) => this.#readPage(tab, reader, target, name),
    );
  }

  /** readPage is what the page shows to reader: the read option's answer, or the fake's own. */
  #readPage(tab: FakeTab, reader: FakeReader, target: Target, name?: string): unknown {
    if (this.#opts.read) return this.#opts.read(tab, reader, target, name);
    const v = tab.value(target);
    if (reader === "value") return typeof v === "string" ? v : Array.isArray(v) ? (v[0] ?? "") : "";
    if (reader === "checked") return v === true;
    throw new Error(`the fake host has no page to run tab.${reader} on: pass read to installFakeHost`);
  }

  /** move goes step entries through the tab's history, as goBack and goForward do: null when there is none. */
  #move(id: string, method: "goBack" | "goForward", step: number): NavigationResponse | null {
    return this.#act(id, { method }, false, undefined, (tab) => {
      const to = tab.history[tab.at + step];
      if (to === undefined) return null;
      tab.at += step;
      this.#show(tab, to);
      const r = this.#opts.responses?.[to];
      return { status: r?.status ?? 200, url: to };
    });
  }

  /** waitForURL waits, checking every 20 ms, until the tab's address matches m as the app matches it. */
  async #waitForURL(
    tab: FakeTab,
    m: { url?: string; pattern?: { source: string; flags: string } },
    ms: number,
  ): Promise<void> {
    const re = m.pattern ? new RegExp(m.pattern.source, m.pattern.flags.replace(/[gy]/g, "")) : new RegExp(
      "^" +
        (m.url ?? "").split(/(\*\*|\*)/).map((p) =>
          p === "**" ? ".*" : p === "*" ? "[^/]*" : p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
        ).join("") + "$",
    );
    const start = Date.now();
    while (!re.test(tab.url)) {
      const left = start + ms - Date.now();
      if (left <= 0) {
        throw hostError({
          code: "timeout",
          message: `waited ${ms} ms for the address to match ${m.url ?? re}; last seen: ${tab.url}`,
        });
      }
      await new Promise((r) => setTimeout(r, Math.min(20, left)));
    }
  }

  /**
   * expect checks e on target (or, with no target, on the page) as the
   * app does: again and again until it holds (with not, until it does
   * not) or its timeout passes.
   */
  async #expect(tab: FakeTab, target: Target | undefined, e: ExpectRequest): Promise<void> {
    const reader: FakeReader = e.kind === "text" || e.kind === "containsText"
      ? "text"
      : e.kind === "value"
      ? "value"
      : e.kind === "checked" || e.kind === "unchecked"
      ? "checked"
      : e.kind === "count"
      ? "count"
      : e.kind === "attribute" || e.kind === "class"
      ? "attribute"
      : e.kind === "enabled" || e.kind === "disabled"
      ? "enabled"
      : e.kind === "focused" || e.kind === "editable"
      ? e.kind
      : "visible";
    const space = (s: string) => s.split(/\s+/).filter((w) => w !== "").join(" ");
    const re = e.pattern ? new RegExp(e.pattern.source, e.pattern.flags.replace(/[gy]/g, "")) : undefined;
    const check = (v: unknown): [boolean, string] => {
      switch (e.kind) {
        case "text":
        case "containsText":
        case "value":
        case "class":
        case "url":
        case "title": {
          const s = v === null ? "" : String(v);
          const held = re
            ? re.test(s)
            : e.kind === "text" || e.kind === "title"
            ? space(s) === space(e.text ?? "")
            : e.kind === "containsText"
            ? space(s).includes(space(e.text ?? ""))
            : s === e.text;
          return [held, JSON.stringify(s)];
        }
        case "attribute":
          if (v === null || v === undefined) return [false, `no attribute ${JSON.stringify(e.name)}`];
          return [re ? re.test(String(v)) : e.text === undefined || String(v) === e.text, JSON.stringify(String(v))];
        case "checked":
        case "unchecked":
          return [(v === true) === (e.kind === "checked"), v === true ? "checked" : "not checked"];
        case "visible":
        case "hidden":
          return [(v === true) === (e.kind === "visible"), v === true ? "visible" : "not visible"];
        case "enabled":
        case "disabled":
          return [(v === true) === (e.kind === "enabled"), v === true ? "enabled" : "disabled"];
        case "focused":
        case "editable":
          return [v === true, v === true ? e.kind : `not ${e.kind}`];
        case "count":
          return [v === e.count, `${String(v)} elements match`];
      }
      return [false, ""];
    };
    const look = () =>
      target === undefined
        ? (e.kind === "url" ? tab.url : tab.title)
        : this.#readPage(tab, reader, target, e.kind === "class" ? "class" : e.name);
    const ms = e.timeout ?? 5000;
    const start = Date.now();
    for (;;) {
      let seen: string;
      try {
        const [held, s] = check(look());
        if (held !== (e.not ?? false)) return;
        seen = s;
      } catch (err) {
        if ((err as { code?: unknown }).code !== "not_found") throw err;
        seen = "no element matches";
      }
      const left = start + ms - Date.now();
      if (left <= 0) {
        const want = e.pattern
          ? `/${e.pattern.source}/${e.pattern.flags}`
          : JSON.stringify(e.text ?? e.count ?? e.name);
        const of = target === undefined ? "the page" : JSON.stringify(target);
        throw hostError({
          code: "expectation_failed",
          message: `expected ${e.not ? "not " : ""}${e.kind} ${want} in ${of}, last seen ${seen} (waited ${ms} ms)`,
        });
      }
      await new Promise((r) => setTimeout(r, Math.min(20, left)));
    }
  }

  /** api returns the host objects the fake serves: tabs, tab, pageJs and forms. */
  api(): Record<string, Record<string, (...args: never[]) => Promise<unknown>>> {
    const info = FakeBrowser.#info;
    type Opts = { dryRun?: boolean; timeout?: number; target?: Target; modifiers?: string[] };
    return {
      tabs: {
        active: served(() => {
          if (this.activeId === undefined) throw hostError({ code: "not_found", message: "no tab is active" });
          return info(this.#open(this.activeId));
        }),
        find: served((pattern: string) =>
          this.open.filter((t) => t.url.includes(pattern) || t.title.includes(pattern)).map(info)
        ),
        all: served(() => this.open.map(info)),
        open: served((url: string, o?: { background?: boolean }) => {
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
        }),
        triggered: served(() => {
          const t = this.tabs.find((t) => t.triggered);
          return t ? info(t) : undefined;
        }),
      },
      tab: {
        url: served((id: string) => this.#open(id).url),
        title: served((id: string) => this.#open(id).title),
        goto: served((id: string, url: string) =>
          this.#act(id, { method: "goto", value: url }, false, url, () => {
            const r = this.#opts.responses?.[url];
            const to = r?.url ?? url;
            this.navigate(id, to);
            return { status: r?.status ?? 200, url: to };
          })
        ),
        reload: served((id: string) =>
          this.#act(id, { method: "reload" }, false, undefined, (tab) => {
            const r = this.#opts.responses?.[tab.url];
            return { status: r?.status ?? 200, url: tab.url };
          })
        ),
        goBack: served((id: string) => this.#move(id, "goBack", -1)),
        goForward: served((id: string) => this.#move(id, "goForward", +1)),
        waitForURL: served((
          id: string,
          m: { url?: string; pattern?: { source: string; flags: string } },
          o?: { timeout?: number },
        ) =>
          this.#act(
            id,
            { method: "waitForURL", value: m.url ?? `/${m.pattern?.source}/${m.pattern?.flags}` },
            false,
            undefined,
            (tab) => this.#waitForURL(tab, m, o?.timeout ?? this.#opts.navigationTimeout ?? 5000),
          )
        ),
        waitForNavigation: served((id: string, o?: { timeout?: number }) =>
          this.#act(
            id,
            { method: "waitForNavigation" },
            false,
            undefined,
            () =>
              new Promise<void>((resolve, reject) => {
                const ms = o?.timeout ?? this.#opts.navigationTimeout ?? 5000;
                const w: NavWaiter = {
                  resolve,
                  reject,
                  timer: setTimeout(() => {
                    this.#waiters.get(id)?.delete(w);
                    reject(hostError({ code: "timeout", message: `no navigation within ${ms} ms` }));
                  }, ms),
                };
                if (!this.#waiters.has(id)) this.#waiters.set(id, new Set());
                this.#waiters.get(id)!.add(w);
              }),
          )
        ),
        expectDownload: served((id: string, o: { path: string }) => {
          this.#open(id);
          const ticket = `download-${this.#nextDownload++}`;
          this.#downloads.set(ticket, { tab: id, path: o.path });
          return ticket;
        }),
        waitForDownload: served((id: string, ticket: string, abandon: boolean) => {
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
        }),
        waitFor: served((id: string, what: string | Target, o?: WaitForOptions) =>
          this.#act(
            id,
            { method: "waitFor", target: typeof what === "string" ? { selector: what } : what, value: o?.state },
            false,
            undefined,
            () => {},
          )
        ),
        text: served((id: string, target: Target) => this.#reader(id, "text", target)),
        value: served((id: string, target: Target) => this.#reader(id, "value", target)),
        attribute: served((id: string, target: Target, name: string) => this.#reader(id, "attribute", target, name)),
        checked: served((id: string, target: Target) => this.#reader(id, "checked", target)),
        visible: served((id: string, target: Target) => this.#reader(id, "visible", target)),
        count: served((id: string, target: Target) => this.#reader(id, "count", target)),
        texts: served((id: string, target: Target) => this.#reader(id, "texts", target)),
        values: served((id: string, target: Target) => this.#reader(id, "values", target)),
        table: served((id: string, target: Target) => this.#reader(id, "table", target)),
        expect: served((id: string, target: Target, e: ExpectRequest) =>
          this.#act(
            id,
            { method: "expect", target, value: e.kind },
            true,
            undefined,
            (tab) => this.#expect(tab, target, e),
          )
        ),
        expectPage: served((id: string, e: ExpectRequest) =>
          this.#act(
            id,
            { method: "expect", value: e.kind },
            true,
            undefined,
            (tab) => this.#expect(tab, undefined, e),
          )
        ),
        screenshot: served((id: string) =>
          this.#act(id, { method: "screenshot" }, false, undefined, () => PNG.slice())
        ),
        close: served((id: string) =>
          this.#act(id, { method: "close" }, false, undefined, (tab) => {
            tab.closed = true;
            for (const w of this.#waiters.get(id) ?? []) {
              clearTimeout(w.timer);
              w.reject(hostError({ code: "closed", message: `the tab "${id}" was closed` }));
            }
            this.#waiters.delete(id);
            if (this.activeId === id) this.activeId = this.open.at(-1)?.id;
          })
        ),
      },
      pageJs: {
        evaluate: served((id: string, source: string, args: unknown[]) =>
          this.#act(id, { method: "evaluate" }, true, undefined, (tab) => {
            if (!this.#opts.evaluate) {
              throw new Error("the fake host has no page to run tab.evaluate in: pass evaluate to installFakeHost");
            }
            return this.#opts.evaluate(tab, source, args);
          })
        ),
      },
      forms: {
        fill: served((id: string, target: Target, value: string, o?: Opts) =>
          this.#act(id, { method: "fill", target, value, dryRun: o?.dryRun }, true, undefined, (tab) => {
            if (!o?.dryRun) tab.setValue(target, value);
            const v = tab.value(target);
            return { value: typeof v === "string" ? v : "", invalid: false, validationMessage: "", errorText: "" };
          })
        ),
        check: served((id: string, target: Target, checked: boolean, o?: Opts) =>
          this.#act(id, { method: "check", target, value: checked, dryRun: o?.dryRun }, true, undefined, (tab) => {
            if (!o?.dryRun) tab.setValue(target, checked);
          })
        ),
        select: served((id: string, target: Target, option: string | string[], o?: Opts) =>
          this.#act(id, { method: "select", target, value: option, dryRun: o?.dryRun }, true, undefined, (tab) => {
            if (!o?.dryRun) tab.setValue(target, option);
            return option;
          })
        ),
        setFiles: served((id: string, target: Target, paths: string[], o?: Opts) =>
          this.#act(id, { method: "setFiles", target, value: paths, dryRun: o?.dryRun }, true, undefined, (tab) => {
            for (const p of paths) {
              const full = resolvePath(this.#read.dir, p);
              if (!this.#read.grants.some((g) => pathContains(g, full))) {
                throw hostError({
                  code: "not_granted",
                  permission: `read=${p}`,
                  message: `${p} is not under the script's read= grants`,
                });
              }
            }
            if (!o?.dryRun) tab.setValue(target, paths);
          })
        ),
        onDialog: served((id: string, policy: DialogPolicy) =>
          this.#act(id, { method: "onDialog" }, false, undefined, (tab) => {
            tab.dialogs = policy;
          })
        ),
        click: served((id: string, target: Target, o?: Opts) =>
          this.#act(id, { method: "click", target, dryRun: o?.dryRun }, true, undefined, () => {})
        ),
        dblclick: served((id: string, target: Target, o?: Opts) =>
          this.#act(id, { method: "dblclick", target, dryRun: o?.dryRun }, true, undefined, () => {})
        ),
        hover: served((id: string, target: Target, o?: Opts) =>
          this.#act(id, { method: "hover", target, dryRun: o?.dryRun }, true, undefined, () => {})
        ),
        dragTo: served((id: string, source: Target, to: Target, o?: Opts) =>
          this.#act(id, { method: "dragTo", target: source, to, dryRun: o?.dryRun }, true, undefined, () => {})
        ),
        focus: served((id: string, target: Target, o?: Opts) =>
          this.#act(id, { method: "focus", target, dryRun: o?.dryRun }, true, undefined, () => {})
        ),
        type: served((id: string, target: Target, text: string, o?: Opts) =>
          this.#act(id, { method: "type", target, value: text, dryRun: o?.dryRun }, true, undefined, () => {})
        ),
        press: served((id: string, k: string, o?: Opts) =>
          this.#act(id, { method: "press", target: o?.target, value: k, dryRun: o?.dryRun }, true, undefined, () => {})
        ),
      },
    };
  }
}
