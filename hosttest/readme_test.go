package hosttest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeEmbeddingSnippet holds the README's embedding snippet to what
// a host needs: it compiles as Go syntax, sets DenoPath, opens the first
// page, and never exits a function after deferring cleanup (log.Fatal
// skips deferred calls, which would leave a browser profile behind).
func TestReadmeEmbeddingSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "## Embed it in your host")
	require.True(t, ok)
	_, code, ok := strings.Cut(section, "```go\n")
	require.True(t, ok)
	code, _, _ = strings.Cut(code, "```")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "README.md", "package host\n"+code, 0)
	require.NoError(t, err, "the snippet is not Go")
	assert.Contains(t, code, "DenoPath:")
	assert.Contains(t, code, "tabs.Open(")
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		deferred := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.DeferStmt:
				deferred = true
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && deferred {
					name := exprName(sel.X) + "." + sel.Sel.Name
					if strings.HasPrefix(name, "log.Fatal") || name == "os.Exit" || strings.HasPrefix(name, "log.Panic") {
						t.Errorf("%s: %s after a defer in %s skips the deferred cleanup", fset.Position(n.Pos()), name, fn.Name.Name)
					}
				}
			}
			return true
		})
	}
}

func exprName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
