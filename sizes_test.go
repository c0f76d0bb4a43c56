package automation_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Limits that keep each file one room a reader can hold in mind: no source
// file over maxFileLines, no function over maxFuncLines. A function that is
// one flat switch, each case short (flatCaseLines), may be longer: a table
// reads as well as a list of small functions would.
const (
	maxFileLines  = 700
	maxFuncLines  = 120
	flatCaseLines = 30
)

func TestFileAndFunctionSizes(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(name, "go.mod")); err == nil && name != "." {
				return filepath.SkipDir // another module, with rules of its own
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return err
		}
		checked++
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
			lines := fset.Position(body.End()).Line - start.Line + 1
			if lines > maxFuncLines && !flatSwitch(fset, body) {
				t.Errorf("%s:%d: a function of %d lines (at most %d)", name, start.Line, lines, maxFuncLines)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d source files found: is the test running at the module root?", checked)
	}
}

// flatSwitch reports whether body is, but for a few lines before it, one
// switch whose cases are each at most flatCaseLines long.
func flatSwitch(fset *token.FileSet, body *ast.BlockStmt) bool {
	var sw *ast.BlockStmt
	for _, st := range body.List {
		switch x := st.(type) {
		case *ast.SwitchStmt:
			sw = x.Body
		case *ast.TypeSwitchStmt:
			sw = x.Body
		}
		if sw != nil {
			break
		}
	}
	if sw == nil || fset.Position(sw.Pos()).Line-fset.Position(body.Pos()).Line > 10 {
		return false
	}
	for _, c := range sw.List {
		if fset.Position(c.End()).Line-fset.Position(c.Pos()).Line+1 > flatCaseLines {
			return false
		}
	}
	return true
}

// maxTrackedBytes bounds a file the repository tracks outside testdata/:
// a build output (a compiled test host, say) committed by mistake is
// caught here rather than by every clone.
const maxTrackedBytes = 1 << 20

func TestNoLargeTrackedFiles(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v (the test needs the git checkout)", err)
	}
	checked := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || strings.Contains("/"+name, "/testdata/") {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			continue // deleted in the working tree
		}
		checked++
		if fi.Size() > maxTrackedBytes {
			t.Errorf("%s is %d bytes, over %d: keep build outputs out of the repository (.gitignore), data in testdata/", name, fi.Size(), maxTrackedBytes)
		}
	}
	if checked == 0 {
		t.Fatal("no tracked files checked")
	}
}
