// The app's header and sites= rules, for the offline fake host: the one
// TypeScript statement of what permissions.Parse and cdp.SiteAllowed decide
// in Go. The Go test TestTypeScriptRulesAgree runs both over the committed
// fuzz corpora and fails on any disagreement, so change them together.
// importRefusal states which imports a run may load (the runner's
// module-graph check and the deno flags it computes);
// TestFakeHostRefusesImportsAsTheAppDoes holds it to the app.

import type { Capability } from "./runtime.ts";
import { cleanPath, dirPath, isWindowsPath, pathContains } from "./path.ts";

/** WINDOWS: the app reads paths as Windows does, as Go's runtime.GOOS tells it. */
const WINDOWS = Deno.build.os === "windows";

/** The kinds of header problems, as permissions.ParseError.Kind names them. */
export type HeaderErrorKind =
  | "no_header"
  | "syntax"
  | "unknown_key"
  | "bad_value"
  | "blanket_path"
  | "reserved"
  | "duplicate"
  | "timeout";

/**
 * HeaderError is the app's refusal of a script's header: where, and how to
 * fix it. It is a TypeError, as a bad option of the fake host is.
 */
export class HeaderError extends TypeError {
  override name = "HeaderError";
  readonly code = "refused";
  /** The 1-based line and column (in characters); 0 when the header is missing. */
  readonly line: number;
  readonly column: number;
  readonly kind: HeaderErrorKind;
  constructor(kind: HeaderErrorKind, msg: string, line = 0, column = 0) {
    super(line === 0 ? msg : `line ${line}, column ${column}: ${msg}`);
    this.kind = kind;
    this.line = line;
    this.column = column;
  }
}

/** A script's validated header, as the app reads it. Lists are sorted and free of duplicates. */
export interface Header {
  none: boolean;
  browser: boolean;
  clipboard: boolean;
  forms: boolean;
  pageJs: boolean;
  sites: string[];
  net: string[];
  import: string[];
  run: string[];
  env: string[];
  /** read= and write= grants, resolved against the script's real directory. */
  read: string[];
  write: string[];
  /** The run's time limit in ms; null for "@timeout none". */
  timeoutMs: number | null;
}

/** The time limit of a run whose header declares none: 10 minutes. */
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const MIN_TIMEOUT_MS = 1000;
const MAX_TIMEOUT_MS = 24 * 3600_000;

const BARE = ["none", "browser", "clipboard", "forms", "page-js"];
const VALUED = ["sites", "net", "import", "run", "read", "write", "env"];

/** capabilities lists the host APIs a run with header h gets, sorted, as Header.Capabilities does. */
export function capabilities(h: Header): Capability[] {
  const caps = new Set<Capability>(["ui", "config", "context", "paneControls"]);
  if (h.browser) caps.add("tabs").add("tab").add("workspace");
  if (h.forms) caps.add("forms").add("tabs").add("tab");
  if (h.pageJs) caps.add("pageJs").add("tabs").add("tab");
  if (h.clipboard) caps.add("clipboard");
  return [...caps].sort(cmp);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * decodeUTF8 decodes bytes the way Go reads a string: each byte of an
 * invalid sequence becomes one U+FFFD, so columns count as the app's do.
 */
export function decodeUTF8(b: Uint8Array): string {
  let out = "";
  for (let i = 0; i < b.length;) {
    const c = b[i];
    let n = 0, cp = 0, lo = 0x80, hi = 0xbf;
    if (c < 0x80) [n, cp] = [1, c];
    else if (c >= 0xc2 && c <= 0xdf) [n, cp] = [2, c & 0x1f];
    else if (c >= 0xe0 && c <= 0xef) {
      [n, cp] = [3, c & 0x0f];
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      [n, cp] = [4, c & 0x07];
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    }
    let ok = n > 0 && i + n <= b.length;
    for (let k = 1; ok && k < n; k++) {
      const x = b[i + k];
      if (x < (k === 1 ? lo : 0x80) || x > (k === 1 ? hi : 0xbf)) ok = false;
      else cp = (cp << 6) | (x & 0x3f);
    }
    if (!ok) {
      out += "\uFFFD";
      i++;
      continue;
    }
    out += String.fromCodePoint(cp);
    i += n;
  }
  return out;
}

interface Line {
  text: string;
  num: number;
}

function splitLines(s: string): Line[] {
  const out: Line[] = [];
  let start = 0, n = 1;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\n" || c === "\r" || c === "\u2028" || c === "\u2029") {
      out.push({ text: s.slice(start, i), num: n++ });
      if (c === "\r" && s[i + 1] === "\n") i++;
      start = i + 1;
    }
  }
  out.push({ text: s.slice(start), num: n });
  return out;
}

const JS_SPACE = /^[\t\v\f \uFEFF\p{Zs}]/u;
const GO_SPACE = /^\p{White_Space}/u;

function trimLeft(s: string, re: RegExp): string {
  let i = 0;
  while (i < s.length) {
    const ch = String.fromCodePoint(s.codePointAt(i)!);
    if (!re.test(ch)) break;
    i += ch.length;
  }
  return s.slice(i);
}

function runes(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function errAt(l: Line, off: number, kind: HeaderErrorKind, msg: string): HeaderError {
  return new HeaderError(kind, msg, l.num, runes(l.text.slice(0, off)) + 1);
}

function directiveName(s: string): { name: string; off: number } | undefined {
  const t = trimLeft(s, JS_SPACE);
  if (!t.startsWith("//")) return undefined;
  let off = s.length - t.length + 2;
  const body = s.slice(off);
  const trimmed = body.replace(/^[ \t]+/, "");
  off += body.length - trimmed.length;
  if (!trimmed.startsWith("@")) return undefined;
  const m = /\p{White_Space}/u.exec(trimmed);
  return { name: m ? trimmed.slice(0, m.index) : trimmed, off };
}

// foldEqual is Go's strings.EqualFold, close enough for directive and key names.
function foldEqual(a: string, b: string): boolean {
  const ra = [...a], rb = [...b];
  if (ra.length !== rb.length) return false;
  return ra.every((c, i) => c === rb[i] || lower(c) === lower(rb[i]) || c.toUpperCase() === rb[i].toUpperCase());
}

// lower is Go's unicode.ToLower of one character.
function lower(c: string): string {
  const l = c.toLowerCase();
  return [...l].length === 1 ? l : String.fromCodePoint(l.codePointAt(0)!);
}

function goLower(s: string): string {
  let out = "";
  for (const c of s) out += lower(c);
  return out;
}

function editDistance(a: string, b: string): number {
  const ra = [...a], rb = [...b];
  if (ra.length > 64 || rb.length > 64) return 64;
  const d = Array.from({ length: ra.length + 1 }, (_, i) => [i, ...Array(rb.length).fill(0)]);
  for (let j = 0; j <= rb.length; j++) d[0][j] = j;
  for (let i = 1; i <= ra.length; i++) {
    for (let j = 1; j <= rb.length; j++) {
      const cost = ra[i - 1] === rb[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && ra[i - 1] === rb[j - 2] && ra[i - 2] === rb[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[ra.length][rb.length];
}

/**
 * parseHeader reads a script's header as the app does before every run and
 * returns what it declares, or throws the HeaderError the app refuses the
 * run with. scriptPath is the script's absolute path; read= and write=
 * resolve against its directory, following symlinks (so it reads the file
 * system, as the app does).
 */
export function parseHeader(src: string, scriptPath: string): Header {
  // Either form, on any system: the fake host's tests name made-up folders.
  if (!scriptPath.startsWith("/") && !isWindowsPath(scriptPath)) {
    throw new HeaderError("syntax", `script path "${scriptPath}" is not absolute`);
  }
  const lexDir = dirPath(cleanPath(scriptPath));
  let realDir: string;
  try {
    realDir = realpath(lexDir);
  } catch (e) {
    throw new HeaderError("syntax", `cannot resolve the script's directory: ${(e as Error).message}`);
  }
  const h: Header = {
    none: false,
    browser: false,
    clipboard: false,
    forms: false,
    pageJs: false,
    sites: [],
    net: [],
    import: [],
    run: [],
    env: [],
    read: [],
    write: [],
    timeoutMs: DEFAULT_TIMEOUT_MS,
  };
  const lines = splitLines(src.replace(/^\uFEFF/, ""));
  let i = lines.length > 0 && lines[0].text.startsWith("#!") ? 1 : 0;
  let perm: { l: Line; off: number } | undefined, timeout: { l: Line; off: number } | undefined;
  let codeAt = -1;
  for (; i < lines.length; i++) {
    const l = lines[i];
    const t = trimLeft(l.text, JS_SPACE);
    if (t === "") continue;
    if (!t.startsWith("//")) {
      codeAt = i;
      break;
    }
    const d = directiveName(l.text);
    if (!d) continue;
    if (d.name === "@permissions") {
      if (perm) {
        throw errAt(
          l,
          d.off,
          "duplicate",
          `@permissions appears twice (first on line ${perm.l.num}); merge them into one line`,
        );
      }
      perm = { l, off: d.off };
    } else if (d.name === "@timeout") {
      if (timeout) {
        throw errAt(l, d.off, "duplicate", `@timeout appears twice (first on line ${timeout.l.num}); keep one`);
      }
      timeout = { l, off: d.off };
    } else {
      for (const dir of ["@permissions", "@timeout"]) {
        if (foldEqual(d.name, dir) || editDistance(d.name, dir) <= 2) {
          throw errAt(l, d.off, "syntax", `unknown directive "${d.name}", did you mean "${dir}"?`);
        }
      }
    }
  }
  if (!perm) {
    if (codeAt >= 0) {
      for (const l of lines.slice(codeAt)) {
        const d = directiveName(l.text);
        if (d?.name === "@permissions") {
          throw errAt(
            l,
            d.off,
            "no_header",
            `this @permissions line comes after code (line ${
              lines[codeAt].num
            }), so it is not a header; move it into the comment block at the very top of the script`,
          );
        }
      }
    }
    throw new HeaderError(
      "no_header",
      'no @permissions header: add a comment at the very top of the script, for example "// @permissions none"',
    );
  }
  permissions(h, perm.l, perm.off, lexDir, realDir);
  if (timeout) h.timeoutMs = timeoutOf(timeout.l, timeout.off);
  return h;
}

function checkChars(l: Line): void {
  let i = 0;
  for (const r of l.text) {
    if (r !== "\t" && r !== " ") {
      if (r === "\uFFFD") throw errAt(l, i, "syntax", "the header is not valid UTF-8");
      if (/\p{Cc}|\p{Cf}/u.test(r)) {
        throw errAt(l, i, "syntax", `invisible character ${uplus(r)} in the header; remove it`);
      }
      if (GO_SPACE.test(r)) {
        throw errAt(l, i, "syntax", `unusual space character ${uplus(r)} in the header; use plain spaces`);
      }
    }
    i += r.length;
  }
}

function uplus(r: string): string {
  return "U+" + r.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
}

interface Token {
  raw: string;
  off: number;
}

function tokenize(l: Line, start: number): Token[] {
  const s = l.text;
  const out: Token[] = [];
  let i = start;
  while (i < s.length) {
    if (s[i] === " " || s[i] === "\t") {
      i++;
      continue;
    }
    const begin = i;
    let inQuote = false, quoteAt = 0;
    while (i < s.length && (inQuote || (s[i] !== " " && s[i] !== "\t"))) {
      if (inQuote && s[i] === "\\" && i + 1 < s.length) i++;
      else if (s[i] === '"') [inQuote, quoteAt] = [!inQuote, i];
      i++;
    }
    if (inQuote) throw errAt(l, quoteAt, "syntax", 'this quote is never closed; end the value with "');
    out.push({ raw: s.slice(begin, i), off: begin });
  }
  return out;
}

function splitValues(l: Line, t: Token, skip: number): Token[] {
  const raw = t.raw.slice(skip), base = t.off + skip;
  const out: Token[] = [];
  let start = 0, inQuote = false;
  const flush = (end: number) => {
    let text = raw.slice(start, end);
    const off = base + start;
    if (text === "") throw errAt(l, off, "bad_value", "empty value; remove the extra comma or give a value");
    if (text.includes('"')) {
      if (text.length < 2 || text[0] !== '"' || text.at(-1) !== '"') {
        throw errAt(l, off, "syntax", 'a quoted value must be quoted as a whole, like read="my notes.txt"');
      }
      text = text.slice(1, -1).replace(/\\(["\\])/g, "$1");
      if (text === "") throw errAt(l, off, "bad_value", "empty value; give a value inside the quotes");
    }
    out.push({ raw: text, off });
  };
  for (let i = 0; i < raw.length; i++) {
    if (inQuote && raw[i] === "\\" && i + 1 < raw.length) i++;
    else if (raw[i] === '"') inQuote = !inQuote;
    else if (raw[i] === "," && !inQuote) {
      flush(i);
      start = i + 1;
    }
  }
  flush(raw.length);
  return out;
}

// DURATION is Go's time.ParseDuration syntax.
const DURATION = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  "μs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3600_000,
};

function timeoutOf(l: Line, off: number): number | null {
  checkChars(l);
  const toks = tokenize(l, off + "@timeout".length);
  if (toks.length !== 1) {
    throw errAt(l, off, "timeout", "@timeout takes one value: a duration such as 90s, 15m or 2h, or none");
  }
  const t = toks[0];
  if (t.raw === "none") return null;
  let ms: number;
  if (/^[-+]?0$/.test(t.raw)) ms = 0;
  else if (DURATION.test(t.raw)) {
    ms = 0;
    for (const m of t.raw.matchAll(/(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)/g)) ms += Number(m[1]) * UNIT_MS[m[2]];
    if (t.raw.startsWith("-")) ms = -ms;
    if (Math.abs(ms) * 1e6 > 2 ** 63) throw errAt(l, t.off, "timeout", `@timeout "${t.raw}" is not a duration`);
  } else if (/^[0-9]*$/.test(t.raw)) {
    throw errAt(l, t.off, "timeout", `@timeout ${t.raw} has no unit; write ${t.raw}s, ${t.raw}m or ${t.raw}h`);
  } else {
    throw errAt(l, t.off, "timeout", `@timeout "${t.raw}" is not a duration; write one like 90s, 15m or 2h, or none`);
  }
  if (ms < MIN_TIMEOUT_MS) {
    throw errAt(l, t.off, "timeout", `@timeout ${t.raw} is below the minimum of 1s; write none for no limit`);
  }
  if (ms > MAX_TIMEOUT_MS) {
    throw errAt(l, t.off, "timeout", `@timeout ${t.raw} is above the maximum of 24h; write none`);
  }
  return ms;
}

function permissions(h: Header, l: Line, off: number, lexDir: string, realDir: string): void {
  checkChars(l);
  const toks = tokenize(l, off + "@permissions".length);
  if (toks.length === 0) {
    throw errAt(
      l,
      off,
      "syntax",
      '@permissions is empty; write "@permissions none" if the script needs nothing beyond its sandbox',
    );
  }
  const seen = new Map<string, number>(); // key → column of its first appearance
  for (const t of toks) token(h, l, t, seen, lexDir, realDir);
  if (seen.has("none") && seen.size > 1) {
    const t = toks.find((t) => t.raw.split("=")[0] !== "none")!;
    throw errAt(
      l,
      t.off,
      "syntax",
      `none must stand alone, but "${t.raw}" is also declared; remove none or the other grants`,
    );
  }
  if (h.sites.length > 0 && !h.browser && !h.forms && !h.pageJs) {
    throw new HeaderError(
      "bad_value",
      "sites= scopes what the script does in browser tabs, and none of browser, forms or page-js is declared; add one, or remove sites=",
      l.num,
      seen.get("sites")!,
    );
  }
  for (const k of ["sites", "net", "import", "run", "env", "read", "write"] as const) {
    h[k] = [...new Set(h[k])].sort(cmp);
  }
}

function token(h: Header, l: Line, t: Token, seen: Map<string, number>, lexDir: string, realDir: string): void {
  const eq = t.raw.indexOf("=");
  const key = eq < 0 ? t.raw : t.raw.slice(0, eq);
  const col = runes(l.text.slice(0, t.off)) + 1;
  if (BARE.includes(key)) {
    if (eq >= 0) throw errAt(l, t.off, "bad_value", `${key} takes no value; write just ${key}`);
    if (key === "none" && seen.has(key)) throw errAt(l, t.off, "syntax", "none appears twice; write it once");
    seen.set(key, col);
    if (key === "none") h.none = true;
    else if (key === "page-js") h.pageJs = true;
    else h[key as "browser" | "clipboard" | "forms"] = true;
    return;
  }
  if (t.raw.startsWith("=")) {
    throw errAt(l, t.off, "syntax", "write a key and its value with no spaces around =, like net=api.example.com");
  }
  if (!VALUED.includes(key)) {
    const parts = key.split(",");
    if (parts.length > 1 && parts.some((p) => BARE.includes(p) || VALUED.includes(p))) {
      throw errAt(l, t.off, "syntax", `separate keys with spaces, not commas: ${parts.join(" ")}`);
    }
    throw errAt(l, t.off, "unknown_key", `unknown permission "${key}"`);
  }
  if (eq < 0) throw errAt(l, t.off, "bad_value", `${key} needs a value`);
  if (!seen.has(key)) seen.set(key, col);
  for (const v of splitValues(l, t, key.length + 1)) {
    const fail = (kind: HeaderErrorKind, msg: string) => errAt(l, v.off, kind, msg);
    switch (key) {
      case "net":
      case "import":
      case "sites": {
        const r = parseHost(v.raw, key);
        if (typeof r !== "string") throw fail("bad_value", r.msg);
        h[key].push(r);
        break;
      }
      case "env": {
        const msg = checkEnv(v.raw);
        if (msg) throw fail(msg[0], msg[1]);
        h.env.push(v.raw);
        break;
      }
      case "run": {
        const msg = checkRun(v.raw);
        if (msg) throw fail("bad_value", msg);
        h.run.push(isAbs(v.raw) ? cleanPath(v.raw) : v.raw);
        break;
      }
      default: {
        const r = resolveGrant(key, v.raw, lexDir, realDir);
        if (typeof r !== "string") throw fail(r.kind, r.msg);
        h[key as "read" | "write"].push(r);
      }
    }
  }
}

function parseHost(v: string, key: string): string | { msg: string } {
  const bad = (msg: string) => ({ msg });
  if (v.includes("://")) return bad(`${key}= takes a host, not a URL`);
  if (v === "*") return bad(`${key}=* would allow every host; list the hosts`);
  if (/[/?#]/.test(v)) return bad(`${key}= takes a host without a path`);
  if (v.includes("@")) return bad(`${key}= takes a host without a user name`);
  for (const r of v) {
    const c = r.codePointAt(0)!;
    if (c > 0x7e || c <= 0x20) return bad(`"${v}" contains characters outside plain ASCII`);
  }
  let host = v, port = "";
  if (v.startsWith("[")) {
    const end = v.indexOf("]");
    if (end < 0) return bad(`"${v}" opens [ but never closes it`);
    const inner = v.slice(1, end), rest = v.slice(end + 1);
    if (inner.includes("%")) return bad(`"${v}" has a zone id`);
    const addr = parseIPv6(inner);
    if (!addr) return bad(`"${v}" is not an IPv6 address in brackets`);
    if (rest !== "") {
      if (!rest.startsWith(":")) return bad(`"${v}" has text after ]`);
      if (rest === ":") return bad(`"${v}" ends with : but gives no port`);
      port = rest.slice(1);
    }
    host = formatIPv6(addr);
  } else {
    if (v.split(":").length > 2) return bad(`"${v}" has more than one colon`);
    const i = v.indexOf(":");
    if (i >= 0) {
      [host, port] = [v.slice(0, i), v.slice(i + 1)];
      if (port === "") return bad(`"${v}" ends with : but gives no port`);
    }
  }
  if (host === "") return bad(`"${v}" has no host`);
  if (port !== "") {
    if (!/^[0-9]+$/.test(port) || Number(port) < 1 || Number(port) > 65535) return bad(`"${port}" is not a port`);
    port = String(Number(port));
  }
  if (!host.startsWith("[")) {
    const r = checkHostname(host.toLowerCase());
    if (typeof r !== "string") return r;
    host = r;
  }
  return port !== "" ? `${host}:${port}` : host;
}

function checkHostname(h: string): string | { msg: string } {
  const v4 = parseIPv4(h);
  if (v4) return v4.join(".");
  const last = h.slice(h.lastIndexOf(".") + 1) || (h.replace(/\.$/, "").split(".").at(-1) ?? "");
  if (last.startsWith("0x") ? /^[0-9a-f]*$/.test(last.slice(2)) : /^[0-9]+$/.test(last)) {
    return { msg: `"${h}" reads as a numeric address in an unusual form` };
  }
  if (h.endsWith(".")) return { msg: "drop the trailing dot" };
  let name = h;
  if (h.startsWith("*.")) {
    name = h.slice(2);
    if (!name.includes(".") && name !== "localhost") return { msg: `"${h}" would cover a whole top-level domain` };
  }
  if (name.includes("*")) return { msg: `"${h}": * may only open a name` };
  if (name.length > 253) return { msg: `"${h}" is longer than a hostname can be` };
  for (const label of name.split(".")) {
    if (!/^[a-z0-9_-]{1,63}$/.test(label) || label.startsWith("-") || label.endsWith("-")) {
      return { msg: `"${h}" is not a valid hostname` };
    }
  }
  return h;
}

// parseIPv4 is netip's strict dotted-decimal form: four fields, no leading zeros.
function parseIPv4(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out.push(Number(p));
  }
  return out;
}

/** parseIPv6 is netip.ParseAddr for IPv6 without a zone: eight 16-bit groups, or undefined. */
function parseIPv6(s: string): number[] | undefined {
  const groups: number[] = [];
  let ellipsis = -1, i = 0;
  if (s.startsWith("::")) {
    ellipsis = 0;
    i = 2;
    if (s.length === 2) return Array(8).fill(0);
  } else if (s.startsWith(":")) return undefined;
  while (i < s.length) {
    const m = /^[0-9a-fA-F]{1,4}/.exec(s.slice(i));
    if (!m) return undefined;
    const rest = s.slice(i + m[0].length);
    if (rest.startsWith(".")) {
      // An IPv4 tail takes the last two groups.
      const v4 = parseIPv4(s.slice(i));
      if (!v4 || groups.length > 6) return undefined;
      groups.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      i = s.length;
      break;
    }
    groups.push(parseInt(m[0], 16));
    i += m[0].length;
    if (i === s.length) break;
    if (s[i] !== ":" || groups.length === 8) return undefined;
    i++;
    if (s[i] === ":") {
      if (ellipsis >= 0) return undefined;
      ellipsis = groups.length;
      i++;
      if (i === s.length) break;
    } else if (i === s.length) return undefined;
  }
  if (ellipsis < 0) return groups.length === 8 ? groups : undefined;
  if (groups.length >= 8) return undefined;
  return [...groups.slice(0, ellipsis), ...Array(8 - groups.length).fill(0), ...groups.slice(ellipsis)];
}

// formatIPv6 is netip's String: an IPv4-mapped address as IPv4, else RFC 5952 in brackets.
function formatIPv6(g: number[]): string {
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return [g[6] >> 8, g[6] & 255, g[7] >> 8, g[7] & 255].join(".");
  }
  let best = -1, bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j + 1;
  }
  const hex = g.map((x) => x.toString(16));
  if (best < 0) return `[${hex.join(":")}]`;
  return `[${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}]`;
}

const RESERVED_ENV_PREFIXES = ["TRANQUIL_", "DENO_", "LD_", "DYLD_", "NPM_CONFIG_", "RUST_"];
const RESERVED_ENV_NAMES = [
  "SSLKEYLOGFILE",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "NODE_OPTIONS",
  "NODE_TLS_REJECT_UNAUTHORIZED",
];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkEnv(name: string): [HeaderErrorKind, string] | undefined {
  if (name === "*") return ["bad_value", "env=* would expose every variable; name them, or use a prefix such as AWS_*"];
  const wildcard = name.endsWith("*");
  const prefix = wildcard ? name.slice(0, -1) : name;
  if (!ENV_NAME.test(prefix)) return ["bad_value", `"${name}" is not a variable name`];
  const up = prefix.toUpperCase();
  for (const r of RESERVED_ENV_PREFIXES) {
    if (up.startsWith(r) || (wildcard && r.startsWith(up))) return ["reserved", `env=${name} is reserved`];
  }
  for (const r of RESERVED_ENV_NAMES) {
    if (up === r || (wildcard && r.startsWith(up))) return ["reserved", `env=${name} is reserved`];
  }
  return undefined;
}

function checkRun(v: string): string | undefined {
  if (v === "*") return "run=* would let the script run any program; name the commands, like run=git";
  if (v.includes("\0")) return "the command contains a NUL byte";
  if (v.includes(",")) return "deno cannot grant a command whose name contains a comma";
  if (isAbs(v)) return undefined;
  if (/[/\\]/.test(v)) return `run= takes a command name like git or an absolute path; "${v}" is a relative path`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(v)) return `"${v}" is not a command name`;
  return undefined;
}

const SPECIAL_ROOTS = ["/proc", "/sys", "/dev"];

function resolveGrant(
  key: string,
  v: string,
  lexDir: string,
  realDir: string,
): string | { kind: HeaderErrorKind; msg: string } {
  const bad = (msg: string, kind: HeaderErrorKind = "bad_value") => ({ kind, msg });
  const win = WINDOWS ? windowsPathProblem(key, v) : undefined;
  if (win) return bad(win);
  if (v.includes("\0")) return bad("the path contains a NUL byte");
  if (v.includes(",")) return bad("deno cannot grant a path that contains a comma");
  if (v === "~" || v.startsWith("~/") || v.startsWith("~\\")) return bad("~ is not expanded; write the absolute path");
  if (/^(\\\\|\/\/|\\\/|\/\\)/.test(v)) return bad(`${key}=${v} is a network path; grant local files only`);
  if (/\$[{_A-Za-z]/.test(v) || /%[A-Za-z_][A-Za-z0-9_]*%/.test(v)) {
    return bad(`variables are not expanded in ${key}=${v}`);
  }
  if (v === "." || v === "./" || v === ".\\") {
    return bad(`${key}=${v} would grant the script's whole folder`, "blanket_path");
  }
  const lexical = cleanPath(isAbs(v) ? v : `${lexDir}/${v}`);
  let real: string;
  try {
    real = realpath(lexical);
  } catch (e) {
    return bad(`cannot resolve "${v}": ${(e as Error).message}`);
  }
  if (contains(lexical, lexDir) || contains(lexical, realDir)) {
    return bad(`${key}=${v} is the script's own folder or one of its parents`, "blanket_path");
  }
  if (contains(real, realDir) || contains(real, lexDir)) {
    return bad(`${key}=${v} leads through a symlink to the script's own folder or one of its parents`, "blanket_path");
  }
  for (const root of WINDOWS ? [] : SPECIAL_ROOTS) {
    if (contains(root, real) || contains(root, lexical)) {
      return bad(`${key}=${v} is under ${root}; it cannot be granted`);
    }
  }
  try {
    Deno.statSync(real);
  } catch (e) {
    const unseen = e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotCapable;
    if (!unseen) return bad(`cannot inspect ${real}: ${(e as Error).message}`);
  }
  return real;
}

/**
 * contains is the path guard's Contains: dir is p or one of its folders,
 * by whole segments, compared as the file system compares names (Windows
 * paths without case; on macOS, paths that differ in case alone as the
 * volume does).
 */
function contains(dir: string, p: string): boolean {
  if (pathContains(dir, p)) return true;
  return Deno.build.os === "darwin" && pathContains(dir.toLowerCase(), p.toLowerCase()) && !caseSensitive(dir);
}

/**
 * caseSensitive asks the volume of p's longest existing prefix whether it
 * tells names apart by case, by looking a name of it up in the other case
 * (the app asks pathconf, which Deno does not offer). It answers yes when
 * nothing can be asked.
 */
function caseSensitive(p: string): boolean {
  for (let d = p; d !== "/"; d = dirPath(d)) {
    const base = d.slice(d.lastIndexOf("/") + 1);
    const other = base === base.toLowerCase() ? base.toUpperCase() : base.toLowerCase();
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(d);
    } catch {
      continue; // not there yet: its folder is asked
    }
    if (other === base) continue;
    try {
      const o = Deno.lstatSync(cleanPath(`${dirPath(d)}/${other}`));
      return o.ino !== info.ino || o.dev !== info.dev;
    } catch {
      return true;
    }
  }
  return true;
}

/**
 * isAbs is Go's filepath.IsAbs: on Windows a path with a drive and a
 * separator (C:\x) or a network path (\\server\share), elsewhere one that
 * starts with "/".
 */
function isAbs(p: string): boolean {
  return WINDOWS ? isWindowsPath(p) || /^[\\/]{2}[^\\/]/.test(p) : p.startsWith("/");
}

/**
 * windowsPathProblem says why v, a read= or write= value, cannot be
 * granted on Windows, as permissions.windowsPathProblem does: a path
 * relative to a drive's current folder (C:x) or to the current drive
 * (\x), a \\?\ or device path, an alternate data stream, a device name.
 */
function windowsPathProblem(key: string, v: string): string | undefined {
  if (v === "") return undefined;
  if (/^(\\\\[?.]\\|\/\/[?.]\/)/.test(v)) return `${key}=${v} is a device or \\\\?\\ path; write the plain path`;
  if (/^[A-Za-z]:([^\\/]|$)/.test(v)) return `${key}=${v} is relative to the current folder of drive ${v.slice(0, 2)}`;
  if (/^[\\/]([^\\/]|$)/.test(v)) return `${key}=${v} has no drive; write the drive too`;
  const rest = /^[A-Za-z]:/.test(v) ? v.slice(2) : v;
  if (rest.includes(":")) {
    return `${key}=${v} names an alternate data stream (a colon after the drive); grant the file itself`;
  }
  for (const c of rest.split(/[\\/]/)) {
    if (c !== "" && isDeviceName(c)) return `${key}=${v} names the Windows device ${c}, which exists in every folder`;
  }
  return undefined;
}

/** isDeviceName reports a name Windows opens as a device in every folder (CON, con.txt, COM1 …). */
function isDeviceName(c: string): boolean {
  const base = c.split(".")[0].replace(/ +$/, "").toUpperCase();
  if (["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"].includes(base)) return true;
  return /^(COM|LPT)([0-9]|¹|²|³)$/.test(base);
}

/**
 * realpath follows every symlink on the longest existing prefix of the
 * clean absolute path p and appends the rest unchanged, as the app's path
 * guard does. On Windows each existing component is named as on disk
 * (its long name, in its own case), as the guard names it.
 */
function realpath(p: string, links = 0): string {
  const win = isWindowsPath(p);
  const sep = win ? "\\" : "/";
  const root = win ? p.slice(0, 3) : "/";
  const join = (...parts: string[]) => cleanPath(parts.join(sep));
  const comps = p.slice(root.length).split(sep).filter((c) => c !== "");
  let cur = root;
  for (let i = 0; i < comps.length; i++) {
    const next = join(cur, comps[i]);
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(next);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return join(next, ...comps.slice(i + 1));
      // A test without read access there takes the component as written.
      if (!(e instanceof Deno.errors.NotCapable)) throw e;
      cur = next;
      continue;
    }
    if (!info.isSymlink) {
      cur = win ? join(cur, longName(next, comps[i])) : next;
      continue;
    }
    if (links >= 255) throw new Error("too many levels of symbolic links");
    // Windows keeps an absolute target as \\?\C:\…; the guard reads it as C:\….
    let target = Deno.readLinkSync(next).replace(/^\\\\\?\\(?=[A-Za-z]:)/, "");
    if (!isAbs(target)) target = `${cur}${sep}${target}`;
    return realpath(join(target, ...comps.slice(i + 1)), links + 1);
  }
  return cur;
}

/**
 * longName is the name on disk of the existing, link-free path p whose
 * last component is name: the long form of an 8.3 short name such as
 * PROGRA~1, in the case it was made with, or name when it cannot be read.
 */
function longName(p: string, name: string): string {
  try {
    const r = Deno.realPathSync(p);
    return r.slice(r.lastIndexOf("\\") + 1) || name;
  } catch {
    return name;
  }
}

// --- sites=, as cdp.SiteAllowed matches them ---

/**
 * siteAllowed reports whether the page at url is on one of sites, as the
 * app checks sites=: "example.com" matches that host only, "*.example.com"
 * any subdomain but not example.com itself; either may name a port
 * ("localhost:8080", "[::1]:3000"), which the page's port, written or
 * implied by its scheme, must then equal. Matching ignores case and a
 * trailing dot, and ports when the site names none. Only http and https
 * pages match; a URL the app cannot parse, or a malformed site, never
 * does. The URL is read the way the app's Go URL parser reads it, not as
 * a browser would: an internationalized host is compared as written, and
 * a percent-encoded ASCII character in a host makes the URL unusable.
 */
export function siteAllowed(url: string, sites: readonly string[]): boolean {
  const u = siteHost(url);
  if (u === undefined) return false;
  const h = normSite(u.name);
  if (h === "") return false;
  const port = sitePort(u.scheme, u.port);
  return sites.some((site) => {
    const s = splitSite(site);
    if (s === undefined || (s.port !== 0 && s.port !== port)) return false;
    if (s.host.startsWith("*.")) return validSite(s.host.slice(2)) && h.endsWith(s.host.slice(1));
    return validSite(s.host) && h === s.host;
  });
}

/** sitePort is the port a page goes to, as cdp's portOf gives it: -1 for none a server can have. */
function sitePort(scheme: string, port: string): number {
  if (port === "") return scheme === "https" ? 443 : 80;
  if (!/^[0-9]+$/.test(port)) return -1;
  const n = Number(port);
  return n >= 1 && n <= 65535 ? n : -1;
}

/** splitSite reads a site as host and port (0 for none), as cdp's splitSite does. */
function splitSite(site: string): { host: string; port: number } | undefined {
  let s = normSite(site), rest = "";
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end < 0) return undefined;
    [s, rest] = [s.slice(1, end), s.slice(end + 1)];
    if (rest !== "" && !rest.startsWith(":")) return undefined;
  } else if (s.split(":").length === 2) {
    const i = s.indexOf(":");
    [s, rest] = [s.slice(0, i), s.slice(i)];
  }
  let port = 0;
  if (rest !== "") {
    const digits = rest.slice(1);
    if (!/^[0-9]+$/.test(digits)) return undefined;
    port = Number(digits);
    if (port < 1 || port > 65535) return undefined;
  }
  return { host: s.replace(/\.$/, ""), port };
}

function normSite(h: string): string {
  return goLower(h.replace(/^\p{White_Space}+|\p{White_Space}+$/gu, "")).replace(/\.$/, "");
}

function validSite(h: string): boolean {
  return h !== "" && !/[*/@ ]/.test(h) && h.split(".").every((l) => l !== "");
}

// HOST_OK lists the ASCII characters Go's URL parser accepts in a host.
const HOST_OK = /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]$/;

/**
 * siteHost is, for an http or https URL, its scheme, url.Parse(u).Hostname()
 * and url.Parse(u).Port(); undefined for any other.
 */
function siteHost(u: string): { scheme: string; name: string; port: string } | undefined {
  const hash = u.indexOf("#");
  if (hash >= 0) {
    if (unescape(u.slice(hash + 1), "other") === undefined) return undefined;
    u = u.slice(0, hash);
  }
  // Control characters refuse the URL, though the fragment may hold them.
  for (let i = 0; i < u.length; i++) if (u.charCodeAt(i) < 0x20 || u.charCodeAt(i) === 0x7f) return undefined;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(u);
  if (!m) return undefined;
  const scheme = m[1].toLowerCase();
  if (scheme !== "http" && scheme !== "https") return undefined;
  let rest = u.slice(m[0].length);
  const q = rest.indexOf("?");
  if (q >= 0) rest = rest.slice(0, q);
  if (!rest.startsWith("//")) return undefined;
  let authority = rest.slice(2), path = "";
  const slash = authority.indexOf("/");
  if (slash >= 0) [authority, path] = [authority.slice(0, slash), authority.slice(slash)];
  const at = authority.lastIndexOf("@");
  const host = parseURLHost(at < 0 ? authority : authority.slice(at + 1));
  if (host === undefined) return undefined;
  if (at >= 0) {
    const user = authority.slice(0, at);
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(user) || unescape(user, "other") === undefined) return undefined;
  }
  if (unescape(path, "other") === undefined) return undefined;
  // Hostname: drop a valid :port, then the brackets.
  let name = host;
  const colon = host.lastIndexOf(":");
  if (colon >= 0 && /^:[0-9]*$/.test(host.slice(colon))) name = host.slice(0, colon);
  if (name.startsWith("[") && name.endsWith("]")) name = name.slice(1, -1);
  return { scheme, name, port: goPort(host) };
}

/** goPort is Go's URL.Port: after "]:" in a bracketed host, else after the first colon. */
function goPort(host: string): string {
  const colon = host.indexOf(":");
  if (colon < 0) return "";
  const i = host.indexOf("]:");
  if (i >= 0) return host.slice(i + 2);
  if (host.includes("]")) return "";
  return host.slice(colon + 1);
}

function parseURLHost(host: string): string | undefined {
  const open = host.lastIndexOf("[");
  if (open > 0) return undefined;
  if (open === 0) {
    const close = host.lastIndexOf("]");
    if (close < 0) return undefined;
    const colonPort = host.slice(close + 1);
    if (!/^(:[0-9]*)?$/.test(colonPort)) return undefined;
    const inner = host.slice(1, close);
    const zone = inner.indexOf("%25");
    const addr = zone >= 0 ? unescape(inner.slice(0, zone), "host") : unescape(inner, "host");
    if (addr === undefined) return undefined;
    if (zone >= 0) {
      const z = unescape(inner.slice(zone), "zone");
      if (z === undefined || z === "%" || !parseIPv6(addr)) return undefined;
      return `[${addr}${z}]${colonPort}`;
    }
    if (!parseIPv6(addr)) return undefined;
    return `[${addr}]${colonPort}`;
  }
  const first = host.indexOf(":");
  if (first >= 0) {
    const last = host.lastIndexOf(":");
    if (last !== first) return undefined; // http and https allow one colon
    if (!/^:[0-9]*$/.test(host.slice(first))) return undefined;
  }
  return unescape(host, "host");
}

/**
 * unescape decodes %XX escapes as Go's URL parser does, or returns
 * undefined where it fails: a malformed escape anywhere; in a host an
 * escaped ASCII byte other than %25, or a character hosts may not hold;
 * in an IPv6 zone ("%25" onwards) an escape of a byte a host could not
 * hold unescaped, other than a space.
 */
function unescape(s: string, mode: "other" | "host" | "zone"): string | undefined {
  const strict = mode !== "other";
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return undefined;
      const v = parseInt(hex, 16);
      if (mode === "host" && v < 0x80 && hex !== "25") return undefined;
      const plain = v < 0x80 && HOST_OK.test(String.fromCharCode(v));
      if (mode === "zone" && hex !== "25" && v !== 0x20 && !plain) return undefined;
      bytes.push(v);
      i += 2;
      continue;
    }
    if (strict && c < 0x80 && !HOST_OK.test(s[i])) return undefined;
    bytes.push(...new TextEncoder().encode(String.fromCodePoint(s.codePointAt(i)!)));
    if (c >= 0xd800 && c <= 0xdbff) i++;
  }
  return decodeUTF8(Uint8Array.from(bytes));
}

/**
 * RemoteImportError is the app's refusal of a script whose modules import
 * code its run cannot load (runner.ErrRemoteImport, or deno's own refusal
 * under the flags the app computes): each refused specifier, as the SDK's
 * import map resolves it, and why, with what to do instead.
 */
export class RemoteImportError extends TypeError {
  override name = "RemoteImportError";
  readonly code = "refused";
  /** The refused specifiers, resolved, in the order the modules name them. */
  readonly specifiers: string[];
  constructor(refused: { specifier: string; why: string }[]) {
    super(`the script imports code its run cannot load: ${refused.map((r) => r.why).join("; ")}`);
    this.specifiers = refused.map((r) => r.specifier);
  }
}

/**
 * UndeclaredImportError is the app's refusal of a script whose modules
 * import a local file that is neither the script, the SDK, nor inside one
 * of its read= grants (runner.ErrUndeclaredImport): deno loads a static
 * import without any permission check, so the header alone would not stop
 * it.
 */
export class UndeclaredImportError extends TypeError {
  override name = "UndeclaredImportError";
  readonly code = "refused";
  /** The file imported without a grant. */
  readonly path: string;
  constructor(path: string) {
    super(
      `the script imports a file it did not declare: ${path}; add read=${path} to its // @permissions line if it should`,
    );
    this.path = path;
  }
}

/**
 * importRefusal says why a run cannot load the module specifier (already
 * resolved through the SDK's import map; a bare name the map does not
 * resolve stays as written), or returns undefined when it can. It is the
 * table the runner's module-graph check applies (runner/graph.go,
 * importTable), for every scheme:
 *
 * - file:, node: (Deno's built-ins) and data: load in every run (local
 *   files are held to the read= grants elsewhere).
 * - A bare name the import map does not map, a blob: URL (it exists only
 *   inside the run that made it) and any other scheme never load; nor
 *   does a Windows path (C:\lib.ts), which deno reads as a URL of scheme c:.
 * - npm: loads once the run may import from some host (deno fetches it);
 *   without one only the SDK's own packages (cached) do.
 * - jsr: loads when it is one of the @std packages the app caches
 *   (registry: the SDK's pinned "jsr:@std/x@1.2.3" specifiers, when the app
 *   names a JSR registry, runner.Config.JSR) at its pinned version; the
 *   same package at another version loads only when the run may import
 *   from some host (without one, runs load @std under a frozen lock).
 *   Other jsr: modules, and http: and https: ones, load only when the run
 *   may import from some host, and then only from the hosts named (jsr:
 *   ones when jsr.io is one of them).
 *
 * imports are the hosts the run may import code from: its import= grants
 * and the app's defaults (runner.Config.DefaultImports); cached are the
 * npm: packages of the SDK's import map.
 */
export function importRefusal(
  specifier: string,
  imports: readonly string[],
  cached: readonly string[] = [],
  registry: readonly string[] = [],
): string | undefined {
  const std = registry.map(jsrPin).filter((p) => p !== undefined);
  const stdNames = std.map((p) => p.name).join(", ");
  const names = std.length > 0
    ? `one of the @std short names (${stdNames}) or "tranquil/automation"`
    : `"tranquil/automation"`;
  const instead = `${
    std.length > 0 ? `use one of the @std short names (${stdNames}) or Deno's own APIs` : "use Deno's own APIs"
  }, copy the module next to the script and import it by a relative path, or add import= for its host to the // @permissions line if the app allows that`;
  if (isWindowsPath(specifier)) {
    return `"${specifier}" cannot be loaded: deno reads a Windows path in an import as a URL of scheme ${
      specifier[0].toLowerCase()
    }:; import the module by a relative path ("./lib.ts") or a file: URL`;
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(specifier)?.[1].toLowerCase();
  switch (scheme) {
    case undefined:
      return `"${specifier}" cannot be loaded: it is not a name this app maps; use ${names}, or a relative path ("./lib.ts") to a module copied next to the script`;
    case "file":
    case "node":
    case "data":
      return undefined;
    case "blob":
      return `${specifier} cannot be loaded: a blob: URL exists only inside the run that made it; copy the code into a module next to the script and import that`;
    case "npm":
      if (imports.length > 0 || cached.includes(specifier)) return undefined;
      return `${specifier} cannot be loaded: a run that may import no remote code gets npm: packages only from deno's cache, which holds the SDK's own; ${instead}`;
    case "jsr": {
      const m = /^jsr:\/?(@[^/@]+\/[^/@]+)(?:@([^/]*))?(\/.*)?$/.exec(specifier);
      const pin = std.find((p) => p.name === m?.[1]);
      if (std.length === 0 && m?.[1]?.startsWith("@std/") && imports.length === 0) {
        return `${specifier} cannot be loaded: this app names no JSR registry, so its scripts have no @std packages; the app's host sets one (runner.Config.JSR; the example host's --jsr URL), or ${instead}`;
      }
      if (pin !== undefined) {
        if (m?.[2] === pin.version || imports.length > 0) return undefined;
        return `${specifier} cannot be loaded: this app ships ${pin.name} ${pin.version} only; import it by its short name ("${pin.name}" or "${pin.name}/…")`;
      }
      break;
    }
    case "http":
    case "https":
      break;
    default:
      return `${specifier} cannot be loaded: deno loads no ${scheme}: modules; copy the module next to the script and import it by a relative path`;
  }
  if (imports.length === 0) {
    return `${specifier} cannot be loaded, since this app gives runs no remote code${
      std.length > 0 ? " beyond the @std packages it ships" : " (the SDK bundles no @std modules)"
    }; ${instead}`;
  }
  let host: string, port: string;
  if (scheme === "jsr") {
    [host, port] = ["jsr.io", ""];
  } else {
    try {
      const u = new URL(specifier);
      [host, port] = [u.hostname.toLowerCase(), u.port];
    } catch {
      return `${specifier} cannot be loaded: it is not a URL`;
    }
  }
  const allowed = imports.some((i) => {
    const v = i.toLowerCase();
    if (v.startsWith("*.")) return host.endsWith(v.slice(1));
    return v === host || (port !== "" && v === `${host}:${port}`);
  });
  if (allowed) return undefined;
  const from = scheme === "jsr" ? " (jsr: modules come from jsr.io)" : "";
  return `${specifier} cannot be loaded: ${host}${from} is not one of the hosts the run may import from (${
    imports.join(", ")
  })`;
}

/** jsrPin reads a pinned "jsr:@std/x@1.2.3" specifier of the SDK's import map. */
function jsrPin(spec: string): { name: string; version: string } | undefined {
  const m = /^jsr:(@[^/@]+\/[^/@]+)@(\d+\.\d+\.\d+)$/.exec(spec);
  return m === null ? undefined : { name: m[1], version: m[2] };
}
