package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/page"

	"github.com/tranquil/automation/display"

	"github.com/tranquil/automation/errcode"
)

// Dialog is a JavaScript dialog a page opened.
type Dialog struct {
	// Type is "alert", "confirm", "prompt" or "beforeunload".
	Type string
	// Message is the text the page gave the dialog.
	Message string
	// DefaultPrompt is the text a prompt starts with.
	DefaultPrompt string
	// URL is the address of the document that opened it.
	URL string
}

// DialogAnswer closes a dialog.
type DialogAnswer struct {
	// Accept presses OK (for beforeunload: leave the page); false presses
	// Cancel (stay).
	Accept bool
	// PromptText is what an accepted prompt returns to the page.
	PromptText string
}

// DialogHandler chooses how a tab answers a dialog. It runs on a goroutine
// of its own, one per dialog, while the page waits: it must return quickly.
type DialogHandler func(Dialog) DialogAnswer

// dialogState is a tab's handler (nil dismisses every dialog) and what
// it has seen of the page's dialogs.
//
// Goroutines: the tab's receive goroutine meters each dialog as it opens,
// the tab's dialog answer tasks read the handler and record what the
// answer did, the storm timer logs on its own, and callers set the
// handler and ask about storms and stranded dialogs. Its lock is a leaf:
// nothing is called, and no other part's lock taken, while mu is held.
type dialogState struct {
	mu    sync.Mutex
	h     DialogHandler
	stays int // beforeunload dialogs answered "stay", for Goto's error

	// The storm meter: when the latest dialogs opened (at most
	// DialogStormRate+1), whether the tab is in a storm, and the storm's
	// dismissals not logged yet.
	opened    []time.Time
	storm     bool
	unlogged  int
	flushing  bool   // a timer will log the unlogged dismissals
	stormSite string // host of the last dialog dismissed in the storm

	// stranded is set once the browser refused to answer a dialog of
	// this tab's page ("Not attached to an active page"): a navigation
	// replaced the document while its dialog was showing. See Detach.
	stranded bool
}

// DialogStormRate is how many dialogs a tab's page may open in one
// second before the tab is in a dialog storm. A person reads
// a dialog in a second or more; a page that opens more than this many in
// a second is looping on them (while (true) alert()), and answering each
// through the handler and the log only feeds the loop. It is low because
// such a loop runs no faster than the round trip of each answer, which on
// a busy machine can take tens of milliseconds. A page that asks for
// many confirmations in a row, each answered at once, gets its first
// ten in any second answered by the handler.
const DialogStormRate = 10

// dialogStormWindow is the span the storm meter counts dialogs over. A
// storm lasts while the page opens more than half DialogStormRate dialogs
// in a window, so that a storm that slows a little is still one.
const dialogStormWindow = time.Second

// dialogAnswerTimeout bounds answering one dialog.
const dialogAnswerTimeout = defaultCleanupTimeout

// HandleDialogs sets how the tab answers the page's JavaScript dialogs
// (alert, confirm, prompt, beforeunload). Every dialog is answered at once,
// so none leaves a page action waiting: a click that opens an alert returns
// as soon as the alert is closed. With no handler (nil, the default) every
// dialog is dismissed: Cancel for confirm and prompt, stay on the page for
// beforeunload.
//
// A dialog on a document outside the tab's sites ([TabOptions.Sites]) is
// dismissed whatever h answers. Each answer is logged as a "dialog" action
// with the dialog's type and the first words of its message, never the
// prompt text. A dialog whose event passes 1 MiB (a prompt's default text
// is the page's to size) reaches h with its type and a message saying how
// large it was, and empty URL and DefaultPrompt.
//
// A page that opens more than [DialogStormRate] dialogs in a
// second is in a dialog storm: from then until it opens no
// more than half as many in a window, its dialogs are dismissed without
// asking h, and the log gets one "dialog" action per window ("dialog
// storm: N dismissed") instead of one per dialog. During a storm the page's own code never
// pauses, so calls that run in it ([Tab.Evaluate], the readers) end at
// their context's deadline, [Tab.Title] answers from the browser's copy,
// and [Tab.Goto] fails at once with code navigation: a navigation that
// replaces a document while its dialog shows leaves the browser holding a
// dialog it can no longer answer (see [Tab.Detach]). [Tab.Close] works.
func (t *Tab) HandleDialogs(h DialogHandler) { t.dlg.setHandler(h) }

func (ds *dialogState) setHandler(h DialogHandler) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.h = h
}

func (ds *dialogState) handler() DialogHandler {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.h
}

// dialogOpening answers a dialog on a goroutine of its own: the answer is
// a protocol call, whose reply this receive goroutine delivers. Dialogs
// are modal, so a page has at most one waiting at a time.
func (t *Tab) dialogOpening(params json.RawMessage) {
	var ev page.JavascriptDialogOpeningReply
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	d := Dialog{Type: string(ev.Type), Message: ev.Message, URL: ev.URL}
	if ev.DefaultPrompt != nil {
		d.DefaultPrompt = *ev.DefaultPrompt
	}
	storm, flush := t.dlg.meter(time.Now(), hostOf(d.URL))
	if flush {
		// One entry per window: the timer logs what the window dismissed.
		time.AfterFunc(dialogStormWindow, t.logStorm)
	}
	t.tasks.Go("dialog answer", func(ctx context.Context) { t.answerDialog(ctx, d, storm) })
}

// meter counts a dialog opening at now and reports whether the tab is in
// a storm, which then dismisses it unasked and unlogged, and whether a
// timer is to log the window's dismissals (see flushed).
func (ds *dialogState) meter(now time.Time, site string) (storm, flush bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.opened = append(ds.opened, now)
	if len(ds.opened) > DialogStormRate+1 {
		ds.opened = ds.opened[1:]
	}
	// lastWithin reports whether the latest n dialogs opened within a
	// window of now.
	lastWithin := func(n int) bool {
		return len(ds.opened) >= n && now.Sub(ds.opened[len(ds.opened)-n]) < dialogStormWindow
	}
	if ds.storm {
		ds.storm = lastWithin(DialogStormRate/2 + 1)
	} else {
		ds.storm = lastWithin(DialogStormRate + 1)
	}
	if !ds.storm {
		return false, false
	}
	ds.unlogged++
	ds.stormSite = site
	flush = !ds.flushing
	ds.flushing = true
	return true, flush
}

// flushed takes the storm's dismissals not logged yet, and where the last
// was.
func (ds *dialogState) flushed() (n int, site string) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	n, site = ds.unlogged, ds.stormSite
	ds.unlogged, ds.flushing = 0, false
	return n, site
}

// logStorm logs the dismissals of a storm window as one action.
func (t *Tab) logStorm() {
	n, site := t.dlg.flushed()
	if n > 0 && t.opts.Log != nil {
		t.opts.Log(Action{Method: "dialog", Target: fmt.Sprintf("dialog storm: %d dismissed", n), Site: site, Outcome: "dismissed"})
	}
}

// inDialogStorm reports whether the page is in a dialog storm now: the
// meter says so and its latest dialog is within the window.
func (t *Tab) inDialogStorm() bool { return t.dlg.inStorm(time.Now()) }

func (ds *dialogState) inStorm(now time.Time) bool {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.storm && len(ds.opened) > 0 && now.Sub(ds.opened[len(ds.opened)-1]) < dialogStormWindow
}

// errDialogStorm is why a navigation is refused during a storm, or nil.
func (t *Tab) errDialogStorm(method string) error {
	if method != "goto" || !t.inDialogStorm() {
		return nil
	}
	return codeErr(errcode.Navigation, "navigation refused: the page is opening dialogs without pause (more than %d a second); "+
		"navigating now would leave the browser a dialog it cannot answer: close the tab instead", DialogStormRate)
}

func (t *Tab) answerDialog(ctx context.Context, d Dialog, storm bool) {
	ctx, cancel := context.WithTimeout(ctx, dialogAnswerTimeout)
	defer cancel()
	h := t.dlg.handler()
	var ans DialogAnswer
	if h != nil && !storm {
		ans = h(d)
	}
	outcome := "dismissed"
	switch {
	case ans.Accept && t.opts.Sites != nil && !SiteAllowed(d.URL, t.opts.Sites):
		ans, outcome = DialogAnswer{}, "refused"
	case ans.Accept:
		outcome = "accepted"
	}
	if d.Type == "beforeunload" && !ans.Accept {
		// Counted before the answer, which ends the navigation it stops.
		t.dlg.stayed()
	}
	args := page.NewHandleJavaScriptDialogArgs(ans.Accept)
	if ans.Accept && d.Type == "prompt" {
		args.SetPromptText(ans.PromptText)
	}
	if err := t.c.Page.HandleJavaScriptDialog(ctx, args); err != nil {
		re := protocolError(err)
		if re != nil && strings.Contains(re.Message, "No dialog is showing") {
			return // another session of the tab answered it
		}
		if re != nil && strings.Contains(re.Message, "Not attached to an active page") {
			t.dlg.strand()
		}
		outcome = outcomeOf(t.fail(err))
	}
	if storm && outcome == "dismissed" {
		return // counted in the storm's one entry
	}
	if t.opts.Log != nil {
		t.opts.Log(Action{Method: "dialog", Target: dialogTarget(d), Site: hostOf(d.URL), Outcome: outcome})
	}
}

// strandedDialog reports whether the browser holds a dialog of this tab
// that it refused to let the tab answer.
func (t *Tab) strandedDialog() bool {
	ds := &t.dlg
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.stranded
}

// strand records that the browser refused to let the tab answer a dialog.
func (ds *dialogState) strand() {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.stranded = true
}

// stayed counts a beforeunload dialog answered "stay".
func (ds *dialogState) stayed() {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.stays++
}

// dialogStays counts the beforeunload dialogs answered "stay".
func (t *Tab) dialogStays() int {
	ds := &t.dlg
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.stays
}

// dialogExcerpt is how much of a dialog's message the log keeps: enough to
// tell dialogs apart, little of what the page wrote.
const dialogExcerpt = 40

// dialogTarget describes a dialog for the log: its type and the start of
// its message, escaped so that it shows as the text it is.
func dialogTarget(d Dialog) string {
	msg := normalizeSpace(headOf(d.Message, dialogExcerpt+1))
	if msg == "" {
		return d.Type
	}
	return d.Type + ": " + display.Line(shorten(msg, dialogExcerpt))
}

// headOf is s up to and with its nth character that is not white space,
// or all of s when it has fewer: a message of megabytes is a page's to
// write, and the log keeps its start. Collapsed, it starts as s does
// collapsed, and a cut after it falls where the cut of all of s would.
func headOf(s string, n int) string {
	for i := 0; i < len(s); {
		size, space := spaceAt(s, i)
		i += size
		if !space {
			if n--; n == 0 {
				return s[:i]
			}
		}
	}
	return s
}
