package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/winetest"
	"github.com/tranquil/automation/runner/internal/modgraph"
)

// rewriter watches a .runs folder and rewrites every selection file it
// finds, as fast as it can, with code that prints a file only the victim
// may read. It says "watching" once it is in its loop.
const rewriter = `// @permissions %s
// @timeout none
const dir = %q;
const evil = %q;
let told = false;
while (true) {
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (e.name.endsWith(".ts")) Deno.writeTextFileSync(dir + "/" + e.name, evil);
    }
  } catch { /* no folder yet */ }
  if (!told) { told = true; console.log("watching"); }
  await new Promise((r) => setTimeout(r, 0));
}
`

// selectionRig is a source script that may read secret.txt, and the code
// an attacker would like to run in its place.
type selectionRig struct {
	e      *mgrEnv
	source string
	runs   string // the source's .runs folder
	evil   string
}

func newSelectionRig(t *testing.T) *selectionRig {
	e := newMgr(t, nil)
	secret := e.script(t, "tools/secret.txt", "the secret is 42")
	s := &selectionRig{e: e, source: e.script(t, "tools/source.ts", "// @permissions read=secret.txt\nconsole.log(\"whole file\");\n")}
	s.runs = filepath.Join(filepath.Dir(s.source), ".runs")
	s.evil = fmt.Sprintf("console.log(\"injected\", Deno.readTextFileSync(%q));\n", secret)
	return s
}

// startWatcher starts a rewriter script and waits until it watches, or
// returns its entry if it ended first.
func (s *selectionRig) startWatcher(t *testing.T, name, header string) (*Run, *history.Entry) {
	t.Helper()
	r, err := s.e.m.Start(context.Background(), Request{Script: s.e.script(t, name, fmt.Sprintf(rewriter, header, s.runs, s.evil))})
	require.NoError(t, err)
	t.Cleanup(func() { r.Cancel("test over") })
	deadline := time.After(30 * time.Second)
	for {
		select {
		case <-r.Done():
			entry, _ := r.Wait(context.Background())
			return r, &entry
		case <-deadline:
			t.Fatal("the watcher never started")
		case <-time.After(10 * time.Millisecond):
		}
		s.e.mu.Lock()
		for _, ev := range s.e.events {
			if ev.RunID == r.ID() && ev.Kind == EventOutput && ev.Line == "watching" {
				s.e.mu.Unlock()
				return r, nil
			}
		}
		s.e.mu.Unlock()
	}
}

func (s *selectionRig) runSelection(t *testing.T) history.Entry {
	t.Helper()
	_, entry := s.e.run(t, Request{Script: s.source, Selection: &Selection{Text: "console.log(\"selected\");\n"}})
	return entry
}

// TestSelectionCannotBeRewrittenFromRuns is the attack: a script beside
// the source, granted .runs, rewrites each selection file between its
// writing and deno loading it. Such a grant refuses the run, so the
// selection runs what the user selected.
func TestSelectionCannotBeRewrittenFromRuns(t *testing.T) {
	for _, header := range []string{"read=.runs write=.runs", "read=.runs/../.runs write=.runs/x/.."} {
		t.Run(header, func(t *testing.T) {
			s := newSelectionRig(t)
			w, ended := s.startWatcher(t, "tools/watch.ts", header)
			for range 3 {
				entry := s.runSelection(t)
				assert.NotContains(t, entry.Output, "injected", "the selection ran another script's code")
				assert.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
				assert.Contains(t, entry.Output, "selected")
			}
			if ended == nil {
				w.Cancel("test over")
				e, _ := w.Wait(context.Background())
				ended = &e
			}
			assert.Equal(t, history.StateRefused, ended.State, "the watcher must not run")
			assert.Contains(t, ended.Reason, "run-selection files", ended.Reason)
		})
	}
}

// TestSelectionRefusedWhileALiveRunCanWriteThere: a script elsewhere may
// write the source's folder (and so its .runs). While it runs, a selection
// there is refused rather than handed to it.
func TestSelectionRefusedWhileALiveRunCanWriteThere(t *testing.T) {
	winetest.RequireSymlinks(t)
	s := newSelectionRig(t)
	w, ended := s.startWatcher(t, "other/watch.ts", "read=../tools write=../tools")
	require.Nil(t, ended, "a grant of the folder itself is allowed: %v", ended)
	entry := s.runSelection(t)
	assert.Equal(t, history.StateRefused, entry.State, entry.Reason+entry.Output)
	assert.Contains(t, entry.Reason, w.ID(), "the refusal names the run that could write there")
	assert.NotContains(t, entry.Output, "injected")
	_, err := os.Stat(s.runs)
	assert.True(t, os.IsNotExist(err), "nothing was left behind")

	// Through a link made beforehand, the same.
	w.Cancel("next")
	_, _ = w.Wait(context.Background())
	require.NoError(t, os.MkdirAll(filepath.Join(s.e.dir, "other", "box"), 0o755))
	require.NoError(t, os.Symlink(filepath.Dir(s.source), filepath.Join(s.e.dir, "other", "box", "alias")))
	w, ended = s.startWatcher(t, "other/watch2.ts", "read=box write=box")
	require.Nil(t, ended)
	entry = s.runSelection(t)
	assert.Equal(t, history.StateRefused, entry.State, entry.Reason+entry.Output)
	assert.Contains(t, entry.Reason, w.ID())
}

// TestRunRefusedWhileASelectionIsLive starts the selection first: a run
// whose write= grant reaches the live selection file does not start.
func TestRunRefusedWhileASelectionIsLive(t *testing.T) {
	s := newSelectionRig(t)
	sel, err := s.e.m.Start(context.Background(), Request{Script: s.source, Selection: &Selection{Text: "console.log(\"selected\");\nawait new Promise((r) => setTimeout(r, 60_000));\n"}})
	require.NoError(t, err)
	defer sel.Cancel("test over")
	require.Eventually(t, func() bool { return sel.State() == history.StateRunning }, 30*time.Second, 5*time.Millisecond)
	_, ended := s.startWatcher(t, "other/watch.ts", "read=../tools write=../tools")
	require.NotNil(t, ended, "the writer must not run while the selection is live")
	assert.Equal(t, history.StateRefused, ended.State)
	assert.Contains(t, ended.Reason, filepath.Join(s.runs, sel.ID()+"--"+filepath.Base(s.source)))
	sel.Cancel("done")
	entry, err := sel.Wait(context.Background())
	require.NoError(t, err)
	assert.NotContains(t, entry.Output, "injected")
}

func TestSelectionFolderMustBeAPlainDirectory(t *testing.T) {
	winetest.RequireSymlinks(t)
	s := newSelectionRig(t)
	elsewhere := filepath.Join(s.e.dir, "elsewhere")
	require.NoError(t, os.MkdirAll(elsewhere, 0o755))
	require.NoError(t, os.Symlink(elsewhere, s.runs))
	entry := s.runSelection(t)
	assert.Equal(t, history.StateRefused, entry.State)
	assert.Contains(t, entry.Reason, "not a plain directory")
	left, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, left, "nothing was written through the link")
	assert.False(t, strings.Contains(entry.Output, "selected"))
}

// An error in a run from a selection names the line of the source file
// the text was selected from, never the selection file's: in the frame of
// an uncaught error, and in the message of an error the SDK throws.
func TestSelectionErrorsNameTheSourceLine(t *testing.T) {
	e := newMgr(t, nil)
	body := "// @permissions none\n" +
		"import { clipboard, context } from \"tranquil/automation\";\n" +
		"let caught = \"\";\n" +
		"try { await clipboard.read(); } catch (e) { caught = (e as Error).message; }\n" +
		"console.log(\"CAUGHT \" + caught);\n" +
		"throw new Error(\"boom\");\n"
	src := e.script(t, "tools/source.ts", body)
	sel := body[strings.Index(body, "import"):]
	for name, s := range map[string]*Selection{
		"found in the source": {Text: sel},
		"placed by the host":  {Text: sel, Line: 2, Column: 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, entry := e.run(t, Request{Script: src, Selection: s})
			require.Equal(t, history.StateFailed, entry.State, entry.Output)
			srcURL := modgraph.FileURL(src)
			assert.Contains(t, entry.Output, "CAUGHT clipboard.read is not granted", entry.Output)
			assert.Contains(t, entry.Output, "(at "+srcURL+":4:", "the SDK's message names the source's line:\n%s", entry.Output)
			assert.Contains(t, entry.FirstError, "Error: boom at "+srcURL+":6:7", "the uncaught error's frame is the source's line")
			assert.NotContains(t, entry.Output, ".runs")
		})
	}
}
