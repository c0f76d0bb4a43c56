package hosttest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/cdptabs"
	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/runner"
	"github.com/tranquil/automation/trace"
)

// Script is one run for [RunScript]: a script, the pages it drives and the
// answer to its consent prompt.
type Script struct {
	// Path is the script's file. Exactly one of Path and Source is set.
	Path string
	// Source is the script's text, written to a temporary folder as
	// script.ts (so a relative import or read= grant means that folder).
	Source string
	// Pages are served on 127.0.0.1 with a loopback-only
	// Content-Security-Policy, and the first tab opens at Start on them.
	// Every script may load them, as the app's own site (sites= need not
	// name them). Nil serves nothing.
	Pages fs.FS
	// Sites are pages served under web host names, keyed by the name
	// ("example.com", "shop.example"), so a script written for
	// https://example.com/ runs unchanged. They are served over https on
	// a 127.0.0.1 port: this run's browser maps the names' https port
	// there and resolves no other name (its host-resolver rules), and
	// trusts the certificate made for them in the test's process by its
	// key alone. Only https is served (Chromium upgrades a navigation to
	// an http:// address of a name itself). The host looks none of the
	// names up: they are given to the run manager as AllowLocalSites,
	// since its local-address check would otherwise look up a name that
	// lands on loopback. By their text they are web sites, so sites=
	// limits a script's page actions on them as on any other. Their pages
	// get Pages' loopback-only Content-Security-Policy, widened to the
	// named sites. Keep a run to these names and Pages: a navigation to
	// another name fails in the browser as unresolved, but the host's
	// local-address check looks it up first, and Chromium's error page
	// probes DNS, both through the system's resolver. A key that is not a
	// web host name fails the run with [ErrBadSite]. Nil serves none.
	Sites map[string]fs.FS
	// Start is where the first tab opens: a path on Pages, or a full
	// https:// address on Sites. Empty means "/" on Pages, and a blank
	// tab without Pages.
	Start string
	// Approve answers the script's consent prompt: true approves what its
	// header asks; false refuses, and the run ends refused.
	Approve bool
	// Payload is the run's context.payload (JSON); nil means none.
	Payload []byte
	// During, when set, is called once the run has started, with the run
	// to drive while it runs (its pane controls, its Stop button); the
	// run's end is awaited after During returns. ctx ends with Timeout.
	// Nil leaves the run to end by itself.
	During func(ctx context.Context, run *Live)
	// Timeout bounds the whole run, the browser's start included; the run
	// is cancelled at its end. Zero means two minutes.
	Timeout time.Duration
	// Deno and Chromium are the executables. Empty means $TRANQUIL_DENO,
	// then this repository's .tools (when the test runs inside it), then
	// deno on PATH; $TRANQUIL_CHROMIUM, then .tools, then chromium,
	// chromium-browser or google-chrome on PATH.
	Deno, Chromium string
	// CacheDir is deno's module cache, shared between runs so that the
	// SDK's npm package is fetched once. Empty means $DENO_DIR, else
	// deno's own default (the deno folder of the user cache directory).
	CacheDir string
}

// Result is what a run did, as the app records it.
type Result struct {
	// Entry is the run's history entry: State, Result (the JSON given to
	// context.result), Output, Reason, FirstError and Actions, the
	// action log.
	Entry history.Entry
	// Trace is what the run did in its tabs and outside them; nil for a
	// run that kept none (one refused before it started).
	Trace *trace.Trace
	// Site is the served pages' address, such as "http://127.0.0.1:4242/";
	// "" when Script.Pages was nil.
	Site string
	// UI and Clipboard are the doubles the run's notifications, opened
	// files and clipboard went to.
	UI        *UI
	Clipboard *Clipboard
	// Prompts are the consent requests the run made.
	Prompts []consent.Request
}

// ErrBadScript reports a Script that names no script, or two.
var ErrBadScript = errors.New("hosttest: a Script needs exactly one of Path and Source")

// defaultTimeout bounds a run whose Script sets none: long enough for a
// first run that fills deno's cache, short enough for a stuck test to end.
const defaultTimeout = 2 * time.Minute

// RunScript runs s as the app runs a script: the real run manager and
// deno, a real headless Chromium (launched for this run), s.Pages served
// on loopback, the script's header applied and its consent answered by
// s.Approve. The UI, clipboard and workspace are this package's doubles;
// the workspace is the script's folder. It returns when the run has ended
// and everything it started is gone (browser, server, deno, temporary
// folders). The error reports a run that could not be made (no deno, no
// browser, a bad Script); a run that failed is a Result whose
// Entry.State says so.
func RunScript(ctx context.Context, s Script) (*Result, error) {
	if (s.Path == "") == (s.Source == "") {
		return nil, ErrBadScript
	}
	if s.Pages == nil && s.Start != "" && !strings.HasPrefix(s.Start, "https://") {
		return nil, fmt.Errorf("%w: %q", ErrBadStart, s.Start)
	}
	if s.Timeout <= 0 {
		s.Timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	tmp, err := os.MkdirTemp("", "hosttest-run-")
	if err != nil {
		return nil, fmt.Errorf("hosttest: %w", err)
	}
	defer os.RemoveAll(tmp)
	script, err := scriptFile(s, tmp)
	if err != nil {
		return nil, err
	}

	if err := s.findTools(); err != nil {
		return nil, err
	}
	// No name resolves inside the browser but the sites served: a page,
	// or the browser itself, reaches nothing past loopback.
	opts := launch.Options{Path: s.Chromium, TempDir: tmp, Args: []string{resolverRules()}}
	var local []string
	if len(s.Sites) > 0 {
		named, err := serveSites(s.Sites)
		if err != nil {
			return nil, err
		}
		defer named.stop()
		opts.Args, local = named.args, named.names
	}
	tabs, err := cdptabs.Launch(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("hosttest: starting the browser: %w", err)
	}
	defer tabs.Shutdown()
	res := &Result{UI: &UI{}, Clipboard: &Clipboard{}}
	start := s.Start
	if s.Pages != nil {
		site, stop, err := servePages(s.Pages)
		if err != nil {
			return nil, err
		}
		defer stop()
		res.Site = site
		local = append(local, strings.TrimSuffix(strings.TrimPrefix(site, "http://"), "/"))
		if !strings.HasPrefix(start, "https://") {
			start = site + strings.TrimPrefix(start, "/")
		}
	}
	if start != "" {
		if err := openFirst(ctx, tabs, start); err != nil {
			return nil, err
		}
	}

	prompter := &Prompter{Answer: consent.Deny}
	if s.Approve {
		prompter.Answer = consent.Approve
	}
	entry, tr, err := runOnce(ctx, s, script, tmp, runner.Host{
		UI: res.UI, Clipboard: res.Clipboard, Workspace: Workspace(filepath.Dir(script)), Tabs: tabs,
	}, prompter, local)
	if err != nil {
		return nil, err
	}
	res.Entry, res.Trace, res.Prompts = entry, tr, prompter.Requests()
	return res, nil
}

// runOnce runs script once under a run manager over data, and returns its
// entry and trace, read before the manager closes its history.
func runOnce(ctx context.Context, s Script, script, data string, host runner.Host, p consent.Prompter, local []string) (history.Entry, *trace.Trace, error) {
	store, err := consent.OpenStore(filepath.Join(data, "consent.json"), consent.StoreOptions{})
	if err != nil {
		return history.Entry{}, nil, fmt.Errorf("hosttest: %w", err)
	}
	m, err := runner.New(runner.Config{
		DataDir:         filepath.Join(data, "data"),
		CacheDir:        s.CacheDir,
		DenoPath:        s.Deno,
		Host:            host,
		Gate:            consent.NewGate(store, p),
		AllowLocalSites: local,
	})
	if err != nil {
		return history.Entry{}, nil, fmt.Errorf("hosttest: %w", err)
	}
	defer m.Close()
	run, err := m.Start(ctx, runner.Request{Script: script, Trigger: "test", TriggerPayload: s.Payload})
	if err != nil {
		return history.Entry{}, nil, fmt.Errorf("hosttest: %w", err)
	}
	// The run's own timeout and the cancel at ctx's end settle it; Wait
	// outlives ctx so the entry is always read.
	stop := context.AfterFunc(ctx, func() { run.Cancel("the test's time ran out") })
	defer stop()
	if s.During != nil {
		s.During(ctx, &Live{m: m, run: run})
	}
	entry, err := run.Wait(context.WithoutCancel(ctx))
	if err != nil {
		return history.Entry{}, nil, fmt.Errorf("hosttest: %w", err)
	}
	var tr *trace.Trace
	if data, err := m.History().Trace(entry.ID); err == nil {
		if tr, err = trace.Decode(data); err != nil {
			return history.Entry{}, nil, fmt.Errorf("hosttest: the run's trace: %w", err)
		}
	} else if !errors.Is(err, history.ErrNoTrace) {
		return history.Entry{}, nil, fmt.Errorf("hosttest: the run's trace: %w", err)
	}
	return entry, tr, nil
}

// scriptFile returns the script's path, writing s.Source under dir.
func scriptFile(s Script, dir string) (string, error) {
	if s.Path != "" {
		p, err := filepath.Abs(s.Path)
		if err != nil {
			return "", fmt.Errorf("hosttest: %w", err)
		}
		return p, nil
	}
	src := filepath.Join(dir, "script")
	if err := os.Mkdir(src, 0o700); err != nil {
		return "", fmt.Errorf("hosttest: %w", err)
	}
	p := filepath.Join(src, "script.ts")
	if err := os.WriteFile(p, []byte(s.Source), 0o600); err != nil {
		return "", fmt.Errorf("hosttest: %w", err)
	}
	return p, nil
}

// findTools fills in the executables and the cache s leaves empty.
func (s *Script) findTools() error {
	var err error
	if s.Deno == "" {
		if s.Deno, err = testenv.LookDeno(); err != nil {
			return fmt.Errorf("hosttest: deno: %w (install it with %s)", err, testenv.DenoInstall)
		}
	}
	if s.Chromium == "" {
		if s.Chromium, err = testenv.LookChromium(); err != nil {
			return fmt.Errorf("hosttest: chromium: %w (install it with %s)", err, testenv.ChromiumInstall)
		}
	}
	if s.CacheDir == "" {
		s.CacheDir = os.Getenv("DENO_DIR")
	}
	if s.CacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("hosttest: no cache folder for deno: %w", err)
		}
		s.CacheDir = filepath.Join(base, "deno")
	}
	return nil
}

// pagesCSP keeps the served pages on loopback whatever they hold.
const pagesCSP = "default-src 'self' 'unsafe-inline' data:; form-action 'self'"

// servePages serves pages on a 127.0.0.1 port and returns its address and
// the function that stops the server and waits for it.
func servePages(pages fs.FS) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("hosttest: serving the pages: %w", err)
	}
	files := http.FileServerFS(pages)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", pagesCSP)
			files.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln) // returns when stop closes the server
	}()
	stop := func() {
		srv.Close()
		<-done
	}
	return "http://" + ln.Addr().String() + "/", stop, nil
}

// openFirst loads url in the browser's first tab, as a user who had the
// page open when they started the script.
func openFirst(ctx context.Context, tabs *cdptabs.Tabs, url string) error {
	active, err := tabs.Active(ctx, runner.RunInfo{})
	if err != nil {
		return fmt.Errorf("hosttest: %w", err)
	}
	tab, err := tabs.Browser().Attach(ctx, active.ID)
	if err != nil {
		return fmt.Errorf("hosttest: %w", err)
	}
	defer tab.Detach(context.WithoutCancel(ctx))
	if _, err := tab.Goto(ctx, url, cdp.Load); err != nil {
		return fmt.Errorf("hosttest: opening %s: %w", url, err)
	}
	return nil
}
