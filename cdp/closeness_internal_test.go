package cdp

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
)

// closenessOfLists is the rule closeness follows, as it was written: the
// pairs of both texts listed as strings, then counted. It is the oracle
// closeness's tests hold it to.
func closenessOfLists(name, want string) float64 {
	pairs := func(s string) []string {
		var rs []rune
		for _, r := range strings.ToLower(s) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				rs = append(rs, r)
			}
		}
		if len(rs) == 1 {
			return []string{string(rs)}
		}
		out := make([]string, 0, max(len(rs)-1, 0))
		for i := 1; i < len(rs); i++ {
			out = append(out, string(rs[i-1:i+1]))
		}
		return out
	}
	a, b := pairs(name), pairs(want)
	if len(a)+len(b) == 0 {
		return 0
	}
	left := map[string]int{}
	for _, p := range b {
		left[p]++
	}
	shared := 0
	for _, p := range a {
		if left[p] > 0 {
			left[p]--
			shared++
		}
	}
	return 2 * float64(shared) / float64(len(a)+len(b))
}

func TestCloseness(t *testing.T) {
	for _, tc := range [][2]string{
		{"", ""}, {"Email", "E-mail address"}, {"Phone", "Email"}, {"a", "A"}, {"a", "ab"}, {"!", "a"},
		{"ÉCOLE", "école"}, {"aaaa", "aa"}, {"\xffa\xffb", "AB"}, {"İx", "ix"}, {"1 2 3", "123"},
	} {
		assert.Equal(t, closenessOfLists(tc[0], tc[1]), closeness(tc[0], tc[1]), "%q and %q", tc[0], tc[1])
	}
}

// A miss on a page whose names are megabytes is scored without a string
// for each pair of their letters: in the same few allocations for any
// length of name.
func TestClosenessIsCheap(t *testing.T) {
	name := strings.Repeat("ab cd É ", 64<<10/9)
	assert.Equal(t, closenessOfLists(name, "Abcd"), closeness(name, "Abcd"))
	allocs := testing.AllocsPerRun(5, func() { closeness(name, "Abcd") })
	assert.LessOrEqual(t, allocs, 4.0, "allocations for a 64 KiB name")
}

func FuzzCloseness(f *testing.F) {
	for _, s := range [][2]string{{"Email", "E-mail"}, {"a", "a"}, {"İ", "i"}, {"\xff", "\uFFFD"}, {"x1", "X1y"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, want string) {
		if got, oracle := closeness(name, want), closenessOfLists(name, want); got != oracle {
			t.Fatalf("closeness(%q, %q) = %v, want %v", name, want, got, oracle)
		}
	})
}

func BenchmarkCloseness(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"256KiB", 256 << 10}, {"4MiB", 4 << 20}} {
		name := strings.Repeat("ab cd ", size.bytes/6)
		nodes := []axNode{{role: "button", name: name}, {role: "button", name: "x"}}
		b.Run("axMatch/"+size.name, func(b *testing.B) {
			for b.Loop() {
				axMatch(nodes, "Emial", false, true)
			}
		})
		b.Run("lists/"+size.name, func(b *testing.B) {
			for b.Loop() {
				closenessOfLists(name, "Emial")
			}
		})
	}
}
