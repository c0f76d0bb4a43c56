package cdp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// formsFiles are the form runtime's files (see the layout note in doc.go).
var formsFiles = []string{"forms.go", "readers.go", "ready.go", "files.go", "ax.go"}

// TestFormsBoundary checks that the form runtime reaches the tab only
// through the core interface: its files never name Tab (no *Tab receiver,
// variable, conversion or assertion, so no Tab field or method can be
// selected), declare methods on forms only, and the interface stays narrow.
func TestFormsBoundary(t *testing.T) {
	fset := token.NewFileSet()
	methods := -1
	for _, name := range formsFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range formsBoundaryViolations(fset, f) {
			t.Error(v)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "core" {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					methods = 0
					for _, m := range it.Methods.List {
						methods += max(len(m.Names), 1)
					}
				}
			}
			return true
		})
	}
	if methods < 0 {
		t.Fatal("the core interface is not declared in the form runtime's files")
	}
	if methods > 15 {
		t.Errorf("the core interface has %d methods; the form runtime should need few (at most 15)", methods)
	}
}

// formsBoundaryViolations lists where f names Tab or declares a method on
// a type other than forms.
func formsBoundaryViolations(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil {
			continue
		}
		typ := fd.Recv.List[0].Type
		if st, ok := typ.(*ast.StarExpr); ok {
			typ = st.X
		}
		if id, ok := typ.(*ast.Ident); !ok || id.Name != "forms" {
			out = append(out, fset.Position(fd.Pos()).String()+": method "+fd.Name.Name+" is not on forms")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "Tab" {
			out = append(out, fset.Position(id.Pos()).String()+": names Tab; reach the page through core")
		}
		return true
	})
	return out
}

// TestFormsBoundaryCatches shows the check finds a form-runtime file that
// reaches into the tab.
func TestFormsBoundaryCatches(t *testing.T) {
	const src = `package cdp
func (t *Tab) peek() string { return t.url }
func (fm *forms) poke(t *Tab) { t.mu.Lock() }
func (fm *forms) ok() { _ = fm.p.frameOfRef("") }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := formsBoundaryViolations(fset, f); len(got) != 3 {
		t.Errorf("violations = %q, want 3 (a method on Tab, and Tab named twice)", got)
	}
}
