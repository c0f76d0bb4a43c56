package runner

import (
	"context"

	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/runner/internal/modgraph"
)

// ErrUndeclaredImport refuses a script whose module graph loads a local
// file that is neither the entry, the SDK, nor inside a read= grant. Deno
// loads static imports (including text and JSON imports) without any
// permission check, so the header alone would not stop them.
var ErrUndeclaredImport = modgraph.ErrUndeclaredImport

// ErrRemoteImport refuses a script whose module graph, statically or by
// a dynamic import of a string literal, names a module its run cannot
// load: remote code (jsr:, http:, https:, npm:) when the run may import
// none (no import= grant, no Config.DefaultImports), a jsr: module other
// than the @std packages the SDK pins (at their pinned versions, from
// Config.JSR's cache), a bare name the SDK's import map does not map, a
// blob: URL, or a scheme deno does not load. The message says what to do
// instead. node: built-ins and data: URLs load in every run.
var ErrRemoteImport = modgraph.ErrRemoteImport

// checkGraph refuses a run of entry whose granted trees reach the host's
// data through links (checked every time: a link can appear at any
// moment), or whose module graph loads what it may not (package modgraph,
// which remembers a passed graph).
func (m *Manager) checkGraph(ctx context.Context, sdk SDKPaths, h *permissions.Header, entry string) error {
	if err := m.checkGrantTrees(h); err != nil {
		return err
	}
	return m.graphs.Check(ctx, modgraph.SDK(sdk), h, entry)
}

// launcher is the Manager's side of the deno processes package modgraph
// starts.
type launcher struct{ m *Manager }

func (l launcher) DownloadEnv() []string { return append(l.m.baseEnv(), downloadEnv()...) }

func (l launcher) ScratchEnv() ([]string, func(), error) { return l.m.scratchEnv() }

func (l launcher) StartErr(err error) error { return l.m.denoStartErr(err) }
