package cdp

import (
	"strings"
	"testing"

	"github.com/mafredri/cdp/protocol/dom"
	"github.com/stretchr/testify/assert"
)

// axTiersOf is the tiers axMatch picks from, as they were written (each
// name lower-cased once per comparison): the oracle its tests hold it to.
func axTiersOf(nodes []axNode, want string, exact bool) (whole, part []axNode) {
	w := normalizeSpace(want)
	lw := strings.ToLower(w)
	for _, n := range nodes {
		switch {
		case exact && n.name == w:
			whole = append(whole, n)
		case exact:
		case strings.ToLower(n.name) == lw:
			whole = append(whole, n)
		case lw != "" && strings.Contains(strings.ToLower(n.name), lw):
			part = append(part, n)
		}
	}
	return whole, part
}

func checkAxMatch(t *testing.T, names []string, want string, exact bool) {
	t.Helper()
	var nodes []axNode
	for i, name := range names {
		nodes = append(nodes, axNode{backend: dom.BackendNodeID(i + 1), role: "button", name: name})
	}
	whole, part := axTiersOf(nodes, want, exact)
	tier := whole
	if len(tier) == 0 {
		tier = part
	}
	best, _ := axMatch(nodes, want, exact, true)
	if len(tier) == 0 {
		tier = nil
	}
	assert.Equal(t, tier, best, "%q among %q (exact %v)", want, names, exact)
}

func TestAxMatchTiers(t *testing.T) {
	names := []string{"Email", "email address", "EMAIL", "Phone", "", "\u212aey", "İx"}
	for _, want := range []string{"email", "Email", "mail", "", "key", "ix", "İx", "  Email ", "nothing"} {
		for _, exact := range []bool{false, true} {
			checkAxMatch(t, names, want, exact)
		}
	}
}

func FuzzAxMatchTiers(f *testing.F) {
	f.Add("Email", "email address", "mail", false)
	f.Add("\u212a", "k", "K", true)
	f.Fuzz(func(t *testing.T, a, b, want string, exact bool) {
		checkAxMatch(t, []string{a, b}, want, exact)
	})
}

func BenchmarkAxMatchHit(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"256KiB", 256 << 10}, {"4MiB", 4 << 20}} {
		name := strings.Repeat("Été ", size.bytes/6) + "Email"
		nodes := []axNode{{role: "button", name: name}, {role: "button", name: "x"}}
		b.Run(size.name, func(b *testing.B) {
			for b.Loop() {
				axMatch(nodes, "email", false, true)
			}
		})
		b.Run("twice/"+size.name, func(b *testing.B) {
			for b.Loop() {
				axTiersOf(nodes, "email", false)
			}
		})
	}
}
