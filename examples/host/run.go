package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/cdptabs"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/mirror"
	"github.com/tranquil/automation/runner"
)

type runFlags struct {
	approve, headed, json bool
	serve, url            string
	browser, deno         string
	lines, click          string
	trace                 bool
}

func (a *app) run(ctx context.Context, args []string) int {
	var f runFlags
	fs := a.flags("run")
	fs.BoolVar(&f.approve, "approve", false, "approve the script's permissions without asking")
	fs.BoolVar(&f.headed, "headed", false, "show the browser window")
	fs.BoolVar(&f.json, "json", false, "print the run record as JSON on stdout")
	fs.StringVar(&f.serve, "serve", "", "serve this folder on 127.0.0.1 and open the first tab at its index")
	fs.StringVar(&f.url, "url", "", "open the first tab at this URL")
	fs.StringVar(&f.browser, "browser", "", "the Chromium executable")
	fs.StringVar(&f.deno, "deno", "", "the deno executable")
	fs.StringVar(&f.lines, "lines", "", "run only these lines of the script, A-B (run-selection)")
	fs.StringVar(&f.click, "click", "", "click this pane control once the script registers it")
	fs.BoolVar(&f.trace, "trace", false, "when the run fails, serve its trace on 127.0.0.1 and print its address (Ctrl-C stops)")
	pos, ok := a.positional(fs, args, 1, "a SCRIPT")
	if !ok {
		return exitUsage
	}
	if f.serve != "" && f.url != "" {
		fmt.Fprintln(a.stderr, "run: --serve and --url both say where the first tab opens; pass one")
		return exitUsage
	}
	script, ok := a.scriptArg("run", pos[0])
	if !ok {
		return exitUsage
	}
	var sel *runner.Selection
	if f.lines != "" {
		text, err := selectLines(script, f.lines)
		if err != nil {
			fmt.Fprintf(a.stderr, "run: --lines: %s\n", safe(err.Error()))
			return exitUsage
		}
		sel = &runner.Selection{Text: text}
	}
	// With --json, stdout carries only the record.
	out := a.stdout
	if f.json {
		out = a.stderr
	}
	h := &runHost{out: out, errOut: a.stderr, paneWake: make(chan struct{}, 1)}
	code, entry, err := h.run(ctx, a, f, script, sel)
	if errors.Is(err, errAbandoned) {
		fmt.Fprintf(a.stderr, "run: %s\n", err)
		return code
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "run: %s\n", safe(err.Error()))
		return exitFailed
	}
	writeSummary(out, entry)
	if h.mirrored != nil {
		writeMirror(out, *h.mirrored)
	}
	if f.json {
		rec := toRecord(entry)
		rec.Trace = h.trace
		if err := printJSON(a.stdout, rec); err != nil {
			return exitFailed
		}
	}
	if f.trace && entry.State != history.StateSucceeded && ctx.Err() == nil {
		// What the run did, page by page, for whoever looks into why.
		a.serveTraces(ctx, "127.0.0.1:0", entry.ID)
	}
	return code
}

// runHost is everything one run of the program holds: the browser, the
// served folder, the run manager and the terminal.
type runHost struct {
	out, errOut io.Writer
	mu          sync.Mutex // serialises writes from the run's goroutines

	// Pane-control events wait here for the goroutine that acts on them:
	// the runner's event callback must not block.
	paneMu     sync.Mutex
	paneEvents []runner.Event
	paneWake   chan struct{} // capacity 1: "paneEvents has news"

	mirrored *mirror.Mirror // the mirror this run synced, if any
	trace    *traceRecord   // the run's trace, read for --json
}

func (h *runHost) printf(w io.Writer, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(w, format, args...)
}

func (h *runHost) run(ctx context.Context, a *app, f runFlags, script string, sel *runner.Selection) (int, history.Entry, error) {
	// The manager is built after the browser, but deno is looked for
	// first so that a missing one is reported before anything starts.
	if _, _, err := findDeno(f.deno); err != nil {
		return 0, history.Entry{}, err
	}
	chromium, err := findChromium(f.browser)
	if err != nil {
		return 0, history.Entry{}, err
	}

	launchCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tabs, err := cdptabs.Launch(launchCtx, launch.Options{Path: chromium, Headful: f.headed})
	if err != nil {
		return 0, history.Entry{}, fmt.Errorf("starting the browser %s: %w", chromium, err)
	}
	defer tabs.Shutdown()

	start := f.url
	var allowLocal []string
	if f.serve != "" {
		srv, url, err := serve(f.serve)
		if err != nil {
			return 0, history.Entry{}, err
		}
		defer srv.Close()
		start = url
		// The served folder is this host's own site: every script may
		// load it without naming it in sites=.
		allowLocal = append(allowLocal, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
		h.printf(h.out, "serving %s at %s\n", f.serve, url)
	}
	if start != "" {
		if err := openFirstTab(launchCtx, tabs, start); err != nil {
			return 0, history.Entry{}, err
		}
	}

	in := newLines(a.stdin)
	project, _ := os.Getwd()
	m, ms, err := a.newManager(managerOptions{
		deno: f.deno,
		host: runner.Host{
			UI:        &terminalUI{out: h.out},
			Clipboard: &memClipboard{},
			Workspace: dirWorkspace(project),
			Tabs:      tabs,
		},
		prompter:   &terminalPrompter{out: h.errOut, in: in, approve: f.approve},
		onEvent:    h.event,
		allowLocal: allowLocal,
	})
	if err != nil {
		return 0, history.Entry{}, err
	}
	abandoned := false
	defer func() {
		if !abandoned {
			m.Close()
			return
		}
		// The user asked twice to stop: whatever keeps the run from
		// ending must not keep the program from exiting either. The
		// program exits right after, which ends this goroutine.
		closed := make(chan struct{})
		go func() {
			m.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(abandonWait):
		}
	}()

	// Signals cancel the run; they are caught before it starts, so a
	// Ctrl-C during the prompt or the SDK download is not lost.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	r, err := m.Start(ctx, runner.Request{Script: script, Trigger: "manual", Selection: sel})
	if err != nil {
		return 0, history.Entry{}, err
	}
	paneCtx, stopPane := context.WithCancel(ctx)
	defer stopPane()
	go h.paneControls(paneCtx, m, r, in, f.click)

	if !h.awaitRun(r, sigs) {
		abandoned = true
		return exitCancelled, history.Entry{}, errAbandoned
	}
	entry, err := r.Wait(context.Background())
	if err != nil {
		return 0, history.Entry{}, err
	}
	if f.json {
		h.trace = runTrace(m.History(), entry.ID)
	}
	// The runner mirrored a succeeded run's outputs before reporting it
	// done; a state this run did not write belongs to an earlier sync.
	if mi, ok, err := ms.Status(ctx, script); err != nil {
		h.printf(h.errOut, "mirror: %s\n", safe(err.Error()))
	} else if ok && mi.State.Trigger == "run "+entry.ID {
		h.mirrored = &mi
	}
	return exitCode(entry.State), entry, nil
}

// errAbandoned is h.run's error when a second signal came before the run
// ended: the program exits without its record.
var errAbandoned = errors.New("stopped again before the run ended; exiting without waiting for it")

// abandonWait bounds how long an abandoned run's manager may take to close.
const abandonWait = 3 * time.Second

// stoppable is the part of a run the signal loop needs.
type stoppable interface {
	Done() <-chan struct{}
	Cancel(reason string)
}

// awaitRun waits until r ends, cancelling it at the first Ctrl-C or
// SIGTERM. At a second one it stops waiting and reports false, so a run
// that does not end (a consent prompt that ignores the cancel, a stuck
// process) never holds the program.
func (h *runHost) awaitRun(r stoppable, sigs <-chan os.Signal) bool {
	cancelled := false
	for {
		select {
		case <-r.Done():
			return true
		case s := <-sigs:
			if cancelled {
				h.printf(h.errOut, "\n%s again: exiting without waiting for the run to end\n", signalWords(s))
				return false
			}
			cancelled = true
			why := signalWords(s)
			h.printf(h.errOut, "\n%s: cancelling the run (again to exit at once)\n", why)
			r.Cancel(why)
		}
	}
}

// signalWords says which signal stopped the run.
func signalWords(s os.Signal) string {
	if s == os.Interrupt {
		return "interrupted (Ctrl-C)"
	}
	return "stopped by " + s.String()
}

// event prints a run event as it happens. The runner calls it
// synchronously, so it only writes.
func (h *runHost) event(ev runner.Event) {
	switch ev.Kind {
	case runner.EventOutput:
		w := h.out
		if ev.Stream == "stderr" {
			w = h.errOut
		}
		h.printf(w, "%s\n", safeOutput(ev.Line))
	case runner.EventLog:
		h.printf(h.out, "log: %s\n", safe(ev.Line))
	case runner.EventStep:
		h.printf(h.errOut, "[%s] %s\n", short(ev.RunID), describeStep(ev.Step))
	case runner.EventProgress:
		if ev.Fraction >= 0 {
			h.printf(h.errOut, "[%s] %3.0f%% %s\n", short(ev.RunID), ev.Fraction*100, safe(ev.Line))
		} else {
			h.printf(h.errOut, "[%s] … %s\n", short(ev.RunID), safe(ev.Line))
		}
	case runner.EventDropped:
		h.printf(h.errOut, "[%s] %s\n", short(ev.RunID), safe(ev.Line))
	case runner.EventPaneControls:
		h.paneMu.Lock()
		h.paneEvents = append(h.paneEvents, ev)
		h.paneMu.Unlock()
		select {
		case h.paneWake <- struct{}{}:
		default: // a wake-up is already pending
		}
	case runner.EventState:
		if ev.Line != "" && !ev.State.Terminal() {
			h.printf(h.errOut, "[%s] %s: %s\n", short(ev.RunID), ev.State, safe(ev.Line))
		} else if !ev.State.Terminal() {
			h.printf(h.errOut, "[%s] %s\n", short(ev.RunID), ev.State)
		}
	}
}

// paneControls announces the controls the run registers and withdraws,
// clicks the one --click names, and clicks any control whose name is typed.
func (h *runHost) paneControls(ctx context.Context, m *runner.Manager, r *runner.Run, in *lines, click string) {
	// The terminal's lines are read only once a control exists, so they
	// never compete with the consent prompt.
	typed := make(chan string)
	readTyped := sync.OnceFunc(func() {
		go func() {
			for {
				line, ok, err := in.next(ctx)
				if err != nil || !ok {
					return
				}
				select {
				case typed <- strings.TrimSpace(line):
				case <-ctx.Done():
					return
				}
			}
		}()
	})
	known := map[string]bool{}
	invoke := func(name string) {
		h.printf(h.errOut, "clicking %q\n", name)
		v, err := m.InvokePaneControl(ctx, r.ID(), name)
		if err != nil {
			h.printf(h.errOut, "%q failed: %s\n", name, safe(err.Error()))
			return
		}
		h.printf(h.errOut, "%q returned %s\n", name, safe(fmt.Sprint(v)))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.Done():
			return
		case name := <-typed:
			if known[name] {
				invoke(name)
			} else if name != "" {
				h.printf(h.errOut, "no pane control %q\n", name)
			}
		case <-h.paneWake:
			h.paneMu.Lock()
			evs := h.paneEvents
			h.paneEvents = nil
			h.paneMu.Unlock()
			for _, ev := range evs {
				if ev.RunID != r.ID() {
					continue
				}
				name := ev.Line
				switch ev.Stream {
				case "register":
					known[name] = true
					readTyped()
					h.printf(h.errOut, "pane control %q registered; type its name and Enter to click it, Ctrl-C to stop the run\n", name)
					if name == click {
						invoke(name)
					}
				case "unregister":
					delete(known, name)
					h.printf(h.errOut, "pane control %q withdrawn\n", name)
				}
			}
		}
	}
}

// serve serves dir on a loopback port and returns the server and its URL.
func serve(dir string) (*http.Server, string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, "", fmt.Errorf("--serve: %w", err)
	}
	if !fi.IsDir() {
		return nil, "", fmt.Errorf("--serve: %s is not a folder", dir)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	files := http.FileServer(http.Dir(dir))
	// The demo pages load only from loopback, whatever a page holds.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self' 'unsafe-inline' data:; form-action 'self'")
		files.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) // ends when srv.Close closes the listener
	return srv, "http://" + ln.Addr().String() + "/", nil
}

// openFirstTab loads url in the browser's first tab.
func openFirstTab(ctx context.Context, tabs *cdptabs.Tabs, url string) error {
	active, err := tabs.Active(ctx, runner.RunInfo{})
	if err != nil {
		return err
	}
	tab, err := tabs.Browser().Attach(ctx, active.ID)
	if err != nil {
		return err
	}
	defer tab.Detach(context.WithoutCancel(ctx))
	if _, err := tab.Goto(ctx, url, cdp.Load); err != nil {
		return fmt.Errorf("opening %s: %w", url, err)
	}
	return nil
}

// selectLines returns lines a to b (1-based, inclusive) of the file, as an
// editor's selection of them would be.
func selectLines(path, spec string) (string, error) {
	from, to, ok := strings.Cut(spec, "-")
	a, err1 := strconv.Atoi(from)
	b, err2 := strconv.Atoi(to)
	if !ok || err1 != nil || err2 != nil || a < 1 || b < a {
		return "", fmt.Errorf("%q is not a line range such as 12-20", spec)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	all := strings.SplitAfter(string(src), "\n")
	if b > len(all) {
		return "", fmt.Errorf("the script has %d lines, fewer than %d", len(all), b)
	}
	return strings.Join(all[a-1:b], ""), nil
}

// describeStep words a step event as a runs panel would show it.
func describeStep(s *runner.StepEvent) string {
	name := fmt.Sprintf("step %q", safe(s.Name))
	switch {
	case s.Phase == "start":
		return name + " started"
	case s.Phase == "retry":
		return fmt.Sprintf("%s failed (%s); attempt %d", name, safe(s.Error), s.Attempt)
	case s.OK:
		return name + " done"
	}
	return fmt.Sprintf("%s failed: %s", name, safe(s.Error))
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
