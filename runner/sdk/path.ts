// Path helpers, written here because the SDK may not import @std.

function isWindowsPath(p: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(p);
}

/** isAbsolute reports whether p is an absolute POSIX or Windows path. */
export function isAbsolute(p: string): boolean {
  return p.startsWith("/") || isWindowsPath(p);
}

/**
 * resolvePath joins name onto the absolute directory base unless name is
 * itself absolute, and removes "." and ".." segments.
 */
export function resolvePath(base: string, name: string): string {
  const full = isAbsolute(name) ? name : `${base}/${name}`;
  const win = isWindowsPath(full);
  const parts = full.split(win ? /[\\/]+/ : /\/+/);
  const root = win ? parts.shift()! : "";
  if (!win) parts.shift(); // the empty segment before the leading "/"
  const out: string[] = [];
  for (const p of parts) {
    if (p === "" || p === ".") continue;
    if (p === "..") out.pop();
    else out.push(p);
  }
  return win ? `${root}\\${out.join("\\")}` : `/${out.join("/")}`;
}

/** toFileUrl converts an absolute path into a file: URL, escaping what URLs treat specially. */
export function toFileUrl(path: string): URL {
  if (!isAbsolute(path)) throw new TypeError(`not an absolute path: ${path}`);
  const win = isWindowsPath(path);
  const segs = path.split(win ? /[\\/]/ : "/").map((s, i) => win && i === 0 ? s : encodeURIComponent(s));
  return new URL(`file://${win ? "/" : ""}${segs.join("/")}`);
}

/** fromFileUrl is the inverse of toFileUrl: the absolute path a file: URL names. */
export function fromFileUrl(url: URL): string {
  if (url.protocol !== "file:") throw new TypeError(`not a file: URL: ${url.href}`);
  const p = decodeURIComponent(url.pathname);
  return /^\/[A-Za-z]:\//.test(p) ? p.slice(1).replaceAll("/", "\\") : p;
}
