package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/trace"
)

// BenchmarkHostCallRecord is what recording one successful host call
// costs, the clock and the recorder's lock included, against the same
// call with no trace: the absolute share of the trace in a call's
// latency (a host round trip is hundreds of microseconds).
func BenchmarkHostCallRecord(b *testing.B) {
	b.Run("traced", func(b *testing.B) {
		r := &Run{trace: trace.NewRecorder("run", trace.Limits{})}
		for b.Loop() {
			var err error
			h := r.call(context.Background(), "tab.url", "tab-1")
			h.end(&err)
		}
	})
	b.Run("untraced", func(b *testing.B) {
		r := &Run{}
		for b.Loop() {
			var err error
			h := r.call(context.Background(), "tab.url", "tab-1")
			h.end(&err)
		}
	})
}

// A call is recorded once, with its code, and a refusal's message keeps
// no argument it quoted.
func TestHostCallRecordedOnce(t *testing.T) {
	r := &Run{trace: trace.NewRecorder("run", trace.Limits{})}
	func() (err error) {
		h := r.call(context.Background(), "tabs.open", "")
		defer h.end(&err)
		h.tab = "tab-9"
		return codeErr(errcode.NavigationBlocked, capnweb.NameTypeError, "tabs.open takes an http or https URL, not %q", "javascript:SECRET")
	}()
	// The call's site comes with a later call.
	ctx, _ := takeSite(context.Background(), []any{"x", siteMark + "4"})
	_, _ = invoke(ctx, r, mFormsSelect, callReq{tab: "tab-9", refused: errors.New("plain")}, func(*call) (none, error) {
		t.Fatal("a refused call ran its body")
		return none{}, nil
	})
	later, _ := takeSite(context.Background(), []any{siteMark + "5\n4:7:3:lib/a.ts"})
	r.lateSites(later)
	calls := r.trace.Trace().Calls
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2: %+v", len(calls), calls)
	}
	c := calls[0]
	if c.Method != "tabs.open" || c.Tab != "tab-9" || c.Code != string(errcode.NavigationBlocked) {
		t.Fatalf("first call %+v", c)
	}
	if want := `tabs.open takes an http or https URL, not "…"`; c.Error != want {
		t.Fatalf("message %q, want %q", c.Error, want)
	}
	if c := calls[1]; c.Method != "tab.select" || c.Code != string(errcode.Error) || c.Error != "plain" ||
		c.File != "lib/a.ts" || c.Line != 7 || c.Column != 3 {
		t.Fatalf("second call %+v", c)
	}
}

// takeSite takes the SDK's call-site argument off the end of a call's
// arguments, whatever it holds, and keeps of it only what is well formed
// and bounded; any other last argument is the method's.
func TestTakeSite(t *testing.T) {
	long := strings.Repeat("d/", 400) + "name.ts"
	many := strings.Repeat("\n9:1:1:a.ts", maxSitesSent+10)
	cases := []struct {
		args  []any
		left  int
		note  bool
		own   int
		sites map[int]callSite
	}{
		{args: []any{"a", siteMark + "12"}, left: 1, note: true, own: 12},
		{args: []any{"a", siteMark + "3\n1:12:5:main.ts\n2:1:1:file:///x/y.ts"}, left: 1, note: true, own: 3,
			sites: map[int]callSite{1: {"main.ts", 12, 5}, 2: {"file:///x/y.ts", 1, 1}}},
		{args: []any{siteMark + "0\n7:1:2:lib/b.ts"}, left: 0, note: true, sites: map[int]callSite{7: {"lib/b.ts", 1, 2}}},
		{args: []any{"a", siteMark + "x\nx:5:1:main.ts\n-1:5:1:m.ts\n8:-1:1:m.ts\n8:99999999999:1:m.ts\n8:1:1:\n8"}, left: 1, note: true},
		{args: []any{"a", siteMark}, left: 1, note: true},
		{args: []any{"a", "12:5:main.ts"}, left: 2},
		{args: []any{"a", 3.0}, left: 2},
		{args: nil, left: 0},
		{args: []any{siteMark + "1\n1:3:4:" + long}, left: 0, note: true, own: 1,
			sites: map[int]callSite{1: {"…" + long[len(long)-maxSiteFile:], 3, 4}}},
	}
	for i, c := range cases {
		ctx, left := takeSite(context.Background(), c.args)
		note, ok := ctx.Value(siteKey{}).(siteNote)
		if len(left) != c.left || ok != c.note || note.n != c.own || len(note.sites) != len(c.sites) {
			t.Fatalf("case %d: %d arguments left (want %d), note %v %+v", i, len(left), c.left, ok, note)
		}
		for n, want := range c.sites {
			if note.sites[n] != want {
				t.Fatalf("case %d: site %d is %+v, want %+v", i, n, note.sites[n], want)
			}
		}
	}
	ctx, _ := takeSite(context.Background(), []any{siteMark + "1" + many})
	if note := ctx.Value(siteKey{}).(siteNote); len(note.sites) != 1 {
		t.Fatalf("%d sites from one call", len(note.sites))
	}
}

// A site joins its call whichever comes first, and the run holds only so
// many waiting for each other.
func TestSiteBook(t *testing.T) {
	r := &Run{trace: trace.NewRecorder("run", trace.Limits{})}
	callWith := func(own string) {
		ctx, _ := takeSite(context.Background(), []any{siteMark + own})
		var err error
		h := r.call(ctx, "tab.url", "tab-1")
		h.end(&err)
	}
	callWith("1")                           // recorded first, site later
	callWith("2\n1:10:3:a.ts\n3:30:1:b.ts") // carries 1's site, and 3's before 3 is made
	callWith("3")
	callWith("4\n2:20:5:a.ts")
	calls := r.trace.Trace().Calls
	want := []callSite{{"a.ts", 10, 3}, {"a.ts", 20, 5}, {"b.ts", 30, 1}, {}}
	for i, c := range calls {
		if got := (callSite{c.File, c.Line, c.Column}); got != want[i] {
			t.Fatalf("call %d: site %+v, want %+v", i+1, got, want[i])
		}
	}
	for i := range maxSitesKept + 100 {
		callWith(strconv.Itoa(100 + i))
	}
	if n := len(r.callSites.seqs); n > maxSitesKept {
		t.Fatalf("%d calls wait for their sites", n)
	}
}

// TestUntracedRunCapturesNoCallSites: a manager that keeps no trace tells
// the SDK so (TRANQUIL_CALL_SITES=off), and its calls read no site: each
// call captures its stack once, traced or not (the one capture serves the
// error that names the call's line and the site), and only a traced run's
// calls read frames for a site, through Error.prepareStackTrace, which
// the script watches.
func TestUntracedRunCapturesNoCallSites(t *testing.T) {
	src := `// @permissions none
import { config, context } from "tranquil/automation";
const E = Error as unknown as { captureStackTrace(o: object, f?: unknown): void };
const capture = E.captureStackTrace;
let n = 0, reads = 0;
E.captureStackTrace = (o, f) => {
  n++;
  capture(o, f);
};
let prepare: unknown;
Object.defineProperty(Error, "prepareStackTrace", {
  configurable: true,
  get: () => prepare,
  set: (f) => {
    if (f !== undefined) reads++;
    prepare = f;
  },
});
await config.get("a");
await config.get("b");
E.captureStackTrace = capture;
// Fewer calls than a batch have their sites read within 20 ms, in a timer
// set before this one.
await new Promise((resolve) => setTimeout(resolve, 100));
await context.result({ n, reads });
`
	for _, tc := range []struct {
		name    string
		noTrace bool
	}{{"traced", false}, {"untraced", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newMgr(t, func(c *Config) { c.NoTrace = tc.noTrace })
			entry := e.runScript(t, "captures.ts", src)
			require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
			var res struct{ N, Reads int }
			require.NoError(t, json.Unmarshal(entry.Result, &res))
			assert.Equal(t, 2, res.N, "stack captures for two calls")
			if tc.noTrace {
				assert.Zero(t, res.Reads, "frames read for a site")
			} else {
				assert.Positive(t, res.Reads, "frames read for a site")
			}
		})
	}
}

// TestCallSitesOutliveTheProcess: the sites of the last calls, which no
// later call carried, reach the trace however the process ends: the
// script calling Deno.exit right after them, an error ending it, a
// cancel ending it.
func TestCallSitesOutliveTheProcess(t *testing.T) {
	const calls = `// @permissions none
import { config, context } from "tranquil/automation";
await config.get("a"); // site:1
console.log("called");
await config.get("b"); // site:2
`
	for name, tc := range map[string]struct {
		end    string
		state  history.State
		cancel bool
	}{
		"exit":   {end: "Deno.exit(0);\n", state: history.StateSucceeded},
		"exit3":  {end: "setTimeout(() => Deno.exit(3), 0);\n", state: history.StateFailed},
		"throw":  {end: "throw new Error(\"boom\");\n", state: history.StateFailed},
		"cancel": {end: "await new Promise((_, reject) => context.signal.addEventListener(\"abort\", () => reject(context.signal.reason)));\n", state: history.StateCancelled, cancel: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newMgr(t, nil)
			src := calls + tc.end
			r, err := e.m.Start(context.Background(), Request{Script: e.script(t, name+".ts", src)})
			require.NoError(t, err)
			if tc.cancel {
				waitOutput(t, e, r.ID(), "called")
				// The second call is answered before the cancel comes.
				time.Sleep(300 * time.Millisecond)
				r.Cancel("stop")
			}
			entry, err := r.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, tc.state, entry.State, entry.Output)
			assert.NotContains(t, entry.Output, siteLinePrefix, "the output keeps no site lines")
			tr, err := e.m.Trace(entry.ID)
			require.NoError(t, err)
			var got []string
			for _, c := range tr.Calls {
				if c.Method == "config.get" {
					got = append(got, fmt.Sprintf("%s:%d:%d", c.File, c.Line, c.Column))
				}
			}
			line := func(mark string) int {
				return slices.IndexFunc(strings.Split(src, "\n"), func(l string) bool { return strings.HasSuffix(l, "// site:"+mark) }) + 1
			}
			assert.Equal(t, []string{fmt.Sprintf("%s.ts:%d:14", name, line("1")), fmt.Sprintf("%s.ts:%d:14", name, line("2"))}, got)
		})
	}
}

// TestCallSitesFromEveryKindOfFunction: a call's site is the script's
// line that made it whatever kind of function made it: an arrow, a class
// method after an await, an async function after a timer, step.do's
// callback, the public function taken off its object.
func TestCallSitesFromEveryKindOfFunction(t *testing.T) {
	src := `// @permissions none
import { config, context, step } from "tranquil/automation";
const arrow = () => config.get("a"); // site:a
class Reader {
  async read() {
    await null;
    return await config.get("b"); // site:b
  }
}
async function later() {
  await new Promise((r) => setTimeout(r, 1));
  await config.get("c"); // site:c
}
await arrow();
await new Reader().read();
await later();
await step.do("s", () => config.get("d")); // site:d
const { get } = config;
await get("e"); // site:e
await context.result(null);
`
	var want []string
	for i, l := range strings.Split(src, "\n") {
		if _, mark, ok := strings.Cut(l, "// site:"); ok {
			col := strings.Index(l, `get("`+mark+`")`) + 1
			want = append(want, fmt.Sprintf("kinds.ts:%d:%d", i+1, col))
		}
	}
	assert.Equal(t, want, configGetSites(t, "kinds.ts", src))
}

// configGetSites runs src as a traced script named name and returns where
// its trace says each config.get was made, as file:line:column.
func configGetSites(t *testing.T, name, src string) []string {
	t.Helper()
	e := newMgr(t, nil)
	entry := e.runScript(t, name, src)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Output)
	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	var got []string
	for _, c := range tr.Calls {
		if c.Method == "config.get" {
			got = append(got, fmt.Sprintf("%s:%d:%d", c.File, c.Line, c.Column))
		}
	}
	return got
}

// The SDK sends calls' sites in batches, on whatever call comes next: on
// calls the trace does not record as well (context.log), whose sites are
// placed like any other's.
func TestCallSitesRideOnUntracedCalls(t *testing.T) {
	src := `// @permissions none
import { config, context } from "tranquil/automation";
await config.get("a"); // site:a
for (let i = 0; i < 80; i++) context.log("line " + i);
await new Promise((r) => setTimeout(r, 100));
for (let i = 0; i < 80; i++) context.log("more " + i);
await context.result(null);
`
	assert.Equal(t, []string{"logs.ts:3:14"}, configGetSites(t, "logs.ts", src))
}
