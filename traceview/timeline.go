package traceview

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/trace"
)

// row is one line of the timeline: a call, a navigation, a console line,
// a dialog, a progress report, or an attempt's divider within a step.
type row struct {
	At       time.Time
	Kind     string // "call", "navigation", "console", "dialog", "progress", "attempt"
	What     string // the method, the navigation's kind, the level, …
	Detail   string // the target, the address, the text
	Tab      tabName
	Duration time.Duration
	HasDur   bool
	Bar      bar
	Outcome  string // "ok", the error code, "retried", …
	// Class is "failed" for a failure that stood, "retried" for one in an
	// attempt a retry followed, "cancelled" for a call the run's end cut
	// off, else "".
	Class string
	Error string
	Shot  int // index into failures, or -1
	// Site is where the script made a call ("lib/cart.ts:12"), and Source
	// that line of the script when the view could read it.
	Site, Source string
	file         string
	line         int
	Shots        []actionShot // the page before and after a page action
}

// actionShot is a screenshot taken around a page action.
type actionShot struct {
	N    int    // index into the trace's Shots, for the image's address
	When string // "before" or "after"
}

// group is a run of consecutive rows with one owner: a step, or none.
type group struct {
	Step *stepView // nil for rows outside every step
	Rows []row
}

// stepView is a step's header in the timeline.
type stepView struct {
	Kind, Name string
	At         time.Time
	Took       time.Duration
	Ended      bool
	// Timed reports that both the start and the end were kept, so Took
	// is the step's length.
	Timed    bool
	started  bool
	Attempts int
	// Outcome is "ok", "ok after retries", "failed" or "unfinished";
	// Class the matching style.
	Outcome, Class string
	// Error is why the step failed, when no call within it already says
	// so: the run's failure is printed once.
	Error string
	Bar   bar
	// Continued marks a second group of the same step, after an inner
	// step's group.
	Continued bool
}

// stepSpan is a step's life: when each attempt began, and its end.
type stepSpan struct {
	view     *stepView
	start    time.Time
	end      time.Time // the run's end for a step that never ended
	attempts []time.Time
	retryErr []string // why attempt k+1 failed
	seen     bool
}

// spans pairs the steps' start, retry and end reports by kind and name
// (a run uses a name once per step).
func spans(steps []trace.Step, runEnd time.Time) []*stepSpan {
	var out []*stepSpan
	open := map[string]*stepSpan{}
	get := func(s trace.Step) *stepSpan {
		key := s.Kind + "\x00" + s.Name
		if sp := open[key]; sp != nil {
			return sp
		}
		// A start the trace dropped: the step began no later than this.
		sp := &stepSpan{view: &stepView{Kind: s.Kind, Name: s.Name, At: s.At}, start: s.At, attempts: []time.Time{s.At}}
		open[key] = sp
		out = append(out, sp)
		return sp
	}
	for _, s := range steps {
		if s.Kind == "progress" {
			continue
		}
		sp := get(s)
		switch s.Phase {
		case "start":
			sp.view.started = true
		case "retry":
			sp.attempts = append(sp.attempts, s.At)
			sp.retryErr = append(sp.retryErr, s.Error)
		case "end":
			sp.end, sp.view.Ended = s.At, true
			sp.view.Outcome, sp.view.Class = "ok", "ok"
			if !s.OK {
				sp.view.Outcome, sp.view.Class, sp.view.Error = "failed", "failed", s.Error
			} else if len(sp.attempts) > 1 {
				sp.view.Outcome = "ok after retries"
			}
			delete(open, s.Kind+"\x00"+s.Name)
		}
	}
	for _, sp := range out {
		v := sp.view
		if !v.Ended {
			sp.end, v.Outcome, v.Class = runEnd, "unfinished", "unfinished"
		}
		v.Attempts, v.Took, v.Timed = len(sp.attempts), sp.end.Sub(sp.start), v.Ended && v.started
	}
	return out
}

// contains reports whether t falls within the step's life.
func (sp *stepSpan) contains(t time.Time) bool { return !t.Before(sp.start) && !t.After(sp.end) }

// attempt is the attempt, from 1, running at t.
func (sp *stepSpan) attempt(t time.Time) int {
	n := 0
	for _, a := range sp.attempts {
		if !a.After(t) {
			n++
		}
	}
	return max(n, 1)
}

// owner is the innermost step whose life holds t: the latest to start.
func owner(sps []*stepSpan, t time.Time) *stepSpan {
	var in *stepSpan
	for _, sp := range sps {
		if sp.contains(t) && (in == nil || !sp.start.Before(in.start)) {
			in = sp
		}
	}
	return in
}

// item is a row, a step's start or an attempt's start, in time order.
type item struct {
	at   time.Time
	row  *row
	span *stepSpan // for a step or attempt start
	n    int       // the attempt, for an attempt start
}

// timeline orders everything the trace holds and groups it by step.
func timeline(t *trace.Trace, start time.Time, total time.Duration, tabs map[string]tabName) []group {
	rows := rowsOf(t, start, total, tabs)
	sps := spans(t.Steps, start.Add(total))
	var items []item
	for _, sp := range sps {
		sp.view.Bar = barOf(start, sp.start, sp.end.Sub(sp.start), total)
		items = append(items, item{at: sp.start, span: sp, n: 1})
		for i, a := range sp.attempts[1:] {
			items = append(items, item{at: a, span: sp, n: i + 2})
		}
	}
	for i := range rows {
		items = append(items, item{at: rows[i].At, row: &rows[i]})
	}
	// Starts sort before the rows of the same instant: a step's first
	// call may be recorded in the same tick as the step.
	slices.SortStableFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.at.UnixNano(), b.at.UnixNano()); c != 0 {
			return c
		}
		return cmp.Compare(btoi(a.row != nil), btoi(b.row != nil))
	})
	var out []group
	var cur *stepSpan
	for _, it := range items {
		sp := it.span
		if it.row != nil {
			sp = owner(sps, it.at)
		}
		if sp != cur || len(out) == 0 {
			out = append(out, group{Step: stepOf(sp)})
			cur = sp
		}
		g := &out[len(out)-1]
		switch {
		case it.row == nil && len(sp.attempts) > 1:
			g.Rows = append(g.Rows, attemptRow(sp, it.n))
		case it.row != nil:
			r := *it.row
			if sp != nil && sp.attempt(r.At) < len(sp.attempts) && r.Class == "failed" {
				r.Class, r.Outcome = "retried", "retried ("+r.Outcome+")"
			}
			g.Rows = append(g.Rows, r)
		}
	}
	for _, sp := range sps {
		if sp.view.Error != "" && saidWithin(out, sp) {
			sp.view.Error = ""
		}
	}
	for _, g := range out {
		dropRepeatedRetryErrors(g.Rows)
	}
	return out
}

// dropRepeatedRetryErrors leaves out an attempt's error on its divider
// when a call within the attempt already gives it.
func dropRepeatedRetryErrors(rows []row) {
	for i := range rows {
		if rows[i].Kind != "attempt" || rows[i].Error == "" {
			continue
		}
		for _, r := range rows[i+1:] {
			if r.Kind == "attempt" {
				break
			}
			if r.Class == "retried" && sameSentence(r.Error, rows[i].Error) {
				rows[i].Error = ""
				break
			}
		}
	}
}

// stepOf returns the header for a group of sp's, marking a second group
// of the same step as continued.
func stepOf(sp *stepSpan) *stepView {
	if sp == nil {
		return nil
	}
	if !sp.seen {
		sp.seen = true
		return sp.view
	}
	v := *sp.view
	v.Continued = true
	return &v
}

// attemptRow divides a step's attempts, saying why the one before failed.
func attemptRow(sp *stepSpan, n int) row {
	r := row{At: sp.attempts[n-1], Kind: "attempt", What: fmt.Sprintf("attempt %d of %d", n, len(sp.attempts)), Shot: -1}
	if n < len(sp.attempts) {
		r.Outcome, r.Class, r.Error = "retried", "retried", sp.retryErr[n-1]
	} else if r.Outcome = sp.view.Outcome; sp.view.Class == "ok" {
		r.Outcome = "ok"
	}
	return r
}

// saidWithin reports whether a failed row within sp's groups already
// gives the step's error.
func saidWithin(groups []group, sp *stepSpan) bool {
	for _, g := range groups {
		if g.Step == nil || g.Step.Kind != sp.view.Kind || g.Step.Name != sp.view.Name {
			continue
		}
		for _, r := range g.Rows {
			if r.Class == "failed" && r.Kind != "attempt" && sameSentence(r.Error, sp.view.Error) {
				return true
			}
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rowsOf makes a row of each call, navigation, console line, dialog and
// progress report.
func rowsOf(t *trace.Trace, start time.Time, total time.Duration, tabs map[string]tabName) []row {
	shots := map[int]int{}
	for i, f := range t.Failures {
		shots[f.Seq] = i
	}
	around := map[int][]actionShot{}
	for i, s := range t.Shots {
		around[s.Seq] = append(around[s.Seq], actionShot{N: i, When: s.When})
	}
	var rows []row
	for _, c := range t.Calls {
		r := row{At: c.Start, Kind: "call", What: c.Method, Detail: c.Target, Tab: tabs[c.Tab], Duration: c.Duration, HasDur: true,
			Bar: barOf(start, c.Start, c.Duration, total), Outcome: "ok", Shot: -1,
			Site: siteName(c.File, c.Line), file: c.File, line: c.Line, Shots: around[c.Seq]}
		if c.Page != "" && c.Page != c.Target {
			r.Detail = joinDetail(r.Detail, "on "+c.Page)
		}
		switch {
		case c.Code == string(errcode.Cancelled):
			// Cut off by the run's end, not a failure of its own.
			r.Outcome, r.Class, r.Error = c.Code, "cancelled", c.Error
		case !c.OK():
			r.Outcome, r.Class, r.Error = c.Code, "failed", c.Error
		}
		if n, ok := shots[c.Seq]; ok {
			r.Shot = n
		}
		rows = append(rows, r)
	}
	for _, n := range t.Navigations {
		r := row{At: n.At, Kind: "navigation", What: n.Kind, Detail: n.URL, Tab: tabs[n.Tab], Shot: -1}
		if n.Kind == "refused" {
			r.Class = "failed"
		}
		rows = append(rows, r)
	}
	for _, l := range t.Console {
		r := row{At: l.At, Kind: "console", What: l.Level, Detail: l.Text, Tab: tabs[l.Tab], Shot: -1}
		if l.Level == "error" || l.Level == "pageerror" {
			r.Class = "failed"
		}
		rows = append(rows, r)
	}
	for _, d := range t.Dialogs {
		answer := "dismissed"
		if d.Accepted {
			answer = "accepted"
		}
		rows = append(rows, row{At: d.At, Kind: "dialog", What: d.Type, Detail: d.Message, Tab: tabs[d.Tab], Outcome: answer, Shot: -1})
	}
	for _, s := range t.Steps {
		if s.Kind != "progress" {
			continue
		}
		r := row{At: s.At, Kind: "progress", What: "progress", Detail: s.Name, Shot: -1}
		if s.Fraction >= 0 {
			r.Outcome = fmt.Sprintf("%.0f%%", s.Fraction*100)
		}
		rows = append(rows, r)
	}
	return rows
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}
