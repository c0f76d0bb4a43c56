// The app's header, sites= and import rules, for the offline fake host:
// the app's own Go code (permissions.Parse, cdp.SiteAllowed's rule, the
// runner's import table), compiled to WebAssembly (internal/ruleswasm;
// `go generate ./internal/ruleswasm/gen` rebuilds rules.wasm.gz). Only the testing kit
// imports this module, so only `deno test` pays for loading it: once, when
// the kit is imported, reading rules.wasm.gz beside it (the kit's tests
// already need --allow-read, for the script they test).

import type { Capability } from "./runtime.ts";
import { Go } from "./go_wasm.ts";
import { fromFileUrl } from "./path.ts";

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

/** capabilities lists the host APIs a run with header h gets, sorted, as Header.Capabilities does. */
export function capabilities(h: Header): Capability[] {
  return rules.capabilities(h) as Capability[];
}

/**
 * parseHeader reads a script's header as the app does before every run and
 * returns what it declares, or throws the HeaderError the app refuses the
 * run with. src is the script's text or its bytes (as the app reads them:
 * invalid UTF-8 is refused); scriptPath is its absolute path; read= and
 * write= resolve against its directory, following symlinks (so it reads
 * the file system, as the app does; a folder the test may not read is
 * taken as written).
 */
export function parseHeader(src: string | Uint8Array, scriptPath: string): Header {
  const r = rules.parseHeader(src, scriptPath) as
    | (Header & { ok: true; capabilities: Capability[] })
    | { ok: false; kind: HeaderErrorKind; message: string; line: number; column: number };
  if (!r.ok) throw new HeaderError(r.kind, r.message, r.line, r.column);
  const { ok: _, capabilities: _caps, ...h } = r; // the rest is the header
  return h;
}

/**
 * siteAllowed reports whether the page at url is on one of sites, as the
 * app checks sites=: "example.com" matches that host only, "*.example.com"
 * any subdomain but not example.com itself; either may name a port
 * ("localhost:8080", "[::1]:3000"), which the page's port, written or
 * implied by its scheme, must then equal. Matching ignores case and a
 * trailing dot, and ports when the site names none. Only http and https
 * pages match; a URL the app cannot parse, or a malformed site, never
 * does. The URL is read the way the app's Go URL parser reads it.
 */
export function siteAllowed(url: string, sites: readonly string[]): boolean {
  return rules.siteAllowed(url, sites) as boolean;
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
 * resolve stays as written), or returns undefined when it can: the table
 * the runner's module-graph check applies (internal/importtable), then,
 * for remote code it lets through, the hosts deno's --allow-import names.
 * In short: file:, node: and data: load in every run; a bare name the map
 * does not map, a blob: URL, a Windows path (deno reads C:\lib.ts as a URL
 * of scheme c:) and other schemes never do; npm:, jsr: and http(s): load
 * only when the run may import from some host, and then only from the
 * hosts named, except the SDK's own npm: packages (cached) and the @std
 * packages the app pins (registry: the SDK's "jsr:@std/x@1.2.3"
 * specifiers, when the app names a JSR registry) at their pinned versions.
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
  return (rules.importRefusal(specifier, imports, cached, registry) as string) || undefined;
}

/**
 * goFS is the file system the Go program sees (syscall's fs_js.go calls
 * Node's fs API by these names): the lookups a header's paths need,
 * synchronous, each answering its callback before it returns, as a Go call
 * from JavaScript must not wait on the event loop; and the two questions
 * the path guard asks the system (internal/pathguard/names_js.go). Anything
 * else fails with ENOSYS.
 */
function goFS(): object {
  const fail = (code: string) => Object.assign(new Error(code), { code });
  const errs: [new (...a: never[]) => Error, string][] = [
    [Deno.errors.NotFound, "ENOENT"],
    [Deno.errors.NotADirectory, "ENOTDIR"],
    [Deno.errors.FilesystemLoop, "ELOOP"],
    [Deno.errors.PermissionDenied, "EACCES"],
    [Deno.errors.NotCapable, "EACCES"],
  ];
  const code = (e: unknown) => errs.find(([c]) => e instanceof c)?.[1] ?? "EIO";
  const stat = (i: Deno.FileInfo) => ({
    ...Object.fromEntries(
      (["dev", "ino", "uid", "gid", "rdev", "size", "blksize", "blocks"] as const).map((k) => [k, i[k] ?? 0]),
    ),
    nlink: i.nlink ?? 1,
    mode: (i.isSymlink ? 0o120000 : i.isDirectory ? 0o040000 : 0o100000) | ((i.mode ?? 0o644) & 0o7777),
    atimeMs: i.atime?.getTime() ?? 0,
    mtimeMs: i.mtime?.getTime() ?? 0,
    ctimeMs: i.ctime?.getTime() ?? 0,
  });
  type Callback = (err: Error | null, v?: unknown) => void;
  /** answer calls back with f's answer, or with the code of its error (as onErr words it). */
  const answer = (cb: Callback, f: () => unknown, onErr = (e: unknown): unknown => fail(code(e))) => {
    let v: unknown;
    try {
      v = f();
    } catch (e) {
      const r = onErr(e);
      return r instanceof Error ? cb(r) : cb(null, r);
    }
    cb(null, v);
  };
  const fsAPI: Record<string, unknown> = {
    constants: { O_WRONLY: -1, O_RDWR: -1, O_CREAT: -1, O_TRUNC: -1, O_APPEND: -1, O_EXCL: -1, O_DIRECTORY: -1 },
    // A test without read access there: the component is taken as
    // written, a folder and no link.
    lstat: (path: string, cb: Callback) =>
      answer(
        cb,
        () => stat(Deno.lstatSync(path)),
        (e) => e instanceof Deno.errors.NotCapable ? stat({ isDirectory: true } as Deno.FileInfo) : fail(code(e)),
      ),
    stat: (path: string, cb: Callback) =>
      answer(
        cb,
        () => stat(Deno.statSync(path)),
        (e) => fail(e instanceof Deno.errors.NotCapable ? "ENOENT" : code(e)),
      ),
    // Windows keeps an absolute target as \\?\C:\…; Go reads it as C:\….
    readlink: (path: string, cb: Callback) =>
      answer(cb, () => Deno.readLinkSync(path).replace(/^\\\\\?\\(?=[A-Za-z]:)/, "")),
    // The name on disk of the existing Windows path p: the long form of an
    // 8.3 short name such as PROGRA~1, in its own case.
    longName(p: string): string {
      try {
        const r = Deno.realPathSync(p);
        return r.slice(r.lastIndexOf("\\") + 1);
      } catch {
        return "";
      }
    },
    // Whether the volume of p's longest existing prefix tells names apart
    // by case: on macOS, by looking a name of it up in the other case (Go
    // asks pathconf, which Deno does not offer); yes elsewhere, and when
    // nothing can be asked.
    caseSensitive(p: string): boolean {
      if (Deno.build.os !== "darwin") return true;
      for (let d = p; d !== "/" && d !== ""; d = d.slice(0, d.lastIndexOf("/")) || "/") {
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
          const o = Deno.lstatSync(`${d.slice(0, d.lastIndexOf("/"))}/${other}`);
          return o.ino !== info.ino || o.dev !== info.dev;
        } catch {
          return true;
        }
      }
      return true;
    },
  };
  return new Proxy(fsAPI, {
    get: (t, k: string) => k in t ? t[k] : (...args: unknown[]) => (args.at(-1) as Callback)(fail("ENOSYS")),
  });
}

/** The Go program's functions (internal/ruleswasm), which the exported functions above type. */
type Rules = Record<string, (...args: unknown[]) => unknown>;

/** load reads, decompresses and starts the Go program, and returns its functions. */
async function load(): Promise<Rules> {
  const file = new URL("./rules.wasm.gz", import.meta.url);
  let gz: Uint8Array<ArrayBuffer>;
  try {
    gz = await Deno.readFile(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotCapable)) throw e;
    throw new Deno.errors.NotCapable(
      `the testing kit reads the app's rules from ${
        fromFileUrl(file)
      }: give deno test --allow-read for the SDK's folder too (${(e as Error).message})`,
    );
  }
  const wasm = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip")))
    .arrayBuffer();
  const noProcess = () => -1;
  // The program's global object: the real one's names (Object, Date …)
  // through the prototype, its own fs and process, and what it leaves.
  const scope: { tranquilRules?: unknown } = Object.create(globalThis, {
    fs: { value: goFS() },
    process: {
      value: { pid: -1, ppid: -1, getuid: noProcess, getgid: noProcess, geteuid: noProcess, getegid: noProcess },
    },
  });
  const go = new Go(scope);
  const { instance } = await WebAssembly.instantiate(wasm, go.importObject);
  // The promise settles only if the program exits, which it does not.
  void go.run(instance);
  const api = scope.tranquilRules as Rules | undefined;
  if (api === undefined) throw new Error("the testing kit's rules (rules.wasm.gz) did not start");
  // A call the program could not answer comes back as { panic }.
  const guarded = Object.entries(api).map(([name, f]) => [name, (...args: unknown[]) => {
    const r = f(...args);
    if (typeof r === "object" && r !== null && "panic" in r) throw new Error(String(r.panic));
    return r;
  }]);
  return Object.fromEntries(guarded);
}

const rules = await load();
