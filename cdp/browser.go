package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/devtool"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/tranquil/automation/internal/browserproc"
)

// Options configures [Connect]. The zero value is ready to use.
type Options struct {
	// MaxMessageSize bounds one protocol message in either direction: the
	// read limit for replies such as full-page screenshots, and the largest
	// request (such as a big script) the connection will send. Zero means
	// 256 MiB. A request over it fails with ErrMessageTooLarge before it is
	// sent. A reply over it is read past without being kept and fails its
	// call alone (with ErrMessageTooLarge from [Tab.Evaluate]-style calls,
	// with a protocol error naming the limit from others); an event over it
	// is dropped. The connection stays up either way.
	MaxMessageSize int64
}

// Browser is one connection to a browser, over a WebSocket ([Connect]) or
// the debugging pipe of a launched browser ([ConnectPipe]). All
// its tabs share it. It is safe for concurrent use. When the connection is
// lost, every tab fails with ErrBrowserClosed and Done is closed.
type Browser struct {
	m    *mux
	url  string // the browser WebSocket URL; empty over a pipe
	conn *rpcc.Conn
	c    *devtools.Client

	gmu     sync.Mutex
	gateway *Gateway // the one page gateway of this connection, see Guard
	// downloads are the expected downloads (download.go); not under gmu,
	// which Guard holds across calls whose replies come in after events
	// that observe reads it for.
	downloads atomic.Pointer[downloads]
}

// TargetInfo describes a page-like target.
type TargetInfo struct {
	ID       string
	Type     string // "page", or "webview" for Electron <webview> guests
	URL      string
	Title    string
	OpenerID string
	Attached bool
}

// Connect opens a browser connection. endpoint is one of: a browser
// WebSocket URL (ws://127.0.0.1:PORT/devtools/browser/ID), the HTTP
// debugging address (http://127.0.0.1:PORT), or the path of a
// DevToolsActivePort file (or of the profile directory holding it).
func Connect(ctx context.Context, endpoint string, opts *Options) (*Browser, error) {
	o := opts.withDefaults()
	url, err := resolveEndpoint(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	m, err := dialMux(ctx, url, o.MaxMessageSize)
	if err != nil {
		return nil, err
	}
	return newBrowser(ctx, m, url)
}

// withDefaults is the options in force; opts may be nil.
func (opts *Options) withDefaults() Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = 256 << 20
	}
	return o
}

// newBrowser opens the browser-level session on m; on failure m is closed.
func newBrowser(ctx context.Context, m *mux, url string) (*Browser, error) {
	b := &Browser{m: m, url: url}
	conn, _, err := m.open(ctx, "", b.observe)
	if err != nil {
		m.close()
		return nil, err
	}
	b.conn = conn
	b.c = devtools.NewClient(conn)
	return b, nil
}

func resolveEndpoint(ctx context.Context, endpoint string) (string, error) {
	switch {
	case strings.HasPrefix(endpoint, "ws://"), strings.HasPrefix(endpoint, "wss://"):
		if !strings.Contains(endpoint, "/devtools/browser/") {
			return "", fmt.Errorf("%w: %q is not a browser-level WebSocket URL", ErrEndpoint, endpoint)
		}
		return endpoint, nil
	case strings.HasPrefix(endpoint, "http://"), strings.HasPrefix(endpoint, "https://"):
		v, err := devtool.New(strings.TrimRight(endpoint, "/")).Version(ctx)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrEndpoint, endpoint, err)
		}
		if v.WebSocketDebuggerURL == "" {
			return "", fmt.Errorf("%w: %s names no browser WebSocket", ErrEndpoint, endpoint)
		}
		return v.WebSocketDebuggerURL, nil
	case endpoint == "":
		return "", fmt.Errorf("%w: empty", ErrEndpoint)
	default:
		path := endpoint
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			path = filepath.Join(path, "DevToolsActivePort")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrEndpoint, err)
		}
		url, err := parseActivePort(b)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrEndpoint, path, err)
		}
		return url, nil
	}
}

// parseActivePort turns the two lines of DevToolsActivePort (port, then
// browser path) into a browser WebSocket URL on loopback.
func parseActivePort(b []byte) (string, error) {
	port, path, err := browserproc.ActivePort(b)
	if err != nil {
		return "", err
	}
	return "ws://127.0.0.1:" + strconv.Itoa(port) + path, nil
}

// observe runs on the browser session's receive goroutine.
func (b *Browser) observe(method string, params json.RawMessage) {
	b.observeDownload(method, params)
	if method != "Target.detachedFromTarget" {
		return
	}
	var ev struct {
		SessionID string `json:"sessionId"`
		TargetID  string `json:"targetId"`
	}
	if json.Unmarshal(params, &ev) == nil {
		b.m.detached(ev.SessionID, ev.TargetID)
	}
}

// WebSocketURL is the browser WebSocket URL the connection was made to
// (what [Connect] resolved its endpoint to); empty over a pipe.
func (b *Browser) WebSocketURL() string { return b.url }

// Client is the browser-level protocol client, for calls this package does
// not wrap.
func (b *Browser) Client() *devtools.Client { return b.c }

// Done is closed when the connection is gone.
func (b *Browser) Done() <-chan struct{} { return b.m.ctx.Done() }

// Err reports why the connection ended, or nil while it is up.
func (b *Browser) Err() error {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	return b.m.err
}

// Close closes the connection (not the browser). Every tab ends with
// ErrBrowserClosed.
func (b *Browser) Close() error {
	b.m.close()
	if b.conn != nil {
		<-b.conn.Context().Done()
	}
	return nil
}

// Targets lists page-like targets (pages and Electron webviews); browser UI
// surfaces and workers are left out.
func (b *Browser) Targets(ctx context.Context) ([]TargetInfo, error) {
	r, err := b.c.Target.GetTargets(ctx, target.NewGetTargetsArgs())
	if err != nil {
		return nil, b.fail(err)
	}
	var out []TargetInfo
	for _, t := range r.TargetInfos {
		if t.Type != "page" && t.Type != "webview" {
			continue
		}
		out = append(out, infoOf(t))
	}
	return out, nil
}

func infoOf(t target.Info) TargetInfo {
	ti := TargetInfo{ID: string(t.TargetID), Type: t.Type, URL: t.URL, Title: t.Title, Attached: t.Attached}
	if t.OpenerID != nil {
		ti.OpenerID = string(*t.OpenerID)
	}
	return ti
}

// NewTab opens a page at url (about:blank when empty), attaches to it and
// returns once the page has loaded.
// Electron cannot open pages over the protocol; there it fails with
// ErrNotSupported and the app must open the window itself.
func (b *Browser) NewTab(ctx context.Context, url string) (*Tab, error) {
	return b.NewTabWith(ctx, url, TabOptions{})
}

// fail turns a transport error into the connection's own error once the
// connection is gone, so callers see ErrBrowserClosed rather than rpcc's
// wording.
func (b *Browser) fail(err error) error {
	if err == nil {
		return nil
	}
	select {
	case <-b.m.ctx.Done():
		if e := b.Err(); e != nil {
			return e
		}
	default:
	}
	return fmt.Errorf("cdp: %w", err)
}
