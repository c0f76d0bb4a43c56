package hosttest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeHarness is what the README's embedding snippet leaves out: the
// package, its imports, the tiny host types the README says are defined in
// examples/embed, and the values main passes.
const readmeHarness = `package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tranquil/automation/cdptabs"
	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/runner"
)

type ui struct{}

func (ui) Notify(context.Context, runner.RunInfo, string, runner.Level) error  { return nil }
func (ui) Open(context.Context, runner.RunInfo, string, runner.OpenOptions) error { return nil }

type clipboard struct{}

func (*clipboard) Read(context.Context, runner.RunInfo) (string, error)   { return "", nil }
func (*clipboard) Write(context.Context, runner.RunInfo, string) error    { return nil }

type workspace string

func (w workspace) ProjectDir(context.Context, runner.RunInfo) (string, error) { return string(w), nil }

var dataDir, projectDir, denoPath = "data", "project", "deno"

var _, _ = os.Interrupt, syscall.SIGTERM
var _ = signal.NotifyContext
var _ = time.Second
`

// TestReadmeEmbeddingSnippetCompiles builds the README's embedding snippet
// against the library (so it must type-check, not only parse), with the
// few declarations the README says it leaves out, and holds it to handling
// Ctrl-C.
func TestReadmeEmbeddingSnippetCompiles(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "## Embed it in your host")
	require.True(t, ok)
	_, code, ok := strings.Cut(section, "```go\n")
	require.True(t, ok)
	code, _, _ = strings.Cut(code, "```")
	assert.Contains(t, code, "signal.NotifyContext(", "the snippet does not stop on Ctrl-C")
	// Ctrl-C cancels the run and waits for it, and the manager shuts down
	// with the scripts' grace: main does not exit 1 with "context canceled".
	assert.Contains(t, code, "run.Cancel(", "Ctrl-C does not cancel the run")
	assert.Contains(t, code, "m.Shutdown(", "the manager does not give scripts their grace")
	for _, f := range []string{"State", "Reason", "Result", "FirstError", "Output", "ExitCode", "Start", "Duration", "Warnings", "Actions", "Permissions"} {
		assert.Contains(t, code, "entry."+f, "the snippet names history.Entry's fields")
	}

	// The package goes into the module through an overlay, so nothing is
	// written to the source tree.
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "main.go")
	require.NoError(t, os.WriteFile(src, []byte(readmeHarness+"\n"+code), 0o600))
	pkg := filepath.Join(root, "hosttest", "internal", "readmesnippet")
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkg, "main.go"): src}})
	require.NoError(t, err)
	ov := filepath.Join(tmp, "overlay.json")
	require.NoError(t, os.WriteFile(ov, overlay, 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", os.DevNull, "-overlay="+ov, "./hosttest/internal/readmesnippet")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the README's embedding snippet does not compile:\n%s", out)
}
