package textcut

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }

// TestCutBoundsAndSays: the result is at most max bytes, valid UTF-8 when
// s is, a prefix of s and a marker that counts the bytes left out.
func TestCutBoundsAndSays(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("x", 1000), strings.Repeat("é", 700), strings.Repeat("日本", 400), strings.Repeat("🙂a", 333)} {
		for _, n := range []int{0, 10, 40, 41, 100, 999, 1000, 5000} {
			got := Cut(s, n)
			if len(s) <= n {
				require.Equal(t, s, got)
				continue
			}
			// A max too small for the marker gets the marker alone.
			assert.LessOrEqual(t, len(got), max(n, markerMax), "max %d", n)
			require.True(t, utf8.ValidString(got), "max %d cut a character: %q", n, got)
			i := strings.LastIndex(got, "… [")
			require.GreaterOrEqual(t, i, 0, got)
			prefix := got[:i]
			require.True(t, strings.HasPrefix(s, prefix))
			assert.Equal(t, fmt.Sprintf("… [%d bytes cut]", len(s)-len(prefix)), got[i:])
		}
	}
}

func ExampleCut() {
	fmt.Println(Cut("a page's message of any length", 45))
	fmt.Println(Cut(strings.Repeat("long ", 20), 50))
	// Output:
	// a page's message of any length
	// long long … [90 bytes cut]
}
