package runner

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/runner/internal/modgraph"
)

var stdLockRegistry = flag.String("stdlock.registry", "", "rewrite std.lock from the @std packages this JSR registry serves at the versions sdk/deno.json pins (go generate ./runner)")

// TestGenerateStdLock is the generator behind `go generate ./runner`: it
// rewrites std.lock from what the registry named by -stdlock.registry
// serves at the versions sdk/deno.json pins. It downloads, so it runs only
// when asked; TestStdLockGenerator checks the same steps against the
// stand-in registry on every run.
func TestGenerateStdLock(t *testing.T) {
	if *stdLockRegistry == "" {
		t.Skip("rewrites std.lock only under go generate (-stdlock.registry)")
	}
	require.NoError(t, os.WriteFile("std.lock", generateStdLock(t, *stdLockRegistry), 0o644))
}

// generateStdLock runs Prepare against registry from an empty seed and
// returns the lock it wrote: every pinned package, every package they
// import, the integrity of each as the registry serves it.
func generateStdLock(t testing.TB, registry string) []byte {
	t.Helper()
	e := newMgr(t, func(c *Config) {
		c.JSR = registry
		c.stdLock = []byte(`{"version": "5"}`)
	})
	sdk, err := e.m.prepare(context.Background())
	require.NoError(t, err)
	data, err := os.ReadFile(e.m.graphs.StdLockPath(modgraph.SDK(sdk)))
	require.NoError(t, err)
	return data
}

// The generator, run against the stand-in registry, writes a lock with
// an entry for every pinned package whose integrity is the one the
// stand-in computes for what it serves (the SHA-256 of the version
// manifest): the stand-in's own lock and a generated one agree, so the
// tests verify the stand-in's packages exactly as Prepare verifies
// jsr.io's against the shipped lock.
func TestStdLockGenerator(t *testing.T) {
	reg := serveJSR(t, stdStandIns(t))
	var lock struct {
		Version    string            `json:"version"`
		Specifiers map[string]string `json:"specifiers"`
		JSR        map[string]struct {
			Integrity string `json:"integrity"`
		} `json:"jsr"`
		Workspace struct {
			Dependencies []string `json:"dependencies"`
		} `json:"workspace"`
	}
	require.NoError(t, json.Unmarshal(generateStdLock(t, reg.Root), &lock))
	assert.Equal(t, "5", lock.Version)
	for _, p := range sdkPins(t) {
		nv := p.Name + "@" + p.Version
		assert.Equal(t, p.Version, lock.Specifiers["jsr:"+nv], nv)
		assert.Equal(t, reg.integrity[nv], lock.JSR[nv].Integrity, nv)
		assert.Contains(t, lock.Workspace.Dependencies, "jsr:"+nv)
	}
	assert.Contains(t, lock.Workspace.Dependencies, "npm:capnweb@0.12.0", "the SDK's own npm package is in the lock a frozen run needs")
}

// The shipped lock pins every package the SDK maps at its pinned version
// wherever it records one, and names no other version of them.
func TestShippedStdLockMatchesThePins(t *testing.T) {
	var lock struct {
		Version string `json:"version"`
		JSR     map[string]struct {
			Integrity string `json:"integrity"`
		} `json:"jsr"`
	}
	require.NoError(t, json.Unmarshal(shippedStdLock, &lock))
	assert.Equal(t, "5", lock.Version)
	pins := map[string]string{}
	for _, p := range sdkPins(t) {
		pins[p.Name] = p.Version
	}
	for nv, e := range lock.JSR {
		assert.Regexp(t, `^[0-9a-f]{64}$`, e.Integrity, nv)
		at := strings.LastIndex(nv, "@")
		name, version := nv[:at], nv[at+1:]
		if want, ok := pins[name]; ok {
			assert.Equal(t, want, version, "%s: the lock pins another version than sdk/deno.json", name)
		}
	}
}
