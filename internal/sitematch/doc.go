// Package sitematch decides a page's address against a script's sites=
// grants. It is pure (no browser, no I/O) so that the runner's browser
// client and the offline testing kit, compiled to WebAssembly, apply the
// one rule.
package sitematch
