package runner

import (
	"context"
	"testing"
)

// BenchmarkHostMethod is the runner's own share of a host call, the
// bridge and the host's work left out: clipboard.read (the trace, the
// gate, the host's wait, the error's wording) on a host that answers at
// once, with the run traced and not. A round trip over the bridge is
// hundreds of microseconds; this is its part that the facades decide.
func BenchmarkHostMethod(b *testing.B) {
	for _, traced := range []bool{true, false} {
		name := "untraced"
		if traced {
			name = "traced"
		}
		b.Run(name, func(b *testing.B) {
			m := &Manager{}
			m.cfg.Host = Host{Clipboard: instantClipboard{}}
			m.cfg.NoTrace = !traced
			a := &clipboardAPI{newRun(m, "run-1", Request{Script: "/s.ts"})}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Read(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// instantClipboard is a clipboard that answers at once.
type instantClipboard struct{}

func (instantClipboard) Read(context.Context, RunInfo) (string, error) { return "text", nil }

func (instantClipboard) Write(context.Context, RunInfo, string) error { return nil }
