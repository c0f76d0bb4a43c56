//go:build js && wasm

// Command ruleswasm is the app's own header, sites= and import rules,
// compiled to WebAssembly for the SDK's offline testing kit, so that the
// kit decides as the app does with the app's code (runner/sdk/kit_rules.ts
// loads it). It answers synchronous calls and never exits: main leaves an
// object of functions on the global object its loader gives it, and
// blocks.
//
// `go generate ./internal/ruleswasm/gen` rebuilds runner/sdk/rules.wasm.gz (see ./gen).
// Keep its imports few: the compressed file must stay under 1 MB, and
// fmt, regexp and crypto each cost 50 to 170 KB of it.
package main
