package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/runner/internal/modgraph"
)

// denoArgs is the exact deno command line of a run: the flags
// permissions.Flags computes for this manager, the V8 heap cap, then the
// bootstrap preloaded and the entry. Start and Plan both use it.
func (m *Manager) denoArgs(h *permissions.Header, sdk SDKPaths, entry string) ([]string, error) {
	deny := m.cfg.DenyLoopback
	if d, ok := m.cfg.Host.Tabs.(DevToolsEndpoints); ok {
		deny = append(slices.Clone(deny), d.DevToolsEndpoints()...)
	}
	fc := permissions.FlagConfig{
		BridgeAddr: m.bridge.Addr(), Bootstrap: sdk.Bootstrap, Entry: entry, SDKDir: sdk.Dir,
		ConfigPath: sdk.Config, DenyLoopback: deny, DefaultImports: m.cfg.DefaultImports,
		Protected: m.protected, Registry: m.graphs.Registry.Host, Lock: m.graphs.RunLock(modgraph.SDK(sdk)),
	}
	flags, err := permissions.Flags(h, fc)
	if err != nil {
		return nil, err
	}
	args := append([]string{"run"}, flags...)
	args = append(args, "--v8-flags=--max-old-space-size="+strconv.Itoa(m.cfg.HeapMB))
	return append(args, permissions.EntryArgs(h, fc)...), nil
}

// Plan is what a run of a script would get, computed without running it.
type Plan struct {
	Script string
	// Header is the parsed header; nil when the header is refused.
	Header *permissions.Header
	// Grants words each grant as the consent prompt does.
	Grants []permissions.Description
	// Capabilities are the host APIs the run would receive.
	Capabilities []permissions.Capability
	// Args is the exact deno command line (after the binary), with this
	// manager's bridge address.
	Args []string
	// Approved reports an approval of exactly this header; Approval is the
	// stored one, if any (it may be of an older header).
	Approved bool
	Approval *consent.Approval
	// Refused says why a run would be refused before it starts (a header
	// error, an undeclared import, a grant the flags refuse), or is nil.
	// Consent is reported by Approved, not here.
	Refused error
}

// Plan reports what Start would do with req, up to the point of asking
// for consent: the header, the exact deno arguments and the module-graph
// check. It asks nobody and starts nothing. The error is set only when the
// plan itself could not be made (an unreadable script, a broken SDK).
func (m *Manager) Plan(ctx context.Context, req Request) (Plan, error) {
	script, err := filepath.Abs(req.Script)
	if err != nil {
		return Plan{}, fmt.Errorf("runner: %w", err)
	}
	p := Plan{Script: script}
	src, err := os.ReadFile(script)
	if err != nil {
		return p, fmt.Errorf("runner: %w", err)
	}
	h, err := permissions.Parse(src, script)
	if err != nil {
		p.Refused = err
		return p, nil
	}
	p.Header, p.Grants, p.Capabilities = h, h.Describe(), h.Capabilities()
	if a, ok, err := m.gate.Store().Get(ctx, script); err == nil && ok {
		p.Approval = &a
		p.Approved = a.Header == h.Canonical()
	}
	sdk, err := m.prepare(ctx)
	if err != nil {
		return p, err
	}
	entry := script // a selection is checked as its source file
	if p.Args, err = m.denoArgs(h, sdk, entry); err != nil {
		p.Refused = err
		return p, nil
	}
	if err := m.checkGraph(ctx, sdk, h, entry); err != nil {
		p.Refused = err
	}
	return p, nil
}

// CacheWarm reports whether the SDK's dependencies are in deno's module
// cache, so a run would download nothing. It loads a probe module of the
// SDK with --cached-only.
func (m *Manager) CacheWarm(ctx context.Context) (bool, error) {
	sdk, err := MaterializeSDK(filepath.Join(m.cfg.DataDir, "sdk"))
	if err != nil {
		return false, err
	}
	cmd := exec.CommandContext(ctx, m.deno, "run", "--no-prompt", "--cached-only", "--no-lock",
		"--config="+sdk.Config, filepath.Join(sdk.Dir, "cache_probe.ts"))
	cmd.Env = m.baseEnv()
	cmd.Dir = sdk.Dir
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return false, nil
	}
	return err == nil, err
}
