package main

import (
	"time"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/trace"
)

// traceRecord is the part of a run's trace --json prints: what a test
// that ran the script (the SDK's runOnRealHost) shows when it fails. The
// whole trace, screenshots included, stays in the history for host trace.
type traceRecord struct {
	Calls       []traceCall       `json:"calls"`
	Navigations []traceNavigation `json:"navigations"`
	Failures    []traceFailure    `json:"failures"`
	Dropped     int               `json:"dropped,omitempty"`
}

type traceCall struct {
	Seq        int    `json:"seq"`
	Method     string `json:"method"`
	Target     string `json:"target,omitempty"`
	Page       string `json:"page,omitempty"`
	AtMS       int64  `json:"atMs"`
	DurationMS int64  `json:"durationMs"`
	Code       string `json:"code,omitempty"`
	Error      string `json:"error,omitempty"`
}

type traceNavigation struct {
	AtMS int64  `json:"atMs"`
	Kind string `json:"kind"`
	URL  string `json:"url"`
}

type traceFailure struct {
	Seq     int    `json:"seq"`
	Outline string `json:"outline,omitempty"`
	Note    string `json:"note,omitempty"`
}

// runTrace reads run id's trace from the history; nil when it kept none
// or it cannot be read (the record is printed without it).
func runTrace(h *history.Store, id string) *traceRecord {
	data, err := h.Trace(id)
	if err != nil {
		return nil
	}
	t, err := trace.Decode(data)
	if err != nil {
		return nil
	}
	ms := func(at time.Time) int64 { return at.Sub(t.Start).Milliseconds() }
	r := &traceRecord{Calls: []traceCall{}, Navigations: []traceNavigation{}, Failures: []traceFailure{}, Dropped: t.Dropped.Total()}
	for _, c := range t.Calls {
		r.Calls = append(r.Calls, traceCall{Seq: c.Seq, Method: c.Method, Target: c.Target, Page: c.Page,
			AtMS: ms(c.Start), DurationMS: c.Duration.Milliseconds(), Code: c.Code, Error: c.Error})
	}
	for _, n := range t.Navigations {
		r.Navigations = append(r.Navigations, traceNavigation{AtMS: ms(n.At), Kind: n.Kind, URL: n.URL})
	}
	for _, f := range t.Failures {
		r.Failures = append(r.Failures, traceFailure{Seq: f.Seq, Outline: f.Outline, Note: f.Note})
	}
	return r
}
