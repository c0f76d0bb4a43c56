package runner

import (
	"errors"
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
			h := r.call("tab.url", "tab-1")
			h.end(&err)
		}
	})
	b.Run("untraced", func(b *testing.B) {
		r := &Run{}
		for b.Loop() {
			var err error
			h := r.call("tab.url", "tab-1")
			h.end(&err)
		}
	})
}

// A call is recorded once, with its code, and a refusal's message keeps
// no argument it quoted.
func TestHostCallRecordedOnce(t *testing.T) {
	r := &Run{trace: trace.NewRecorder("run", trace.Limits{})}
	func() (err error) {
		h := r.call("tabs.open", "")
		defer h.end(&err)
		h.tab = "tab-9"
		return codeErr(errcode.NavigationBlocked, capnweb.NameTypeError, "tabs.open takes an http or https URL, not %q", "javascript:SECRET")
	}()
	_ = r.refused("tab.select", "tab-9", errors.New("plain"))
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
	if c := calls[1]; c.Method != "tab.select" || c.Code != string(errcode.Error) || c.Error != "plain" {
		t.Fatalf("second call %+v", c)
	}
}
