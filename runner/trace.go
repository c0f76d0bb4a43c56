package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/trace"
)

// A run's trace (package trace): its host calls, navigations, console
// lines, dialogs, steps and accesses outside the browser (audit.go), and
// what a tab showed when a call failed. It
// is kept with the run's history entry (history.Store.PutTrace) when the
// run ends; Manager.Trace reads it back.

// newTrace is a run's recorder; nil when the manager traces nothing.
func newTrace(m *Manager, id string) *trace.Recorder {
	if m.cfg.NoTrace {
		return nil
	}
	return trace.NewRecorder(id, trace.Limits{})
}

// evidenceTimeout bounds the capture after a failed call, which holds the
// call's answer: a screenshot and an outline take tens of milliseconds on
// a working page, and a page too busy to give them must not keep a call
// much past its own timeout.
const evidenceTimeout = time.Second

// hostCall is one host call under way, as the run's trace records it:
// once, when it ends, whether it reached a tab or was refused first. It
// holds the call's method, tab and target, never its arguments, which
// may be a value typed, a clipboard's text or a file's content.
//
// The interceptor (invoke) opens and closes it; a call on a page
// records through traced, with what the page showed.
// context.log, step and progress are reports, not calls: steps and
// progress are the trace's Steps, and a log line belongs to the output.
type hostCall struct {
	r      *Run
	api    string
	tab    string
	target *cdp.Locator
	on     *cdp.Tab // the tab's session once attached: the call's page
	n      int      // the SDK's number for the call, which its site names; 0 for none
	start  time.Time
	done   bool
}

// call starts the record of call api on tab ("" for none), made with
// ctx, the method's context, which carries the script's line that made
// it (see takeSite). With no trace it reads no clock.
func (r *Run) call(ctx context.Context, api, tab string) hostCall {
	if r.trace == nil {
		return hostCall{done: true}
	}
	r.lateSites(ctx)
	note, _ := ctx.Value(siteKey{}).(siteNote)
	return hostCall{r: r, api: api, tab: tab, n: note.n, start: time.Now()}
}

// The call site. The SDK numbers its host calls and appends to each
// call's arguments one string: siteMark, the call's number, then, a line
// each, "number:line:column:file" for earlier calls. Reading a stack
// costs microseconds, a host round trip's share, so the SDK reads its
// calls' sites after sending them, a batch at a time, and each travels
// with a later call (or, as the script ends, with its last call to
// context.payload; when the process ends at once, on Deno.exit, an
// uncaught error or a cancel, on stderr: siteLinePrefix). The bridge hands every call's arguments to takeSite
// first (rpc.Config.CallContext), which moves the string into the
// method's context, so no method's parameters change; the run's siteBook
// joins each site to its call in the trace. A site is only a label the
// script could write as it likes: bounded here, cut by the trace, and
// escaped where it is shown.

// siteMark starts the SDK's call-site argument (runner/sdk/runtime.ts
// SITE_MARK): a NUL that no argument a script means to pass starts with.
const siteMark = "\x00site:"

// Bounds on what the script's call sites can make the host hold.
const (
	maxSiteFile   = 512  // bytes of a site's file name
	maxSitesSent  = 1024 // sites one call carries
	maxSitesKept  = 4096 // calls or sites a run holds while they wait for each other
	maxSiteNumber = 1 << 40
)

// callSite is where the script made a host call.
type callSite struct {
	File         string
	Line, Column int
}

// siteNote is what a call's context holds of its site argument: its own
// number (0 for none) and the sites of earlier calls it carried.
type siteNote struct {
	n     int
	sites map[int]callSite
}

type siteKey struct{}

// takeSite takes the call-site argument off the end of a call's
// arguments into ctx. A call without one (a test's client, an older SDK)
// is passed as it is; malformed lines are dropped.
func takeSite(ctx context.Context, args []any) (context.Context, []any) {
	n := len(args)
	if n == 0 {
		return ctx, args
	}
	s, ok := args[n-1].(string)
	if !ok || !strings.HasPrefix(s, siteMark) {
		return ctx, args
	}
	return context.WithValue(ctx, siteKey{}, parseNote(s[len(siteMark):])), args[:n-1]
}

// parseNote reads a site argument after its mark.
func parseNote(s string) siteNote {
	own, rest, _ := strings.Cut(s, "\n")
	var note siteNote
	if n, err := strconv.Atoi(own); err == nil && n > 0 && n <= maxSiteNumber {
		note.n = n
	}
	for rest != "" && len(note.sites) < maxSitesSent {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if n, cs, ok := parseSiteLine(line); ok {
			if note.sites == nil {
				note.sites = map[int]callSite{}
			}
			note.sites[n] = cs
		}
	}
	return note
}

// parseSiteLine reads "number:line:column:file", the site of the SDK's
// call number.
func parseSiteLine(s string) (int, callSite, bool) {
	num, site, _ := strings.Cut(s, ":")
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || n > maxSiteNumber {
		return 0, callSite{}, false
	}
	cs, ok := parseSite(site)
	return n, cs, ok
}

// siteLinePrefix starts a line the bootstrap writes to stderr as the
// script ends the process itself (Deno.exit) or is cancelled, with a site
// no call carried yet: "number:line:column:file", as a site argument's
// lines. Writing to stderr is what the bootstrap can do synchronously
// before the process ends; the host reads the stream to its end.
const siteLinePrefix = "tranquil: site "

// siteLine records the site a line of the process's stderr carries and
// reports whether it was such a line, which the run's output then leaves
// out. A run without a trace has no use for them and keeps them as output.
func (r *Run) siteLine(line string) bool {
	rest, ok := strings.CutPrefix(line, siteLinePrefix)
	if !ok || r == nil || r.trace == nil {
		return false
	}
	if n, cs, ok := parseSiteLine(rest); ok {
		r.placeSites(map[int]callSite{n: cs})
	}
	return true
}

// parseSite reads "line:column:file".
func parseSite(s string) (callSite, bool) {
	line, rest, ok1 := strings.Cut(s, ":")
	col, file, ok2 := strings.Cut(rest, ":")
	l, err1 := strconv.Atoi(line)
	c, err2 := strconv.Atoi(col)
	const maxLine = 1 << 24
	if !ok1 || !ok2 || err1 != nil || err2 != nil || l < 0 || c < 0 || l > maxLine || c > maxLine || file == "" {
		return callSite{}, false
	}
	return callSite{File: cutSite(file), Line: l, Column: c}, true
}

// cutSite bounds a file name to maxSiteFile bytes, keeping its end (the
// name), on a rune boundary.
func cutSite(f string) string {
	if len(f) <= maxSiteFile {
		return f
	}
	f = f[len(f)-maxSiteFile:]
	for len(f) > 0 && !utf8.RuneStart(f[0]) {
		f = f[1:]
	}
	return "…" + f
}

// siteBook joins call sites to the calls of one run's trace: a call
// recorded before its site came waits in seqs, a site that came before
// its call (still running) in early. Each holds at most maxSitesKept.
type siteBook struct {
	mu    sync.Mutex
	seqs  map[int]int // the SDK's call number → the trace's Seq
	early map[int]callSite
}

// siteRecorded notes that call n of the SDK is the trace's call seq.
func (r *Run) siteRecorded(n, seq int) {
	b := &r.callSites
	b.mu.Lock()
	defer b.mu.Unlock()
	if cs, ok := b.early[n]; ok {
		delete(b.early, n)
		r.trace.SetSite(seq, cs.File, cs.Line, cs.Column)
		return
	}
	if b.seqs == nil {
		b.seqs = map[int]int{}
	}
	if len(b.seqs) < maxSitesKept {
		b.seqs[n] = seq
	}
}

// lateSites records the sites of earlier calls that ctx's call carried.
func (r *Run) lateSites(ctx context.Context) {
	note, _ := ctx.Value(siteKey{}).(siteNote)
	if r.trace == nil || len(note.sites) == 0 {
		return
	}
	r.placeSites(note.sites)
}

// placeSites joins sites, by the SDK's call number, to the calls the
// trace recorded, or keeps them for calls still running.
func (r *Run) placeSites(sites map[int]callSite) {
	b := &r.callSites
	b.mu.Lock()
	defer b.mu.Unlock()
	for n, cs := range sites {
		if seq, ok := b.seqs[n]; ok {
			delete(b.seqs, n)
			r.trace.SetSite(seq, cs.File, cs.Line, cs.Column)
			continue
		}
		if b.early == nil {
			b.early = map[int]callSite{}
		}
		if len(b.early) < maxSitesKept {
			b.early[n] = cs
		}
	}
}

// end records the call with the outcome *errp (nil for a call that
// cannot fail), unless traced already did.
func (h *hostCall) end(errp *error) {
	if h.done {
		return
	}
	var err error
	if errp != nil {
		err = *errp
	}
	h.record(err)
}

// record adds the call to the trace and returns its Seq and code.
func (h *hostCall) record(err error) (int, errcode.Code) {
	h.done = true
	call := trace.Call{Method: h.api, Tab: h.tab, Start: h.start, Duration: time.Since(h.start)}
	if h.on != nil {
		call.Page = h.on.Address()
	}
	if h.target != nil {
		call.Target = h.target.String()
	}
	var code errcode.Code
	if err != nil {
		code = errCodeOf(err)
		call.Code, call.Error = string(code), callMessage(code, err)
	}
	seq := h.r.trace.Call(call)
	if h.n > 0 {
		h.r.siteRecorded(h.n, seq)
	}
	return seq, code
}

// traced records the call, made on c's tab, with its outcome err and
// returns err. A failed call that the page could explain gets the tab's
// evidence, while the call still holds the run's gate; page says what
// else the trace keeps of the page.
func (h *hostCall) traced(page pageEvidence, c *call, err error) error {
	if h.done {
		return err
	}
	h.on = c.tab
	seq, code := h.record(err)
	if c.before != nil {
		h.r.trace.Shot(trace.Shot{Seq: seq, When: trace.Before, Image: c.before, ImageType: trace.JPEG})
	}
	if code == "" && page == pageNavigation && h.r.trace.WantTitle(h.tab) {
		h.r.learnTitle(c, h.tab)
	}
	switch code {
	case "":
		if c.before != nil {
			h.r.shotAfter(c.tab, seq)
		}
		return err
	case errcode.Invalid, errcode.NotGranted, errcode.NavigationBlocked, errcode.Cancelled:
		return err // the page has nothing to say about these
	}
	// A failed action's after is its failure's evidence.
	if c.tab.Err() == nil && h.r.trace.ClaimFailure() {
		h.r.captureFailure(c.tab, seq)
	}
	return err
}

// titleTimeout bounds asking a page its title for the trace, once a tab.
const titleTimeout = 250 * time.Millisecond

// learnTitle records the title of the page c's tab (tab) shows now.
func (r *Run) learnTitle(c *call, tab string) {
	ctx, cancel := context.WithTimeout(c.ctx, titleTimeout)
	defer cancel()
	if title, err := c.tab.Title(ctx); err == nil {
		r.trace.TabTitle(tab, title)
	}
}

// traceTitle records the title of a tab the run learnt of, unless it
// shows no page yet.
func (r *Run) traceTitle(info TabInfo) {
	if r.trace == nil || info.Title == "" || info.URL == "" || info.URL == "about:blank" {
		return
	}
	r.trace.TabTitle(info.ID, info.Title)
}

// Action screenshots (Config.TraceActionScreenshots): the page before and
// after each page action, masked as a failure's evidence is. Each takes a
// screenshot's time (tens of milliseconds) inside the call.

// actionShot is the screenshot options of an action's before and after:
// smaller than a failure's, since there are many.
var actionShot = cdp.EvidenceOptions{MaxWidth: 640, Quality: 50, MaxLines: 1, Depth: 1}

// shotBefore is a screenshot of tab's page before a page action, or nil
// when the trace does not take them or the page could not give one.
func (r *Run) shotBefore(tab *cdp.Tab) []byte {
	if r.trace == nil || !r.m.cfg.TraceActionScreenshots {
		return nil
	}
	return r.actionShot(tab)
}

// shotAfter records the screenshot of tab's page after action seq.
func (r *Run) shotAfter(tab *cdp.Tab, seq int) {
	if img := r.actionShot(tab); img != nil {
		r.trace.Shot(trace.Shot{Seq: seq, When: trace.After, Image: img, ImageType: trace.JPEG})
	}
}

func (r *Run) actionShot(tab *cdp.Tab) []byte {
	ctx, cancel := context.WithTimeout(r.gate.ctx, evidenceTimeout)
	defer cancel()
	ev, _ := tab.Evidence(ctx, actionShot)
	return ev.JPEG
}

// withoutQuotes is message with each Go-quoted string in it (a '"', then
// characters, a backslash escaping any but a newline, then a '"') as
// `"…"`. A refusal may quote a value of hundreds of kilobytes, which a
// regular expression took milliseconds to scan: this reads each byte once.
func withoutQuotes(message string) string {
	var b strings.Builder
	from := 0 // what is not yet written
	for i := 0; i < len(message); {
		if message[i] != '"' {
			i++
			continue
		}
		j := i + 1
		for j < len(message) && message[j] != '"' {
			if message[j] == '\\' {
				if j+1 == len(message) || message[j+1] == '\n' {
					break
				}
				j++
			}
			j++
		}
		if j == len(message) || message[j] != '"' {
			// Not closed: no quote that starts before j closes either
			// (each '"' before it was escaped), so go on after it.
			i = j + 1
			continue
		}
		b.WriteString(message[from:i])
		b.WriteString(`"…"`)
		i, from = j+1, j+1
	}
	if from == 0 {
		return message
	}
	b.WriteString(message[from:])
	return b.String()
}

// callMessage is what the script was told, without the error's name. A
// failed expectation's message quotes the text expected and the text
// seen, which for a field is what was typed: the trace keeps neither.
// Nor does it keep what a refusal of an argument quotes, or what
// evaluate's function threw.
func callMessage(code errcode.Code, err error) string {
	switch code {
	case errcode.ExpectationFailed:
		return "the expectation did not hold (what was expected and seen is not kept)"
	case errcode.EvalError:
		// What the page's function threw may be built from its
		// arguments; the page's own errors are in the console lines.
		return "the page's function threw (its message is not kept)"
	case errcode.Invalid, errcode.NavigationBlocked:
		// A refused argument is quoted back to the script, and may be
		// a value (a URL's query, a text where an option was due).
		return withoutQuotes(plainMessage(err))
	}
	return plainMessage(err)
}

// plainMessage is err's message without its name.
func plainMessage(err error) string {
	var ce *capnweb.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

// captureFailure records what tab shows as the evidence of call seq.
func (r *Run) captureFailure(tab *cdp.Tab, seq int) {
	ctx, cancel := context.WithTimeout(r.gate.ctx, evidenceTimeout)
	defer cancel()
	ev, err := tab.Evidence(ctx, cdp.EvidenceOptions{})
	f := trace.Failure{Seq: seq, Outline: ev.Outline}
	if ev.JPEG != nil {
		f.Image, f.ImageType = ev.JPEG, trace.JPEG
	}
	if err != nil {
		f.Note = fmt.Sprintf("not all of the page could be captured: %s", errcode.Of(err))
	}
	r.trace.Failure(f)
}

// traceTab adds the trace's hooks to the options of tab id's session:
// its navigations, besides the action log.
func (r *Run) traceTab(id string, o cdp.TabOptions) cdp.TabOptions {
	rec, log := r.trace, o.Log
	if rec == nil {
		return o
	}
	o.Log = func(a cdp.Action) {
		log(a)
		kind := a.Method
		switch {
		case a.Method != "goto" && a.Method != "navigated" && a.Method != "navigate":
			return
		case a.Outcome == "refused" || a.Outcome == string(errcode.NavigationBlocked) || a.Method == "navigate":
			kind = "refused"
		}
		rec.Navigation(trace.Navigation{At: time.Now(), Tab: id, Kind: kind, URL: a.Target})
	}
	return o
}

// traceAttached follows the console and the dialogs of tab id, just
// attached as t, and returns the dialog handler to install: h, recording
// each dialog's type, the start of its message and whether it was
// accepted, never a prompt's answer. The subscriptions end with t's
// session.
func (r *Run) traceAttached(id string, t *cdp.Tab, h cdp.DialogHandler) cdp.DialogHandler {
	rec := r.trace
	if rec == nil {
		return h
	}
	t.OnConsole(func(m cdp.ConsoleMessage) {
		rec.Console(trace.ConsoleLine{At: time.Now(), Tab: id, Level: m.Type, Text: m.Text})
	})
	t.OnPageError(func(e *cdp.EvalError) {
		rec.Console(trace.ConsoleLine{At: time.Now(), Tab: id, Level: "pageerror", Text: e.Error()})
	})
	return func(d cdp.Dialog) cdp.DialogAnswer {
		a := h(d)
		rec.Dialog(trace.Dialog{At: time.Now(), Tab: id, Type: d.Type, Message: d.Message, Accepted: a.Accept})
		return a
	}
}

// traceEvent records the run's steps and progress reports.
func (r *Run) traceEvent(e Event) {
	rec := r.trace
	if rec == nil {
		return
	}
	switch {
	case e.Kind == EventStep && e.Step != nil:
		s := e.Step
		rec.Step(trace.Step{At: e.Time, Kind: s.Kind, Name: s.Name, Phase: s.Phase, Attempt: s.Attempt, OK: s.OK, Error: s.Error, Fraction: -1})
	case e.Kind == EventProgress:
		rec.Step(trace.Step{At: e.Time, Kind: "progress", Name: e.Line, Fraction: e.Fraction})
	}
}

// storeTrace keeps the run's trace with its history entry. A run that
// recorded nothing keeps none. Failures are the host's to know, not the
// script's: the run's outcome does not depend on its trace.
func (r *Run) storeTrace() {
	if r.trace == nil {
		return
	}
	t := r.trace.Trace()
	if len(t.Calls)+len(t.Navigations)+len(t.Console)+len(t.Dialogs)+len(t.Steps)+len(t.Accesses) == 0 {
		return
	}
	data, err := trace.Encode(t)
	if err == nil {
		err = r.m.hist.PutTrace(r.id, data)
	}
	if err != nil {
		r.m.log.Warn("runner: storing a run's trace", "run", r.id, "error", err)
	}
}

// Trace returns the trace kept for run id: errors wrap history.ErrNoRun
// or history.ErrNoTrace when there is none, history.ErrCorrupt or
// trace.ErrCorrupt when it cannot be read.
func (m *Manager) Trace(id string) (*trace.Trace, error) {
	data, err := m.hist.Trace(id)
	if err != nil {
		return nil, err
	}
	return trace.Decode(data)
}
