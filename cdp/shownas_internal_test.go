package cdp

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// shownAsByWindow is the rule shownAs follows, as it was written: every
// window of name as long as option, compared ignoring case. It is the
// oracle shownAs's tests hold it to.
func shownAsByWindow(name, option string) (string, bool) {
	for i := range name {
		if j := i + len(option); j <= len(name) && strings.EqualFold(name[i:j], option) {
			return name[i:j], true
		}
	}
	if strings.Contains(strings.ToLower(name), strings.ToLower(option)) {
		return option, true
	}
	return "", false
}

func TestShownAs(t *testing.T) {
	for _, tc := range [][2]string{
		{"", ""}, {"Fruit", ""}, {"", "a"},
		{"Fruit: Banana", "banana"}, {"Fruit: BANANA", "Banana"}, {"Fruit", "apple"},
		{"Size: \u212aB", "kb"}, {"Size: kB", "\u212ab"}, {"ſize", "SIZE"}, {"İstanbul", "istanbul"},
		{"\xffa", "A"}, {"é", "É"}, {"aé", "\xc3"}, {"x\xe2\x84", "\xe2\x84"}, {"aaab", "aab"},
		{"é\uFFFD", "É\xef"}, {"xé\uFFFD", "É\xef\xbf"}, {"\xff\u212a", "\xffk"}, {"a\U0001F600", "A\xf0\x9f"}, {"ab", "\xff"}, {"a😀", "\xff"},
	} {
		wantShown, wantOK := shownAsByWindow(tc[0], tc[1])
		shown, ok := shownAs(tc[0], tc[1])
		assert.Equal(t, wantOK, ok, "%q in %q", tc[1], tc[0])
		assert.Equal(t, wantShown, shown, "%q in %q", tc[1], tc[0])
	}
}

// A page's name that almost holds the choice over and over is read once
// for each time it is read back, not once per letter of the choice.
func TestShownAsIsLinear(t *testing.T) {
	for _, letter := range []string{"a", "é"} {
		name, option := strings.Repeat(letter, 512<<10), strings.Repeat(strings.ToUpper(letter), 32<<10)+"b"
		start := time.Now()
		_, ok := shownAs(name, option)
		took := time.Since(start)
		assert.False(t, ok)
		// Linear takes 0.2 to 0.4 s here under -race, and passed 1 s in a
		// whole make test; the quadratic scan took 1.5 s at a quarter of
		// this size, so about 24 s at it.
		assert.Less(t, took, 5*time.Second, "%d bytes of %q took %v", len(name), letter, took)
	}
}

func FuzzShownAs(f *testing.F) {
	for _, s := range [][2]string{{"Fruit: Banana", "BANANA"}, {"\u212a", "k"}, {"ſ", "S"}, {"İ", "i"}, {"a\xff", "\xff"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, option string) {
		wantShown, wantOK := shownAsByWindow(name, option)
		if shown, ok := shownAs(name, option); shown != wantShown || ok != wantOK {
			t.Fatalf("shownAs(%q, %q) = %q, %v, want %q, %v", name, option, shown, ok, wantShown, wantOK)
		}
	})
}

func BenchmarkShownAs(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"256KiB", 256 << 10}, {"4MiB", 4 << 20}} {
		for _, letter := range []string{"a", "é"} {
			name := strings.Repeat(letter, size.bytes/len(letter))
			option := strings.Repeat(strings.ToUpper(letter), 1<<10/len(letter)) + "b"
			b.Run("scan/"+size.name+"/"+letter, func(b *testing.B) {
				for b.Loop() {
					shownAs(name, option)
				}
			})
			b.Run("window/"+size.name+"/"+letter, func(b *testing.B) {
				for b.Loop() {
					shownAsByWindow(name, option)
				}
			})
		}
	}
}
