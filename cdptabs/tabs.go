package cdptabs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/target"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/runner"
)

// ErrNoTab reports a tab ID that names no page of this browser.
var ErrNoTab = errors.New("cdptabs: no such tab")

// Tabs is a browser's pages as runner.Tabs. It is safe for concurrent use.
// It holds one CDP connection, which runs drive their tabs over too and
// which Shutdown ends (with the browser, when Launch started it).
type Tabs struct {
	conn     *cdp.Browser
	proc     *launch.Process // nil when attached to a running browser
	endpoint string          // empty for a launched browser
	devtools string          // loopback host:port; empty for a launched browser

	mu sync.Mutex
	// shown lists the tabs the browser was made to show, most recent last:
	// the last still open is the one the user sees. Closing it shows the
	// one before, as a browser does.
	shown []string
	// background holds the tabs opened in the background and never shown
	// since; they are no run's active tab.
	background map[string]bool
}

// Launch starts a browser (see launch.Chromium) and returns its tabs,
// with one blank page active. The browser speaks CDP over a pipe and opens
// no DevTools port, so there is none for a script to reach.
func Launch(ctx context.Context, opts launch.Options) (*Tabs, error) {
	p, err := launch.Chromium(ctx, opts)
	if err != nil {
		return nil, err
	}
	t := &Tabs{conn: p.Browser(), proc: p}
	// A new browser has one page, the one it shows.
	pages, err := t.pages(ctx)
	if err != nil {
		p.Close()
		return nil, err
	}
	for _, pg := range pages {
		t.shown = append(t.shown, pg.ID)
	}
	return t, nil
}

// Attach connects to a running browser's DevTools endpoint (a ws:// URL or
// http://127.0.0.1:<port>). The endpoint must be on loopback.
func Attach(ctx context.Context, endpoint string) (*Tabs, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("cdptabs: endpoint %q: %w", endpoint, err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || (host != "127.0.0.1" && host != "localhost") {
		return nil, fmt.Errorf("cdptabs: endpoint %q is not a loopback host:port", endpoint)
	}
	conn, err := cdp.Connect(ctx, endpoint, nil)
	if err != nil {
		return nil, err
	}
	return &Tabs{conn: conn, endpoint: endpoint, devtools: "127.0.0.1:" + port}, nil
}

// Endpoint returns the browser's DevTools endpoint: the one given to
// Attach, or "" for a launched browser, which has none.
func (t *Tabs) Endpoint() string { return t.endpoint }

// Browser returns the CDP connection, for hosts that drive tabs themselves.
func (t *Tabs) Browser() *cdp.Browser { return t.conn }

// Process returns the browser Launch started, for hosts that watch it; nil
// for an attached browser.
func (t *Tabs) Process() *launch.Process { return t.proc }

// Shutdown ends the connection, and the browser if Launch started it.
// (Close is the runner.Tabs method that closes one tab.)
func (t *Tabs) Shutdown() error {
	err := t.conn.Close()
	if t.proc != nil {
		if perr := t.proc.Close(); perr != nil {
			err = perr
		}
	}
	return err
}

// DevToolsEndpoints implements runner.DevToolsEndpoints: the attached
// browser's port, which every run is denied; nothing for a launched
// browser, which listens on no port.
func (t *Tabs) DevToolsEndpoints() []string {
	if t.devtools == "" {
		return nil
	}
	return []string{t.devtools}
}

func (t *Tabs) pages(ctx context.Context) ([]runner.TabInfo, error) {
	targets, err := t.conn.Targets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]runner.TabInfo, 0, len(targets))
	for _, tg := range targets {
		out = append(out, runner.TabInfo{ID: tg.ID, URL: tg.URL, Title: tg.Title})
	}
	return out, nil
}

// Active implements runner.Tabs: the tab the browser shows, which is the
// one last opened in the foreground or focused that is still open. When
// none of those is (an attached browser, or every one was closed), it
// shows a page that was not opened in the background and answers that;
// a tab opened in the background is never the answer.
func (t *Tabs) Active(ctx context.Context, _ runner.RunInfo) (runner.TabInfo, error) {
	pages, err := t.pages(ctx)
	if err != nil {
		return runner.TabInfo{}, err
	}
	t.mu.Lock()
	t.shown = slices.DeleteFunc(t.shown, func(id string) bool { return !slices.ContainsFunc(pages, byID(id)) })
	var shown string
	if n := len(t.shown); n > 0 {
		shown = t.shown[n-1]
	}
	var pick runner.TabInfo
	for _, p := range pages {
		if !t.background[p.ID] {
			pick = p
			break
		}
	}
	t.mu.Unlock()
	if shown != "" {
		return pages[slices.IndexFunc(pages, byID(shown))], nil
	}
	if pick.ID == "" {
		return runner.TabInfo{}, fmt.Errorf("%w: the browser shows no page but tabs opened in the background", ErrNoTab)
	}
	if err := t.Focus(ctx, runner.RunInfo{}, pick.ID); err != nil {
		return runner.TabInfo{}, err
	}
	return pick, nil
}

func byID(id string) func(runner.TabInfo) bool {
	return func(p runner.TabInfo) bool { return p.ID == id }
}

// Find implements runner.Tabs.
func (t *Tabs) Find(ctx context.Context, _ runner.RunInfo, pattern string) ([]runner.TabInfo, error) {
	pages, err := t.pages(ctx)
	if err != nil {
		return nil, err
	}
	var out []runner.TabInfo
	for _, p := range pages {
		if strings.Contains(p.URL, pattern) || strings.Contains(p.Title, pattern) {
			out = append(out, p)
		}
	}
	return out, nil
}

// All implements runner.Tabs.
func (t *Tabs) All(ctx context.Context, _ runner.RunInfo) ([]runner.TabInfo, error) {
	return t.pages(ctx)
}

// Open implements runner.Tabs. The tab is created in the browser's default
// context, so it shares the profile of the other tabs.
func (t *Tabs) Open(ctx context.Context, run runner.RunInfo, rawURL string, opts runner.TabOpenOptions) (runner.TabInfo, error) {
	args := target.NewCreateTargetArgs(rawURL).SetBackground(opts.Background)
	reply, err := t.conn.Client().Target.CreateTarget(ctx, args)
	if err != nil {
		return runner.TabInfo{}, fmt.Errorf("cdptabs: opening %s: %w", rawURL, err)
	}
	id := string(reply.TargetID)
	t.mu.Lock()
	if opts.Background {
		if t.background == nil {
			t.background = map[string]bool{}
		}
		t.background[id] = true
	} else {
		t.showLocked(id)
	}
	t.mu.Unlock()
	return t.info(ctx, id, rawURL)
}

func (t *Tabs) info(ctx context.Context, id, fallbackURL string) (runner.TabInfo, error) {
	pages, err := t.pages(ctx)
	if err != nil {
		return runner.TabInfo{}, err
	}
	for _, p := range pages {
		if p.ID == id {
			return p, nil
		}
	}
	return runner.TabInfo{ID: id, URL: fallbackURL}, nil
}

// showLocked records id as the tab the browser shows now.
func (t *Tabs) showLocked(id string) {
	t.shown = append(slices.DeleteFunc(t.shown, func(s string) bool { return s == id }), id)
	delete(t.background, id)
}

// closePoll is how often Close looks whether the closed tab is gone.
const closePoll = 10 * time.Millisecond

// Close implements runner.Tabs. It returns once the tab has left the
// browser's pages (Target.closeTarget answers before that), so a tab
// closed is neither listed nor counted any more. When it was the tab
// shown, the one shown before it is shown again.
func (t *Tabs) Close(ctx context.Context, _ runner.RunInfo, id string) error {
	if _, err := t.conn.Client().Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(id))); err != nil {
		return fmt.Errorf("%w %s: %v", ErrNoTab, id, err)
	}
	t.mu.Lock()
	wasShown := len(t.shown) > 0 && t.shown[len(t.shown)-1] == id
	t.shown = slices.DeleteFunc(t.shown, func(s string) bool { return s == id })
	delete(t.background, id)
	t.mu.Unlock()
	for {
		pages, err := t.pages(ctx)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(pages, byID(id)) {
			break
		}
		select {
		case <-time.After(closePoll):
		case <-ctx.Done():
			return fmt.Errorf("cdptabs: closing tab %s: %w", id, ctx.Err())
		}
	}
	if !wasShown {
		return nil
	}
	next, err := t.Active(ctx, runner.RunInfo{})
	if errors.Is(err, ErrNoTab) {
		return nil
	}
	if err == nil {
		err = t.Focus(ctx, runner.RunInfo{}, next.ID)
	}
	return err
}

// Focus implements runner.Tabs: it activates the target, which gives the
// page keyboard focus.
func (t *Tabs) Focus(ctx context.Context, _ runner.RunInfo, id string) error {
	if err := t.conn.Client().Target.ActivateTarget(ctx, target.NewActivateTargetArgs(target.ID(id))); err != nil {
		return fmt.Errorf("%w %s: %v", ErrNoTab, id, err)
	}
	t.mu.Lock()
	t.showLocked(id)
	t.mu.Unlock()
	return nil
}

// Target implements runner.Tabs: runs drive the tab over this connection,
// the only one a launched browser has.
func (t *Tabs) Target(ctx context.Context, _ runner.RunInfo, id string) (runner.TabTarget, error) {
	return runner.TabTarget{Browser: t.conn, Endpoint: t.endpoint, TargetID: id}, nil
}

// Port returns the DevTools port of an attached browser; 0 for a launched
// one.
func (t *Tabs) Port() int {
	if t.devtools == "" {
		return 0
	}
	_, port, _ := net.SplitHostPort(t.devtools)
	n, _ := strconv.Atoi(port)
	return n
}
