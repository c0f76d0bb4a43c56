package runner

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/tranquil/automation/history"
)

// BenchmarkAccessRecord measures what recording a run's accesses costs a
// script: two managers, one tracing (and so recording deno's permission
// checks) and one not (Config.NoTrace), run the same script of n
// Deno.readTextFileSync of a granted file in turn, each going first half
// the time, so a slow spell of the machine falls on both. It reports the
// median ns per read of each and their ratio.
func BenchmarkAccessRecord(b *testing.B) {
	on := newMgr(b, nil)
	off := newMgr(b, func(c *Config) { c.NoTrace = true })
	const n = 20_000
	src := fmt.Sprintf(`// @permissions read=in.txt
import { context } from "tranquil/automation";
const t = performance.now();
for (let i = 0; i < %d; i++) Deno.readTextFileSync("in.txt");
await context.result({ ns: (performance.now() - t) * 1e6 / %d });
`, n, n)
	var recorded, plain []float64
	run := func(e *mgrEnv, into *[]float64) history.Entry {
		e.script(b, "in.txt", "granted")
		_, entry := e.run(b, Request{Script: e.script(b, "bench-access.ts", src)})
		if entry.State != history.StateSucceeded {
			b.Fatalf("%s: %s\n%s", entry.State, entry.Reason, entry.Output)
		}
		var got struct{ NS float64 }
		if err := json.Unmarshal(entry.Result, &got); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, got.NS)
		return entry
	}
	i := 0
	for b.Loop() {
		if i%2 == 1 {
			run(off, &plain)
		}
		entry := run(on, &recorded)
		if i%2 == 0 {
			run(off, &plain)
		}
		i++
		tr, err := on.m.Trace(entry.ID)
		if err != nil {
			b.Fatal(err)
		}
		if a, ok := accessOf(tr, "read", on.dir+"/in.txt", true); !ok || a.Count != n {
			b.Fatalf("the recorded run's reads: %+v", a)
		}
	}
	b.ReportMetric(median(recorded), "recorded-ns/read")
	b.ReportMetric(median(plain), "unrecorded-ns/read")
	b.ReportMetric(median(recorded)-median(plain), "record-ns/access")
	b.ReportMetric(median(recorded)/median(plain), "ratio")
}
