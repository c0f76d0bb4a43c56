package runner

import (
	"context"

	"github.com/tranquil/automation/cdp"
)

// RunInfo identifies the run a host call comes from.
type RunInfo struct {
	ID     string
	Script string // absolute path of the script (the source file for a selection)
}

// Level is a notification's severity.
type Level string

const (
	LevelInfo    Level = "info"
	LevelSuccess Level = "success"
	LevelWarning Level = "warning"
	LevelError   Level = "error"
)

// OpenOptions says how UI.Open shows a file. It is ui.open's options
// object too, as a script sends it ({split}).
type OpenOptions struct {
	Split string // "", "left", "right", "up" or "down"
}

// UI is the host's user interface. Notify also receives the runner's own
// notice of a run that failed.
type UI interface {
	Notify(ctx context.Context, run RunInfo, message string, level Level) error
	Open(ctx context.Context, run RunInfo, path string, opts OpenOptions) error
}

// Clipboard is the host's clipboard.
type Clipboard interface {
	Read(ctx context.Context, run RunInfo) (string, error)
	Write(ctx context.Context, run RunInfo, text string) error
}

// Workspace describes the host's open project.
type Workspace interface {
	ProjectDir(ctx context.Context, run RunInfo) (string, error)
}

// TabInfo describes a browser tab. ID is stable for the tab's lifetime and
// never derived from its URL. It is what a script is told of a tab, too:
// {id, url, title}.
type TabInfo struct {
	ID    string
	URL   string
	Title string
}

// TabOpenOptions says how Tabs.Open opens a tab.
type TabOpenOptions struct {
	// Background opens the tab without showing it; the runner caps how
	// many a Manager keeps open at once. It must share the launching
	// window's browser profile, so signed-in flows work.
	Background bool
}

// TabTarget says where to drive a tab over the DevTools protocol: the
// host's own connection to the browser, or a browser endpoint cdp.Connect
// accepts, and the tab's target ID.
type TabTarget struct {
	// Browser, when set, is the connection the run drives the tab over
	// (the only way to reach a browser launched with a pipe and no port).
	// Endpoint is then ignored.
	Browser *cdp.Browser
	// Endpoint is a browser endpoint for cdp.Connect, used when Browser is
	// nil.
	Endpoint string
	TargetID string
}

// Tabs is the host's browser. The runner resolves a tab once through it and
// then drives it over CDP through Target; scripts never see the endpoint.
type Tabs interface {
	Active(ctx context.Context, run RunInfo) (TabInfo, error)
	// Find lists tabs whose URL or title contains pattern.
	Find(ctx context.Context, run RunInfo, pattern string) ([]TabInfo, error)
	All(ctx context.Context, run RunInfo) ([]TabInfo, error)
	Open(ctx context.Context, run RunInfo, url string, opts TabOpenOptions) (TabInfo, error)
	Close(ctx context.Context, run RunInfo, id string) error
	// Focus gives the tab keyboard focus; the runner calls it before typing.
	Focus(ctx context.Context, run RunInfo, id string) error
	Target(ctx context.Context, run RunInfo, id string) (TabTarget, error)
}

// Screenshotter is an optional extension of Tabs for hosts that capture
// pixels themselves (Electron <webview> guests cannot be captured over
// CDP). The runner prefers it when the host's Tabs implements it.
type Screenshotter interface {
	Screenshot(ctx context.Context, run RunInfo, id string, fullPage bool) ([]byte, error)
}

// DevToolsEndpoints is an optional extension of Tabs: the loopback
// host:port endpoints the host drives, which every run is denied.
type DevToolsEndpoints interface {
	DevToolsEndpoints() []string
}

// Host bundles the host's implementations. A nil member makes its
// capability fail with a clear error rather than vanish, so a script that
// was granted it learns why it does not work.
//
// Every method of theirs is called with a context that ends when the run
// does, and, for a script's call, after at most 30 s (see the package
// documentation): an implementation that may wait (on the user, the OS,
// a browser) returns when its context ends, so that no script's call
// hangs on it.
type Host struct {
	UI        UI
	Clipboard Clipboard
	Workspace Workspace
	Tabs      Tabs
}
