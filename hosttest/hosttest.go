package hosttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/runner"
)

// Host bundles one double of each host interface. Its fields are ready
// to use; pass Runner() as runner.Config.Host.
type Host struct {
	UI        *UI
	Clipboard *Clipboard
	Workspace Workspace
	Tabs      *Tabs
}

// New returns a Host whose workspace is projectDir, with an empty
// clipboard and no tabs.
func New(projectDir string) *Host {
	return &Host{UI: &UI{}, Clipboard: &Clipboard{}, Workspace: Workspace(projectDir), Tabs: &Tabs{}}
}

// Runner returns h as the runner's Host.
func (h *Host) Runner() runner.Host {
	return runner.Host{UI: h.UI, Clipboard: h.Clipboard, Workspace: h.Workspace, Tabs: h.Tabs}
}

// Notification is one UI.Notify call.
type Notification struct {
	Run     runner.RunInfo
	Message string
	Level   runner.Level
}

// Opened is one UI.Open call.
type Opened struct {
	Run   runner.RunInfo
	Path  string
	Split string
}

// UI is a runner.UI that records what runs showed. The zero value is
// ready; it is safe for concurrent use.
type UI struct {
	mu     sync.Mutex
	notes  []Notification
	opened []Opened
	// Err, when set, is what Notify and Open return (after recording).
	Err error
}

func (u *UI) Notify(_ context.Context, run runner.RunInfo, message string, level runner.Level) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.notes = append(u.notes, Notification{run, message, level})
	return u.Err
}

func (u *UI) Open(_ context.Context, run runner.RunInfo, path string, opts runner.OpenOptions) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.opened = append(u.opened, Opened{run, path, opts.Split})
	return u.Err
}

// Notifications returns the notifications so far, in order.
func (u *UI) Notifications() []Notification {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.notes)
}

// Opened returns the files opened so far, in order.
func (u *UI) Opened() []Opened {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.opened)
}

// Clipboard is a runner.Clipboard held in memory. The zero value is an
// empty clipboard; it is safe for concurrent use.
type Clipboard struct {
	mu   sync.Mutex
	text string
}

func (c *Clipboard) Read(context.Context, runner.RunInfo) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text, nil
}

func (c *Clipboard) Write(_ context.Context, _ runner.RunInfo, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text = text
	return nil
}

// Text returns what the clipboard holds.
func (c *Clipboard) Text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text
}

// SetText replaces what the clipboard holds, as the user copying would.
func (c *Clipboard) SetText(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text = text
}

// Workspace is a runner.Workspace whose project is the directory it names.
type Workspace string

func (w Workspace) ProjectDir(context.Context, runner.RunInfo) (string, error) { return string(w), nil }

// ErrNoPage is what Tabs.Target returns: the doubles' tabs are records,
// with no page to drive. Test page actions against a real browser (the
// cdptabs package over a headless Chromium).
var ErrNoPage = errors.New("hosttest: a test tab has no page to drive")

// ErrNoTab reports a tab ID that names no open tab.
var ErrNoTab = errors.New("hosttest: no such tab")

// Tabs is a runner.Tabs of tabs held in memory: listing, finding, opening,
// closing and focusing work and are recorded, the active tab is the last
// one opened or focused in the foreground, and Target fails with
// ErrNoPage. The zero value has no tabs; it is safe for concurrent use.
type Tabs struct {
	mu      sync.Mutex
	tabs    []runner.TabInfo
	active  string
	next    int
	focused []string
}

// Add opens a tab as the user would, making it active, and returns it.
func (t *Tabs) Add(url, title string) runner.TabInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.addLocked(url, title, false)
}

func (t *Tabs) addLocked(url, title string, background bool) runner.TabInfo {
	t.next++
	tab := runner.TabInfo{ID: "tab-" + strconv.Itoa(t.next), URL: url, Title: title}
	t.tabs = append(t.tabs, tab)
	if !background || t.active == "" {
		t.active = tab.ID
	}
	return tab
}

func (t *Tabs) Active(context.Context, runner.RunInfo) (runner.TabInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tab := range t.tabs {
		if tab.ID == t.active {
			return tab, nil
		}
	}
	return runner.TabInfo{}, fmt.Errorf("%w: no tab is open", ErrNoTab)
}

func (t *Tabs) Find(_ context.Context, _ runner.RunInfo, pattern string) ([]runner.TabInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []runner.TabInfo
	for _, tab := range t.tabs {
		if strings.Contains(tab.URL, pattern) || strings.Contains(tab.Title, pattern) {
			out = append(out, tab)
		}
	}
	return out, nil
}

func (t *Tabs) All(context.Context, runner.RunInfo) ([]runner.TabInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.tabs), nil
}

// Open adds a tab showing url, titled by its URL.
func (t *Tabs) Open(_ context.Context, _ runner.RunInfo, url string, opts runner.TabOpenOptions) (runner.TabInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.addLocked(url, url, opts.Background), nil
}

func (t *Tabs) Close(_ context.Context, _ runner.RunInfo, id string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := slices.IndexFunc(t.tabs, func(tab runner.TabInfo) bool { return tab.ID == id })
	if i < 0 {
		return fmt.Errorf("%w: %s", ErrNoTab, id)
	}
	t.tabs = slices.Delete(t.tabs, i, i+1)
	if t.active == id {
		t.active = ""
		if n := len(t.tabs); n > 0 {
			t.active = t.tabs[n-1].ID
		}
	}
	return nil
}

func (t *Tabs) Focus(_ context.Context, _ runner.RunInfo, id string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !slices.ContainsFunc(t.tabs, func(tab runner.TabInfo) bool { return tab.ID == id }) {
		return fmt.Errorf("%w: %s", ErrNoTab, id)
	}
	t.active = id
	t.focused = append(t.focused, id)
	return nil
}

// Focused returns the IDs Focus was called with, in order.
func (t *Tabs) Focused() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.focused)
}

func (t *Tabs) Target(_ context.Context, _ runner.RunInfo, id string) (runner.TabTarget, error) {
	return runner.TabTarget{}, fmt.Errorf("%w: %s", ErrNoPage, id)
}

// Prompter is a consent.Prompter that gives one answer and records every
// request. The zero value denies; set Answer to consent.Approve to approve.
type Prompter struct {
	Answer consent.Answer

	mu       sync.Mutex
	requests []consent.Request
}

func (p *Prompter) Ask(_ context.Context, req consent.Request) (consent.Answer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, req)
	return p.Answer, nil
}

// Requests returns the requests asked so far, in order.
func (p *Prompter) Requests() []consent.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

var (
	_ runner.UI        = (*UI)(nil)
	_ runner.Clipboard = (*Clipboard)(nil)
	_ runner.Workspace = Workspace("")
	_ runner.Tabs      = (*Tabs)(nil)
	_ consent.Prompter = (*Prompter)(nil)
)
