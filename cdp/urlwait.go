package cdp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tranquil/automation/cdp/textpattern"
)

// GlobPattern compiles a URL glob as Playwright's waitForURL reads one:
// ** matches any run of characters, * any run without a slash, and every
// other character itself; the whole address must match. A glob without
// a star is an exact address. A glob longer than [MaxPatternBytes] is a
// *PatternLimitError, as a RegExp's source is.
func GlobPattern(glob string) (*Pattern, error) { return textpattern.Glob(glob) }

// WaitForURL waits until the tab's address matches p (see [GlobPattern]
// and [CompilePattern]) and the document at that address reached
// waitUntil (zero means Load), or ctx ends: then a *WaitTimeoutError says
// which address was last seen. An address that matches already needs only
// its load state. It is a page action, logged as a waitForURL.
func (t *Tab) WaitForURL(ctx context.Context, p *Pattern, waitUntil WaitUntil) error {
	name, err := waitUntil.lifecycleName()
	if err != nil {
		return err
	}
	return t.act(ctx, "waitForURL", "", false, func(ctx context.Context) error {
		start := time.Now()
		// doc is the main frame's address and the loader of its document,
		// as navigations change them: Page.frameNavigated names the
		// loader, which may commit before its first lifecycle event.
		type doc struct{ url, loader string }
		var cur doc
		cur.url, cur.loader = t.nav.mainDoc()
		unsub := t.subscribe(func(method string, params json.RawMessage) {
			var ev struct {
				Type    string `json:"type"`
				FrameID string `json:"frameId"`
				URL     string `json:"url"`
				Frame   struct {
					ID, ParentID, LoaderID, URL string
					URLFragment                 *string
				} `json:"frame"`
			}
			if method != "Page.frameNavigated" && method != "Page.navigatedWithinDocument" || json.Unmarshal(params, &ev) != nil {
				return
			}
			main := t.mainFrame()
			t.nav.mu.Lock()
			defer t.nav.mu.Unlock()
			switch {
			case method == "Page.frameNavigated" && ev.Frame.ParentID == "" && ev.Frame.ID == main:
				cur = doc{frameURL(ev.Frame.URL, ev.Frame.URLFragment), ev.Frame.LoaderID}
				if ev.Type == "BackForwardCacheRestore" {
					cur.loader = "" // restored as it was: loaded
				}
			case method == "Page.navigatedWithinDocument" && ev.FrameID == main:
				cur.url = ev.URL
			default:
				return
			}
			t.nav.broadcast()
		})
		defer unsub()
		var seen doc
		for {
			t.nav.mu.Lock()
			seen = cur
			ch := t.nav.changed
			t.nav.mu.Unlock()
			held, err := p.Match(ctx, seen.url)
			if err != nil {
				return &WaitTimeoutError{What: "the address to match " + p.String(), Err: ctx.Err(), Waited: waitedSince(ctx, start), Seen: shorten(seen.url, 200)}
			}
			if held {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return &WaitTimeoutError{What: "the address to match " + p.String(), Err: ctx.Err(), Waited: waitedSince(ctx, start), Seen: shorten(seen.url, 200)}
			case <-t.route.gone:
				return t.route.err
			}
		}
		return t.waitState(ctx, func() bool {
			if seen.loader == "" {
				return true // attached to a document already loaded, or restored
			}
			lc := t.nav.lifecycle[seen.loader]
			return lc[name] || lc["load"]
		}, "the document at "+shorten(seen.url, 200)+" to load")
	})
}
