package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/runner"
)

// The contract sweep: every method of the host contract
// (runner/sdk/contract.json), called from real scripts with the most
// expensive arguments its parameter types allow, two runs at once, while
// the host's heap, CPU and disk are watched and a benign run beside them
// times its calls. The arguments come from the contract's types alone (see
// sweepScript), so a new host method joins the sweep by being in the
// contract, with no new test code.

// sweepScript calls every method of the contract from index START on. It
// reaches the host objects through the SDK's own runtime, past the SDK's
// checks, as a hostile script can. Each method starts on the sweep page as
// it was loaded, then is called once per expensive value of each parameter
// (the other parameters at a plain value), all at once, and the script
// prints one line: "swept <index> <method> <outcomes> <tab>", or "ended
// <index> <method> <outcomes>" and stops when the method ended the run.
//
// A page load of the sweep page is dear (half a megabyte, a thousand
// rows), so the methods of SHARED, which leave a page as they found it,
// run one after another on one tab; a method outside it (a new method
// too) runs on a fresh tab, and the tab is replaced after it. Each shared
// method is checked for that: the page's state after it (address,
// history, a mark set at load, focus, hover, scroll, fields) must be the
// state it had when opened, or the script prints "dirtied <index>
// <method> <before> <after>", which fails the test, and moves on to a
// fresh tab.
const sweepScript = `// @permissions browser forms page-js clipboard
// @timeout 10m
const { runtime } = await import(new URL("./runtime.ts", import.meta.resolve("tranquil/automation")).href);
const rt = runtime();
const C = __CONTRACT__;
const START = __START__;
const PAGE = __PAGE__;
const BIG = "x".repeat(256 << 10);
const EXPENSIVE_FN = "() => Array.from({ length: 2000000 }, (_, i) => ({ i, s: 'ab' }))";
const bigValue = Array.from({ length: 50000 }, (_, i) => ({ i, s: "abcdefgh" }));
// Four levels deep (the limit), 256 KiB of text in each part: about 3 MiB.
const deep = (n) => n === 0 ? { selector: "div", hasText: BIG }
  : { role: "button", name: BIG, within: deep(n - 1), has: { text: BIG } };
const alternatives = (type) => {
  const out = [];
  let depth = 0, at = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i];
    if (c === "<" || c === "(") depth++;
    if (c === ">" || c === ")") depth--;
    if (c === "|" && depth === 0) { out.push(type.slice(at, i).trim()); at = i + 1; }
  }
  out.push(type.slice(at).trim());
  return out;
};
// worst lists the most expensive values of a type.
function worst(type, depth = 0) {
  const alts = alternatives(type);
  if (alts.length > 1) return alts.flatMap((t) => worst(t, depth));
  if (/^".*"$/.test(type)) return [JSON.parse(type)];
  if (type.endsWith("[]")) {
    const inner = worst(type.slice(0, -2), depth + 1);
    return [Array(16).fill(inner[0])];
  }
  if (type.startsWith("Record<")) return [Object.fromEntries(Array.from({ length: 16 }, (_, i) => ["k" + i, BIG]))];
  switch (type) {
    case "string": return [BIG, EXPENSIVE_FN, PAGE];
    case "number": return [1e9, -1];
    case "boolean": return [true];
    case "any": return [bigValue];
    case "function": return [() => bigValue];
    case "Locator": return [deep(3), { selector: "*" }, { role: "button" }];
  }
  const fields = C.types[type];
  if (!fields || depth > 2) return [{}];
  const all = {};
  const each = [];
  for (const [k, t] of Object.entries(fields)) {
    const v = k === "timeout" ? 500 : worst(t, depth + 1)[0];
    all[k] = v;
    if (k !== "timeout") each.push({ [k]: v, ...("timeout" in fields ? { timeout: 500 } : {}) });
  }
  return [all, ...each];
}
// plain is a cheap, ordinary value of a type, for the parameters not under test.
function plain(type, index, tab) {
  const t = alternatives(type)[0];
  if (index === 0 && t === "string") return tab;
  if (/^".*"$/.test(t)) return JSON.parse(t);
  if (t.endsWith("[]")) return [];
  switch (t) {
    case "string": return "p";
    case "number": return 1;
    case "boolean": return true;
    case "any": return 1;
    case "function": return () => 1;
    case "Locator": return { selector: "p" };
  }
  const fields = C.types[t];
  return fields && "timeout" in fields ? { timeout: 500 } : {};
}
// SHARED are the methods that leave a tab's page as they found it and do
// not look into it, so that a page another method warmed up (its lookup
// runtime in place) answers them as a fresh one would. The tab's readers
// are not here: on a warmed page their hostile lookups run to the end
// instead of timing out, which cost the host more CPU than the page loads
// saved.
const SHARED = new Set([
  "clipboard.read", "clipboard.write", "config.delete", "config.get", "config.keys", "config.set",
  "context.log", "context.payload", "context.progress", "context.result", "context.step",
  "paneControls.register", "paneControls.unregister",
  "tabs.active", "tabs.all", "tabs.find", "tabs.open", "tabs.triggered", "ui.notify", "ui.open", "workspace.projectDir",
]);
// STATE is the page's state a method may leave changed: the mark tells a
// reloaded page from the one opened.
const STATE = "() => { window.__sweepMark ??= String(Math.random()); const inputs = document.querySelectorAll('input'); " +
  "let edited = 0; for (const i of inputs) if (i.value !== i.defaultValue || i.checked !== i.defaultChecked) edited++; " +
  "return JSON.stringify([location.href, history.length, window.__sweepMark, document.activeElement?.tagName, " +
  "document.querySelectorAll(':hover').length, scrollX, scrollY, inputs.length, edited, document.body.innerHTML.length]); }";
const state = async (tab) => {
  try { return await rt.capability("pageJs", "pageJs.evaluate").evaluate(tab, STATE, []); } catch (e) { return "unread: " + (e?.code ?? e); }
};
const close = async (tab) => {
  try { await rt.capability("tab", "tab.close").close(tab); } catch { /* closed by the sweep, or never opened */ }
};
const methods = Object.entries(C.capabilities).flatMap(([cap, ms]) => Object.entries(ms).map(([m, d]) => [cap, m, d.params]));
let tab = "none", loaded = null; // loaded: the page's state when opened; null when the tab is to be replaced
for (let i = START; i < methods.length; i++) {
  const [cap, method, params] = methods[i];
  const shared = SHARED.has(cap + "." + method);
  let how = "shared";
  if (loaded === null) {
    await close(tab);
    tab = "none";
    try {
      tab = (await rt.capability("tabs", "tabs.open").open(PAGE, { timeout: 10000 })).id;
      loaded = await state(tab);
    } catch { /* the method is swept anyway */ }
    how = "fresh";
  }
  const calls = [];
  params.forEach((type, p) => {
    for (const v of worst(type)) {
      const args = params.map((t, j) => j === p ? v : plain(t, j, tab));
      calls.push((async () => {
        const t0 = performance.now();
        try {
          await rt.capability(cap, cap + "." + method)[method](...args);
          return "ok";
        } catch (e) {
          return String(e?.code ?? e?.name ?? "error");
        } finally {
          const ms = performance.now() - t0;
          if (ms > 20000) console.error("slow: " + cap + "." + method + " " + ms + " ms");
        }
      })());
    }
  });
  if (params.length === 0) calls.push(rt.capability(cap, cap + "." + method)[method]().then(() => "ok", (e) => String(e?.code ?? "error")));
  const outcomes = await Promise.all(calls);
  // A limit_exceeded may have been the run's end, not a call's refusal:
  // once the session has ended, calls fail at once, and the methods after
  // this one would be counted as swept without reaching the host. So the
  // run is asked whether it is still alive; if not, this method ended it.
  if (outcomes.includes("limit_exceeded")) {
    const alive = await rt.capability("context", "context.payload").payload().then(() => true, () => false);
    if (!alive) {
      console.log("ended " + i + " " + cap + "." + method + " " + JSON.stringify(outcomes));
      break;
    }
  }
  if (!shared || loaded === null || loaded.startsWith("unread")) {
    loaded = null;
  } else {
    const now = await state(tab);
    if (now !== loaded) {
      console.log("dirtied " + i + " " + cap + "." + method + " " + loaded + " " + now);
      loaded = null;
    }
  }
  const counts = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  console.log("swept " + i + " " + cap + "." + method + " " + JSON.stringify(counts) + " " + how);
}
await close(tab);
`

// sweepSite serves the sweep page: half a megabyte of text, a thousand
// rows of buttons and fields, and the site's home page.
func sweepSite(t testing.TB) *httptest.Server {
	var b strings.Builder
	b.WriteString(`<title>Sweep</title><div id=text>`)
	b.WriteString(strings.Repeat("lorem ipsum dolor sit amet ", 20000))
	b.WriteString(`</div><table>`)
	for i := range 1000 {
		fmt.Fprintf(&b, `<tr><td><p>row %d</p></td><td><label>Field %d <input value="v%d"></label></td><td><button>Delete</button></td></tr>`, i, i, i)
	}
	b.WriteString(`</table>`)
	page := b.String()
	mux := http.NewServeMux()
	serve := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Security-Policy", "default-src 'self' 'unsafe-inline'")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/", serve(`<title>Home</title><h1>Home</h1>`))
	mux.HandleFunc("/sweep", serve(page))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// contractMethods is the number of methods in the contract.
func contractMethods(t testing.TB) (int, []byte) {
	data, err := os.ReadFile(filepath.Join("sdk", "contract.json"))
	require.NoError(t, err)
	var c struct {
		Capabilities map[string]map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(data, &c))
	n := 0
	for _, ms := range c.Capabilities {
		n += len(ms)
	}
	return n, data
}

// sweepResult is what one sweep saw: each method's outcomes, by index, or
// the reason a run ended on it, and the shared methods that changed their
// tab's page.
type sweepResult struct {
	swept   map[int]string
	ended   map[int]string
	dirtied map[int]string
}

// sweep calls every method of the contract from one script, starting a
// new run after a method that ends its run (a limit_exceeded is the only
// acceptable end). name tells two sweeps' scripts apart.
func sweep(t testing.TB, e *browserEnv, contract []byte, methods int, name string) sweepResult {
	res := sweepResult{swept: map[int]string{}, ended: map[int]string{}, dirtied: map[int]string{}}
	for start := 0; start < methods; {
		src := strings.NewReplacer("__CONTRACT__", string(contract), "__START__", strconv.Itoa(start),
			"__PAGE__", strconv.Quote(e.site.URL+"/sweep")).Replace(sweepScript)
		p := filepath.Join(e.dir, fmt.Sprintf("%s-%d.ts", name, start))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
		r, err := e.m.Start(context.Background(), runner.Request{Script: p})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		entry, err := r.Wait(ctx)
		cancel()
		require.NoError(t, err)
		last, ended := start-1, -1
		for _, line := range strings.Split(entry.Output, "\n") {
			f := strings.SplitN(line, " ", 4)
			if len(f) == 4 && (f[0] == "swept" || f[0] == "dirtied" || f[0] == "ended") {
				i, err := strconv.Atoi(f[1])
				require.NoError(t, err, line)
				if f[0] == "dirtied" {
					res.dirtied[i] = f[2] + ": " + f[3]
					continue
				}
				if f[0] == "ended" {
					ended = i
					continue
				}
				res.swept[i] = f[2] + " " + f[3]
				last = max(last, i)
			}
		}
		if entry.State == history.StateSucceeded {
			break
		}
		// Only a limit may end a sweep's run: a crash, a hang or a lost
		// connection is the host failing.
		require.Equal(t, history.StateFailed, entry.State, "%s\n%s", entry.Reason, entry.Output)
		require.True(t, strings.HasPrefix(entry.Reason, "limit_exceeded: "), "method %d ended the run: %s\n%s", last+1, entry.Reason, entry.Output)
		// The method the run ended in: the one that said so, or the one
		// after the last swept (the process was stopped before it could).
		if ended < 0 {
			ended = last + 1
		}
		require.Equal(t, last+1, ended, "method %d said it ended the run, after method %d was swept", ended, last)
		res.ended[ended] = entry.Reason
		start = ended + 1
	}
	return res
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// benignScript times n tab.url calls on the site's home page and prints
// their p50 in microseconds.
const benignScript = `// @permissions browser
import { tabs } from "tranquil/automation";
const tab = await tabs.open(__HOME__, { background: true });
const ms = [];
for (let i = 0; i < 200; i++) {
  const t0 = performance.now();
  await tab.url();
  ms.push(performance.now() - t0);
}
ms.sort((a, b) => a - b);
console.log("p50 " + Math.round(ms[100] * 1000));
`

func benignP50(t testing.TB, e *browserEnv, name string) time.Duration {
	entry := e.run(t, name, strings.ReplaceAll(benignScript, "__HOME__", strconv.Quote(e.site.URL+"/")))
	require.Equal(t, history.StateSucceeded, entry.State, "%s %s", entry.Reason, entry.Output)
	for _, line := range strings.Split(entry.Output, "\n") {
		if us, ok := strings.CutPrefix(line, "p50 "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(us))
			require.NoError(t, err)
			return time.Duration(n) * time.Microsecond
		}
	}
	t.Fatalf("no p50 in %q", entry.Output)
	return 0
}

// sweepFigures are what one sweep of two runs at once cost the host.
type sweepFigures struct {
	heapPeak       int64 // the heap, garbage included
	livePeak       int64 // the live heap after each collection
	cpu, wall      time.Duration
	disk           int64
	quiet, underLd time.Duration
}

func runSweep(t testing.TB, budget int64) (sweepFigures, [2]sweepResult, int) {
	srv := sweepSite(t)
	e := newBrowserEnvWith(t, envOptions{site: srv, config: func(c *runner.Config) { c.SessionBudget = budget }})
	methods, contract := contractMethods(t)
	var f sweepFigures
	f.quiet = benignP50(t, e, "quiet.ts")
	dataDir := filepath.Join(filepath.Dir(e.dir), "data")
	disk0 := dirSize(dataDir)
	cpu0, wall0 := cpuTime(t), time.Now()
	heap, live := heapPeak(), livePeak()
	var results [2]sweepResult
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = sweep(t, e, contract, methods, fmt.Sprintf("sweep%d", i))
		}()
	}
	time.Sleep(2 * time.Second) // the sweeps are under way
	f.underLd = benignP50(t, e, "beside.ts")
	wg.Wait()
	f.heapPeak, f.livePeak = heap(), live()
	f.cpu, f.wall = cpuTime(t)-cpu0, time.Since(wall0)
	f.disk = dirSize(dataDir) - disk0
	return f, results, methods
}

// TestContractSweep holds the host to its ledger for every method of the
// contract at once: two runs sweeping it with the most expensive arguments
// their types allow, each ending (if at all) only with limit_exceeded; the
// host's heap under twice the budgets of the runs; its disk bounded; and a
// benign run's calls beside them still answered.
func TestContractSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("the sweep runs every host method against a real browser")
	}
	const budget = 64 << 20
	f, results, methods := runSweep(t, budget)
	for _, res := range results {
		for i := range methods {
			_, swept := res.swept[i]
			_, ended := res.ended[i]
			assert.True(t, swept || ended, "method %d was never swept", i)
		}
		for i, how := range res.dirtied {
			t.Errorf("method %d shares its tab but changed the page (take it off SHARED): %s", i, how)
		}
	}
	var lines []string
	for i, o := range results[0].swept {
		lines = append(lines, fmt.Sprintf("%3d %s", i, o))
	}
	for i, why := range results[0].ended {
		lines = append(lines, fmt.Sprintf("%3d ended its run: %s", i, why))
	}
	sort.Strings(lines)
	t.Logf("one sweep of %d methods:\n%s", methods, strings.Join(slices.Compact(lines), "\n"))
	t.Logf("host live heap peak %+.1f MiB (limit %d MiB), heap with garbage %+.1f MiB, CPU %.1f s over %.1f s, disk %+.1f KiB, benign p50 %v quiet, %v beside the sweep",
		float64(f.livePeak)/(1<<20), 2*2*budget>>20, float64(f.heapPeak)/(1<<20), f.cpu.Seconds(), f.wall.Seconds(), float64(f.disk)/1024, f.quiet, f.underLd)
	assert.Less(t, f.livePeak, int64(2*2*budget), "the host's live heap went past twice the runs' budgets")
	assert.Less(t, f.disk, int64(64<<20), "the sweep left more than history's share on disk")
	assert.Less(t, f.underLd, 20*f.quiet+50*time.Millisecond, "a benign run beside the sweep was starved")
}

// BenchmarkContractSweep prints the sweep's figures: the host heap's peak
// against the sum of the runs' budgets (target under 2) and a benign run's
// call p50 beside the sweep against quiet (target at most 2).
func BenchmarkContractSweep(b *testing.B) {
	const budget = 64 << 20
	for range b.N {
		f, _, _ := runSweep(b, budget)
		b.ReportMetric(float64(f.livePeak)/float64(2*budget), "heap-ratio")
		b.ReportMetric(float64(f.heapPeak)/float64(2*budget), "garbage-heap-ratio")
		b.ReportMetric(float64(f.underLd)/float64(f.quiet), "p50-ratio")
		b.ReportMetric(f.cpu.Seconds(), "cpu-s")
	}
}
