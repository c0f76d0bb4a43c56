package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/mafredri/cdp/protocol/browser"

	"github.com/tranquil/automation/errcode"
)

// Downloads are refused (see [Guard]) except while a tab expects one
// ([Tab.ExpectDownload]). While any tab does, the browser saves every
// download under a name of its own (the download's GUID) into a private
// temporary folder of the connection and reports each; a download whose
// frame belongs to no expecting tab is cancelled as soon as it is
// reported and its partial file removed, so it never reaches anywhere
// else. The first download of an expecting tab's frames is that
// expectation's; once it completes, the caller moves the file where it
// belongs (the browser never writes outside the temporary folder) and
// closes the expectation, which removes what is left of it. When the last
// expectation closes, downloads are refused again; the folder, empty by
// then, goes when the connection ends.
//
// The behaviour is the browser context's, not a tab's (the protocol has
// no per-tab setting), hence the folder and the cancelling.

// Errors of downloads.
var (
	// ErrDownloadTooLarge reports a download over its expectation's
	// MaxBytes; it is cancelled and its bytes removed.
	ErrDownloadTooLarge = codeErr(errcode.LimitExceeded, "the download is larger than the limit")
	// ErrDownloadCanceled reports a download the browser or the page
	// cancelled before it completed.
	ErrDownloadCanceled = codeErr(errcode.Cancelled, "the download was cancelled before it completed")
)

// DownloadOptions bound an expected download. The zero value takes any
// size.
type DownloadOptions struct {
	// MaxBytes is the most the download may be; one that announces or
	// reaches more is cancelled with ErrDownloadTooLarge. 0: no limit.
	MaxBytes int64
}

// DownloadedFile is a completed download, still in the connection's
// temporary folder.
type DownloadedFile struct {
	// Path is where the bytes are: a file named by the download's GUID,
	// removed when the expectation is closed unless moved before.
	Path string
	// SuggestedName is the file name the page or server suggested, as the
	// browser reported it: untrusted text, not a path.
	SuggestedName string
	// URL is the address the download came from.
	URL string
	// Size is the number of bytes received.
	Size int64
}

// Download is one expected download of a tab: [Tab.ExpectDownload] makes
// it, [Download.Wait] waits for it, and [Download.Close] ends it.
type Download struct {
	t    *Tab
	d    *downloads
	opts DownloadOptions

	done chan struct{} // closed once file or err is set

	// Set under d.mu.
	guid      string
	completed bool // the browser finished writing it
	file      DownloadedFile
	err       error
	closed    bool
}

// downloads is a connection's expectations and its temporary folder.
type downloads struct {
	b *Browser

	// setMu orders the changes of the browser's download behaviour, so
	// that the last close's refusal never overtakes the first arm's
	// allowance.
	setMu sync.Mutex

	mu     sync.Mutex
	dir    string      // the temporary folder; "" until the first expectation, then kept for the connection
	armed  []*Download // open expectations, oldest first
	byGUID map[string]*Download
}

// downloadsOf is b's download state, made on first use.
func (b *Browser) downloadsOf() *downloads {
	if d := b.downloads.Load(); d != nil {
		return d
	}
	b.downloads.CompareAndSwap(nil, &downloads{b: b, byGUID: map[string]*Download{}})
	return b.downloads.Load()
}

// ExpectDownload has the browser save the next download any frame of t
// starts, up to opts.MaxBytes, and returns once the browser does so:
// start the action that downloads after it returns. Close the Download
// when done with it, whatever happened.
func (t *Tab) ExpectDownload(ctx context.Context, opts DownloadOptions) (*Download, error) {
	if err := t.Err(); err != nil {
		return nil, err
	}
	d := t.b.downloadsOf()
	dl := &Download{t: t, d: d, opts: opts, done: make(chan struct{})}
	d.setMu.Lock()
	defer d.setMu.Unlock()
	d.mu.Lock()
	first := len(d.armed) == 0
	if d.dir == "" {
		dir, err := os.MkdirTemp("", "tranquil-downloads-")
		if err != nil {
			d.mu.Unlock()
			return nil, fmt.Errorf("cdp: a folder for downloads: %w", err)
		}
		d.dir = dir
		// The folder lives as long as the connection: the browser may
		// make it again after a cancelled download, so removing it with
		// each expectation would leave it behind.
		go func() {
			<-t.b.Done()
			_ = os.RemoveAll(dir)
		}()
	}
	d.armed = append(d.armed, dl)
	dir := d.dir
	d.mu.Unlock()
	if first {
		args := browser.NewSetDownloadBehaviorArgs("allowAndName").SetDownloadPath(dir).SetEventsEnabled(true)
		if err := t.b.c.Browser.SetDownloadBehavior(ctx, args); err != nil {
			d.closeLocked(dl)
			return nil, t.b.fail(err)
		}
	}
	return dl, nil
}

// Wait waits for the download to complete and returns it. It fails with
// ctx's error (as ErrTimeout when its deadline passed), ErrDownloadTooLarge,
// ErrDownloadCanceled, or the tab's end.
func (dl *Download) Wait(ctx context.Context) (DownloadedFile, error) {
	select {
	case <-dl.done:
	case <-dl.t.route.gone:
		return DownloadedFile{}, dl.t.Err()
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return DownloadedFile{}, codeErr(errcode.Timeout, "no download began and completed in time: %w", ErrTimeout)
		}
		return DownloadedFile{}, ctx.Err()
	}
	dl.d.mu.Lock()
	defer dl.d.mu.Unlock()
	return dl.file, dl.err
}

// Began reports whether the expected download has begun: the browser
// gave it to this expectation.
func (dl *Download) Began() bool {
	dl.d.mu.Lock()
	defer dl.d.mu.Unlock()
	return dl.guid != ""
}

// Close ends the expectation: a download of it still under way is
// cancelled, its file is removed unless it was moved, and with the last
// expectation the browser refuses downloads again. It returns the error
// of restoring the refusal.
func (dl *Download) Close() error {
	dl.d.setMu.Lock()
	defer dl.d.setMu.Unlock()
	return dl.d.closeLocked(dl)
}

// closeLocked is Close with setMu held.
func (d *downloads) closeLocked(dl *Download) error {
	d.mu.Lock()
	if dl.closed {
		d.mu.Unlock()
		return nil
	}
	dl.closed = true
	for i, a := range d.armed {
		if a == dl {
			d.armed = append(d.armed[:i], d.armed[i+1:]...)
			break
		}
	}
	guid, dir := dl.guid, d.dir
	pending := guid != "" && !dl.completed
	if guid != "" {
		delete(d.byGUID, guid)
	}
	last := len(d.armed) == 0
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), defaultCleanupTimeout)
	defer cancel()
	if pending {
		_ = d.b.c.Browser.CancelDownload(ctx, browser.NewCancelDownloadArgs(guid))
	}
	if guid != "" {
		_ = os.Remove(filepath.Join(dir, guid))
	}
	if !last {
		return nil
	}
	err := d.b.c.Browser.SetDownloadBehavior(ctx, browser.NewSetDownloadBehaviorArgs(d.b.restingDownloadBehavior()))
	if err != nil && d.b.Err() == nil {
		return fmt.Errorf("cdp: refusing downloads again: %w", err)
	}
	return nil
}

// restingDownloadBehavior is the behaviour outside expectations: denied
// on a guarded connection (as Guard set it), the browser's own otherwise.
func (b *Browser) restingDownloadBehavior() string {
	b.gmu.Lock()
	defer b.gmu.Unlock()
	if b.gateway != nil {
		return "deny"
	}
	return "default"
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// observeDownload takes the browser session's download events. It runs on
// that session's receive goroutine, so what it asks of the browser it asks
// from a goroutine of its own, bounded by a timeout.
func (b *Browser) observeDownload(method string, params json.RawMessage) {
	d := b.downloads.Load()
	if d == nil {
		return
	}
	switch method {
	case "Browser.downloadWillBegin":
		var ev browser.DownloadWillBeginReply
		if json.Unmarshal(params, &ev) == nil {
			d.began(ev)
		}
	case "Browser.downloadProgress":
		var ev browser.DownloadProgressReply
		if json.Unmarshal(params, &ev) == nil {
			d.progressed(ev)
		}
	}
}

// began gives a new download to the oldest open expectation of the tab
// whose frame started it, or cancels it.
func (d *downloads) began(ev browser.DownloadWillBeginReply) {
	frame := string(ev.FrameID)
	d.mu.Lock()
	var dl *Download
	for _, a := range d.armed {
		if a.guid == "" && (a.t.id == frame || a.t.hasFrame(frame)) {
			dl = a
			break
		}
	}
	dir := d.dir
	if dl == nil {
		d.mu.Unlock()
		d.cancelLater(ev.GUID, dir)
		return
	}
	dl.guid = ev.GUID
	dl.file = DownloadedFile{Path: filepath.Join(dir, ev.GUID), SuggestedName: ev.SuggestedFilename, URL: ev.URL}
	d.byGUID[ev.GUID] = dl
	d.mu.Unlock()
}

// progressed completes, fails or bounds the download ev reports.
func (d *downloads) progressed(ev browser.DownloadProgressReply) {
	d.mu.Lock()
	dl := d.byGUID[ev.GUID]
	dir := d.dir
	if dl == nil || isClosed(dl.done) {
		d.mu.Unlock()
		if dl == nil && ev.State == "completed" && dir != "" {
			// A stray that completed before its cancel arrived.
			_ = os.Remove(filepath.Join(dir, ev.GUID))
		}
		return
	}
	over := dl.opts.MaxBytes > 0 && (int64(ev.TotalBytes) > dl.opts.MaxBytes || int64(ev.ReceivedBytes) > dl.opts.MaxBytes)
	switch {
	case over:
		dl.err = fmt.Errorf("%w (%d bytes)", ErrDownloadTooLarge, dl.opts.MaxBytes)
		delete(d.byGUID, ev.GUID)
		close(dl.done)
		d.mu.Unlock()
		d.cancelLater(ev.GUID, dir)
		return
	case ev.State == "completed":
		dl.completed = true
		dl.file.Size = int64(ev.ReceivedBytes)
		close(dl.done)
	case ev.State == "canceled":
		dl.err = ErrDownloadCanceled
		close(dl.done)
	}
	d.mu.Unlock()
}

// cancelLater cancels download guid and removes what it left in dir, from
// a goroutine that ends within defaultCleanupTimeout.
func (d *downloads) cancelLater(guid, dir string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), defaultCleanupTimeout)
		defer cancel()
		_ = d.b.c.Browser.CancelDownload(ctx, browser.NewCancelDownloadArgs(guid))
		if dir != "" {
			_ = os.Remove(filepath.Join(dir, guid))
		}
	}()
}
