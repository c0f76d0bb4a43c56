package automation_test

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocLinks: every doc link in the module's doc comments ([Name],
// [Type.Method], [pkg], [pkg.Name], [pkg.Type.Method]) names something
// that exists, and so does every name the prose gives without brackets in
// a form only a Go name has (pkg.Name, *Name). go doc prints a link to
// nothing as plain text, so a stale name after a rename goes unnoticed
// unless a test looks.
func TestDocLinks(t *testing.T) {
	pkgs := listPackages(t)
	byPath := map[string]pkg{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	docs := &docPackages{t: t, module: byPath, loaded: map[string]*doc.Package{}}
	names := map[string][]string{} // package name: import paths in the module
	for _, p := range pkgs {
		names[p.Name] = append(names[p.Name], p.ImportPath)
	}
	for _, p := range pkgs {
		fset, files := parsePackage(t, p.Dir, p.Name, slices.Concat(p.GoFiles, p.IgnoredGoFiles))
		here := docs.load(p.ImportPath)
		for _, f := range files {
			for _, cg := range docComments(f) {
				links, prose := docLinks(cg.Text())
				for _, l := range links {
					written := "[" + linkText(l) + "]"
					if why := docs.resolve(here, p.ImportPath, l); why != "" {
						t.Errorf("%s: %s %s", position(fset, cg, linkText(l)+"]"), written, why)
					}
				}
				for _, r := range proseNames(prose, here, names) {
					if why := docs.resolve(here, p.ImportPath, r.link); why != "" {
						t.Errorf("%s: %s %s", position(fset, cg, r.written), r.written, why)
					}
				}
			}
		}
	}
}

// docLinks returns the doc links of a comment's text: every bracketed
// name that has the form of one, whether or not it names anything, which
// the caller decides; and the comment's prose outside links and code.
func docLinks(text string) (links []*comment.DocLink, prose []string) {
	p := &comment.Parser{
		// The name itself stands for the package, resolved later.
		LookupPackage: func(name string) (string, bool) { return name, token.IsIdentifier(name) },
		LookupSym: func(recv, name string) bool {
			return token.IsIdentifier(name) && (recv == "" || token.IsIdentifier(recv))
		},
	}
	var walk func([]comment.Text)
	walk = func(texts []comment.Text) {
		for _, x := range texts {
			switch x := x.(type) {
			case *comment.DocLink:
				links = append(links, x)
			case *comment.Link:
				walk(x.Text)
			case comment.Plain:
				prose = append(prose, string(x))
			case comment.Italic:
				prose = append(prose, string(x))
			}
		}
	}
	for _, b := range p.Parse(text).Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.Heading:
			walk(b.Text)
		case *comment.List:
			for _, item := range b.Items {
				for _, ib := range item.Content {
					if para, ok := ib.(*comment.Paragraph); ok {
						walk(para.Text)
					}
				}
			}
		}
	}
	return links, prose
}

var (
	// qualified is a package's name and one of its names, or a type's
	// method or field: cdp.Connect, cdp.Tab.Click, *cdp.Tab. Quoted text
	// is left alone: it quotes, say, an error's wording.
	qualified = regexp.MustCompile(`(?:^|[\s(,;])\*?([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)
	// pointer is a pointer to a type of the package itself: *Tab, but
	// not a type parameter's *T.
	pointer = regexp.MustCompile(`(?:^|[\s(,;])\*([A-Z][A-Za-z0-9_]+)(?:$|[^A-Za-z0-9_.])`)
)

// A proseName is a Go name in a comment's prose, as written and as the
// doc link it would be.
type proseName struct {
	written string
	link    *comment.DocLink
}

// proseNames returns the Go names that prose mentions without brackets and
// that can only be meant as names: a package's name (one here imports, a
// package of the module, or a standard one go doc knows by name) followed
// by a name, and a pointer to a type (*Name). Brackets would make them
// links; without them a rename leaves them stale just the same.
func proseNames(prose []string, here *doc.Package, module map[string][]string) []proseName {
	var out []proseName
	for _, text := range prose {
		for _, m := range qualified.FindAllStringSubmatch(text, -1) {
			pkg, first, second := m[1], m[2], m[3]
			written := strings.TrimLeft(m[0], " \t\n(,;*")
			if _, ok := here.Parser().LookupPackage(pkg); !ok {
				if paths := module[pkg]; len(paths) == 1 {
					pkg = paths[0]
				} else if _, ok := comment.DefaultLookupPackage(pkg); !ok {
					continue // not a package this one can mean
				}
			}
			l := &comment.DocLink{ImportPath: pkg, Name: first}
			if second != "" {
				l = &comment.DocLink{ImportPath: pkg, Recv: first, Name: second}
			}
			out = append(out, proseName{written, l})
		}
		for _, m := range pointer.FindAllStringSubmatch(text, -1) {
			out = append(out, proseName{"*" + m[1], &comment.DocLink{Name: m[1]}})
		}
	}
	return out
}

// linkText is how l was written, less a leading '*'.
func linkText(l *comment.DocLink) string {
	var parts []string
	for _, s := range []string{l.ImportPath, l.Recv, l.Name} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ".")
}

// position is where in cg written is.
func position(fset *token.FileSet, cg *ast.CommentGroup, written string) token.Position {
	for _, c := range cg.List {
		if i := strings.Index(c.Text, written); i >= 0 {
			return fset.Position(c.Pos() + token.Pos(i))
		}
	}
	return fset.Position(cg.Pos())
}

// docComments returns the doc comments of f: the package's, each
// top-level declaration's and spec's, and those of the fields and methods
// of the structs and interfaces those declare.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, cg)
		}
	}
	fields := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false // a function body's comments are not doc comments
			case *ast.StructType:
				for _, fl := range n.Fields.List {
					add(fl.Doc)
				}
			case *ast.InterfaceType:
				for _, fl := range n.Methods.List {
					add(fl.Doc)
				}
			}
			return true
		})
	}
	add(f.Doc)
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			add(d.Doc)
		case *ast.GenDecl:
			add(d.Doc)
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					add(s.Doc)
					fields(s.Type)
				case *ast.ValueSpec:
					add(s.Doc)
					if s.Type != nil {
						fields(s.Type)
					}
				}
			}
		}
	}
	return out
}

// parsePackage parses the files of package name in dir, with comments;
// files of another package (a //go:build ignore program) are left out.
func parsePackage(t *testing.T, dir, name string, names []string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		require.NoError(t, err)
		if f.Name.Name == name {
			files = append(files, f)
		}
	}
	return fset, files
}

// docPackages loads the documentation of packages, of the module or
// not, by import path, once each.
type docPackages struct {
	t      *testing.T
	module map[string]pkg
	loaded map[string]*doc.Package // nil: no such package
}

func (d *docPackages) load(path string) *doc.Package {
	if p, ok := d.loaded[path]; ok {
		return p
	}
	p, ok := d.module[path]
	if !ok {
		p, ok = d.list(path)
	}
	var dp *doc.Package
	if ok {
		fset, files := parsePackage(d.t, p.Dir, p.Name, slices.Concat(p.GoFiles, p.IgnoredGoFiles))
		var err error
		dp, err = doc.NewFromFiles(fset, files, path, doc.AllDecls|doc.AllMethods|doc.PreserveAST)
		require.NoError(d.t, err, path)
	}
	d.loaded[path] = dp
	return dp
}

// list finds a package outside the module: the standard library's in
// GOROOT, a dependency's through go list (which go/build runs).
func (d *docPackages) list(path string) (pkg, bool) {
	wd, err := os.Getwd()
	require.NoError(d.t, err)
	bp, err := build.Import(path, wd, 0)
	if err != nil {
		return pkg{}, false
	}
	return pkg{ImportPath: path, Dir: bp.Dir, Name: bp.Name, GoFiles: bp.GoFiles, IgnoredGoFiles: bp.IgnoredGoFiles}, true
}

// resolve says why l, found in the package here (import path self), names
// nothing; "" when it names something.
func (d *docPackages) resolve(here *doc.Package, self string, l *comment.DocLink) string {
	if l.ImportPath == "" {
		if !here.Parser().LookupSym(l.Recv, l.Name) {
			return "names nothing in package " + here.Name
		}
		return ""
	}
	path, ok := l.ImportPath, strings.Contains(l.ImportPath, "/")
	if !ok {
		if path, ok = here.Parser().LookupPackage(l.ImportPath); ok && path == "" {
			path = self // the package's own name
		}
	}
	if !ok {
		path, ok = comment.DefaultLookupPackage(l.ImportPath)
	}
	if !ok && l.Name == "" {
		return "" // a bracketed word, such as [options], is no doc link
	}
	if !ok {
		return "names a package this one does not import"
	}
	there := d.load(path)
	if there == nil {
		return "names a package that does not exist: " + path
	}
	if l.Name != "" && !there.Parser().LookupSym(l.Recv, l.Name) {
		return "names nothing in package " + path
	}
	return ""
}
