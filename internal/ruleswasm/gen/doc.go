// Command gen rebuilds the testing kit's WebAssembly: it compiles
// internal/ruleswasm for GOOS=js GOARCH=wasm (trimmed, stripped), writes
// it gzipped to runner/sdk/rules.wasm.gz, and records in sources_gen.go a
// hash of the module's Go files that went into it. Go's output depends on
// the toolchain, so the test compares that hash, not the bytes, to tell a
// stale file. Run it as `go generate ./internal/ruleswasm/gen`.
//
//go:generate go run .
package main
