package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/mirror"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/runner/internal/audit"
	"github.com/tranquil/automation/runner/internal/modgraph"
)

// Defaults of [Config].
const (
	DefaultCancelGrace   = 2 * time.Second
	DefaultKillGrace     = time.Second
	DefaultOutputCap     = 1 << 20
	DefaultHeapMB        = 1024
	DefaultMaxConcurrent = 4
)

// Errors of the run manager.
var (
	// ErrNoDeno: no deno binary was found where the config allows looking.
	ErrNoDeno = errors.New("runner: deno not found")
	// ErrDenoUnusable: the deno binary cannot be run (not executable, not
	// a program for this system, or broken). It is the host's
	// installation that failed, never the script, so runs it stops end
	// StateFailed.
	ErrDenoUnusable = errors.New("runner: deno cannot be run")
	// ErrClosed: the manager was closed.
	ErrClosed = errors.New("runner: manager closed")
	// ErrUnknownRun: no live run has that ID.
	ErrUnknownRun = errors.New("runner: no such run")
	// ErrRunEnded: the run is over, so it takes no more events.
	ErrRunEnded = errors.New("runner: the run has ended")
	// ErrPayloadTooLarge: an event's or trigger's payload is over
	// MaxPayloadBytes.
	ErrPayloadTooLarge = errors.New("runner: payload too large")
)

// Config configures a Manager. DataDir is required; every other zero value
// is documented.
type Config struct {
	// DataDir holds the SDK, deno's shared module cache
	// (<DataDir>/deno-cache), each live run's own deno cache
	// (<DataDir>/runs), run history, consent approvals and per-script
	// state.
	DataDir string
	// CacheDir overrides deno's module cache directory. Empty means
	// <DataDir>/deno-cache. Several managers may share one. Only Prepare
	// writes it (the SDK's npm package, the @std packages of Config.JSR);
	// each run's deno gets a DENO_DIR of its own under
	// <DataDir>/runs, which reads the packages from this one and is
	// removed when the run ends, so nothing a run loads or makes stays,
	// but for its script's localStorage (at most 10 MiB an origin, deno's
	// limit), kept here between runs.
	CacheDir string
	// DiskLimit bounds, in bytes, what a run's deno writes to its own
	// DENO_DIR while the run lives: the modules it transpiles and caches,
	// data: modules it makes included (each file and folder counts at
	// least 4 KiB). It is measured every second; past it the run fails
	// with a reason starting with limit_exceeded that names its disk, and
	// nothing else is touched. Zero means DefaultDiskLimit (256 MiB);
	// negative means none. A run's grants never reach that folder: what
	// write= grants let it write is the user's, and not counted.
	DiskLimit int64
	// MaxDownloadBytes bounds, in bytes, one file a script saves with
	// tab.waitForDownload: a larger download is cancelled and the call
	// fails limit_exceeded. Zero means DefaultMaxDownloadBytes (100 MiB).
	// What is saved lands under the script's write= grants, which are the
	// user's, so it is not counted against DiskLimit.
	MaxDownloadBytes int64

	// DenoPath is an explicit deno binary; it wins when set. BundledDeno is
	// the binary shipped with the host, used next. AllowPATH lets the
	// manager fall back to deno on PATH; leave it off in packaged builds.
	DenoPath    string
	BundledDeno string
	AllowPATH   bool

	// DefaultTimeout bounds a run whose header has no @timeout. Zero means
	// permissions.DefaultTimeout (10 minutes).
	DefaultTimeout time.Duration
	// CancelGrace is how long a cancelled script has to stop after the
	// protocol cancel before SIGTERM. Zero means DefaultCancelGrace (2 s).
	CancelGrace time.Duration
	// KillGrace is how long after SIGTERM the process group gets SIGKILL.
	// Zero means DefaultKillGrace (1 s).
	KillGrace time.Duration
	// OutputCap bounds the output kept per run (head and tail) and the
	// output events sent. Zero means DefaultOutputCap (1 MiB).
	OutputCap int
	// HeapMB caps V8's heap per run (--max-old-space-size). Zero means
	// DefaultHeapMB (1024). It caps each isolate: a Web Worker has a heap
	// of its own, and ArrayBuffers live outside it.
	HeapMB int
	// MemoryMB caps each run's memory as a whole, where the system allows:
	// on Linux RLIMIT_DATA of the deno process (every private writable
	// mapping: V8 heaps, ArrayBuffers, thread stacks, and about 560 MiB V8
	// reserves at start plus about 512 MiB per Web Worker), each process a
	// run= grant starts on its own; on Windows the committed memory of the
	// run's job object, its processes together; on macOS nothing (only
	// HeapMB). A run that reaches it fails with a reason saying it ran out
	// of memory. Zero means HeapMB + DefaultMemoryHeadroomMB (2048 with
	// the default heap); negative means no limit; a positive value below
	// MinMemoryMB (768) is refused by New.
	MemoryMB int
	// SessionBudget is each run's memory budget on the host, in bytes:
	// what its script can make the host hold or build through the bridge
	// (values it sent and still holds, the copies its references ask for,
	// the arguments of its calls under way, the results it has not
	// released). A run that goes past it fails with a reason starting
	// with limit_exceeded that names what asked for more. Zero means
	// DefaultSessionBudget (64 MiB); negative means none. The host holds
	// at most MaxConcurrent × (SessionBudget + 32 MiB, the largest
	// frame) for runs' sessions, plus a fixed overhead per session.
	SessionBudget int64
	// CheckRate bounds how many checks a second a run's waiting calls
	// make together (waits, expectations, readers and actions waiting for
	// their target poll the page): past it, their next checks wait their
	// turn. However many calls a run leaves pending, its polling costs the
	// host and the browser no more than this rate. Zero means
	// DefaultCheckRate (100); negative means none.
	CheckRate int
	// MaxConcurrent bounds runs executing at once; more wait in line,
	// and take the slots that free in the order they were started. Zero means DefaultMaxConcurrent (4). The bridge takes a
	// session for each.
	MaxConcurrent int
	// MaxBackgroundTabs bounds background tabs open at once across all
	// runs; more tabs.open calls wait in a FIFO queue. One run holds at
	// most half of them (at least one) at once, so a run that opens tabs
	// and keeps them cannot hold up another run's opens; its own further
	// opens wait for one of its tabs to go. Zero means
	// DefaultMaxBackgroundTabs (4).
	MaxBackgroundTabs int
	// MaxForegroundTabs bounds foreground tabs that runs have open at once
	// across all runs, like MaxBackgroundTabs. Zero means
	// DefaultMaxForegroundTabs (4).
	MaxForegroundTabs int

	// Host is the host's UI, clipboard and workspace.
	Host Host
	// Gate decides consent. Nil means one over <DataDir>/consent.json that
	// refuses every script needing a prompt (only "none" scripts run).
	Gate *consent.Gate
	// History records runs. Nil means <DataDir>/history.jsonl, opened and
	// closed by the manager, with history's defaults: at most 100 runs in
	// at most 128 MiB of journal, and 256 MiB of traces.
	History *history.Store
	// Mirrors holds the output mirrors the user declared; a succeeded run
	// copies its write= outputs to its script's mirror, and Manager.Sync
	// does so on request. Nil switches the feature off.
	Mirrors *mirror.Store
	// DenyLoopback lists loopback host:port endpoints no script may reach,
	// such as every DevTools port the host drives.
	DenyLoopback []string
	// AllowLocalSites lists the hosts on this computer or the local network
	// that every run's tabs may reach, as "host" (any port) or "host:port":
	// the host's own development server or demo site, say. Local means
	// loopback, link-local and private addresses, localhost names, and
	// names that resolve to such an address. A run's tabs (their pages,
	// what those load or send, WebSockets and workers included, and their
	// popups) reach any other local host only when the script's sites=
	// names it exactly (a wildcard does not count); elsewhere a navigation
	// is refused with code navigation_blocked, a page's request fails as
	// the network would, and a popup is closed. Nil allows none.
	AllowLocalSites []string
	// KeepServiceWorkers lets pages in a run's tabs keep the service
	// workers they register. False (the safe default) unregisters each
	// registration that appears on a site a run's tab was on, as soon as
	// the browser reports it and once more when the run lets go of the tab
	// (see cdp.TabOptions.RefuseServiceWorkers): a worker planted by one
	// run, page-js or not, would otherwise answer that site's pages in
	// every later run and in the user's own browsing. Registrations that
	// existed before the run are left alone.
	KeepServiceWorkers bool
	// NoTrace records no trace of runs. False (the default) keeps, with
	// each run's history entry, what it did in its tabs (package trace):
	// read it with Manager.Trace. With it, a script's host calls also skip
	// finding the script's line that made them (TRANQUIL_CALL_SITES=off).
	NoTrace bool
	// TraceActionScreenshots has the trace keep, for each page action
	// (click, dblclick, hover, dragTo, focus, type, fill, check, select,
	// setFiles, press), a screenshot of the page just before it and, when
	// it succeeded, just after it, masked as a failed call's is
	// (trace.Shot). False (the default) keeps none: a failed call still
	// keeps its failure's screenshot. Each costs a screenshot's time,
	// tens of milliseconds, inside the action (the before counts against
	// its timeout), and the trace keeps the first and last
	// trace.DefaultShots of them (a few kilobytes to tens each).
	TraceActionScreenshots bool
	// DefaultImports are hosts every run may import code from (see
	// permissions.FlagConfig).
	DefaultImports []string
	// JSR is the JSR registry runs may load the SDK's @std modules from,
	// as a URL ("https://jsr.io/" for the public one). Empty means none:
	// an @std import is refused before the run starts ([ErrRemoteImport]).
	// When set, Prepare downloads every @std package the SDK's import map
	// names into the module cache (the host's own act, with its proxies and
	// certificates), and runs load them from the cache only: they never
	// download, so the registry learns nothing of what a run does.
	JSR string
	// stdLock replaces the shipped std.lock as the seed Prepare verifies
	// the @std packages against: for tests, whose stand-in registry serves
	// content of its own.
	stdLock []byte
	// Logger receives the manager's diagnostics. Nil means slog.Default().
	Logger *slog.Logger
	// OnEvent, if set, receives every run event. It is called
	// synchronously from the run's goroutines (an [EventDropped] from a
	// timer's), one event at a time per run and in order, never after the
	// run's final state event; it must not block. The events a script
	// causes are bounded in size and rate ([ChannelLimits]).
	OnEvent func(Event)
}

// Manager runs scripts. It owns one bridge, the runs' goroutines and
// processes; Close cancels every run, waits for them and closes the
// bridge. All methods are safe for concurrent use.
//
// Its goroutines: one per run, in runs (see [Run] for what a run starts),
// which Close kills and waits for; the bridge's, which Close stops with
// it; those of the connections and gateways in browsers, closed after the
// runs; and the consent store's revocation callback, unsubscribed by
// stopRev. Nothing else it holds starts any.
//
// Its fields up to stopRev are set by New and never change. Each part
// after them guards itself: a small type with its own lock and methods,
// none of which holds its lock while it calls into another part.
type Manager struct {
	cfg    Config
	log    *slog.Logger
	gate   *consent.Gate
	hist   *history.Store
	ownsH  bool // New opened hist, so Close closes it
	bridge *rpc.Bridge
	deno   string
	// protected are the paths of the host's data no grant may reach.
	protected []string
	stopRev   func() // stops onRevoke's subscription

	runs       runTable         // the live runs, their queue and goroutines
	prep       prepared         // what Prepare did: the SDK, the @std packages
	graphs     modgraph.Checker // checked module graphs, the @std cache
	browsers   cdp.Pool         // connections to the tabs' browsers, and their gateways
	tabs       tabSlots         // the lines of tab opens
	state      stateStore       // per-script config
	selections selectionLedger  // selection files of live runs, on disk
	reach      reachTable       // what live runs' write= grants reach, for selections
	unsaved    unsavedEntries   // history entries not yet stored
	caches     runCaches        // runs' own deno caches, and their seed
}

// New returns a Manager. It starts the bridge and removes selection files
// left behind by a host that died mid-run; it does not touch the SDK until
// Prepare or the first Start.
func New(cfg Config) (*Manager, error) {
	if cfg.DataDir == "" || !filepath.IsAbs(cfg.DataDir) {
		return nil, fmt.Errorf("runner: DataDir %q must be an absolute path", cfg.DataDir)
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = filepath.Join(cfg.DataDir, "deno-cache")
	}
	setDefault(&cfg.DefaultTimeout, permissions.DefaultTimeout)
	setDefault(&cfg.CancelGrace, DefaultCancelGrace)
	setDefault(&cfg.KillGrace, DefaultKillGrace)
	setDefault(&cfg.OutputCap, DefaultOutputCap)
	setDefault(&cfg.HeapMB, DefaultHeapMB)
	setDefault(&cfg.MaxConcurrent, DefaultMaxConcurrent)
	setDefault(&cfg.SessionBudget, DefaultSessionBudget)
	if cfg.DiskLimit == 0 {
		cfg.DiskLimit = DefaultDiskLimit
	}
	setDefault(&cfg.CheckRate, DefaultCheckRate)
	setDefault(&cfg.MaxDownloadBytes, DefaultMaxDownloadBytes)
	if err := setMemoryLimit(&cfg); err != nil {
		return nil, err
	}
	if err := cdp.CheckAllowLocal(cfg.AllowLocalSites); err != nil {
		return nil, fmt.Errorf("runner: AllowLocalSites: %w", err)
	}
	setDefault(&cfg.MaxBackgroundTabs, DefaultMaxBackgroundTabs)
	setDefault(&cfg.MaxForegroundTabs, DefaultMaxForegroundTabs)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	deno, err := resolveDeno(cfg)
	if err != nil {
		return nil, err
	}
	jsr, err := modgraph.ParseRegistry(cfg.JSR)
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, deno: deno, gate: cfg.Gate, hist: cfg.History}
	if err := m.protect(cfg.DataDir, cfg.CacheDir); err != nil {
		return nil, err
	}
	m.runs.init(cfg.MaxConcurrent)
	m.tabs.init(cfg.MaxBackgroundTabs, cfg.MaxForegroundTabs)
	m.state.dir = filepath.Join(cfg.DataDir, "state")
	m.graphs = modgraph.Checker{Deno: deno, Launcher: launcher{m}, DataDir: cfg.DataDir, Registry: jsr,
		AnyImports: len(cfg.DefaultImports) > 0, StdSeed: stdSeed(cfg)}
	m.caches = runCaches{root: filepath.Join(cfg.DataDir, "runs"), shared: cfg.CacheDir, log: cfg.Logger}
	m.selections.path = filepath.Join(cfg.DataDir, "selections.json")
	if m.gate == nil {
		store, err := consent.OpenStore(filepath.Join(cfg.DataDir, "consent.json"), consent.StoreOptions{Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		m.gate = consent.NewGate(store, consent.PrompterFunc(func(context.Context, consent.Request) (consent.Answer, error) {
			return consent.Deny, errors.New("this host has no consent prompt")
		}))
	}
	// The approvals and their key are the host's data wherever they live.
	if err := m.protect(m.gate.Store().Protected()...); err != nil {
		return nil, err
	}
	if m.hist == nil {
		h, err := history.Open(filepath.Join(cfg.DataDir, "history.jsonl"), history.Options{Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		m.hist, m.ownsH = h, true
	}
	reg := &rpc.Registry{}
	m.registerCapabilities(reg)
	// Each executing run holds one session, so the bridge takes at least
	// as many as may execute; a run starting as another ends waits in the
	// bridge for that session's slot.
	m.bridge, err = rpc.New(rpc.Config{Registry: reg, Logger: cfg.Logger, OnSession: m.onSession, CallContext: takeSite,
		MaxSessions: max(rpc.DefaultMaxSessions, cfg.MaxConcurrent), MaxMemory: cfg.SessionBudget})
	if err != nil {
		m.closeHistory()
		return nil, err
	}
	m.stopRev = m.gate.Store().OnRevoke(m.onRevoke)
	m.cleanSelections()
	audit.Sweep(filepath.Join(cfg.DataDir, "audit"))
	sweepRunCaches(m.caches.root)
	m.settleOrphanedEntries()
	m.caches.start()
	return m, nil
}

// protect adds paths, as given and resolved, to the host's data no grant
// may reach.
func (m *Manager) protect(paths ...string) error {
	for _, p := range paths {
		_, real, err := pathguard.Resolve(p)
		if err != nil {
			return fmt.Errorf("runner: %w", err)
		}
		m.protected = append(m.protected, p, real)
	}
	return nil
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// resolveDeno applies the resolution order: explicit path, bundled binary,
// then PATH only when allowed.
func resolveDeno(cfg Config) (string, error) {
	for _, p := range []string{cfg.DenoPath, cfg.BundledDeno} {
		if p == "" {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			return "", fmt.Errorf("%w: %s is not a file", ErrNoDeno, p)
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s is not executable; make it so (chmod +x) or point DenoPath at a working deno", ErrDenoUnusable, p)
		}
		return p, nil
	}
	if cfg.AllowPATH {
		if p, err := exec.LookPath("deno"); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("%w: not on PATH", ErrNoDeno)
	}
	return "", fmt.Errorf("%w: set DenoPath or BundledDeno (or AllowPATH in development)", ErrNoDeno)
}

// Bridge returns the manager's bridge, for hosts that register extra
// capabilities' endpoints or need its address.
func (m *Manager) Bridge() *rpc.Bridge { return m.bridge }

// History returns the run history.
func (m *Manager) History() *history.Store { return m.hist }

// Gate returns the consent gate.
func (m *Manager) Gate() *consent.Gate { return m.gate }

// Runs returns the live runs (preparing, queued or executing).
func (m *Manager) Runs() []*Run { return m.runs.list() }

// Lookup returns the live (preparing, queued or executing) run with this ID; an
// ended run is in the history instead.
func (m *Manager) Lookup(id string) (*Run, bool) { return m.runs.lookup(id) }

// SendEvent sends the event called name, with payload, to the live run
// with this ID; see [Run.SendEvent].
func (m *Manager) SendEvent(ctx context.Context, runID, name string, payload any) error {
	r, ok := m.Lookup(runID)
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownRun, runID)
	}
	return r.SendEvent(ctx, name, payload)
}

// Start begins a run and returns at once; the run proceeds through
// consent, the module check, the queue and execution on its own goroutine.
// Refusals are not errors of Start: they end the run in StateRefused,
// recorded in history. Start fails only when the request is unusable, the
// manager is closed, or ctx is done.
//
// ctx bounds the start only: done before Start begins the run, it starts
// nothing, records nothing and returns an error that wraps ctx.Err(); once
// Start has returned, cancelling ctx does not touch the run, which outlives
// the request that began it (an HTTP handler, a key press). Stop a run
// with [Run.Cancel]; Close stops them all. The run keeps ctx's values.
func (m *Manager) Start(ctx context.Context, req Request) (*Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("runner: start: %w", err)
	}
	if req.Script == "" {
		return nil, fmt.Errorf("runner: no script given")
	}
	script, err := filepath.Abs(req.Script)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	req.Script = script
	if len(req.TriggerPayload) > 0 {
		// Checked here, so a bad one is the caller's error rather than a
		// failed run.
		if len(req.TriggerPayload) > MaxPayloadBytes {
			return nil, fmt.Errorf("%w: the trigger payload is %d bytes; at most %d", ErrPayloadTooLarge, len(req.TriggerPayload), MaxPayloadBytes)
		}
		if !json.Valid(req.TriggerPayload) {
			return nil, fmt.Errorf("runner: the trigger payload is not JSON")
		}
		req.TriggerPayload = slices.Clone(req.TriggerPayload)
	}
	r := newRun(m, uuid.NewString(), req)
	preparing := func() { r.setState(history.StatePreparing, "") }
	if err := m.runs.start(context.WithoutCancel(ctx), r, preparing, r.execute); err != nil {
		return nil, err
	}
	return r, nil
}

// forget drops an ended run from the live set.
func (m *Manager) forget(id string) { m.runs.forget(id) }

// Close cancels every run at once (without the protocol grace), waits
// for them and closes the bridge and, if the manager opened it, the
// history. A run waiting for consent is cancelled too: its prompt's
// context ends, and Close does not wait for a Prompter that ignores it.
// Close is Shutdown with a context that has already ended.
func (m *Manager) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return m.Shutdown(ctx)
}

// Shutdown ends the manager gracefully, as http.Server's Shutdown does:
// no run starts after it is called; every run is cancelled as
// [Run.Cancel] does, its script told at once (context.signal aborts, its
// host calls under way fail with code cancelled) and given
// [Config.CancelGrace] to end; once ctx ends, runs still going are killed
// without it. Then it closes as Close does. A run ends within
// CancelGrace + KillGrace of the cancel whatever its script does (see
// [Run.Cancel]), so a ctx longer than that only bounds the tabs' release
// and a Prompter that ignores its context. Shutdown returns ctx's error
// when it had to kill runs, else the bridge's; only the first call of
// Close or Shutdown does the work, and later ones wait for it.
func (m *Manager) Shutdown(ctx context.Context) error {
	runs, first := m.runs.closeAll()
	if !first {
		m.runs.wait()
		return nil
	}
	var cut error
	if ctx.Err() == nil {
		for _, r := range runs {
			r.Cancel("the host is shutting down")
		}
		ended := make(chan struct{})
		go func() { // ends with the runs, at the latest after they are killed
			m.runs.wait()
			close(ended)
		}()
		select {
		case <-ended:
		case <-ctx.Done():
			cut = ctx.Err()
		}
	}
	if ctx.Err() != nil {
		for _, r := range runs {
			r.kill("the host is shutting down")
		}
	}
	m.runs.wait()
	m.stopRev()
	m.browsers.Close()
	m.caches.close()
	err := m.bridge.Close()
	for _, id := range m.unsaved.flush(m.hist) {
		m.log.Error("runner: a run's history entry could not be saved", "run", id)
	}
	m.closeHistory()
	if cut != nil {
		return fmt.Errorf("runner: shutting down: runs were killed: %w", cut)
	}
	return err
}

func (m *Manager) emit(e Event) {
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(e)
	}
}

// onSession attaches a run's session as soon as the bridge starts it.
func (m *Manager) onSession(p rpc.Principal, s *capnweb.Session) {
	if r, ok := m.Lookup(p.RunID); ok {
		r.attach(s)
	}
}

// onRevoke kills live runs of a script whose approval was withdrawn.
func (m *Manager) onRevoke(rv consent.Revocation) {
	for _, r := range m.Runs() {
		if r.key == rv.Script {
			r.revoked()
		}
	}
}
