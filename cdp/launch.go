package cdp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ErrLaunch reports that a browser process could not be started or did not
// publish its DevTools endpoint in time.
var ErrLaunch = errors.New("cdp: launch failed")

// DefaultFlags are the flags every launch gets. They switch off background
// work that slows or destabilises automation (updates, sync, throttling of
// hidden tabs, crash reporting) without touching site isolation, so
// cross-site navigations swap renderers exactly as they do for users.
var DefaultFlags = []string{
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-background-timer-throttling",
	"--disable-backgrounding-occluded-windows",
	"--disable-renderer-backgrounding",
	"--disable-breakpad",
	"--disable-client-side-phishing-detection",
	"--disable-component-update",
	"--disable-default-apps",
	"--disable-dev-shm-usage",
	"--disable-extensions",
	"--disable-hang-monitor",
	"--disable-ipc-flooding-protection",
	"--disable-popup-blocking",
	"--disable-prompt-on-repost",
	"--disable-sync",
	"--metrics-recording-only",
	"--password-store=basic",
	"--use-mock-keychain",
	"--force-color-profile=srgb",
}

// lifecycleFlags are owned by the launcher; callers may not pass them in
// LaunchOptions.Args because they would break endpoint discovery or cleanup.
var lifecycleFlags = []string{
	"--user-data-dir", "--remote-debugging-port", "--remote-debugging-address",
	"--remote-debugging-pipe",
}

// LaunchOptions configures [Launch]. The zero value launches headless
// Chromium found on PATH with a fresh temporary profile.
type LaunchOptions struct {
	// Path is the browser executable. Empty means the first of chromium,
	// chromium-browser, google-chrome found on PATH.
	Path string
	// Headful shows a window. The zero value runs headless.
	Headful bool
	// Args are extra flags, appended after DefaultFlags. Flags that the
	// launcher owns (profile directory, debugging port or pipe) are refused.
	Args []string
	// TempDir is where the temporary profile directory is created. Empty
	// means os.TempDir().
	TempDir string
	// StartTimeout bounds the wait for DevToolsActivePort. Zero means 30s.
	StartTimeout time.Duration
	// Stderr receives the browser's stderr. Nil discards it; it is always
	// drained, because a full pipe can stall the browser.
	Stderr io.Writer
}

// BrowserProcess is a browser started by [Launch]. It owns the process
// (and its process group where the OS has one) and the temporary profile
// directory; [BrowserProcess.Close] ends both. One goroutine waits for the
// process and one drains stderr; both end when the process exits.
type BrowserProcess struct {
	cmd      *exec.Cmd
	dataDir  string
	endpoint string

	done    chan struct{} // closed once the process has been reaped
	waitErr error         // set before done is closed

	closeOnce sync.Once
	closeErr  error
}

// Launch starts a browser with a temporary profile and
// --remote-debugging-port=0, and returns once DevToolsActivePort names the
// endpoint. The caller must call Close.
func Launch(ctx context.Context, opts LaunchOptions) (*BrowserProcess, error) {
	for _, a := range opts.Args {
		for _, f := range lifecycleFlags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return nil, fmt.Errorf("%w: flag %s is owned by the launcher", ErrLaunch, f)
			}
		}
	}
	path := opts.Path
	if path == "" {
		for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
			if p, err := exec.LookPath(n); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return nil, fmt.Errorf("%w: no chromium on PATH", ErrLaunch)
		}
	}
	dataDir, err := os.MkdirTemp(opts.TempDir, "tranquil-browser-")
	if err != nil {
		return nil, fmt.Errorf("%w: profile directory: %w", ErrLaunch, err)
	}
	args := []string{"--user-data-dir=" + dataDir, "--remote-debugging-port=0"}
	if !opts.Headful {
		args = append(args, "--headless=new")
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to start as root with its sandbox on.
		args = append(args, "--no-sandbox")
	}
	args = append(args, DefaultFlags...)
	args = append(args, opts.Args...)
	args = append(args, "about:blank")

	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Stdin = nil
	cmd.Stdout = nil
	stderr, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(dataDir)
		return nil, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dataDir)
		return nil, fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	p := &BrowserProcess{cmd: cmd, dataDir: dataDir, done: make(chan struct{})}
	sink := opts.Stderr
	if sink == nil {
		sink = io.Discard
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(sink, bufio.NewReader(stderr))
	}()
	go func() {
		// exec.Cmd.Wait closes the pipe, so the drain must finish first.
		<-drained
		p.waitErr = cmd.Wait()
		close(p.done)
	}()

	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ep, err := p.waitEndpoint(wctx)
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	p.endpoint = ep
	return p, nil
}

func (p *BrowserProcess) waitEndpoint(ctx context.Context) (string, error) {
	file := filepath.Join(p.dataDir, "DevToolsActivePort")
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(file); err == nil {
			if ep, err := parseActivePort(b); err == nil {
				return ep, nil
			}
		}
		select {
		case <-p.done:
			return "", fmt.Errorf("%w: browser exited before publishing its endpoint: %v", ErrLaunch, p.waitErr)
		case <-ctx.Done():
			return "", fmt.Errorf("%w: no DevToolsActivePort: %w", ErrLaunch, ctx.Err())
		case <-tick.C:
		}
	}
}

// parseActivePort turns the two lines of DevToolsActivePort (port, then
// browser path) into a browser WebSocket URL on loopback.
func parseActivePort(b []byte) (string, error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 {
		return "", fmt.Errorf("cdp: DevToolsActivePort: want 2 lines, got %d", len(lines))
	}
	port := strings.TrimSpace(lines[0])
	path := strings.TrimSpace(lines[1])
	if port == "" || strings.Trim(port, "0123456789") != "" || !strings.HasPrefix(path, "/devtools/browser/") {
		return "", fmt.Errorf("cdp: DevToolsActivePort: malformed content")
	}
	return "ws://127.0.0.1:" + port + path, nil
}

// Endpoint is the browser-level WebSocket URL, ready for [Connect].
func (p *BrowserProcess) Endpoint() string { return p.endpoint }

// DataDir is the temporary profile directory; it is removed by Close.
func (p *BrowserProcess) DataDir() string { return p.dataDir }

// Pid is the browser's process id.
func (p *BrowserProcess) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *BrowserProcess) Done() <-chan struct{} { return p.done }

// Kill ends the browser at once, without a graceful phase, and does not
// wait. It is for simulating a crash; use Close for an orderly end.
func (p *BrowserProcess) Kill() error { return killTree(p.cmd.Process, true) }

// Close stops the browser: a polite signal to its process group, a forced
// kill after three seconds, then it reaps the process and removes the
// profile directory. It is safe to call more than once.
func (p *BrowserProcess) Close() error {
	p.closeOnce.Do(func() {
		select {
		case <-p.done:
		default:
			_ = killTree(p.cmd.Process, false)
			select {
			case <-p.done:
			case <-time.After(3 * time.Second):
				_ = killTree(p.cmd.Process, true)
				<-p.done
			}
		}
		// Children of the group may hold files in the profile briefly after
		// the leader is reaped; retry the removal for a short while.
		var err error
		for i := 0; i < 20; i++ {
			if err = os.RemoveAll(p.dataDir); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			p.closeErr = fmt.Errorf("cdp: remove profile: %w", err)
		}
	})
	return p.closeErr
}
