package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tranquil/automation/errcode"
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
	ctx, _ := takeSite(context.Background(), []any{"x", siteMark + "7:3:lib/a.ts"})
	_ = r.refused(ctx, "tab.select", "tab-9", errors.New("plain"))
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
// arguments, whatever it holds, and keeps it only when well formed and
// bounded; any other last argument is the method's.
func TestTakeSite(t *testing.T) {
	long := strings.Repeat("d/", 400) + "name.ts"
	cases := []struct {
		args     []any
		left     int
		site     callSite
		hasSite  bool
		fileTail string
	}{
		{args: []any{"a", siteMark + "12:5:main.ts"}, left: 1, site: callSite{File: "main.ts", Line: 12, Column: 5}, hasSite: true},
		{args: []any{siteMark + "1:1:file:///x/y.ts"}, left: 0, site: callSite{File: "file:///x/y.ts", Line: 1, Column: 1}, hasSite: true},
		{args: []any{"a", siteMark + "x:5:main.ts"}, left: 1},
		{args: []any{"a", siteMark + "-1:5:main.ts"}, left: 1},
		{args: []any{"a", siteMark + "99999999999:5:main.ts"}, left: 1},
		{args: []any{"a", siteMark}, left: 1},
		{args: []any{"a", "12:5:main.ts"}, left: 2},
		{args: []any{"a", 3.0}, left: 2},
		{args: nil, left: 0},
		{args: []any{siteMark + "3:4:" + long}, left: 0, hasSite: true, fileTail: "/name.ts"},
	}
	for i, c := range cases {
		ctx, left := takeSite(context.Background(), c.args)
		site, ok := ctx.Value(siteKey{}).(callSite)
		if len(left) != c.left || ok != c.hasSite {
			t.Fatalf("case %d: %d arguments left (want %d), site %v %+v", i, len(left), c.left, ok, site)
		}
		if c.fileTail != "" {
			if len(site.File) > maxSiteFile+len("…") || !strings.HasSuffix(site.File, c.fileTail) || site.Line != 3 {
				t.Fatalf("case %d: long file kept as %d bytes %q", i, len(site.File), site.File)
			}
			continue
		}
		if site != c.site {
			t.Fatalf("case %d: site %+v, want %+v", i, site, c.site)
		}
	}
}
