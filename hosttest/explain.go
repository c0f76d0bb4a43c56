package hosttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/display"
	"github.com/tranquil/automation/history"
)

// Run is [RunScript] for a Go test: it fails t at once when the run could
// not be made, and, when t fails later (the test's own checks of the
// Result), logs the run's [Result.Explain]. It returns the Result whatever
// state the run ended in.
func Run(t testing.TB, s Script) *Result {
	t.Helper()
	res, err := RunScript(t.Context(), s)
	if err != nil {
		t.Fatalf("running the script: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(res.Explain())
		}
	})
	return res
}

// Succeeded reports whether the run ended succeeded.
func (r *Result) Succeeded() bool { return r.Entry.State == history.StateSucceeded }

// Explain says what the run did, for a person reading why a test failed:
// how it ended and why, its result and output, its action log, and from
// its trace every call to the host with its outcome, the tabs'
// navigations, the pages' console errors and what the page showed when a
// call failed (an outline of the page; the screenshots stay in Trace).
// Text the script or a page controls is escaped (package display).
func (r *Result) Explain() string {
	var b strings.Builder
	e := r.Entry
	fmt.Fprintf(&b, "run %s %s", e.ID, e.State)
	if e.ExitCode != nil {
		fmt.Fprintf(&b, " (exit %d)", *e.ExitCode)
	}
	b.WriteString("\n")
	line := func(label, text string) {
		if text != "" {
			fmt.Fprintf(&b, "%s: %s\n", label, display.Line(text))
		}
	}
	line("reason", e.Reason)
	if e.FirstError != e.Reason {
		line("error", e.FirstError)
	}
	line("result", string(e.Result))
	line("site", r.Site)
	if out := strings.TrimRight(e.Output, "\n"); out != "" {
		b.WriteString("output:\n")
		for _, l := range strings.Split(out, "\n") {
			fmt.Fprintf(&b, "  %s\n", display.Line(l))
		}
	}
	if len(e.Actions) > 0 {
		b.WriteString("actions:\n")
		for _, a := range e.Actions {
			fmt.Fprintf(&b, "  %-8s %-24s %s %s\n", display.Line(a.Method), display.Line(a.Site), display.Line(a.Outcome), display.Line(a.Target))
		}
	}
	r.explainTrace(&b)
	return b.String()
}

// explainTrace writes the trace's part of Explain.
func (r *Result) explainTrace(b *strings.Builder) {
	tr := r.Trace
	if tr == nil {
		b.WriteString("trace: none kept\n")
		return
	}
	since := func(at time.Time) string { return fmt.Sprintf("+%.2fs", at.Sub(tr.Start).Seconds()) }
	if len(tr.Calls) > 0 {
		b.WriteString("calls:\n")
	}
	for _, c := range tr.Calls {
		outcome := "ok"
		if !c.OK() {
			outcome = c.Code + ": " + c.Error
		}
		where := ""
		if c.Target != "" {
			where += " " + display.Line(c.Target)
		}
		if c.Page != "" {
			where += " at " + display.Line(c.Page)
		}
		fmt.Fprintf(b, "  %d %s %s%s (%s): %s\n", c.Seq, since(c.Start), display.Line(c.Method), where,
			c.Duration.Round(time.Millisecond), display.Line(outcome))
	}
	if len(tr.Navigations) > 0 {
		b.WriteString("navigations:\n")
	}
	for _, n := range tr.Navigations {
		fmt.Fprintf(b, "  %s %s %s\n", since(n.At), n.Kind, display.Line(n.URL))
	}
	for _, c := range tr.Console {
		if c.Level == "error" || c.Level == "pageerror" {
			fmt.Fprintf(b, "page %s %s: %s\n", c.Level, since(c.At), display.Line(c.Text))
		}
	}
	for _, f := range tr.Failures {
		fmt.Fprintf(b, "the page when call %d failed:\n", f.Seq)
		if f.Note != "" {
			fmt.Fprintf(b, "  (%s)\n", display.Line(f.Note))
		}
		for _, l := range strings.Split(strings.TrimRight(f.Outline, "\n"), "\n") {
			fmt.Fprintf(b, "  %s\n", display.Line(l))
		}
	}
	if n := tr.Dropped.Total(); n > 0 {
		fmt.Fprintf(b, "(%d trace items not kept)\n", n)
	}
}
