package runner

import (
	"context"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/rpc"

	"github.com/tranquil/automation/errcode"
)

// latencyScript measures its own host calls: the p50 of 300 round trips.
const latencyScript = `// @permissions none
import { context } from "tranquil/automation";
const t: number[] = [];
for (let i = 0; i < 300; i++) {
  const s = performance.now();
  await context.result(i);
  t.push(performance.now() - s);
}
t.sort((a, b) => a - b);
console.log("p50 " + t[t.length >> 1]);
`

// p50Of reads the p50 a latencyScript run printed, in milliseconds.
func p50Of(b *testing.B, e history.Entry) float64 {
	for _, l := range strings.Split(e.Output, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "p50 "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	b.Fatalf("no p50 in the output: %s %s", e.Reason, e.Output)
	return 0
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// BenchmarkAttackSoak runs scripts that attack the host's memory through
// the bridge back to back, two at a time, for BENCH_ATTACK_SECONDS (60 by
// default), while benign runs measure their call latency. It reports the
// benign p50 during the attack against the quiet p50 before it
// (p50-ratio, target ≤ 2), the host heap's peak against the total the
// budgets allow (heap-ratio, ≤ 1), and how many attacking and benign runs
// ended as they must (every attack limit_exceeded, every benign run
// succeeded; the benchmark fails otherwise).
func BenchmarkAttackSoak(b *testing.B) {
	seconds := 60
	if s := os.Getenv("BENCH_ATTACK_SECONDS"); s != "" {
		seconds, _ = strconv.Atoi(s)
	}
	const budget = 32 << 20
	const concurrent = 4
	e := newMgr(b, func(c *Config) { c.SessionBudget = budget; c.MaxConcurrent = concurrent })
	benign := e.script(b, "latency.ts", latencyScript)
	var attacks, names []string
	for name := range memoryAttacks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		attacks = append(attacks, e.script(b, "attack-"+strings.ReplaceAll(name, " ", "-")+".ts", rawFrames+memoryAttacks[name]+"\nawait new Promise((r) => setTimeout(r, 30000));\n"))
	}
	var tally endings

	// Every attack ends in a failure notification; nobody else reads them.
	drained := make(chan struct{})
	defer close(drained)
	go func() {
		for {
			select {
			case <-e.host.notified:
			case <-drained:
				return
			}
		}
	}()

	var quiet []float64
	for range 5 {
		_, entry := e.run(b, Request{Script: benign})
		quiet = append(quiet, p50Of(b, entry))
	}

	b.ResetTimer()
	heapGrowth := sampleHeap()
	var wg sync.WaitGroup
	var attacked, wrong atomic.Int64
	var wrongWhy atomic.Value
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; time.Now().Before(end); i++ {
				r, err := e.m.Start(context.Background(), Request{Script: attacks[i%len(attacks)]})
				if err != nil {
					wrong.Add(1)
					wrongWhy.Store(err.Error())
					continue
				}
				entry, _ := r.Wait(context.Background())
				attacked.Add(1)
				tally.add(names[i%len(names)], entry.Reason)
				if !strings.HasPrefix(entry.Reason, string(errcode.LimitExceeded)+": ") {
					wrong.Add(1)
					wrongWhy.Store(entry.Reason + " " + entry.Output)
				}
			}
		}()
	}
	var loud []float64
	for time.Now().Before(end) {
		_, entry := e.run(b, Request{Script: benign})
		if entry.State != history.StateSucceeded {
			b.Fatalf("a benign run failed during the attack: %s %s", entry.Reason, entry.Output)
		}
		loud = append(loud, p50Of(b, entry))
	}
	wg.Wait()
	grown := float64(heapGrowth())
	b.StopTimer()
	tally.log(b)
	if n := wrong.Load(); n > 0 {
		b.Fatalf("%d of %d attacking runs did not end limit_exceeded, e.g. %v", n, attacked.Load(), wrongWhy.Load())
	}
	total := float64(concurrent * (budget + rpc.DefaultReadLimit))
	b.ReportMetric(median(quiet), "quiet-p50-ms")
	b.ReportMetric(median(loud), "attack-p50-ms")
	b.ReportMetric(median(loud)/median(quiet), "p50-ratio")
	b.ReportMetric(grown/(1<<20), "heap-peak-MiB")
	b.ReportMetric(grown/total, "heap-ratio")
	b.ReportMetric(float64(attacked.Load()), "attacks")
	b.ReportMetric(float64(len(loud)), "benign-runs")
}

// endings counts how the attacking runs ended, by attack and by the code
// their reason starts with (the whole reason, cut, when it has none).
type endings struct {
	mu sync.Mutex
	n  map[string]int // "attack: code"
}

func (t *endings) add(attack, reason string) {
	code, _, ok := strings.Cut(reason, ": ")
	if !ok || strings.ContainsAny(code, " (") {
		code = reason
		if len(code) > 100 {
			code = code[:100] + "…"
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = map[string]int{}
	}
	t.n[attack+": "+code]++
}

func (t *endings) log(b *testing.B) {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.n))
	for k := range t.n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.Logf("%4d  %s", t.n[k], k)
	}
}
