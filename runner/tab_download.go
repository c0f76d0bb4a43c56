package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/rpc/capnweb"
)

// Downloads: tab.waitForDownload(action, { path }) saves the file a page
// downloads during action into a folder (or as a file) under one of the
// script's write= grants. The SDK makes two calls: expectDownload, which
// checks the destination against the grants and has the browser save the
// tab's next download into a private temporary folder (cdp's
// Tab.ExpectDownload) before the action runs, and waitForDownload, which
// waits for it to complete and has the host itself copy it to where the
// script said, under a name the page may suggest but not steer (one path
// element, pathguard.SafeName), never over a file without overwrite.
// Every other download, of any page and run, stays refused. An
// expectation the script does not wait for ends with the run.

// DefaultMaxDownloadBytes is [Config.MaxDownloadBytes] when it is zero.
const DefaultMaxDownloadBytes = 100 << 20

// downloadName is the file name of a download whose page suggested none
// that survives pathguard.SafeName.
const downloadName = "download"

// downloadOptions is the options object of tab.waitForDownload.
type downloadOptions struct {
	// Path is where the file goes, relative to the script's folder as its
	// write= grants are: a folder (ending in a slash, or one that exists),
	// which the file goes into under the name the page suggests, made
	// safe; or a file path. It is required.
	Path string `json:"path"`
	// Overwrite replaces a file already there; without it the call fails.
	Overwrite bool `json:"overwrite"`
	// Timeout bounds the wait for the download to begin and complete, in
	// milliseconds, from when the host starts watching; 0 is the host's
	// default (30 s).
	Timeout float64 `json:"timeout"`
}

// DownloadResult is what tab.waitForDownload returns of a saved file.
type DownloadResult struct {
	// Name is the file's name.
	Name string `json:"name"`
	// Size is its size in bytes.
	Size int64 `json:"size"`
	// Path is where it went: relative to the script's folder, with
	// forward slashes, when the script's path was relative; absolute
	// otherwise.
	Path string `json:"path"`
}

// pendingDownload is an expectation between expectDownload and
// waitForDownload.
type pendingDownload struct {
	dl       *cdp.Download
	tab      string
	dest     downloadDest
	deadline time.Time
	// expire ends the expectation at its deadline if the script never
	// waits for it, so that a script cannot keep the browser saving
	// downloads (and cancelling everyone else's) by calling the host
	// itself; stopped once the wait takes the ticket.
	expire *time.Timer
}

// maxPendingDownloads bounds the expectations one run has open at once.
const maxPendingDownloads = 8

// downloadDest is where a download goes: dir, and name unless the page's
// suggested name is to be used.
type downloadDest struct {
	asked     string // the path as the script gave it
	dir, name string
	overwrite bool
}

const apiWaitForDownload = "tab.waitForDownload"

// ExpectDownload checks where the tab's next download is to go and has the
// browser save it; it returns the ticket that WaitForDownload takes. The
// script's action that downloads runs after it returns.
func (a *tabAPI) ExpectDownload(ctx context.Context, id string, opts downloadOptions) (string, error) {
	// The destination is checked once the call passed the gate, as for
	// every call: a run that has ended hears that.
	return invoke(ctx, a.r, mTabExpectDownload, callReq{tab: id, refused: checkTimeout(apiWaitForDownload, opts.Timeout)}, func(c *call) (string, error) {
		dest, err := a.r.downloadDest(opts)
		if err != nil {
			a.r.logAction(cdp.Action{Method: "download", Target: opts.Path, Outcome: string(errCodeOf(err))})
			return "", err
		}
		dl, err := c.tab.ExpectDownload(c.ctx, cdp.DownloadOptions{MaxBytes: a.r.m.cfg.MaxDownloadBytes})
		if err != nil {
			return "", err
		}
		ticket, err := a.r.pendDownload(id, dl, dest, opts.Timeout)
		if err == nil {
			c.recordedElsewhere() // once, by WaitForDownload
		}
		return ticket, err
	})
}

// pendDownload keeps dl, an expectation of tab id's to save at dest, until
// WaitForDownload takes it or timeout (milliseconds, 0 the default) passes,
// and returns its ticket.
func (r *Run) pendDownload(id string, dl *cdp.Download, dest downloadDest, timeout float64) (string, error) {
	wait := defaultTabWait
	if timeout > 0 {
		wait = time.Duration(timeout * float64(time.Millisecond))
	}
	r.mu.Lock()
	switch {
	case r.tabsReleased:
		r.mu.Unlock()
		_ = dl.Close()
		return "", codeErr(errcode.Cancelled, capnweb.NameError, "the run has ended")
	case len(r.downloads) >= maxPendingDownloads:
		r.mu.Unlock()
		_ = dl.Close()
		return "", limitErr(maxPendingDownloads, "the run already waits for %d downloads", maxPendingDownloads)
	}
	if r.downloads == nil {
		r.downloads = map[string]*pendingDownload{}
	}
	r.downloadSeq++
	ticket := "download-" + strconv.Itoa(r.downloadSeq)
	p := &pendingDownload{dl: dl, tab: id, dest: dest, deadline: time.Now().Add(wait)}
	p.expire = time.AfterFunc(wait, func() {
		if r.takeDownload(ticket) == p {
			_ = p.dl.Close()
		}
	})
	r.downloads[ticket] = p
	r.mu.Unlock()
	return ticket, nil
}

// WaitForDownload waits for the download ticket expects, saves it and
// says where. With abandon (the script's action failed) it ends the
// expectation and returns null, unless the download began all the same
// (a goto to the file's address fails, as a download is no page): then it
// is waited for and saved as usual.
func (a *tabAPI) WaitForDownload(ctx context.Context, id, ticket string, abandon bool) (*DownloadResult, error) {
	return invoke(ctx, a.r, mTabWaitForDownload, callReq{tab: id, timeout: a.r.downloadLeft(ticket)}, func(c *call) (*DownloadResult, error) {
		p := a.r.takeDownload(ticket)
		if p == nil || p.tab != id {
			return nil, codeErr(errcode.Timeout, capnweb.NameError, "no download is expected as %q: its time is up, or it was never asked for", ticket)
		}
		p.expire.Stop()
		defer p.dl.Close()
		if abandon && !p.dl.Began() {
			c.recordedElsewhere() // the action's own call says what went wrong
			return nil, nil
		}
		f, err := p.dl.Wait(c.ctx)
		if err == nil {
			var res DownloadResult
			res, err = a.r.saveDownload(p.dest, f)
			if err == nil {
				a.r.logAction(cdp.Action{Method: "download", Target: res.Path, Site: downloadSite(f.URL), Outcome: "ok"})
				return &res, nil
			}
		}
		if errors.Is(err, cdp.ErrDownloadTooLarge) {
			limit := a.r.m.cfg.MaxDownloadBytes
			err = capnweb.Errorf(capnweb.NameRangeError, map[string]any{"code": string(errcode.LimitExceeded), "limit": limit},
				"the download is larger than the app's limit of %s; nothing of it was kept", byteCount(limit))
		}
		a.r.logAction(cdp.Action{Method: "download", Target: p.dest.asked, Site: downloadSite(f.URL), Outcome: string(errCodeOf(browserErr(err)))})
		return nil, err
	})
}

// closeDownloads ends the expectations the script did not wait for, as
// its run ends.
func (r *Run) closeDownloads() {
	r.mu.Lock()
	pending := r.downloads
	r.downloads = nil
	r.mu.Unlock()
	for _, p := range pending {
		p.expire.Stop()
		_ = p.dl.Close()
	}
}

// downloadLeft is how long the expectation ticket names has left, in
// milliseconds, at least 1.
func (r *Run) downloadLeft(ticket string) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.downloads[ticket]; p != nil {
		return max(float64(time.Until(p.deadline).Milliseconds()), 1)
	}
	return 1
}

// takeDownload removes the expectation ticket names and returns it; nil
// when there is none.
func (r *Run) takeDownload(ticket string) *pendingDownload {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.downloads[ticket]
	delete(r.downloads, ticket)
	return p
}

// downloadSite is the host a download came from, a blob's included.
func downloadSite(raw string) string {
	u, err := url.Parse(strings.TrimPrefix(raw, "blob:"))
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// downloadDest resolves opts.Path against the script's folder and checks
// it is under one of the run's write= grants (and not the host's own
// data): not_granted otherwise, invalid for a malformed path or a file
// name that is not safe as it is.
func (r *Run) downloadDest(opts downloadOptions) (downloadDest, error) {
	p := opts.Path
	if p == "" || strings.ContainsRune(p, 0) {
		return downloadDest{}, codeErr(errcode.Invalid, capnweb.NameTypeError, "{ path } names the folder or file to save the download as, not %q", p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(filepath.Dir(r.header.ScriptPath), p)
	}
	d := downloadDest{asked: p, dir: abs, overwrite: opts.Overwrite}
	if fi, err := os.Stat(abs); !strings.HasSuffix(p, "/") && !strings.HasSuffix(p, `\`) && (err != nil || !fi.IsDir()) {
		d.dir, d.name = filepath.Dir(abs), filepath.Base(abs)
		if pathguard.SafeName(d.name, "") != d.name {
			return downloadDest{}, codeErr(errcode.Invalid, capnweb.NameTypeError, "%q is not a name a file can safely have on every system", d.name)
		}
	}
	if _, err := r.writable(filepath.Join(d.dir, cmp.Or(d.name, downloadName))); err != nil {
		return downloadDest{}, err
	}
	return d, nil
}

// writable returns the real path of p when it is under one of the run's
// write= grants (where the script could write itself) and outside the
// host's own data; not_granted otherwise.
func (r *Run) writable(p string) (string, error) {
	_, real, err := pathguard.Resolve(p)
	if err != nil {
		return "", codeErr(errcode.Invalid, capnweb.NameTypeError, "cannot resolve %q: %v", p, err)
	}
	if !r.underGrants(r.header.Write, real) {
		return "", notGranted("write", filepath.Dir(p), "%s saves a download only where the script may write: %q is not under its write= grants", apiWaitForDownload, p)
	}
	return real, nil
}

// saveDownload copies the completed download f to d, checked against the
// grants again now that the name is known and the folder made, and
// returns what the script is told.
func (r *Run) saveDownload(d downloadDest, f cdp.DownloadedFile) (DownloadResult, error) {
	name := d.name
	if name == "" {
		name = pathguard.SafeName(f.SuggestedName, downloadName)
	}
	final := filepath.Join(d.dir, name)
	if _, err := r.writable(final); err != nil {
		return DownloadResult{}, err
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return DownloadResult{}, codeErr(errcode.Error, capnweb.NameError, "making the folder %q: %v", d.asked, err)
	}
	// Again with the folder made: a link put in its place meanwhile
	// would show now.
	real, err := r.writable(final)
	if err != nil {
		return DownloadResult{}, err
	}
	if fi, err := os.Lstat(final); err == nil && !fi.Mode().IsRegular() {
		return DownloadResult{}, codeErr(errcode.Invalid, capnweb.NameError, "%q is there and is not a file", name)
	}
	size, err := copyDownload(f.Path, real, d.overwrite, r.m.cfg.MaxDownloadBytes)
	if errors.Is(err, fs.ErrExist) { // without overwrite the file is made new (O_EXCL)
		return DownloadResult{}, codeErr(errcode.Invalid, capnweb.NameError, "%q exists: pass { overwrite: true } to replace it", name)
	}
	if err != nil {
		return DownloadResult{}, err
	}
	shown := final
	if !filepath.IsAbs(d.asked) {
		if rel, err := filepath.Rel(filepath.Dir(r.header.ScriptPath), final); err == nil {
			shown = filepath.ToSlash(rel)
		}
	}
	return DownloadResult{Name: name, Size: size, Path: shown}, nil
}

// copyDownload copies src to dst, at most limit bytes: a new file, or
// with overwrite one that replaces what is there at once (written beside
// it, then renamed over it, so a reader never sees half).
func copyDownload(src, dst string, overwrite bool, limit int64) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, fmt.Errorf("runner: the downloaded file: %w", err)
	}
	defer in.Close()
	var out *os.File
	if overwrite {
		out, err = os.CreateTemp(filepath.Dir(dst), ".download-*")
	} else {
		out, err = os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return 0, fmt.Errorf("runner: saving the download: %w", err)
	}
	n, err := io.Copy(out, io.LimitReader(in, limit+1))
	if err == nil && n > limit {
		err = cdp.ErrDownloadTooLarge
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && overwrite {
		err = os.Rename(out.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(out.Name())
		return 0, fmt.Errorf("runner: saving the download: %w", err)
	}
	return n, nil
}
