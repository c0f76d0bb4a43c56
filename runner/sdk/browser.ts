// The browser, as a script sees it: tabs to find or open, and Tab handles
// that read, navigate, evaluate and fill forms. Every call goes through the
// host, which checks the run's grants and sites= before touching a page; the
// script never talks to the browser itself.

import {
  EvaluateError,
  ExpectationError,
  invalid,
  jsonCopy,
  knownKeys,
  locate,
  NotCommittedError,
  NotGrantedError,
  TabError,
} from "./errors.ts";
import { CallStack, type Capability, PERMISSION_KEY, type Runtime, runtime } from "./runtime.ts";
import { ExpectationCalls, PageExpectationCalls, TabCalls } from "./tab_gen.ts";

// The generated bases of Tab and the expectations, for the docs that link
// their methods.
export type { ExpectationCalls, PageExpectationCalls, TabCalls };
import type {
  ClickOptions,
  DblclickOptions,
  DialogAnswer as DialogAnswerObject,
  DownloadOptions,
  DownloadResult,
  Expectation as ExpectRequest,
  FieldState,
  FormOptions,
  HoverOptions,
  NavigationOptions,
  OpenTabOptions,
  PressOptions,
  ReadOptions,
  Response as NavigationResponse,
  ScreenshotOptions,
  TabInfo,
  Table as TableRows,
  TypeOptions,
  UrlMatch as URLMatchRequest,
  WaitForOptions,
} from "./contract_types.ts";

// The option and result types are generated from the host's Go types
// (contract_types.ts): exported here under the names scripts use.
export type {
  ClickOptions,
  DblclickOptions,
  DownloadOptions,
  DownloadResult,
  ExpectRequest,
  FieldState,
  FormOptions,
  HoverOptions,
  NavigationOptions,
  NavigationResponse,
  PressOptions,
  ReadOptions,
  ScreenshotOptions,
  TabInfo,
  TableRows,
  TypeOptions,
  URLMatchRequest,
  WaitForOptions,
};

/**
 * Target names an element for a form action, one way at a time:
 *
 * - `{ label: "Email" }`: the field a label, aria-label or aria-labelledby names
 * - `{ placeholder: "Search" }`: the placeholder attribute
 * - `{ name: "q" }`: the name attribute
 * - `{ role: "button", name: "Save" }`: an ARIA role, optionally with its accessible name
 * - `{ text: "Sign in" }`: the element's text
 * - `{ selector: "#email" }`: a CSS selector
 * - `{ testId: "submit" }`: the data-testid attribute
 * - `{ ref: "…" }`: a reference the host handed out earlier; it goes stale
 *   when the page navigates or removes the element (code "stale_ref")
 *
 * Roles and names (and labels) are the ones the browser computes for screen
 * readers, through open and closed shadow roots. A name matches when it
 * contains the one given, ignoring case, and a whole match wins over a
 * partial one; with `exact: true` only the whole name, case and all, after
 * runs of white space are made one space.
 *
 * Every target is looked for in the page and in its frames (iframes of the
 * same site and of other sites alike) whose site the script may act on;
 * a match in two frames is "ambiguous". `frame` narrows the search to the
 * frames whose name attribute is `frame` or whose address contains it:
 * `{ label: "Card number", frame: "checkout" }`.
 *
 * More than one usable match is an error ("ambiguous", listing the
 * candidates), never a guess; `tab.count(target)` counts the same matches
 * the lookup chooses from. Real pages repeat themselves (a table of
 * orders, each row with its own "Edit"), so a target can be narrowed:
 *
 * - `within`: look only inside the elements another target names (it may
 *   match several):
 *   `{ role: "button", name: "Edit", within: { role: "row", name: "Ada Lovelace" } }`
 * - `hasText`: keep the matches whose text holds this (ignoring case):
 *   `{ role: "row", hasText: "Ada Lovelace" }`
 * - `has`: keep the matches that hold an element another target names:
 *   `{ role: "row", has: { role: "cell", name: "Overdue" } }`
 * - `nth`: take the match at this place among all of them (disabled and
 *   hidden ones counted, though a role or label never matches an element
 *   hidden with display: none; document order, page before frames): 0 the
 *   first, -1 the last. It is the only way to accept a target that matches several:
 *   `{ role: "button", name: "Edit", nth: 0 }`
 *
 * `nth` works at every level, after that level's `hasText` and `has`. In a
 * `within` part it picks among that part's matches, as Playwright's
 * `locator("p").nth(0).locator("button")` does:
 * `{ role: "button", name: "Delete", within: { role: "row", nth: 3 } }` is
 * the Delete of the fourth row, and nothing if that row has none. In a `has`
 * part it counts inside each element being filtered, as Playwright's
 * `filter({ has })` does: `{ role: "row", has: { role: "cell", nth: 2 } }`
 * keeps the rows that have a third cell.
 *
 * A row's name is its cells' names joined by spaces. `within` and `has`
 * nest at most four targets deep, and only the outermost target takes
 * `frame`.
 */
export type Target =
  & TargetWay
  & {
    frame?: string;
    within?: TargetPart;
    hasText?: string;
    has?: TargetPart;
    nth?: number;
  };

/** TargetWay is the one way a target finds its element. */
export type TargetWay =
  | { label: string; exact?: boolean }
  | { placeholder: string }
  | { name: string }
  | { role: string; name?: string; exact?: boolean }
  | { text: string }
  | { selector: string }
  | { testId: string }
  | { ref: string };

/** TargetPart is a target inside another (within, has): it takes no frame. */
export type TargetPart = TargetWay & { within?: TargetPart; hasText?: string; has?: TargetPart; nth?: number };

/** When a navigation counts as done. */
export type WaitUntil = NonNullable<NavigationOptions["waitUntil"]>;

/**
 * What Tab.waitFor waits for, as Playwright's locator.waitFor: "visible"
 * (an element the target names is shown), "hidden" (none matches, or
 * every match is hidden), "attached" (some element matches, shown or
 * hidden), "detached" (none matches).
 */
export type WaitState = NonNullable<WaitForOptions["state"]>;

/** Options of an expectation (Tab.expect). */
export interface ExpectOptions {
  /** How long to keep checking, in milliseconds. Default 5000. */
  timeout?: number;
}

/** Options of Expectations.toBeChecked. */
export interface CheckedExpectOptions extends ExpectOptions {
  /** Whether the box should be checked. Default true. */
  checked?: boolean;
}

/** expectOptions checks the options of an expectation, which are the SDK's (keys, beyond timeout, the host never sees). */
function expectOptions(api: string, opts: unknown, keys: readonly string[]): Record<string, unknown> {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== "object" || Array.isArray(opts)) throw invalid(`${api}: options must be an object`);
  knownKeys(api, "its options", opts, keys);
  return opts as Record<string, unknown>;
}

/** textOf is an expected text or RegExp as the host takes it: a RegExp as its source and flags. */
export function textOf(_api: string, _what: string, t: unknown): Pick<ExpectRequest, "text" | "pattern"> {
  return t instanceof RegExp ? { pattern: { source: t.source, flags: t.flags } } : { text: t as string };
}

/**
 * Expectations are the checks Tab.expect(target) offers, after
 * Playwright's expect(locator). Each checks the page again and again
 * until it holds, or its timeout (default 5 s) passes: then it rejects
 * with an ExpectationError (code "expectation_failed") saying what was
 * expected and what was last seen. The checking happens in the app, so
 * one that holds at once costs what a reader does. A target not there
 * yet is waited for like the rest; a wrong kind of element (the value of
 * a link) rejects at once with "bad_target".
 *
 * ```ts
 * await tab.click({ role: "button", name: "Save" });
 * await tab.expect({ role: "status" }).toHaveText("Saved");
 * ```
 */
export class Expectations extends ExpectationCalls {
  readonly #tab: string;
  readonly #target: Target;
  readonly #not: boolean;

  /** Expectations on target in the tab with this ID; scripts get them from Tab.expect. */
  constructor(tab: string, target: Target, not = false) {
    super();
    this.#tab = tab;
    this.#target = target;
    this.#not = not;
  }

  /**
   * not is the same checks turned round: each waits until what it names
   * is not so (`tab.expect(t).not.toBeVisible()`), and fails saying what
   * it last saw while it still was.
   */
  get not(): Expectations {
    return new Expectations(this.#tab, this.#target, !this.#not);
  }

  /** check sends req, with the timeout of opts, for api. */
  protected async check(api: string, req: ExpectRequest, opts: unknown): Promise<void> {
    const { timeout } = expectOptions(api, opts, ["timeout", ...(req.kind.endsWith("checked") ? ["checked"] : [])]);
    if (timeout !== undefined) req.timeout = timeout as number;
    if (this.#not) req.not = true;
    await hostCall("tab", "expect", "tab.expect", this.#tab, this.#tab, this.#target, req).catch((e) => {
      throw asMatcherArgument(e, api, "tab.expect", req);
    });
  }

  /** toBeChecked expects the checkbox, switch or radio button to be checked (or, with checked: false, not). */
  async toBeChecked(opts: CheckedExpectOptions = {}): Promise<void> {
    const api = "tab.expect(…).toBeChecked";
    const { checked } = expectOptions(api, opts, ["timeout", "checked"]);
    if (checked !== undefined && typeof checked !== "boolean") {
      throw invalid(`${api}: checked must be true or false, got ${String(checked)}`);
    }
    await this.check(api, { kind: checked === false ? "unchecked" : "checked" }, opts);
  }

  /** toHaveCount expects count elements to match the target, hidden ones included, as Tab.count counts them. */
  async toHaveCount(count: number, opts: ExpectOptions = {}): Promise<void> {
    const api = "tab.expect(…).toHaveCount";
    await this.check(api, { kind: "count", count }, opts);
  }

  /**
   * toHaveAttribute expects the element to have the attribute name: with
   * value, a string it must equal or a RegExp it must match; without, it
   * need only be there.
   */
  async toHaveAttribute(name: string, value?: string | RegExp, opts: ExpectOptions = {}): Promise<void> {
    const api = "tab.expect(…).toHaveAttribute";
    const v = value === undefined ? {} : textOf(api, "the value", value);
    await this.check(api, { kind: "attribute", name, ...v }, opts);
  }
}

/**
 * asMatcherArgument words the host's refusal of one of req's fields as a
 * refusal of the matcher's own argument that held it: toHaveCount(1.5)
 * refuses argument 1 of tab.expect(…).toHaveCount, not options.count of
 * tab.expect, which the script never called. The matcher's arguments are
 * its values (an attribute's name before its value), then its options.
 */
function asMatcherArgument(e: unknown, api: string, wireApi: string, req: ExpectRequest): unknown {
  const refusal = e as { argument?: unknown; path?: unknown; details?: Record<string, unknown> };
  if (!(e instanceof TypeError || e instanceof RangeError)) return e;
  // The timeout's refusal names no path: it is the same for every call.
  const refused = typeof refusal.path === "string"
    ? refusal.path
    : e.message.startsWith(`${wireApi}: timeout `)
    ? ".timeout"
    : "";
  const field = /^\.(\w+)/.exec(refused)?.[1];
  const values = ["name" in req, "text" in req || "pattern" in req || "count" in req].filter(Boolean).length;
  const at: Record<string, number> = {
    text: values,
    pattern: values,
    count: values,
    timeout: values + 1,
    checked: values + 1,
  };
  if ("name" in req) at.name = 1;
  if (field === undefined || !(field in at)) return e;
  const argument = at[field], isOption = field === "timeout" || field === "checked";
  const said = [`${wireApi}: options${refused}`, `${wireApi}: ${field}`].find((w) => e.message.startsWith(w));
  const rest = said ? e.message.slice(said.length) : `: ${e.message}`;
  const path = isOption ? refused : refused.slice(1 + field.length);
  const what = isOption ? `options${path}` : `argument ${argument}${path ? ` (${path.replace(/^\./, "")})` : ""}`;
  const moved = new (e instanceof RangeError ? RangeError : TypeError)(`${api}: ${what}${rest}`, { cause: e });
  // The host call's stack is the script's line (see locate); this one's is the SDK's.
  const head = `${e.name}: ${e.message}`;
  if (e.stack?.startsWith(head)) moved.stack = `${moved.name}: ${moved.message}${e.stack.slice(head.length)}`;
  const details = { ...refusal.details, argument, path };
  return Object.assign(moved, e, details, { details });
}

/**
 * PageExpectations are the checks Tab.expectPage() offers on the page
 * itself, after Playwright's expect(page): they retry and fail as
 * Expectations do.
 *
 * ```ts
 * await tab.click({ role: "button", name: "Pay" });
 * await tab.expectPage().toHaveURL(/\/receipt\/\d+$/);
 * ```
 */
export class PageExpectations extends PageExpectationCalls {
  readonly #tab: string;
  readonly #not: boolean;

  /** Expectations on the page of the tab with this ID; scripts get them from Tab.expectPage. */
  constructor(tab: string, not = false) {
    super();
    this.#tab = tab;
    this.#not = not;
  }

  /** not is the same checks turned round, as Expectations.not. */
  get not(): PageExpectations {
    return new PageExpectations(this.#tab, !this.#not);
  }

  /** check sends req, with the timeout of opts, for api. */
  protected async check(api: string, req: ExpectRequest, opts: unknown): Promise<void> {
    const { timeout } = expectOptions(api, opts, ["timeout"]);
    if (timeout !== undefined) req.timeout = timeout as number;
    if (this.#not) req.not = true;
    await hostCall("tab", "expectPage", "tab.expectPage", this.#tab, this.#tab, req).catch((e) => {
      throw asMatcherArgument(e, api, "tab.expectPage", req);
    });
  }
}

// The checks and answers of the generated Tab methods (tab_gen.ts).

/** moved checks what a reload or history move answered: a response, or null for no entry. */
export function moved(api: string, r: unknown): NavigationResponse | null {
  if (r === null || r === undefined) return null;
  const { status, url } = r as Partial<NavigationResponse>;
  if (typeof status !== "number" || typeof url !== "string") {
    throw new TypeError(`${api}: the host answered with ${describeTarget(r)}, not a response`);
  }
  return { status, url };
}

/** response checks what a goto or reload answered: a response. */
export function response(api: string, r: unknown): NavigationResponse {
  const m = moved(api, r);
  if (m === null) throw new TypeError(`${api}: the host answered with ${describeTarget(r)}, not a response`);
  return m;
}

/** strings is a list the host answered, as strings. */
export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

/** orNull is a string the host answered, or null. */
export function orNull(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** tableRows is a table the host answered. */
export function tableRows(v: unknown): TableRows {
  const t = v as Partial<TableRows> | null | undefined;
  return { headers: t?.headers ?? [], rows: t?.rows ?? [] };
}

/** png is the screenshot the host answered, which must be bytes. */
export function png(api: string, v: unknown): Uint8Array {
  if (!(v instanceof Uint8Array)) throw new TypeError(`${api}: the host answered with something other than bytes`);
  return v;
}

/** pathList is setFiles' paths as the host takes them: one path is a list of one. */
export function pathList(paths: unknown): unknown {
  return typeof paths === "string" ? [paths] : paths;
}

/** A kind of JavaScript dialog a page can open. */
export type DialogType = "alert" | "confirm" | "prompt" | "beforeunload";

/**
 * How to answer a dialog: "accept" (OK; for beforeunload, leave the page),
 * "dismiss" (Cancel; stay), or an object, to give a prompt its text.
 */
export type DialogAnswer = "accept" | "dismiss" | DialogAnswerObject;

/** What Tab.onDialog takes: one answer for every dialog, or answers by type (others are dismissed). */
export type DialogPolicy = DialogAnswer | Partial<Record<DialogType, DialogAnswer>>;

/** Options of tabs.open. */
export type OpenOptions = Omit<OpenTabOptions, "seq">;

/** describeTarget writes a target the way error messages show it. */
function describeTarget(t: unknown): string {
  try {
    return JSON.stringify(t) ?? String(t);
  } catch {
    return String(t);
  }
}

/**
 * checkURL refuses what is no absolute URL, with code "invalid": the host
 * would refuse it as a navigation it blocks.
 */
export function checkURL(api: string, url: unknown): string {
  if (typeof url === "string" && !URL.canParse(url)) {
    throw invalid(`${api}: ${JSON.stringify(url)} is not an absolute URL (such as "https://example.com/")`);
  }
  return url as string;
}

/**
 * checkArg copies one tab.evaluate argument, refusing anything the page
 * could not receive as JSON (see jsonCopy). at starts with the argument's
 * index.
 */
function checkArg(api: string, v: unknown, at: (string | number)[], seen: Set<object>): unknown {
  return jsonCopy(v, at, seen, (at, what) => refuseArg(api, at, what), false);
}

/** refuseArg is checkArg's refusal of the value at at, which is what. */
function refuseArg(api: string, at: (string | number)[], what: string): Error {
  let path = `argument ${(at[0] as number) + 1}`;
  for (const k of at.slice(1)) path += typeof k === "number" ? `[${k}]` : `.${k}`;
  return invalid(
    `${api}: ${path} is ${what}, which cannot be sent to the page; ` +
      `pass JSON values (null, booleans, finite numbers, strings, arrays and plain objects)`,
  );
}

/** functionSource returns fn's source, refusing what cannot run in the page. */
function functionSource(api: string, fn: unknown): string {
  if (typeof fn !== "function") {
    throw invalid(
      `${api} needs a function, such as () => document.title, got ${typeof fn === "string" ? "a string" : typeof fn}`,
    );
  }
  const src = Function.prototype.toString.call(fn);
  if (/\{\s*\[native code\]\s*\}\s*$/.test(src)) {
    throw invalid(
      `${api}: a built-in or bound function has no source to send to the page; pass an arrow function`,
    );
  }
  if (/^class\b/.test(src)) throw invalid(`${api}: a class cannot run in the page; pass a function`);
  return src;
}

/** str reads an error property that should be a string. */
function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/**
 * browserError turns what a browser call rejected with into the SDK's typed
 * error: a host error carrying a string code becomes a TabError (or one of
 * its kinds), "not_granted" a NotGrantedError naming the permission key
 * (the host's permission property, else the capability's key). An argument
 * the host refused (code "invalid", or the bridge's own TypeError naming
 * the argument) is a TabError "invalid" whose details are the refusal's
 * fields (see ArgumentErrorDetails), the closest key said as "did you
 * mean". Anything else, such as a lost connection, is returned unchanged.
 */
export function browserError(e: unknown, api: string, cap: Capability, tab?: string): unknown {
  if (!(e instanceof Error) || e instanceof TabError || e instanceof NotGrantedError) return e;
  let code = (e as { code?: unknown }).code;
  if (code === undefined && e.name === "TypeError" && typeof (e as { argument?: unknown }).argument === "number") {
    // The bridge's decoding refused an argument of a method that words no
    // refusal of its own: as the host's refusals are.
    code = "invalid";
  }
  if (typeof code !== "string" || code === "") return e;
  if (code === "not_granted") {
    // The host names the key when it is not the capability's own (a file
    // outside read= for setFiles).
    const perm = str((e as { permission?: unknown }).permission) ?? PERMISSION_KEY[cap];
    return new NotGrantedError(api, cap, perm, { cause: e });
  }
  const details: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) {
    if (k !== "code") details[k] = v;
  }
  const init = { tab, details, cause: e };
  // The host names the API as the SDK does, which TabError adds itself.
  const message = e.message.startsWith(`${api}: `) ? e.message.slice(api.length + 2) : e.message;
  switch (code) {
    case "not_committed":
      return new NotCommittedError(api, message, str(details.kept), init);
    case "expectation_failed":
      return new ExpectationError(api, message, init);
    case "eval_error": {
      const num = (v: unknown) => typeof v === "number" ? v : 0;
      return new EvaluateError(api, message, {
        name: str(details.remoteName) ?? "",
        message: str(details.remoteMessage) ?? e.message,
        line: num(details.line),
        column: num(details.column),
      }, init);
    }
    case "invalid": {
      const near = str(details.closest);
      const words = message + (near ? `; did you mean "${near}"?` : "");
      // A refused argument is a TypeError (or RangeError) as the host sends it, with its fields.
      if (e.name === "TypeError" || e.name === "RangeError") {
        const Kind = e.name === "RangeError" ? RangeError : TypeError;
        return Object.assign(new Kind(`${api}: ${words}`, { cause: e }), details, { code, details });
      }
      return new TabError(code, api, words, init);
    }
    default:
      return new TabError(code, api, message, init);
  }
}

/** hostCall invokes cap.method on the host and maps its errors; the call leaves before hostCall returns. */
export async function hostCall<T>(
  cap: Capability,
  method: string,
  api: string,
  tab: string | undefined,
  ...args: unknown[]
) {
  // Made now, while the script's call is on the stack: the host's answer
  // comes later, off it.
  const at = new CallStack(hostCall);
  let rt: Runtime | undefined;
  try {
    rt = runtime();
    // The grant check names the script's API (tab.fill), not the host's (forms.fill).
    return await rt.watch(api, rt.capability(cap, api)[method](...rt.site(args, at)) as Promise<T>, at);
  } catch (e) {
    const err = locate(browserError(e, api, cap, tab), at);
    throw rt ? rt.thrown(err) : err;
  }
}

function toTab(api: string, info: unknown): Tab {
  const id = (info as Partial<TabInfo> | null)?.id;
  if (typeof id !== "string" || id === "") {
    throw new TypeError(`${api}: the host answered with ${describeTarget(info)}, which is not a tab`);
  }
  return new Tab(id);
}

function toTabs(api: string, infos: unknown): Tab[] {
  if (infos === null || infos === undefined) return [];
  if (!Array.isArray(infos)) throw new TypeError(`${api}: the host answered with ${describeTarget(infos)}, not a list`);
  return infos.map((i) => toTab(api, i));
}

/**
 * Tab is a handle on one browser tab. Its id stays the same for the tab's
 * lifetime, across navigations; url() and title() read the tab as it is
 * now. Every method asks the host, which checks the script's grants first:
 * reading (text, value, attribute, checked, visible, count) and navigating
 * need browser; the form actions, setFiles and onDialog need forms; and
 * evaluate needs page-js. Every call that looks into the page also needs
 * it to be on one of the script's sites=, if it lists any.
 *
 * Failures are typed: a TabError (or NotCommittedError, EvaluateError)
 * whose code says what went wrong, or a NotGrantedError.
 *
 * A tab the script opened closes when the run ends; `await using` closes it
 * sooner:
 *
 * ```ts
 * await using tab = await tabs.open("https://example.com/", { background: true });
 * console.log(await tab.title());
 * ```
 */
export class Tab extends TabCalls implements AsyncDisposable {
  /** The tab's ID, stable for the tab's lifetime. */
  readonly id: string;
  #closed = false;

  /** A handle on the tab with this ID, as tabs.* return them. */
  constructor(id: string) {
    super();
    if (typeof id !== "string" || id === "") throw new TypeError("a tab needs a non-empty id");
    this.id = id;
  }

  /**
   * waitForURL resolves once the tab's address matches url, and the page
   * there has loaded (see waitUntil); at once when it matches already.
   * A string is the whole address, where * stands for any run of
   * characters but a slash and ** for any run ("https://shop.example/**"); a
   * RegExp need only match somewhere, and is matched in the app (no
   * lookaround or backreferences). It rejects with code "timeout" after
   * the timeout (default the host's, 30 s), saying the address last seen.
   */
  async waitForURL(url: string | RegExp, opts: NavigationOptions = {}): Promise<void> {
    const api = "tab.waitForURL";
    const m = textOf(api, "the URL", url);
    const req: URLMatchRequest = m.pattern ? { pattern: m.pattern } : { url: m.text };
    await hostCall("tab", "waitForURL", api, this.id, this.id, req, opts);
  }

  /**
   * waitForNavigation resolves once the tab's next navigation has loaded.
   * The host starts watching when it is called, so call it before the
   * action that navigates, and await it after:
   *
   * ```ts
   * const nav = tab.waitForNavigation();
   * await tab.click({ role: "link", name: "Next" });
   * await nav;
   * ```
   *
   * Calling it after the click can miss a fast navigation. A rejection
   * that arrives before the promise is awaited is not reported as
   * unhandled: it is thrown where the promise is awaited.
   */
  waitForNavigation(opts: NavigationOptions = {}): Promise<void> {
    const api = "tab.waitForNavigation";
    const p = hostCall<unknown>("tab", "waitForNavigation", api, this.id, this.id, opts).then(() => {});
    p.catch(() => {});
    return p;
  }

  /**
   * waitForDownload runs action, saves the file the tab's page downloads
   * meanwhile where opts.path says, and resolves to its name, size and
   * path. The host saves it, not the script, and only under one of the
   * script's write= grants (code "not_granted" otherwise, before action
   * runs); a name the page suggests becomes one safe file name in that
   * folder, and a file already there is replaced only with
   * { overwrite: true }. Downloads at any other time, or of other tabs,
   * are refused.
   *
   * ```ts
   * // @permissions browser forms write=reports
   * const file = await tab.waitForDownload(
   *   () => tab.click({ role: "link", name: "Export CSV" }),
   *   { path: "reports/" },
   * );
   * console.log(file.name, file.size);
   * ```
   *
   * It rejects with code "timeout" when no download begins and completes
   * in time, and "limit_exceeded" for a file over the app's limit.
   */
  async waitForDownload(action: () => unknown, opts: DownloadOptions): Promise<DownloadResult> {
    const api = "tab.waitForDownload";
    if (typeof action !== "function") {
      throw invalid(`${api}: the first argument is the action that downloads, a function`);
    }
    // The host watches before the action runs, so no download is missed.
    const ticket = await hostCall<string>("tab", "expectDownload", api, this.id, this.id, opts);
    const saved = (r: Partial<DownloadResult> | null) => ({
      name: String(r?.name ?? ""),
      size: Number(r?.size ?? 0),
      path: String(r?.path ?? ""),
    });
    try {
      await action();
    } catch (e) {
      // The host still saves a download the action began before it
      // failed (a goto to the file's address fails: a download is no page).
      const r = await hostCall<Partial<DownloadResult> | null>(
        "tab",
        "waitForDownload",
        api,
        this.id,
        this.id,
        ticket,
        true,
      )
        .catch(() => null);
      if (r === null || r === undefined) throw e;
      return saved(r);
    }
    return saved(
      await hostCall<Partial<DownloadResult> | null>("tab", "waitForDownload", api, this.id, this.id, ticket, false),
    );
  }

  /**
   * waitFor resolves once an element matches the CSS selector, or once the
   * target names a visible element (as visible() reports it); it rejects
   * with code "timeout" otherwise, saying what it last saw. opts.state
   * waits for something else, as Playwright's locator.waitFor does:
   * "hidden" (none matches, or every match is hidden), "attached" (some
   * element matches, shown or hidden) or "detached" (none matches). A
   * selector with a state is waited for as { selector }.
   *
   * ```ts
   * await tab.waitFor({ role: "dialog" }, { state: "hidden", timeout: 3000 });
   * ```
   */
  async waitFor(what: string | Target, opts: WaitForOptions = {}): Promise<void> {
    const api = "tab.waitFor";
    await hostCall("tab", "waitFor", api, this.id, this.id, what, opts);
  }

  /**
   * expect returns the retrying checks on the target (see Expectations):
   *
   * ```ts
   * await tab.expect({ role: "status" }).toHaveText("Saved");
   * await tab.expect({ selector: ".row" }).toHaveCount(3, { timeout: 10_000 });
   * ```
   *
   * A target that is not one throws a TypeError here, at once.
   */
  expect(target: Target): Expectations {
    return new Expectations(this.id, target);
  }

  /**
   * expectPage returns the retrying checks on the page itself, its
   * address and title (see PageExpectations):
   *
   * ```ts
   * await tab.expectPage().toHaveTitle("Order placed");
   * await tab.expectPage().not.toHaveURL(/\/login/);
   * ```
   */
  expectPage(): PageExpectations {
    return new PageExpectations(this.id);
  }

  /**
   * evaluate runs fn inside the page (its main world: the page's own
   * globals are visible) with args, and returns what fn returns or
   * resolves to. Needs page-js.
   *
   * fn travels as source text, so it cannot use anything from the script's
   * scope: pass what it needs as args. args and the result travel by value
   * and must be JSON values. If fn throws, the call rejects with an
   * EvaluateError (code "eval_error") carrying the page's error.
   *
   * ```ts
   * const n = await tab.evaluate((sel) => document.querySelectorAll(sel).length, "a[href]");
   * ```
   */
  // deno-lint-ignore no-explicit-any
  async evaluate<A extends any[], R>(fn: (...args: A) => R, ...args: A): Promise<Awaited<R>> {
    const api = "tab.evaluate";
    const source = functionSource(api, fn);
    const seen = new Set<object>();
    const values = args.map((a, i) => checkArg(api, a, [i], seen));
    return await hostCall<Awaited<R>>("pageJs", "evaluate", api, this.id, this.id, source, values);
  }

  /**
   * select chooses option, by its label or value, in a <select>, or in a
   * custom dropdown described by opts.parts, and resolves to the label the
   * page shows. With a list of options the target must be a
   * <select multiple>: exactly those options end up selected, and it
   * resolves to their labels. An option that is not there rejects with
   * code "no_option". Needs forms.
   */
  select(target: Target, option: string, opts?: FormOptions): Promise<string>;
  select(target: Target, options: string[], opts?: FormOptions): Promise<string[]>;
  async select(target: Target, option: string | string[], opts: FormOptions = {}): Promise<string | string[]> {
    const api = "tab.select";
    const answer = await hostCall<unknown>("forms", "select", api, this.id, this.id, target, option, opts);
    if (Array.isArray(option)) return Array.isArray(answer) ? answer.map(String) : [];
    return typeof answer === "string" ? answer : "";
  }

  /**
   * onDialog sets how this tab answers the page's alert, confirm, prompt
   * and beforeunload dialogs from now on. Every dialog is answered at
   * once, so none leaves a call waiting; by default each is dismissed
   * (Cancel, or stay on the page). Pass one answer for all, or answers by
   * type; types left out are dismissed:
   *
   * ```ts
   * await tab.onDialog({ confirm: "accept", prompt: { accept: true, promptText: "Ada" } });
   * ```
   *
   * A dialog on a page outside sites= is dismissed whatever the answer.
   * Each answer is logged with the dialog's type and the start of its
   * message. Needs forms.
   */
  async onDialog(answer: DialogPolicy): Promise<void> {
    const api = "tab.onDialog";
    await hostCall("forms", "onDialog", api, this.id, this.id, answer);
  }

  /** close closes the tab. */
  async close(): Promise<void> {
    await hostCall("tab", "close", "tab.close", this.id, this.id);
    this.#closed = true;
  }

  /**
   * Closes the tab at the end of an `await using` block, unless it was
   * closed already (by close(), the user or the page).
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    try {
      await this.close();
    } catch (e) {
      if (e instanceof TabError && (e.code === "closed" || e.code === "not_found")) return;
      throw e;
    }
  }
}

// openSeq numbers background opens in the order the script made them: the
// host runs calls concurrently, so it uses this number to keep its queue of
// background tabs in the script's order.
let openSeq = 0;

/**
 * The browser's tabs. Needs the browser permission (forms and page-js
 * include it). Each method returns Tab handles.
 */
export const tabs = {
  /** active returns the tab the user is looking at. */
  async active(): Promise<Tab> {
    return toTab("tabs.active", await hostCall("tabs", "active", "tabs.active", undefined));
  },
  /** find returns the tabs whose URL or title contains pattern. */
  async find(pattern: string): Promise<Tab[]> {
    const api = "tabs.find";
    return toTabs(api, await hostCall("tabs", "find", api, undefined, pattern));
  },
  /** all returns every tab. */
  async all(): Promise<Tab[]> {
    return toTabs("tabs.all", await hostCall("tabs", "all", "tabs.all", undefined));
  },
  /**
   * open loads url in a new tab and returns it. A background tab does not
   * take the user's focus; the host runs a few at a time and queues the
   * rest. Every tab a run opens is closed when the run ends.
   */
  async open(url: string, opts: OpenOptions = {}): Promise<Tab> {
    const api = "tabs.open";
    checkURL(api, url);
    // seq numbers a background open for the host's queue; the rest is the script's, for the host to check.
    const o = opts as Record<string, unknown> | null | undefined;
    const sent = o?.background === true ? { ...o, seq: openSeq++ } : opts;
    return toTab(api, await hostCall("tabs", "open", api, undefined, url, sent));
  },
  /** triggered returns the tab that started this run, or undefined when the run was not started from a tab. */
  async triggered(): Promise<Tab | undefined> {
    const info = await hostCall("tabs", "triggered", "tabs.triggered", undefined);
    return info === null || info === undefined ? undefined : toTab("tabs.triggered", info);
  },
};
