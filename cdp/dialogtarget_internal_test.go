package cdp

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/display"
)

// dialogTargetOfAll is dialogTarget as it was written, collapsing the
// whole message before keeping its start: the oracle its tests hold it to.
func dialogTargetOfAll(d Dialog) string {
	msg := fieldsJoined(d.Message)
	if msg == "" {
		return d.Type
	}
	return d.Type + ": " + display.Line(shorten(msg, dialogExcerpt))
}

func TestDialogTarget(t *testing.T) {
	for _, m := range []string{
		"", "  ", "Are you sure?", strings.Repeat("a", 40), strings.Repeat("a", 41), strings.Repeat("a ", 40),
		strings.Repeat("é\t", 41) + "x", strings.Repeat("\xff", 45), "  " + strings.Repeat("ab  ", 30), strings.Repeat("a", 40) + " ",
	} {
		d := Dialog{Type: "alert", Message: m}
		assert.Equal(t, dialogTargetOfAll(d), dialogTarget(d), "%q", m)
	}
}

// A page's message of megabytes is not collapsed whole for the log's 40
// characters.
func TestDialogTargetReadsItsStart(t *testing.T) {
	d := Dialog{Type: "alert", Message: strings.Repeat("word  ", 1<<20)}
	assert.Equal(t, dialogTargetOfAll(d), dialogTarget(d))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	dialogTarget(d)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "bytes allocated for a 6 MiB message")
}

func FuzzDialogTarget(f *testing.F) {
	for _, s := range []string{"Are you sure?", strings.Repeat("a ", 30), "\xff\u00a0x", strings.Repeat("é", 41)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := Dialog{Type: "confirm", Message: s}
		if want, got := dialogTargetOfAll(d), dialogTarget(d); got != want {
			t.Fatalf("dialogTarget(%q) = %q, want %q", s, got, want)
		}
	})
}

func BenchmarkDialogTarget(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"256KiB", 256 << 10}, {"4MiB", 4 << 20}} {
		d := Dialog{Type: "alert", Message: strings.Repeat("word  ", size.bytes/6)}
		b.Run("head/"+size.name, func(b *testing.B) {
			for b.Loop() {
				dialogTarget(d)
			}
		})
		b.Run("all/"+size.name, func(b *testing.B) {
			for b.Loop() {
				dialogTargetOfAll(d)
			}
		})
	}
}
