package cdp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// fieldsJoined is the rule normalizeSpace follows, as it was written: the
// oracle its tests hold it to.
func fieldsJoined(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestNormalizeSpace(t *testing.T) {
	for _, in := range []string{
		"", " ", "a", "a b", " a", "a ", "a  b", "a\tb", "\v\f\r\n", "a\u00a0b", "a\u0085", "\u3000a\u2028b",
		"\xffa \xff", "a\xc2", "\xc2\xa0", "a\u200bb", "Card  holder\n", "x\x1cy",
	} {
		assert.Equal(t, fieldsJoined(in), normalizeSpace(in), "%q", in)
	}
}

// A name or a text already in its normal form is not copied.
func TestNormalizeSpaceKeepsNormalText(t *testing.T) {
	in := strings.Repeat("ab cd ", 10<<10) + "é"
	assert.Zero(t, testing.AllocsPerRun(5, func() { normalizeSpace(in) }))
	in = strings.Repeat("ab  cd ", 10<<10)
	assert.LessOrEqual(t, testing.AllocsPerRun(5, func() { normalizeSpace(in) }), 1.0)
}

func FuzzNormalizeSpace(f *testing.F) {
	for _, s := range []string{"a  b", " \u00a0a\u2029", "\xff \xc2", "a\x85b", "\t\v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if want, got := fieldsJoined(s), normalizeSpace(s); got != want {
			t.Fatalf("normalizeSpace(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkNormalizeSpace(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"256KiB", 256 << 10}, {"4MiB", 4 << 20}} {
		for name, unit := range map[string]string{"normal": "ab cd ", "spaced": "a \t b\n", "latin": "é\u00a0é "} {
			text := "x" + strings.Repeat(unit, size.bytes/len(unit)) + "x"
			b.Run("scan/"+size.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					normalizeSpace(text)
				}
			})
			b.Run("fields/"+size.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					fieldsJoined(text)
				}
			})
		}
	}
}
