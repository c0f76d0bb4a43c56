// Path helpers, written here because the SDK may not import @std.

/** isWindowsPath reports a path that starts with a drive: C:\ or C:/. */
export function isWindowsPath(p: string): boolean {
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
  return cleanPath(isAbsolute(name) ? name : `${base}/${name}`);
}

/**
 * cleanPath is Go's filepath.Clean for an absolute path: it removes empty,
 * "." and ".." segments. A Windows path keeps its drive and is written
 * with backslashes, as Windows and the app write it.
 */
export function cleanPath(p: string): string {
  const win = isWindowsPath(p);
  const parts = (win ? p.slice(2) : p).split(win ? /[\\/]+/ : /\/+/);
  const out: string[] = [];
  for (const s of parts) {
    if (s === "" || s === ".") continue;
    if (s === "..") out.pop();
    else out.push(s);
  }
  return win ? `${p.slice(0, 2)}\\${out.join("\\")}` : `/${out.join("/")}`;
}

/** dirPath is the folder of the clean absolute path p (the root is its own). */
export function dirPath(p: string): string {
  const win = isWindowsPath(p);
  const i = p.lastIndexOf(win ? "\\" : "/");
  const root = win ? p.slice(0, 3) : "/";
  return i < root.length ? root : p.slice(0, i);
}

/**
 * pathContains reports whether dir is p itself or an ancestor of it, by
 * whole segments; both are clean absolute paths. Windows paths compare
 * without regard to case, as Windows' file systems do.
 */
export function pathContains(dir: string, p: string): boolean {
  const win = isWindowsPath(dir) || isWindowsPath(p);
  if (win) [dir, p] = [dir.toLowerCase(), p.toLowerCase()];
  const sep = win ? "\\" : "/";
  return dir === p || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);
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

/** workingDir is the working directory, or "/" when it cannot be read. */
export function workingDir(): string {
  try {
    return Deno.cwd();
  } catch {
    return "/";
  }
}

/** fileUrl is the file: URL s names: s itself when it is one, else the path s, resolved against the working directory. */
export function fileUrl(s: string | URL): URL {
  return s instanceof URL || s.startsWith("file:") ? new URL(s) : toFileUrl(resolvePath(workingDir(), s));
}
