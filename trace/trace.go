package trace

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Trace is what a run did, in its browser tabs and outside them, for
// reading after it failed. Each list is in the order things happened; a list that reached
// its limit kept its first and last items and counts the rest in
// Dropped. It never holds a value typed into a page or a prompt's answer.
type Trace struct {
	RunID string
	// Start is when recording began.
	Start time.Time

	Calls       []Call
	Navigations []Navigation
	Console     []ConsoleLine
	Dialogs     []Dialog
	Steps       []Step
	// Failures hold what the page looked like when a call failed, for the
	// first few failed calls.
	Failures []Failure
	// Accesses are what the run's deno process asked its permissions
	// for, outside the browser: one entry per kind, value and outcome, in
	// the order each was first asked.
	Accesses []Access
	// Tabs name the run's tabs by the title of the first page each
	// showed, when the host learnt it; a tab without one is not listed.
	Tabs []TabTitle `json:",omitempty"`
	// Shots are screenshots of the page before and after page actions
	// (click, fill, …), when the host asked for them (runner's
	// Config.TraceActionScreenshots): the first and last of them.
	Shots []Shot `json:",omitempty"`

	Dropped Dropped
}

// TabTitle is the title of the first page a tab showed.
type TabTitle struct {
	Tab   string
	Title string // cut to Limits.Text bytes
}

// Shot is what a tab showed just before or just after page action Seq,
// masked as a Failure's screenshot is.
type Shot struct {
	Seq int
	// When is "before" or "after".
	When      string
	Image     []byte
	ImageType string // JPEG or PNG
}

// When a Shot was taken.
const (
	Before = "before"
	After  = "after"
)

// Dropped counts what a [Recorder] did not keep, list by list.
type Dropped struct {
	Calls, Navigations, Console, Dialogs, Steps, Failures int
	// Accesses counts permission checks not kept: those of a new kind,
	// value and outcome once Limits.Accesses entries were held, and
	// reports that could not be read (too long, not JSON).
	Accesses int
	// Shots counts action screenshots not kept: those between the first
	// and last Limits.Shots, and those too large or not images.
	Shots int `json:",omitempty"`
}

// Total is the number of items dropped from every list.
func (d Dropped) Total() int {
	return d.Calls + d.Navigations + d.Console + d.Dialogs + d.Steps + d.Failures + d.Accesses + d.Shots
}

// Call is one call a script made to the host: on one of its tabs, or to
// another of the host's objects (ui, clipboard, …), when Tab is "".
type Call struct {
	// Seq numbers the run's calls from 1, counting dropped ones, so a
	// Failure names its call even when calls between were dropped.
	Seq    int
	Method string // e.g. "tab.fill"
	// Target is the call's target described (cdp.Locator.String), or "".
	Target string
	Tab    string // the tab's id, or "" for a call on no tab
	// Page is the tab's address when the call ended, without query or
	// fragment (see [Address]).
	Page     string
	Start    time.Time
	Duration time.Duration
	// Code is "" when the call succeeded, else its error code
	// (errcode.Of).
	Code string
	// Error is the start of the error's message; "" on success.
	Error string
	// File, Line and Column are where the script made the call, as its
	// SDK reported it: the file relative to the script's folder (or a
	// URL, for a module elsewhere), line and column from 1. File is ""
	// when the call came with no call site. The script could write them
	// as it likes: they are labels, to be shown escaped.
	File         string `json:",omitempty"`
	Line, Column int    `json:",omitempty"`
}

// OK reports whether the call succeeded.
func (c Call) OK() bool { return c.Code == "" }

// Navigation is a document a tab went to: by a goto, by the page itself,
// or refused.
type Navigation struct {
	At  time.Time
	Tab string
	// Kind is "goto", "navigated" (the page moved on its own) or
	// "refused".
	Kind string
	// URL is the address as the action log describes it: origin and path,
	// with at most the query's length.
	URL string
}

// ConsoleLine is a console message or an uncaught error of a tab's page.
type ConsoleLine struct {
	At  time.Time
	Tab string
	// Level is the console call ("log", "error", "warning", …), or
	// "pageerror" for an uncaught exception.
	Level string
	Text  string // cut to Limits.Text bytes
}

// Dialog is a dialog a tab's page opened.
type Dialog struct {
	At      time.Time
	Tab     string
	Type    string // "alert", "confirm", "prompt" or "beforeunload"
	Message string // the start of the page's message
	// Accepted reports how it was answered. A prompt's answer is never
	// kept.
	Accepted bool
}

// Step is a step or a progress report of the script.
type Step struct {
	At time.Time
	// Kind is the step's kind ("do", "sleep", "waitForEvent"), or
	// "progress" for a progress report.
	Kind    string
	Name    string // the step's name, or the progress message
	Phase   string // "start", "retry" or "end"; "" for progress
	Attempt int
	OK      bool
	Error   string
	// Fraction is a progress report's fraction in [0, 1], or -1.
	Fraction float64
}

// Failure is what a tab showed when call Seq failed.
type Failure struct {
	Seq int
	// Image is a screenshot of the page, JPEG or PNG (ImageType), scaled
	// down; nil when none could be taken (Note says why).
	Image     []byte
	ImageType string // "image/jpeg" or "image/png"
	// Outline is a short accessibility outline of the page, one node a
	// line, indented by depth: role and name, never a field's value.
	Outline string
	// Note says what could not be captured, if anything.
	Note string
}

// Access is one kind of permission check deno made for the script, with
// how often it was made and whether it was allowed.
type Access struct {
	// Kind is deno's permission name: "read", "write", "net", "env",
	// "sys", "ffi", "import" or "run".
	Kind string
	// Value is what was checked: an absolute path, a host:port, an
	// environment variable's name (never its value), a sys call's name.
	Value string
	// Allowed reports whether the run's grants allowed it.
	Allowed bool
	// Count is how many times deno made this check.
	Count int
	// First and Last are when the host read the first and the last of
	// them.
	First, Last time.Time
}

// Image types a Failure may hold.
const (
	JPEG = "image/jpeg"
	PNG  = "image/png"
)

// Address returns u without its query, fragment and user information:
// what a trace keeps of a page's address, since a query often carries a
// token or what was typed into a search.
func Address(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			u = u[:i]
		}
		return u
	}
	p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment, p.User = "", false, "", "", nil
	return p.String()
}

// cut returns s made valid UTF-8 and cut to at most n bytes, on a rune
// boundary, with "…" marking a cut.
func cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	const mark = "…"
	n -= len(mark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n < 0 {
		n = 0
	}
	return s[:n] + mark
}
