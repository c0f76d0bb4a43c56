package cdp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/mafredri/cdp/protocol/page"

	"github.com/tranquil/automation/display"
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

// dialogState is a tab's handler; nil dismisses every dialog.
type dialogState struct {
	mu    sync.Mutex
	h     DialogHandler
	stays int // beforeunload dialogs answered "stay", for Goto's error
}

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
// prompt text.
func (t *Tab) HandleDialogs(h DialogHandler) {
	t.ext.dlg.mu.Lock()
	t.ext.dlg.h = h
	t.ext.dlg.mu.Unlock()
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
	go t.answerDialog(d)
}

func (t *Tab) answerDialog(d Dialog) {
	ctx, cancel := context.WithTimeout(context.Background(), dialogAnswerTimeout)
	defer cancel()
	t.ext.dlg.mu.Lock()
	h := t.ext.dlg.h
	t.ext.dlg.mu.Unlock()
	var ans DialogAnswer
	if h != nil {
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
		t.ext.dlg.mu.Lock()
		t.ext.dlg.stays++
		t.ext.dlg.mu.Unlock()
	}
	args := page.NewHandleJavaScriptDialogArgs(ans.Accept)
	if ans.Accept && d.Type == "prompt" {
		args.SetPromptText(ans.PromptText)
	}
	if err := t.c.Page.HandleJavaScriptDialog(ctx, args); err != nil {
		if re := protocolError(err); re != nil && strings.Contains(re.Message, "No dialog is showing") {
			return // another session of the tab answered it
		}
		outcome = outcomeOf(t.fail(err))
	}
	if t.opts.Log != nil {
		t.opts.Log(Action{Method: "dialog", Target: dialogTarget(d), Site: hostOf(d.URL), Outcome: outcome})
	}
}

// dialogStays counts the beforeunload dialogs answered "stay".
func (t *Tab) dialogStays() int {
	t.ext.dlg.mu.Lock()
	defer t.ext.dlg.mu.Unlock()
	return t.ext.dlg.stays
}

// dialogExcerpt is how much of a dialog's message the log keeps: enough to
// tell dialogs apart, little of what the page wrote.
const dialogExcerpt = 40

// dialogTarget describes a dialog for the log: its type and the start of
// its message, escaped so that it shows as the text it is.
func dialogTarget(d Dialog) string {
	msg := norm(d.Message)
	if msg == "" {
		return d.Type
	}
	return d.Type + ": " + display.Line(shorten(msg, dialogExcerpt))
}
