// Package modgraph checks what a script's module graph loads before its
// run starts, and caches the @std packages the SDK pins, for package
// runner.
//
//   - [Checker.Check] refuses a script whose graph (read with deno info,
//     which neither downloads nor runs anything) loads a local file it did
//     not declare ([ErrUndeclaredImport]) or code its run cannot load
//     ([ErrRemoteImport]): remote code without an import grant, a jsr:
//     module other than the pinned @std packages or one not in the cache,
//     a bare name the SDK's import map does not map. A passed check is
//     remembered while the graph's files keep their content.
//   - [Checker.CacheStd] downloads every export of the pinned @std
//     packages from the [Registry] ([ParseRegistry]), verified against
//     the seed lock, and writes the lock runs load them under
//     ([Checker.RunLock]); it fails with [ErrRegistry].
//   - [FileURL] and [FilePath] convert between a path and the file: URL
//     deno names it by.
//
// The Checker starts deno through its [Launcher], which the runner's
// Manager supplies: the environments (a scratch module cache per check,
// the host's proxies for a download) and what a failed start means.
// The granted trees' links are not its job: the runner checks them before
// every Check.
//
// Goroutines: none of its own. Each deno it runs is waited for before the
// call returns, within the call's context (Check's, also within 30 s).
package modgraph
