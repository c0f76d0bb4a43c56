package cdp

import (
	"context"
	"errors"
	"net/url"
)

// Every page action (evaluate, waitFor, screenshot, goto, the form actions
// and key presses) goes through act: it marks where navigation waits
// start, runs the action, and logs it once with the site of the document
// it actually ran in. The site check itself sits lower, in call and
// checkDocument, so that it is made for each realm at the moment code runs
// there, retries in a new document included.

// scope is one running page action.
type scope struct {
	method string
	site   string // host of the last document the action touched
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
	t.mu.Lock()
	t.actionMark = t.navSeq
	s.site = hostOf(t.url)
	t.mu.Unlock()
	err := f(context.WithValue(ctx, scopeKey{}, s))
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

// checkRealm applies the tab's sites to a realm about to run code, from
// the origin the browser gave that realm.
func (t *Tab) checkRealm(ctx context.Context, origin string) error {
	t.mu.Lock()
	doc := t.url
	t.mu.Unlock()
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
	t.mu.Lock()
	doc := t.url
	t.mu.Unlock()
	return t.checkSite(ctx, doc)
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
		s.site = site
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
	return nil
}

// refused reports whether err is the site check's own refusal.
func refused(err error) bool {
	var se *SiteError
	return errors.As(err, &se)
}
