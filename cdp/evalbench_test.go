package cdp

import (
	"testing"
	"time"
)

// BenchmarkEvaluatePolicy measures Tab.Evaluate of a small function on a
// tab with sites and a log (the page-action path a script's evaluate takes)
// against a tab with the zero options, interleaved on one page. Target:
// p50 ratio ≤ 1.05.
func BenchmarkEvaluatePolicy(b *testing.B) {
	ctx := b.Context()
	page := serve("/bench-eval", `<title>eval</title>`)
	plain, err := sharedConn.NewTabWith(ctx, page, TabOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close(ctx)
	n := 0
	guarded, err := sharedConn.AttachWith(ctx, plain.ID(), TabOptions{Sites: []string{"127.0.0.1"}, Log: func(Action) { n++ }})
	if err != nil {
		b.Fatal(err)
	}
	defer guarded.Detach(ctx)
	var with, without []float64
	for b.Loop() {
		for i := 0; i < 400; i++ {
			for _, tc := range []struct {
				tab  *Tab
				into *[]float64
			}{{plain, &without}, {guarded, &with}} {
				t0 := time.Now()
				if _, err := tc.tab.Evaluate(ctx, "(a, b) => a + b", i, 1); err != nil {
					b.Fatal(err)
				}
				*tc.into = append(*tc.into, float64(time.Since(t0).Microseconds()))
			}
		}
	}
	b.ReportMetric(median(with), "policy-p50-µs")
	b.ReportMetric(median(without), "plain-p50-µs")
	b.ReportMetric(median(with)/median(without), "p50-ratio")
}

// BenchmarkEvaluateByType measures reading an evaluation's result judged
// in the page (Tab.Evaluate's wrapper) against reading it by value as it
// is, each in one call, interleaved on one page.
func BenchmarkEvaluateByType(b *testing.B) {
	ctx := b.Context()
	tab, err := sharedConn.NewTabWith(ctx, serve("/bench-bytype", `<title>bytype</title>`), TabOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer tab.Close(ctx)
	fns := map[string]string{"number": `() => 42`, "object": `() => ({a: 1, b: [1, 2, 3], c: "text"})`}
	times := map[string][]float64{}
	for b.Loop() {
		for i := 0; i < 200; i++ {
			for name, fn := range fns {
				for _, how := range []string{"by-value", "by-type"} {
					t0 := time.Now()
					if _, err := tab.callIn(ctx, "", mainWorld, fn, nil, how == "by-type"); err != nil {
						b.Fatal(err)
					}
					times[name+"-"+how] = append(times[name+"-"+how], float64(time.Since(t0).Microseconds()))
				}
			}
		}
	}
	for name := range fns {
		b.ReportMetric(median(times[name+"-by-value"]), name+"-by-value-p50-µs")
		b.ReportMetric(median(times[name+"-by-type"]), name+"-by-type-p50-µs")
		b.ReportMetric(median(times[name+"-by-type"])/median(times[name+"-by-value"]), name+"-p50-ratio")
	}
}
