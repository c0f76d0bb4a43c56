package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
)

// TestActionMethodIsWhatItsDocSays holds history.Action.Method's doc to
// what the runner records there: each name it gives is in the form a
// run's log has (the SDK's method name without its object, as cdp logs
// it), and the marker of a cut log is the one recordAction writes.
func TestActionMethodIsWhatItsDocSays(t *testing.T) {
	doc := fieldDoc(t, "../history/entry.go", "Action", "Method")
	names := regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(doc, -1)
	require.NotEmpty(t, names, "the doc of Action.Method gives no example: %q", doc)

	r := &Run{}
	for i := 0; i < MaxActions+1; i++ {
		r.logAction(cdp.Action{Method: "fill", Target: "Quantity", Site: "shop.example", Outcome: "ok"})
	}
	require.Len(t, r.entry.Actions, MaxActions)
	assert.Equal(t, "fill", r.entry.Actions[0].Method)
	cut := r.entry.Actions[MaxActions-1].Method

	bare := regexp.MustCompile(`^[a-z][A-Za-z]*$`)
	sawCut := false
	for _, n := range names {
		if n[1] == cut {
			sawCut = true
			continue
		}
		assert.Regexp(t, bare, n[1], "Action.Method's doc names %q, a form the runner never records", n[1])
	}
	assert.True(t, sawCut, "Action.Method's doc does not name %q, the marker of a cut log", cut)
}

// fieldDoc returns the doc and line comments of a struct field in a Go file.
func fieldDoc(t *testing.T, file, typ, field string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	require.NoError(t, err)
	var doc string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != typ {
			return true
		}
		for _, fl := range ts.Type.(*ast.StructType).Fields.List {
			for _, name := range fl.Names {
				if name.Name == field {
					doc = fl.Doc.Text() + fl.Comment.Text()
				}
			}
		}
		return false
	})
	require.NotEmpty(t, doc, "%s.%s has no doc in %s", typ, field, file)
	return doc
}
