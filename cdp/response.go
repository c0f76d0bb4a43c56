package cdp

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"
)

// Response is what the main document of a navigation came with.
type Response struct {
	// Status is the HTTP status code of the document's response (200,
	// 404, …), or 0 when there was none: about:blank, a same-document
	// navigation (a #fragment), a document the browser made itself.
	Status int
	// URL is the address the document was served from, after redirects
	// and without a #fragment; for a same-document navigation, the address
	// navigated to.
	URL string
}

// maxResponses bounds the responses a tab keeps; a Goto reads its own
// right after the navigation commits, so a few are plenty.
const maxResponses = 8

// observeExt sees every event of the tab on the receive goroutine, before
// tab.go's own handling: the events only these files care about. It never
// blocks.
func (t *Tab) observeExt(method string, params json.RawMessage) {
	switch method {
	case "Network.responseReceived":
		t.responseReceived(params)
	case "Page.javascriptDialogOpening":
		t.dialogOpening(params)
	case "Page.frameNavigated":
		if t.opts.RefuseServiceWorkers {
			t.swFrameNavigated(params)
		}
	case "ServiceWorker.workerRegistrationUpdated":
		t.swRegistrations(params)
	}
}

// responseReceived records the response of a main-frame navigation. The
// Network domain is on only around gotos (see netScope), and anything that
// is not a document is dropped before it is decoded.
func (t *Tab) responseReceived(params json.RawMessage) {
	if !bytes.Contains(params, []byte(`"type":"Document"`)) {
		return
	}
	var ev struct {
		RequestID string `json:"requestId"`
		LoaderID  string `json:"loaderId"`
		Type      string `json:"type"`
		FrameID   string `json:"frameId"`
		Response  struct {
			URL    string `json:"url"`
			Status int    `json:"status"`
		} `json:"response"`
	}
	if json.Unmarshal(params, &ev) != nil || ev.Type != "Document" {
		return
	}
	// A navigation's request id is its loader id; other document requests
	// of the frame (none are expected) would not match.
	if ev.FrameID != t.mainFrame() || ev.RequestID != ev.LoaderID || ev.LoaderID == "" {
		return
	}
	t.nav.response(ev.LoaderID, Response{Status: ev.Response.Status, URL: ev.Response.URL})
}

// responseOf returns the recorded response of a loader.
func (t *Tab) responseOf(loader string) (Response, bool) { return t.nav.responseOf(loader) }

// netScope turns the Network domain on for the gotos that need it, and
// off once none has for networkLinger. Kept on for good, it would send
// every request, response and WebSocket frame of the page over the
// connection for the session's whole life; a goto needs one event. Turned
// off after each goto, it would cost every goto in a row a few
// milliseconds more (the renderer reconfigures its instrumentation each
// time), against none while it stays on.
//
// The commands are written without waiting for their replies:
// Network.enable is answered only after the page's renderer has seen it,
// which a page stuck in a loop never does, while the browser process
// (where navigations are made and reported) applies it at once and in
// order with the commands that follow it on the session. The replies are
// dropped.
type netScope struct {
	mu     sync.Mutex
	users  int
	on     bool
	pinned bool        // on for good: a guarded tab's socket rules need it (sockets.go)
	idle   *time.Timer // turns the domain off; runs on a goroutine of its own
}

// networkLinger is how long the Network domain stays on after a goto.
const networkLinger = 3 * time.Second

// watchResponses makes sure the Network domain is on until release is
// called. The enable is on the wire before watchResponses returns, so a
// navigation sent after it is reported.
func (t *Tab) watchResponses() (release func(), err error) {
	n := &t.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.idle != nil {
		n.idle.Stop()
	}
	if !n.on {
		// No buffer for bodies: nothing here reads them, and the renderer
		// would copy every response into it.
		if err := t.sendOnly("Network.enable", []byte(`{"maxTotalBufferSize":0,"maxResourceBufferSize":0}`)); err != nil {
			return nil, t.fail(err)
		}
		n.on = true
	}
	n.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			n.mu.Lock()
			defer n.mu.Unlock()
			if n.users--; n.users > 0 {
				return
			}
			if n.idle == nil {
				n.idle = time.AfterFunc(networkLinger, t.networkIdle)
			} else {
				n.idle.Reset(networkLinger)
			}
		})
	}, nil
}

// networkIdle turns the Network domain off if no goto took it meanwhile.
func (t *Tab) networkIdle() {
	n := &t.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.users == 0 && n.on && !n.pinned {
		n.on = false
		_ = t.sendOnly("Network.disable", []byte(`{}`))
	}
}

// sendOnly writes one command on the tab's session and does not wait for
// the reply (see sendOn).
func (t *Tab) sendOnly(method string, params []byte) error {
	return t.b.m.sendOn(t.route, method, params)
}

// sendOn writes one command on route's session and does not wait for the
// reply. The id is from the direct-call range with nobody waiting on it,
// so the mux drops the reply when it comes.
func (m *mux) sendOn(r *route, method string, params []byte) error {
	select {
	case <-r.gone:
		return r.err
	default:
	}
	return m.send(r, method, params)
}
