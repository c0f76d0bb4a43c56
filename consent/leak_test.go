package consent

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tranquil/automation/internal/leakcheck"
)

// TestMain fails the run when the tests leave goroutines running (a
// revocation watcher whose last subscriber never left, a prompt nobody
// answered or cancelled, a re-executed helper never waited for) or
// anything in the temporary directory beyond what t.TempDir removes.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Wrap(func() int { return runMain(m) }))
}

func runMain(m *testing.M) int {
	root, err := os.MkdirTemp("", "consent-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(root)
	for _, env := range []string{"TMPDIR", "TMP", "TEMP"} { // os.TempDir's, on Unix and Windows
		os.Setenv(env, root)
	}
	code := m.Run()
	if code == 0 {
		if left := tempLeft(root); left != "" {
			fmt.Fprintf(os.Stderr, "consent tests left files in the temporary directory %s: %s\n", root, left)
			code = 1
		}
	}
	return code
}

// tempLeft names what is left directly under root.
func tempLeft(root string) string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return err.Error()
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, ", ")
}
