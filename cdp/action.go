package cdp

import (
	"context"
	"errors"
	"net/url"
	"sync"

	"github.com/tranquil/automation/errcode"
)

// Every page action (evaluate, waitFor, holds, screenshot, goto, the form actions
// and key presses) goes through act: it marks where navigation waits
// start, runs the action, and logs it once with the site of the document
// it actually ran in. The site check itself sits lower, in call and
// checkDocument, so that it is made for each realm at the moment code runs
// there, retries in a new document included.

// scope is one running page action.
type scope struct {
	method string
	mu     sync.Mutex // frames are searched in parallel
	site   string     // host of the last document the action touched
}

type scopeKey struct{}

func scopeOf(ctx context.Context) *scope {
	s, _ := ctx.Value(scopeKey{}).(*scope)
	return s
}

// act runs one page action and logs it: method and target, the site, and
// the outcome ("ok", "dry-run", "refused" or an error code); never a value.
func (t *Tab) act(ctx context.Context, method, target string, dry bool, f func(ctx context.Context) error) error {
	if outer := scopeOf(ctx); outer != nil {
		return f(ctx) // part of an action already being logged
	}
	s := &scope{method: method}
	s.site = hostOf(t.nav.actionBegins())
	err := t.Err()
	if err == nil {
		err = t.errDialogStorm(method)
	}
	if err == nil {
		err = f(context.WithValue(ctx, scopeKey{}, s))
	}
	if gone := t.Err(); err != nil && gone != nil {
		// A session that ended under the action explains its failure
		// better than whatever the lost realm or document made of it.
		err = gone
	}
	if t.opts.Log != nil {
		outcome := "ok"
		switch {
		case err != nil:
			outcome = outcomeOf(err)
		case dry:
			outcome = "dry-run"
		}
		t.opts.Log(Action{Method: method, Target: target, Site: s.site, Outcome: outcome})
	}
	return err
}

// outcomeOf is an action's outcome in the log: "refused" for the site
// check's own refusal, else the error's code (see [errcode.Of]).
func outcomeOf(err error) string {
	if refused(err) {
		return "refused"
	}
	return string(errcode.Of(err))
}

// checkRealmIn applies the tab's sites to a realm of frame fr about to run
// code, from the origin the browser gave that realm.
func (t *Tab) checkRealmIn(ctx context.Context, fr, origin string) error {
	doc := t.frameURL(fr)
	// A blank page's realm has an opaque or inherited origin; the page
	// itself is judged by its address.
	if doc == "about:blank" && (origin == "" || origin == "null" || origin == "://") {
		origin = doc
	}
	return t.checkSite(ctx, origin)
}

// checkDocument applies the tab's sites to the main frame's committed
// document, for actions that run in no realm (input, screenshots).
func (t *Tab) checkDocument(ctx context.Context) error {
	return t.checkFrame(ctx, "")
}

// checkFrame applies the tab's sites to frame fr's committed document, for
// input that lands in it.
func (t *Tab) checkFrame(ctx context.Context, fr string) error {
	doc := t.frameAddress(fr)
	if doc == "about:srcdoc" {
		return nil // without sites, a document its parent wrote
	}
	return t.checkSite(ctx, doc)
}

// checkSomeDocument lets a form action or a reader start when the main
// frame's document, or the document of a frame below it, is allowed: a
// target is looked for only in allowed frames (see searchFrames). When
// none is, the main frame's refusal is the answer.
func (t *Tab) checkSomeDocument(ctx context.Context) error {
	err := t.checkDocument(ctx)
	if err == nil || !refused(err) {
		return err
	}
	if frames, _ := t.searchFrames(""); len(frames) > 0 {
		return nil
	}
	return err
}

// frameURL is frame fr's committed address ("" for a frame gone).
func (t *Tab) frameURL(fr string) string {
	if fr == "" {
		return t.nav.mainURL()
	}
	f, _ := t.frames.subframe(fr)
	return f.url
}

func (t *Tab) checkSite(ctx context.Context, where string) error {
	method := "page action"
	s := scopeOf(ctx)
	if s != nil {
		method = s.method
	}
	site := hostOf(where)
	if site == "" {
		if u, err := url.Parse(where); err == nil && u.Scheme != "" {
			site = u.Scheme + ":"
		} else {
			site = "(unknown document)"
		}
	}
	if s != nil {
		s.mu.Lock()
		s.site = site
		s.mu.Unlock()
	}
	if where == "about:blank" {
		if t.opts.Sites == nil {
			return nil
		}
		return &SiteError{Method: method, Site: "about:blank", Sites: t.opts.Sites}
	}
	if !documentAllowed(where) || where == "" {
		return &SiteError{Method: method, Site: site}
	}
	if t.opts.Sites != nil && !SiteAllowed(where, t.opts.Sites) {
		return &SiteError{Method: method, Site: site, Sites: t.opts.Sites}
	}
	if grant := t.localDocumentGrant(where); grant != "" {
		return &SiteError{Method: method, Site: site, Sites: t.opts.Sites, Grant: grant}
	}
	return nil
}

// refused reports whether err is the site check's own refusal.
func refused(err error) bool {
	var se *SiteError
	return errors.As(err, &se)
}
