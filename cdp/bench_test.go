package cdp

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/testenv"
)

// BenchmarkGotoPolicy measures Tab.Goto on a page with a few subresources
// with the page gateway enforcing its policy (every request paused and let
// go) against the same gotos with no gateway, interleaved in rounds on one
// browser. Target: p50 ratio ≤ 1.1.
func BenchmarkGotoPolicy(b *testing.B) {
	chromium := testenv.Chromium(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p, err := startChromium(ctx, chromium, true, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, r := range []string{"a.css", "b.js", "c.png", "d.png", "e.json"} {
		pages.Once("/bench-res/"+r, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, "/* resource */")
		}))
	}
	page := serve("/bench-goto", `<title>bench</title><link rel=stylesheet href="/bench-res/a.css">
<script src="/bench-res/b.js"></script><img src="/bench-res/c.png"><img src="/bench-res/d.png">
<script>fetch("/bench-res/e.json")</script><h1>page</h1>`)
	tab, err := p.Browser().NewTabWith(ctx, "", TabOptions{})
	if err != nil {
		b.Fatal(err)
	}
	const rounds, perRound = 10, 20
	var with, without []float64
	measure := func(into *[]float64) {
		for i := 0; i < perRound; i++ {
			t0 := time.Now()
			if _, err := tab.Goto(ctx, fmt.Sprintf("%s?%d", page, i), Load); err != nil {
				b.Fatal(err)
			}
			*into = append(*into, float64(time.Since(t0).Microseconds()))
		}
	}
	for b.Loop() {
		measure(&without) // warm up
		with, without = nil, nil
		for r := 0; r < rounds; r++ {
			// Who goes first alternates, so a drift in the machine's
			// speed does not favour either.
			if r%2 == 0 {
				measure(&without)
			}
			g, err := Guard(ctx, p.Browser(), PagePolicy{Deny: []string{"127.0.0.1:9"}})
			if err != nil {
				b.Fatal(err)
			}
			measure(&with)
			g.Close()
			if r%2 == 1 {
				measure(&without)
			}
		}
	}
	pw, po := median(with), median(without)
	b.ReportMetric(pw, "policy-p50-µs")
	b.ReportMetric(po, "nopolicy-p50-µs")
	b.ReportMetric(pw/po, "p50-ratio")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
