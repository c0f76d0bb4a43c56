package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests that spend their time waiting (on a page, a default timeout, a
// deno check) and share nothing call t.Parallel: each has its own
// manager, data folder and browser, and the package's leak check runs
// after all of them (TestMain). Go runs them after the package's other
// tests, -parallel at a time, so the tests that measure time, memory or
// CPU, or share a process-wide resource, run alone as before. A test that
// reads such a measure must not be parallel: parallelOnlyIfNot names what
// marks one, and TestParallelTestsMeasureNothingShared holds every
// parallel test's own body to it.
var parallelOnlyIfNot = map[string]string{
	"PeakOf":            "the process's heap",
	"sampleHeap":        "the process's heap",
	"heapPeak":          "the process's heap",
	"livePeak":          "the process's heap",
	"cpuTime":           "the process's CPU time",
	"NumGoroutine":      "the process's goroutines",
	"leftDeno":          "the process's children",
	"Setenv":            "the process's environment (t.Setenv panics)",
	"ChromiumWithPort":  "the one browser tests attach to",
	"devtoolsPort":      "the one browser tests attach to",
	"newMgrOwnCache":    "the process's environment",
	"measureSDKLatency": "latency",
}

func TestParallelTestsMeasureNothingShared(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	parallel := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Recv != nil {
				continue
			}
			isParallel := false
			var uses []string
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if n.Sel.Name == "Parallel" {
						if x, ok := n.X.(*ast.Ident); ok && x.Name == "t" {
							isParallel = true
						}
					}
					if _, bad := parallelOnlyIfNot[n.Sel.Name]; bad {
						uses = append(uses, n.Sel.Name)
					}
				case *ast.Ident:
					if _, bad := parallelOnlyIfNot[n.Name]; bad {
						uses = append(uses, n.Name)
					}
				}
				return true
			})
			if !isParallel {
				continue
			}
			parallel++
			for _, u := range uses {
				assert.Failf(t, "a parallel test measures what others share", "%s (%s) uses %s: %s", fn.Name.Name, name, u, parallelOnlyIfNot[u])
			}
		}
	}
	assert.Greater(t, parallel, 0, "no test is parallel: the rule holds nothing")
}
