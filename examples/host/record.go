package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/tranquil/automation/history"
)

// record is a run as --json prints it.
type record struct {
	ID              string          `json:"id"`
	Script          string          `json:"script"`
	Trigger         string          `json:"trigger,omitempty"`
	State           history.State   `json:"state"`
	ExitCode        *int            `json:"exitCode,omitempty"`
	Signal          string          `json:"signal,omitempty"`
	Reason          string          `json:"reason,omitempty"`
	Start           time.Time       `json:"start"`
	End             time.Time       `json:"end,omitzero"`
	DurationMS      int64           `json:"durationMs"`
	Output          string          `json:"output"`
	OutputTruncated bool            `json:"outputTruncated,omitempty"`
	FirstError      string          `json:"firstError,omitempty"`
	Result          json.RawMessage `json:"result,omitempty"`
	Warnings        []string        `json:"warnings,omitempty"`
	Actions         []action        `json:"actions"`
	Permissions     string          `json:"permissions,omitempty"`
	// Trace is what the run did, from its trace (run's --json only).
	Trace *traceRecord `json:"trace,omitempty"`
}

type action struct {
	At      time.Time `json:"at"`
	Method  string    `json:"method"`
	Target  string    `json:"target,omitempty"`
	Site    string    `json:"site,omitempty"`
	Outcome string    `json:"outcome"`
}

func toRecord(e history.Entry) record {
	r := record{
		ID: e.ID, Script: e.Script, Trigger: e.Trigger, State: e.State, ExitCode: e.ExitCode,
		Signal: e.Signal, Reason: e.Reason, Start: e.Start, End: e.End, DurationMS: e.Duration.Milliseconds(),
		Output: e.Output, OutputTruncated: e.OutputTruncated, FirstError: e.FirstError, Result: e.Result,
		Warnings: e.Warnings, Actions: []action{}, Permissions: e.Permissions,
	}
	for _, a := range e.Actions {
		r.Actions = append(r.Actions, action{At: a.At, Method: a.Method, Target: a.Target, Site: a.Site, Outcome: a.Outcome})
	}
	return r
}

// exitCode maps a run's final state to the program's exit code.
func exitCode(s history.State) int {
	switch s {
	case history.StateSucceeded:
		return exitOK
	case history.StateRefused:
		return exitRefused
	case history.StateCancelled, history.StateTimedOut:
		return exitCancelled
	}
	return exitFailed
}

// writeSummary prints how a run ended: its state, result and action log.
func writeSummary(w io.Writer, e history.Entry) {
	fmt.Fprintln(w)
	line := fmt.Sprintf("run %s %s", e.ID, e.State)
	if e.ExitCode != nil {
		line += fmt.Sprintf(" (exit %d)", *e.ExitCode)
	}
	if e.Duration > 0 {
		line += " in " + e.Duration.Round(time.Millisecond).String()
	}
	fmt.Fprintln(w, line)
	if e.Reason != "" {
		reason := e.Reason
		if m := headerAt.FindStringSubmatch(reason); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			reason = located(e.Script, line, col, m[3])
		}
		fmt.Fprintf(w, "reason: %s\n", safe(reason))
	}
	if e.FirstError != "" && e.FirstError != e.Reason {
		fmt.Fprintf(w, "error: %s\n", safe(e.FirstError))
	}
	if len(e.Result) > 0 {
		fmt.Fprintf(w, "result: %s\n", safe(compactJSON(e.Result)))
	}
	for _, warn := range e.Warnings {
		fmt.Fprintf(w, "warning: %s\n", safe(warn))
	}
	if len(e.Actions) > 0 {
		fmt.Fprintln(w, "actions:")
		for _, a := range e.Actions {
			fmt.Fprintf(w, "  %-8s %-12s %-8s %s\n", safe(a.Method), safe(a.Site), safe(a.Outcome), safe(a.Target))
		}
	}
}

// headerAt is how the runner places a header error in a refused run's
// reason: "line N, column M: message".
var headerAt = regexp.MustCompile(`^line (\d+), column (\d+): (.*)$`)

// located puts an error's place first as editors and compilers do,
// FILE:LINE:COL: message (FILE: message without a line), so that plan and
// run say where the same way.
func located(file string, line, col int, msg string) string {
	if line <= 0 {
		return file + ": " + msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", file, line, col, msg)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
