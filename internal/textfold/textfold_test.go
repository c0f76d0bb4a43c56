package textfold

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }

// Key agrees with strings.EqualFold on every pair of a character and its
// foldings, and on pairs that do not fold together.
func TestKeyIsEqualFold(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r += 7 {
		for f := unicode.SimpleFold(r); ; f = unicode.SimpleFold(f) {
			assert.Equal(t, Key(r), Key(f), "%U and %U fold together", r, f)
			if f == r {
				break
			}
		}
		o := r + 1
		if !utf8.ValidRune(r) || !utf8.ValidRune(o) {
			continue // a surrogate: no string holds one
		}
		assert.Equal(t, strings.EqualFold(string(r), string(o)), Key(r) == Key(o), "%U and %U", r, o)
	}
}

func TestHasPrefix(t *testing.T) {
	for _, s := range []string{"websocket: x", "WebSocket", "WEBSOCKET", "web\u017focket", "websoc\u212aet!", "websock", "webs0cket", "", "Websocketé"} {
		n, ok := HasPrefix(s, "websocket")
		loc := regexp.MustCompile(`^(?i:websocket)`).FindStringIndex(s)
		assert.Equal(t, loc != nil, ok, "%q", s)
		if loc != nil {
			assert.Equal(t, loc[1], n, "%q", s)
		}
	}
}

func ExampleHasPrefix() {
	n, ok := HasPrefix("WebSocket closed", "websocket")
	fmt.Println(n, ok)
	// Output: 9 true
}
