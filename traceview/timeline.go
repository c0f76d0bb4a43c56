package traceview

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/trace"
)

// runPage is what the run page shows.
type runPage struct {
	ID       string
	Entry    *history.Entry // nil when the Source no longer lists the run
	Trace    *trace.Trace
	Rows     []row
	Failures []failure
}

// row is one line of the timeline: everything the trace holds, in the
// order it happened.
type row struct {
	At       time.Time
	Kind     string // "call", "navigation", "console", "dialog", "step"
	What     string // the method, the navigation's kind, the level, …
	Detail   string // the target, the address, the text
	Tab      string
	Duration time.Duration
	HasDur   bool
	Outcome  string // "ok", or the error code
	Failed   bool
	Error    string
	Shot     int // index into failures, or -1
}

// failure is one failed call's evidence on the page.
type failure struct {
	N       int // index in Trace.Failures, for the image's address
	Seq     int
	Method  string
	Image   bool
	Outline string
	Note    string
}

func timeline(t *trace.Trace) []row {
	shots := map[int]int{}
	for i, f := range t.Failures {
		shots[f.Seq] = i
	}
	var rows []row
	for _, c := range t.Calls {
		r := row{At: c.Start, Kind: "call", What: c.Method, Detail: c.Target, Tab: c.Tab, Duration: c.Duration, HasDur: true, Outcome: "ok", Shot: -1}
		if c.Page != "" {
			r.Detail = joinDetail(r.Detail, "on "+c.Page)
		}
		if !c.OK() {
			r.Outcome, r.Failed, r.Error = c.Code, true, c.Error
		}
		if n, ok := shots[c.Seq]; ok {
			r.Shot = n
		}
		rows = append(rows, r)
	}
	for _, n := range t.Navigations {
		rows = append(rows, row{At: n.At, Kind: "navigation", What: n.Kind, Detail: n.URL, Tab: n.Tab, Failed: n.Kind == "refused", Shot: -1})
	}
	for _, l := range t.Console {
		rows = append(rows, row{At: l.At, Kind: "console", What: l.Level, Detail: l.Text, Tab: l.Tab, Failed: l.Level == "error" || l.Level == "pageerror", Shot: -1})
	}
	for _, d := range t.Dialogs {
		answer := "dismissed"
		if d.Accepted {
			answer = "accepted"
		}
		rows = append(rows, row{At: d.At, Kind: "dialog", What: d.Type, Detail: d.Message, Tab: d.Tab, Outcome: answer, Shot: -1})
	}
	for _, s := range t.Steps {
		r := row{At: s.At, Kind: "step", What: s.Kind, Detail: s.Name, Outcome: s.Phase, Shot: -1}
		switch {
		case s.Kind == "progress" && s.Fraction >= 0:
			r.Outcome = fmt.Sprintf("%.0f%%", s.Fraction*100)
		case s.Phase == "end" && !s.OK:
			r.Outcome, r.Failed, r.Error = "failed", true, s.Error
		case s.Phase == "retry":
			r.Outcome, r.Error = fmt.Sprintf("retry %d", s.Attempt), s.Error
		}
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.At.UnixNano(), b.At.UnixNano()) })
	return rows
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

func failures(t *trace.Trace) []failure {
	method := map[int]string{}
	for _, c := range t.Calls {
		method[c.Seq] = c.Method
	}
	var out []failure
	for i, f := range t.Failures {
		out = append(out, failure{N: i, Seq: f.Seq, Method: method[f.Seq], Image: f.Image != nil, Outline: f.Outline, Note: f.Note})
	}
	return out
}
