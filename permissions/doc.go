// Package permissions decides what a script may do: it parses the header a
// script declares and computes the exact deno flags and host capabilities
// of a run.
//
//   - [Parse] reads and validates a script's "// @permissions …" and
//     "// @timeout …" header into a [Header], or returns a [*ParseError]
//     with line, column and a message that says how to fix it.
//   - [Flags] and [RunArgs] compute the deno command line for a run.
//   - [Header.Capabilities] lists the host APIs the run receives.
//   - [Header.Canonical], [ParseCanonical] and [Diff] give the stable form
//     consent stores and what changed between two declarations.
//   - [Header.Describe] words each grant honestly for the consent prompt.
//
// # The header
//
// The header is the comment block at the top of the file: "//" lines and
// blank lines, optionally after a "#!" line. It ends at the first line of
// code. It must hold exactly one @permissions line:
//
//	// @permissions browser net=api.github.com run=git read=input.txt write=out.md
//	// @timeout 15m
//
// Bare keys: none (alone), browser, clipboard, forms, page-js. Valued keys
// take comma-separated values, which may be double-quoted to hold spaces:
// sites, net, import, run, read, write, env. A key given twice merges.
// @timeout takes a Go duration between [MinTimeout] and [MaxTimeout], or
// none; without it a run lasts at most [DefaultTimeout].
//
// read= and write= resolve against the script's directory. A grant of that
// directory or any ancestor is refused, lexically and again after resolving
// symlinks on the longest existing prefix, because deno's folder grants are
// recursive. The resolved path is what deno is given and what the user sees.
//
// # Flags
//
// Every run gets --no-prompt, --no-lock, the library's own --config (so
// no deno.json or package.json beside the script is discovered), a
// --location of its script's own ([Location]: deno keys localStorage and
// the Cache API by it, so scripts share no storage), read access
// to exactly the bootstrap, the entry module and the SDK directory, and the
// network address of its bridge. Declared grants are added on top. Write,
// run and import access exist only when declared (imports may also come
// from [FlagConfig.DefaultImports]; with neither, --no-remote switches
// remote imports off and --cached-only keeps npm: packages, which no deno
// permission governs, from being downloaded at run time; a host that
// names a JSR registry ([FlagConfig.Registry]) gets --allow-import for it
// alone with --cached-only instead, so modules it cached load and nothing
// downloads). [RunArgs] ends with the bootstrap as --preload and the
// script as deno's main module.
//
// Deny rules ride along on every run:
//
//   - The IPv4 private, link-local, shared and "this network" ranges
//     (10/8, 172.16/12, 192.168/16, 169.254/16, 100.64/10, 0/8). Deno checks
//     allows by hostname but denies by resolved address, so these stop an
//     approved hostname from being rebound into the user's network. An
//     address the header names explicitly is carved out of its range.
//   - The IPv6 loopback [::1] (unless the header names a loopback host) and
//     the unspecified address [::].
//   - Every loopback endpoint the host drives, such as DevTools ports, given
//     in [FlagConfig.DenyLoopback], on all of 127.0.0.0/8, 0.0.0.0/8, [::1]
//     and [::]. A port-specific deny beats a broader loopback allow.
//
// # Residual risk
//
// Loopback cannot be denied wholesale: the run must reach its bridge on
// 127.0.0.1. A script granted net=localhost or net=127.0.0.1 can therefore
// reach any service on this computer except the denied endpoints, and an
// approved hostname whose DNS answer is rebound to 127.0.0.1 can reach them
// too. IPv6 private ranges cannot be denied in deno 2.9, so a hostname that
// resolves to a unique-local or link-local IPv6 address is not stopped. The
// consent wording says "can reach services on this computer" for loopback
// grants for this reason, and for any name this computer's hosts file
// points at a loopback address or that is the computer's own name;
// [Header.Describe] reads the hosts file for that, and never asks DNS (a
// name whose public DNS answer is a loopback address is therefore still
// worded as the public name it looks like). Deno also loads statically imported local files
// without permission checks (the runner checks the module graph before a
// run), and a script granted import= hosts can still fetch npm: packages
// through deno's own channel.
//
// The SDK's testing kit runs [Parse] compiled to WebAssembly
// (internal/ruleswasm); the files it does not need (flags, wording,
// canonical form) are left out of that build (//go:build !js) to keep it
// small.
package permissions
