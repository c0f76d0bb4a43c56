package runner

import (
	_ "embed" // the shipped std.lock

	"github.com/tranquil/automation/runner/internal/modgraph"
)

// shippedStdLock pins the @std packages the SDK maps (and the packages
// they import) to the integrity of their version manifests on jsr.io, in
// deno.lock format. Prepare verifies every download against it. Rewrite it
// with `go generate ./runner` (see gen_stdlock_test.go) after changing a
// version in sdk/deno.json.
//
//go:generate go test -run ^TestGenerateStdLock$ . -args -stdlock.registry=https://jsr.io/
//go:embed std.lock
var shippedStdLock []byte

// ErrRegistry reports that Prepare could not cache the SDK's @std modules
// from Config.JSR. Runs still start; a script importing one is refused
// with ErrRemoteImport.
var ErrRegistry = modgraph.ErrRegistry

// stdSeed is the lock Prepare verifies the @std packages against.
func stdSeed(cfg Config) []byte {
	if cfg.stdLock != nil {
		return cfg.stdLock
	}
	return shippedStdLock
}
