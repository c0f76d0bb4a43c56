package launch

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/browserproc"
)

// Launch timeouts of a [Launcher]: the default, and the most a Spec may
// ask for.
const (
	DefaultTimeout = 15 * time.Second
	MaxTimeout     = 120 * time.Second
)

// LauncherOptions configures [NewLauncher]. The zero value is ready to use.
type LauncherOptions struct {
	// TempDir is where profile directories are created and swept. Empty
	// means os.TempDir().
	TempDir string
	// Connect configures the connection to each launched browser; nil
	// means the defaults of [cdp.Connect].
	Connect *cdp.Options
	// CleanupBudget bounds each [Launcher.Cleanup] call, every launch and
	// step of it together, so a stuck app cannot hold up a host's quit.
	// Zero means DefaultCleanupBudget (5 s); a context deadline that comes
	// sooner wins.
	CleanupBudget time.Duration
}

// Launcher starts browsers and Electron apps and owns what it started:
// each [Process], with its process group, profile directory and
// connection. There is
// no global registry; a launch belongs to the Launcher that made it, and
// Status, Probe and Cleanup see only its own launches. A Launcher is safe
// for concurrent use and runs no goroutines of its own; each launched
// process has two (a waiter and a stderr drain) that end with the process,
// and each connection one reader that ends with the connection.
type Launcher struct {
	opts LauncherOptions

	mu       sync.Mutex
	launches map[string]*Process
	order    []string // launch IDs in creation order
	swept    []string
}

// NewLauncher returns a Launcher. It first sweeps profile directories that
// earlier launchers in TempDir left behind when their host process died
// (see [Launcher.Sweep]).
func NewLauncher(opts LauncherOptions) *Launcher {
	l := &Launcher{opts: opts, launches: map[string]*Process{}}
	l.swept, _ = l.Sweep()
	return l
}

// Spec describes one launch of a [Launcher]. Exactly one of
// ExecutablePath, AppPath, AppName and BundleID names the target.
type Spec struct {
	// ExecutablePath is the program to run.
	ExecutablePath string
	// AppPath is a .app bundle, a .desktop file, an unpacked app directory
	// or an executable.
	AppPath string
	// AppName is the name of an app [Discover] finds (exact,
	// case-insensitive).
	AppName string
	// BundleID is a macOS bundle identifier or a Linux desktop file ID of
	// an app Discover finds.
	BundleID string

	// Kind is what the target is; zero means KindAuto.
	Kind Kind
	// Headful shows Chromium's window; the zero value runs it headless.
	// Electron apps always show their windows.
	Headful bool
	// AppArgs are extra arguments. Flags the launcher owns
	// (--user-data-dir, --remote-debugging-port, --remote-debugging-address,
	// --remote-debugging-pipe) and a bare "--" are ErrValidation.
	AppArgs []string
	// Env holds KEY=VALUE pairs added to the host's environment.
	Env []string
	// Timeout bounds the wait for the DevTools endpoint, and then the
	// connection.
	// Zero means DefaultTimeout; more than MaxTimeout is cut to it.
	Timeout time.Duration
	// Allow and Deny are policy lists of substrings matched, ignoring case,
	// against the app's name, bundle or desktop ID, app path and
	// executable path (so "1Password" stops /opt/1password/1password).
	// With Allow set, a target must match an entry; a target matching a
	// Deny entry is refused even if it matches Allow. A refusal is
	// ErrPolicyBlocked.
	Allow, Deny []string
	// Handoff is what Launch does once connected: HandoffSnapshot (the
	// zero value) picks the app's target, waits briefly for it to show
	// something and fills Process.Target, Targets and Snapshot;
	// HandoffTabs fills Target and Targets; HandoffConnect only connects.
	Handoff Handoff
	// TargetType is the kind of target handed off and probed: TargetPage
	// (the zero value), TargetWebview or TargetAny.
	TargetType TargetType
}

// Handoff says what [Launcher.Launch] hands back besides the connection.
type Handoff string

const (
	HandoffSnapshot Handoff = "snapshot"
	HandoffTabs     Handoff = "tabs"
	HandoffConnect  Handoff = "connect"
)

// Launch resolves and checks the target, starts it with a fresh temporary
// profile in its own process group and connects. Chromium gets
// --remote-debugging-pipe and is ready once it answers over the pipe: it
// opens no port, so nothing else can drive it. An Electron app gets
// --remote-debugging-port=0 (Electron has no pipe), its port is read from
// DevToolsActivePort and the connection is a WebSocket. Errors match
// ErrLaunch and one of ErrValidation, ErrPolicyBlocked, ErrTimeout or
// ErrUpstream; a timeout is an *Error with diagnostics, and leaves no
// process or profile behind.
func (l *Launcher) Launch(ctx context.Context, spec Spec) (*Process, error) {
	if err := checkArgs(spec.AppArgs); err != nil {
		return nil, err
	}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, &Error{Kind: ErrValidation, Msg: fmt.Sprintf("environment entry %q is not KEY=VALUE", kv)}
		}
	}
	handoff, targetType, err := handoffOf(spec)
	if err != nil {
		return nil, err
	}
	timeout := spec.Timeout
	switch {
	case timeout < 0:
		return nil, &Error{Kind: ErrValidation, Msg: "negative timeout"}
	case timeout == 0:
		timeout = DefaultTimeout
	case timeout > MaxTimeout:
		timeout = MaxTimeout
	}
	app, err := resolveTarget(ctx, spec)
	if err != nil {
		return nil, err
	}
	if err := checkPolicy(app, spec.Allow, spec.Deny); err != nil {
		return nil, err
	}
	kind, err := kindOf(spec.Kind, app.ExecutablePath)
	if err != nil {
		return nil, err
	}

	var args []string
	pipe := kind == KindChromium
	if pipe {
		args = chromiumArgs(!spec.Headful, spec.AppArgs)
	} else {
		args = append(append(append([]string{}, browserproc.SafeFlags()...), browserproc.SandboxArgs()...), spec.AppArgs...)
	}
	p, err := start(ctx, startSpec{
		path: app.ExecutablePath, args: args, env: spec.Env,
		tempDir: l.opts.TempDir, timeout: timeout,
		pipe: pipe, connect: l.opts.Connect,
	})
	if err != nil {
		return nil, explainLaunchFailure(err, kind)
	}
	if !pipe {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if p.browser, err = cdp.Connect(wctx, p.Endpoint(), l.opts.Connect); err != nil {
			_ = p.Close()
			return nil, &Error{Kind: ErrUpstream, Msg: "connect", Err: err}
		}
	}
	p.ID, p.Kind, p.App = newID("launch-"), kind, app
	p.Handoff, p.TargetType = handoff, targetType
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p.handOver(hctx)
	l.add(p)
	return p, nil
}

// handoffOf checks and defaults a spec's Handoff and TargetType.
func handoffOf(spec Spec) (Handoff, TargetType, error) {
	h, err := oneOf("handoff", spec.Handoff, HandoffSnapshot, HandoffTabs, HandoffConnect)
	if err != nil {
		return "", "", err
	}
	tt, err := oneOf("target type", spec.TargetType, TargetPage, TargetWebview, TargetAny)
	return h, tt, err
}

// oneOf returns v, or the first of allowed when v is empty; any other
// value is ErrValidation.
func oneOf[T ~string](what string, v T, allowed ...T) (T, error) {
	if v == "" {
		return allowed[0], nil
	}
	if slices.Contains(allowed, v) {
		return v, nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return "", &Error{Kind: ErrValidation, Msg: fmt.Sprintf("unknown %s %q: use %s", what, v, strings.Join(names, ", "))}
}

// snapshotSettle bounds how long a snapshot handoff waits for an app's
// target to show anything to act on: an Electron window often renders a
// moment after its endpoint is up.
const snapshotSettle = 3 * time.Second

// handOver does the launch's handoff; what fails is noted in
// HandoffProblem, since the app itself is up.
func (inst *Process) handOver(ctx context.Context) {
	if inst.Handoff == HandoffConnect {
		return
	}
	deadline := time.Now().Add(snapshotSettle)
	for {
		targets, err := inst.browser.Targets(ctx)
		if err != nil {
			inst.HandoffProblem = "list targets: " + err.Error()
			return
		}
		inst.Targets = targets
		inst.Target = inst.TargetType.pick(targets, "")
		if inst.Target == nil {
			inst.HandoffProblem = "no " + string(inst.TargetType) + " target yet"
			if inst.TargetType != TargetAny {
				inst.HandoffProblem += "; try TargetType any"
			}
		} else if inst.Handoff == HandoffTabs {
			inst.HandoffProblem = ""
			return
		} else {
			page, err := readPage(ctx, inst.browser, inst.Target.ID)
			if err == nil {
				inst.Snapshot, inst.HandoffProblem = page.snapshot(), ""
				if page.Count > 0 || page.URL == "about:blank" {
					return // about:blank has nothing to wait for
				}
				inst.HandoffProblem = "the target shows no element to act on yet; probe again"
			} else {
				inst.HandoffProblem = "snapshot: " + err.Error()
			}
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// handedOff is the handed-off target's ID, or "".
func (inst *Process) handedOff() string {
	if inst.Target == nil {
		return ""
	}
	return inst.Target.ID
}

// targetType is the instance's TargetType, a page for attachments.
func (inst *Process) targetType() TargetType {
	if inst.TargetType == "" {
		return TargetPage
	}
	return inst.TargetType
}

// mismatch says how the app's targets no longer match the handed-off
// one: gone, or drifted to about:blank. Refs taken from it are then stale.
func (inst *Process) mismatch(targets []cdp.TargetInfo) string {
	if inst.Target == nil {
		return ""
	}
	for _, t := range targets {
		if t.ID != inst.Target.ID {
			continue
		}
		if t.URL == "about:blank" && inst.Target.URL != "about:blank" {
			return fmt.Sprintf("the handed-off %s target %s now shows about:blank (it showed %s); probe again and use fresh refs",
				inst.Target.Type, t.ID, inst.Target.URL)
		}
		return ""
	}
	return fmt.Sprintf("the handed-off %s target %s is gone; probe again and use fresh refs from the target it picks",
		inst.Target.Type, inst.Target.ID)
}

// Attach connects to a browser the caller started (endpoint as for
// [cdp.Connect], such as "http://127.0.0.1:9222") and tracks it for Status
// and Probe as a [Process] that is not Owned. The Launcher does not own
// it: Cleanup only closes the connection.
func (l *Launcher) Attach(ctx context.Context, endpoint string) (*Process, error) {
	b, err := cdp.Connect(ctx, endpoint, l.opts.Connect)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUpstream, err)
	}
	ws := b.WebSocketURL()
	p := &Process{ID: newID("attach-"), endpoint: ws, browser: b}
	if u, err := url.Parse(ws); err == nil {
		p.port, _ = strconv.Atoi(u.Port())
	}
	l.add(p)
	return p, nil
}

// singleInstanceHint is added to an Electron launch that timed out: the
// commonest cause is an app already running, to which a single-instance
// app hands the new invocation (dropping its debugging flag) and exits.
const singleInstanceHint = "if the app is already running, quit it first: many Electron apps allow a single instance, " +
	"which passes a second launch to the running copy and drops its --remote-debugging-port"

// explainLaunchFailure completes a failed start's error: the process was
// alive when the launch gave up unless it exited on its own (its Exit says
// how), and an Electron launch that timed out, or whose process quit at
// once with success (what a second instance does once it has handed over),
// names the single-instance cause.
func explainLaunchFailure(err error, kind Kind) error {
	var le *Error
	if !errors.As(err, &le) {
		return err
	}
	if d := le.Diagnostics; d != nil && d.Exit == "" {
		d.PIDAlive = true // start ended it afterwards, but it was running
	}
	handedOver := le.Diagnostics != nil && le.Diagnostics.Exit == "exit status 0"
	if kind == KindElectron && (errors.Is(le.Kind, ErrTimeout) || handedOver) && !strings.Contains(le.Msg, "single instance") {
		le.Msg += "; " + singleInstanceHint
	}
	return err
}

// newID returns prefix and 128 random bits in hex.
func newID(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails: crypto/rand panics rather than return an error
	return prefix + hex.EncodeToString(b)
}

func (l *Launcher) add(p *Process) {
	l.mu.Lock()
	p.l = l
	l.launches[p.ID] = p
	l.order = append(l.order, p.ID)
	l.mu.Unlock()
}

// Swept lists the stale profile directories NewLauncher removed.
func (l *Launcher) Swept() []string { return l.swept }

// resolveTarget turns the one target of spec into an App.
func resolveTarget(ctx context.Context, spec Spec) (App, error) {
	n := 0
	for _, s := range []string{spec.ExecutablePath, spec.AppPath, spec.AppName, spec.BundleID} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return App{}, &Error{Kind: ErrValidation, Msg: fmt.Sprintf("exactly one of ExecutablePath, AppPath, AppName, BundleID must be set, got %d", n)}
	}
	switch {
	case spec.ExecutablePath != "":
		exe, err := checkExecutable(runtime.GOOS, spec.ExecutablePath)
		if err != nil {
			return App{}, err
		}
		return App{Name: exeName(exe), AppPath: spec.ExecutablePath, ExecutablePath: exe, Platform: runtime.GOOS}, nil
	case spec.AppPath != "":
		return resolveAppPath(runtime.GOOS, spec.AppPath)
	}
	d, err := Discover(ctx, "", 1<<20)
	if err != nil {
		return App{}, &Error{Kind: ErrUpstream, Msg: "discover", Err: err}
	}
	var found []App
	for _, a := range d.Apps {
		if spec.AppName != "" && strings.EqualFold(a.Name, spec.AppName) ||
			spec.BundleID != "" && (a.BundleID == spec.BundleID || a.DesktopID == spec.BundleID || a.DesktopID == spec.BundleID+".desktop") {
			found = append(found, a)
		}
	}
	what := "app named " + strconv.Quote(spec.AppName)
	if spec.BundleID != "" {
		what = "app with ID " + strconv.Quote(spec.BundleID)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return App{}, &Error{Kind: ErrValidation, Msg: "no installed Electron " + what}
	default:
		var paths []string
		for _, a := range found {
			paths = append(paths, a.AppPath)
		}
		return App{}, &Error{Kind: ErrValidation, Msg: fmt.Sprintf("several installed Electron apps match %s: %v; pass AppPath", what, paths)}
	}
}

// checkPolicy applies the Allow and Deny lists; Deny wins.
func checkPolicy(app App, allow, deny []string) error {
	fields := [][2]string{
		{"name", app.Name}, {"bundle id", app.BundleID}, {"desktop id", app.DesktopID},
		{"app path", app.AppPath}, {"executable path", app.ExecutablePath},
	}
	match := func(entry string) (string, string, bool) {
		if entry == "" {
			return "", "", false
		}
		for _, f := range fields {
			if f[1] != "" && strings.Contains(strings.ToLower(f[1]), strings.ToLower(entry)) {
				return f[0], f[1], true
			}
		}
		return "", "", false
	}
	for _, e := range deny {
		if f, v, ok := match(e); ok {
			return &PolicyError{List: "deny", Entry: e, Field: f, Value: v}
		}
	}
	if len(allow) == 0 {
		return nil
	}
	for _, e := range allow {
		if _, _, ok := match(e); ok {
			return nil
		}
	}
	return &PolicyError{List: "allow"}
}

// kindOf settles KindAuto and runs the Electron evidence check.
func kindOf(k Kind, exe string) (Kind, error) {
	switch k {
	case KindChromium:
		return k, nil
	case KindElectron:
		if _, err := CheckElectron(exe); err != nil {
			return "", err
		}
		return k, nil
	case "", KindAuto:
		_, err := CheckElectron(exe)
		if err == nil {
			return KindElectron, nil
		}
		if looksLikeChromium(exe) {
			return KindChromium, nil
		}
		return "", err
	default:
		return "", &Error{Kind: ErrValidation, Msg: fmt.Sprintf("unknown kind %q", k)}
	}
}

// lookup returns the instances named by ids, or every instance not yet
// cleaned up when ids is empty.
func (l *Launcher) lookup(ids []string) ([]*Process, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*Process
	if len(ids) == 0 {
		for _, id := range l.order {
			if inst := l.launches[id]; inst != nil {
				out = append(out, inst)
			}
		}
		return out, nil
	}
	for _, id := range ids {
		inst := l.launches[id]
		if inst == nil {
			return nil, fmt.Errorf("%w: unknown launch id %q", ErrValidation, id)
		}
		out = append(out, inst)
	}
	return out, nil
}

// Status is what [Launcher.Status] found of one launch.
type Status struct {
	ID    string
	Owned bool
	PID   int
	Port  int
	// ProcessAlive is whether the launched process still runs (always false
	// for attachments, whose process is not known).
	ProcessAlive bool
	// PortAlive is whether /json/version answers on the debugging port
	// (always false for a Chromium launch, which has no port).
	PortAlive bool
	// Connected is whether the launcher's connection is still up.
	Connected bool
	Targets   []cdp.TargetInfo
	// Stale marks a launch whose process or port is gone (for a Chromium
	// launch: whose process or pipe connection is gone), or an attachment
	// whose port is gone, without a cleanup.
	Stale bool
	// Cleaned marks a launch Cleanup finished.
	Cleaned bool
	// Mismatch, when set, says the launch no longer matches what it
	// handed off: its target is gone or shows about:blank, or its
	// connection is lost while the app still runs. Refs and tabs taken
	// earlier are then stale.
	Mismatch string
}

// Status reports on the launches named by ids, or on all of them when ids
// is empty: process and port liveness, the page targets, and whether the
// record is stale. An unknown ID is ErrValidation.
func (l *Launcher) Status(ctx context.Context, ids ...string) ([]Status, error) {
	insts, err := l.lookup(ids)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(insts))
	for _, inst := range insts {
		out = append(out, l.status(ctx, inst))
	}
	return out, nil
}

func (l *Launcher) status(ctx context.Context, inst *Process) Status {
	st := Status{ID: inst.ID, Owned: inst.Owned, PID: inst.Pid(), Port: inst.port}
	l.mu.Lock()
	st.Cleaned = inst.cleaned
	l.mu.Unlock()
	if inst.cmd != nil {
		select {
		case <-inst.done:
		default:
			st.ProcessAlive = true
		}
	}
	st.PortAlive = portAnswers(ctx, inst.port)
	st.Connected = inst.browser.Err() == nil
	if st.Connected {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var err error
		if st.Targets, err = inst.browser.Targets(tctx); err == nil {
			st.Mismatch = inst.mismatch(st.Targets)
		}
		cancel()
	} else if !st.Cleaned && (st.ProcessAlive || st.PortAlive) {
		st.Mismatch = "the connection to the app is lost while it still runs; attach again (Launcher.Attach) before acting"
	}
	if !st.Cleaned {
		gone := !st.PortAlive
		if inst.port == 0 {
			gone = !st.Connected // a pipe launch has only its connection
		}
		st.Stale = gone || inst.Owned && !st.ProcessAlive
	}
	return st
}

// loopbackClient talks only to the debugging port on loopback; proxies are
// never used.
var loopbackClient = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// portAnswers reports whether the DevTools HTTP endpoint on this loopback
// port answers /json/version.
func portAnswers(ctx context.Context, port int) bool {
	if port <= 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(port))+"/json/version", nil)
	if err != nil {
		return false
	}
	resp, err := loopbackClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Sweep removes profile directories in TempDir that a launcher created for
// a host process that has since died, when the browser recorded in them is
// dead too; see [SweepProfiles].
func (l *Launcher) Sweep() ([]string, error) { return SweepProfiles(l.opts.TempDir) }

// SweepProfiles removes the profile directories in dir (empty: os.TempDir())
// that this package created, with [Chromium] or a [Launcher], for a host
// process that has since died (killed before it could remove them), when
// the browser recorded in them is dead too. A directory without this
// package's name and owner file, or whose host or browser still runs, is
// never touched. It returns the directories removed.
func SweepProfiles(dir string) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), profilePrefix) {
			continue // e.IsDir is false for a symlink, which is never followed
		}
		p := filepath.Join(dir, e.Name())
		b, err := readLimited(filepath.Join(p, ownerFile))
		if err != nil {
			continue
		}
		host, browser, ok := parseOwner(b)
		if !ok || host == os.Getpid() || browserproc.Alive(host) || browserproc.Alive(browser) {
			continue
		}
		removeSingletonDir(p)
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// parseOwner reads an owner file: "host=PID" and "browser=PID" lines.
func parseOwner(b []byte) (host, browser int, ok bool) {
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	seenHost := false
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), "=")
		if !found {
			return 0, 0, false
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		switch k {
		case "host":
			host, seenHost = n, true
		case "browser":
			browser = n
		default:
			return 0, 0, false
		}
	}
	return host, browser, seenHost && host > 0
}
