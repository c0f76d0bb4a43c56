package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Limits that keep each file of the package one room a reader can hold in
// mind: no source file over maxFileLines, no function over maxFuncLines.
const (
	maxFileLines = 700
	maxFuncLines = 120
)

func TestFileAndFunctionSizes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s has %d lines; split it by job (at most %d)", name, n, maxFileLines)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			switch d := n.(type) {
			case *ast.FuncDecl:
				body = d.Body
			case *ast.FuncLit:
				body = d.Body
			}
			if body == nil {
				return true
			}
			start := fset.Position(n.Pos())
			if lines := fset.Position(body.End()).Line - start.Line + 1; lines > maxFuncLines {
				t.Errorf("%s:%d: a function of %d lines (at most %d)", name, start.Line, lines, maxFuncLines)
			}
			return true
		})
	}
}
