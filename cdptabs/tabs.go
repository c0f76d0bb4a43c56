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
//
// A browser Launch started that dies (a crash, a kill, an abort) is
// replaced: the next call that needs the browser starts a fresh one with
// the same options. A run that used the browser that died fails every
// call from then on with cdp.ErrBrowserClosed (the code "closed"), as do
// the tabs of that browser; runs that start later get the fresh one. A browser Attach connected to is never restarted; calls fail
// with cdp.ErrBrowserClosed until the host attaches again. Either way
// [Config.OnBrowser] is told.
//
// Tabs owns one goroutine per connection, which waits for the connection
// to end, reaps a launched browser that died, and reports it; it ends with
// the connection, and Shutdown waits for it.
type Tabs struct {
	cfg      Config
	launch   *launch.Options // how to start the browser again; nil when attached
	endpoint string          // empty for a launched browser
	devtools string          // loopback host:port; empty for a launched browser

	bmu      sync.Mutex
	conn     *cdp.Browser
	proc     *launch.Process // nil when attached to a running browser
	shutdown chan struct{}   // closed by Shutdown
	watchers sync.WaitGroup
	// runs are the IDs of the runs that used the current browser; dead
	// those that used the one a relaunch replaced, which fail with
	// cdp.ErrBrowserClosed from then on.
	runs, dead map[string]bool
	emu        sync.Mutex // one OnBrowser call at a time

	mu sync.Mutex
	// shown lists the tabs the browser was made to show, most recent last:
	// the last still open is the one the user sees. Closing it shows the
	// one before, as a browser does.
	shown []string
	// background holds the tabs opened in the background and never shown
	// since; they are no run's active tab.
	background map[string]bool
}

// Config is how a Tabs keeps its host informed. The zero value tells the
// host nothing; the browser is still relaunched.
type Config struct {
	// OnBrowser, when set, is called for each [BrowserEvent]: the
	// browser's connection ended without Shutdown, or a launched browser
	// was started again in its place. Calls come one at a time from the
	// Tabs' own goroutines; f must not call Shutdown.
	OnBrowser func(BrowserEvent)
}

// BrowserEventKind names what happened to the browser.
type BrowserEventKind string

const (
	// BrowserGone: the connection ended without Shutdown (the browser
	// crashed, was killed or closed, or the attached endpoint went away).
	// Runs driving its tabs fail with the code "closed".
	BrowserGone BrowserEventKind = "gone"
	// BrowserRelaunched: a launched browser that was gone has been
	// replaced by a fresh one, with a fresh profile and one blank page.
	BrowserRelaunched BrowserEventKind = "relaunched"
)

// BrowserEvent is one report to [Config.OnBrowser].
type BrowserEvent struct {
	Kind BrowserEventKind
	// Err is why the connection ended (BrowserGone), matching
	// cdp.ErrBrowserClosed.
	Err error
	// Launched is true for a browser Launch started, which the next call
	// replaces; false for one Attach connected to, which is never
	// restarted.
	Launched bool
}

// Launch starts a browser (see launch.Chromium) and returns its tabs,
// with one blank page active. The browser speaks CDP over a pipe and opens
// no DevTools port, so there is none for a script to reach. It first
// removes the profiles in opts.TempDir that a host killed before it could
// clean up left behind (see launch.SweepProfiles); those of a live host or
// browser are kept.
func Launch(ctx context.Context, opts launch.Options) (*Tabs, error) {
	return LaunchWith(ctx, opts, Config{})
}

// LaunchWith is [Launch] with a Config.
func LaunchWith(ctx context.Context, opts launch.Options, cfg Config) (*Tabs, error) {
	// Profiles a killed host left behind are removed first; a failed sweep
	// leaves them for the next launch and does not stop this one.
	_, _ = launch.SweepProfiles(opts.TempDir)
	t := &Tabs{cfg: cfg, launch: &opts, shutdown: make(chan struct{})}
	if err := t.start(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// start launches the browser and makes it the current one; call with
// bmu held (or before t is shared).
func (t *Tabs) start(ctx context.Context) error {
	p, err := launch.Chromium(ctx, *t.launch)
	if err != nil {
		return err
	}
	// A new browser has one page, the one it shows.
	targets, err := p.Browser().Targets(ctx)
	if err != nil {
		p.Close()
		return err
	}
	t.conn, t.proc = p.Browser(), p
	t.mu.Lock()
	t.shown, t.background = nil, nil
	for _, pg := range targets {
		t.shown = append(t.shown, pg.ID)
	}
	t.mu.Unlock()
	t.watch(p.Browser(), p)
	return nil
}

// Attach connects to a running browser's DevTools endpoint (a ws:// URL or
// http://127.0.0.1:<port>). The endpoint must be on loopback.
func Attach(ctx context.Context, endpoint string) (*Tabs, error) {
	return AttachWith(ctx, endpoint, Config{})
}

// AttachWith is [Attach] with a Config.
func AttachWith(ctx context.Context, endpoint string, cfg Config) (*Tabs, error) {
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
	t := &Tabs{cfg: cfg, conn: conn, endpoint: endpoint, devtools: "127.0.0.1:" + port, shutdown: make(chan struct{})}
	t.watch(conn, nil)
	return t, nil
}

// watch starts the goroutine that waits for conn to end. When it ends
// without Shutdown, a launched browser p is stopped for good (reaped, its
// profile removed) and the host is told.
func (t *Tabs) watch(conn *cdp.Browser, p *launch.Process) {
	t.watchers.Add(1)
	go func() {
		defer t.watchers.Done()
		select {
		case <-t.shutdown:
			return
		case <-conn.Done():
		}
		select {
		case <-t.shutdown:
			return // Shutdown closed it
		default:
		}
		if p != nil {
			_ = p.Close()
		}
		t.tell(BrowserEvent{Kind: BrowserGone, Err: conn.Err(), Launched: p != nil})
	}()
}

func (t *Tabs) tell(ev BrowserEvent) {
	if t.cfg.OnBrowser == nil {
		return
	}
	t.emu.Lock()
	defer t.emu.Unlock()
	t.cfg.OnBrowser(ev)
}

// ErrShutdown reports a call made after Shutdown.
var ErrShutdown = fmt.Errorf("cdptabs: shut down: %w", cdp.ErrBrowserClosed)

// maxTrackedRuns bounds the run IDs kept per browser; past it the list
// starts over, and a run from before that outlives a relaunch is not
// failed but handed the fresh browser.
const maxTrackedRuns = 4096

// browser returns the connection to drive for run, starting a fresh
// browser when the launched one is gone. A run that used a browser a
// relaunch replaced gets cdp.ErrBrowserClosed. The host's own calls (an
// empty run ID) are not tracked.
func (t *Tabs) browser(ctx context.Context, run runner.RunInfo) (*cdp.Browser, error) {
	t.bmu.Lock()
	select {
	case <-t.shutdown:
		t.bmu.Unlock()
		return nil, ErrShutdown
	default:
	}
	conn := t.conn
	if conn.Err() != nil && t.launch == nil {
		t.bmu.Unlock()
		return nil, fmt.Errorf("cdptabs: the attached browser is gone; attach again: %w", conn.Err())
	}
	relaunched := false
	if conn.Err() != nil {
		if err := t.start(ctx); err != nil {
			t.bmu.Unlock()
			return nil, fmt.Errorf("cdptabs: starting a browser in place of the one that is gone: %w", err)
		}
		conn, relaunched = t.conn, true
		t.dead, t.runs = t.runs, nil
	}
	var err error
	switch {
	case run.ID == "":
	case t.dead[run.ID]:
		err = fmt.Errorf("cdptabs: the browser this run was using is gone (a fresh one serves the next run): %w", cdp.ErrBrowserClosed)
	default:
		if t.runs == nil || len(t.runs) >= maxTrackedRuns {
			t.runs = map[string]bool{}
		}
		t.runs[run.ID] = true
	}
	t.bmu.Unlock()
	if relaunched {
		t.tell(BrowserEvent{Kind: BrowserRelaunched, Launched: true})
	}
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// Endpoint returns the browser's DevTools endpoint: the one given to
// Attach, or "" for a launched browser, which has none.
func (t *Tabs) Endpoint() string { return t.endpoint }

// Browser returns the current CDP connection, for hosts that drive tabs
// themselves. After a relaunch it is the new browser's.
func (t *Tabs) Browser() *cdp.Browser {
	t.bmu.Lock()
	defer t.bmu.Unlock()
	return t.conn
}

// Process returns the browser Launch started (after a relaunch, the
// current one), for hosts that watch it; nil for an attached browser.
func (t *Tabs) Process() *launch.Process {
	t.bmu.Lock()
	defer t.bmu.Unlock()
	return t.proc
}

// Shutdown ends the connection, and the browser if Launch started it,
// and waits for the Tabs' goroutines. No BrowserGone follows it.
// (Close is the runner.Tabs method that closes one tab.)
func (t *Tabs) Shutdown() error {
	t.bmu.Lock()
	select {
	case <-t.shutdown:
		t.bmu.Unlock()
		return nil
	default:
	}
	close(t.shutdown)
	conn, proc := t.conn, t.proc
	t.bmu.Unlock()
	err := conn.Close()
	if proc != nil {
		if perr := proc.Close(); perr != nil {
			err = perr
		}
	}
	t.watchers.Wait()
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

func (t *Tabs) pages(ctx context.Context, run runner.RunInfo) ([]runner.TabInfo, error) {
	b, err := t.browser(ctx, run)
	if err != nil {
		return nil, err
	}
	targets, err := b.Targets(ctx)
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
func (t *Tabs) Active(ctx context.Context, run runner.RunInfo) (runner.TabInfo, error) {
	pages, err := t.pages(ctx, run)
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
func (t *Tabs) Find(ctx context.Context, run runner.RunInfo, pattern string) ([]runner.TabInfo, error) {
	pages, err := t.pages(ctx, run)
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
func (t *Tabs) All(ctx context.Context, run runner.RunInfo) ([]runner.TabInfo, error) {
	return t.pages(ctx, run)
}

// Open implements runner.Tabs. The tab is created in the browser's default
// context, so it shares the profile of the other tabs.
func (t *Tabs) Open(ctx context.Context, run runner.RunInfo, rawURL string, opts runner.TabOpenOptions) (runner.TabInfo, error) {
	b, err := t.browser(ctx, run)
	if err != nil {
		return runner.TabInfo{}, err
	}
	args := target.NewCreateTargetArgs(rawURL).SetBackground(opts.Background)
	reply, err := b.Client().Target.CreateTarget(ctx, args)
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
	pages, err := t.pages(ctx, runner.RunInfo{})
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
func (t *Tabs) Close(ctx context.Context, run runner.RunInfo, id string) error {
	b, err := t.browser(ctx, run)
	if err != nil {
		return err
	}
	if _, err := b.Client().Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(id))); err != nil {
		return fmt.Errorf("%w %s: %v", ErrNoTab, id, err)
	}
	t.mu.Lock()
	wasShown := len(t.shown) > 0 && t.shown[len(t.shown)-1] == id
	t.shown = slices.DeleteFunc(t.shown, func(s string) bool { return s == id })
	delete(t.background, id)
	t.mu.Unlock()
	for {
		pages, err := t.pages(ctx, runner.RunInfo{})
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
func (t *Tabs) Focus(ctx context.Context, run runner.RunInfo, id string) error {
	b, err := t.browser(ctx, run)
	if err != nil {
		return err
	}
	if err := b.Client().Target.ActivateTarget(ctx, target.NewActivateTargetArgs(target.ID(id))); err != nil {
		return fmt.Errorf("%w %s: %v", ErrNoTab, id, err)
	}
	t.mu.Lock()
	t.showLocked(id)
	t.mu.Unlock()
	return nil
}

// Target implements runner.Tabs: runs drive the tab over this connection,
// the only one a launched browser has. A tab that is not among the
// browser's pages (closed, or one of a browser that is gone) is a
// *cdp.DetachedError matching cdp.ErrTargetClosed, which runs see as the
// code "closed".
func (t *Tabs) Target(ctx context.Context, run runner.RunInfo, id string) (runner.TabTarget, error) {
	b, err := t.browser(ctx, run)
	if err != nil {
		return runner.TabTarget{}, err
	}
	pages, err := t.pages(ctx, runner.RunInfo{})
	if err != nil {
		return runner.TabTarget{}, err
	}
	if !slices.ContainsFunc(pages, byID(id)) {
		return runner.TabTarget{}, fmt.Errorf("cdptabs: no open tab %s (closed, or in a browser that is gone): %w", id,
			&cdp.DetachedError{TargetID: id, Reason: cdp.ErrTargetClosed})
	}
	return runner.TabTarget{Browser: b, Endpoint: t.endpoint, TargetID: id}, nil
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
