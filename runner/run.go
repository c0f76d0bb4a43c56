package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc"
	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/runner/internal/proc"
	"github.com/tranquil/automation/trace"
)

// Request asks for one run.
type Request struct {
	// Script is the script's path (made absolute).
	Script string
	// Trigger says what started the run ("manual", a URL trigger, …); the
	// script reads it as context.trigger.
	Trigger string
	// Selection, if set, runs this text instead of the whole file, under
	// the file's header and approval (run-selection).
	Selection *Selection
	// TriggerTab is the ID of the tab that triggered the run, if any; the
	// script reaches it with tabs.triggered().
	TriggerTab string
	// TriggerPayload is what the trigger carried (JSON, at most
	// MaxPayloadBytes; nil for none): the script reads it, parsed, as
	// context.payload. The bootstrap fetches it before the script starts.
	TriggerPayload json.RawMessage
}

// Selection is text selected in a script's editor.
type Selection struct {
	Text string
	// Line and Column are where Text starts in the script, 1-based, so
	// that errors name the script's own lines. Zero Line: where Text
	// first occurs in the script, or its top.
	Line, Column int
}

// Exit codes of the bootstrap that mean something to the runner.
const (
	exitDenied       = 3 // the bridge answered DENY: the SDK lacks a capability
	exitNoConnection = 4 // the bootstrap could not reach or authenticate to the bridge
)

// EventKind says what an Event reports.
type EventKind string

const (
	EventState  EventKind = "state"  // State changed; Line holds the reason, if any
	EventOutput EventKind = "output" // one line of Stream
	EventLog    EventKind = "log"    // the script called context.log
	// EventPaneControls: the script registered (Stream "register") or
	// unregistered (Stream "unregister") the pane control named by Line.
	EventPaneControls EventKind = "paneControls"
	// EventStep: a step of step.do, step.sleep or step.waitForEvent
	// started, is being retried, or ended; Step says which.
	EventStep EventKind = "step"
	// EventProgress: the script called context.progress; Line holds its
	// message and Fraction how far the run is.
	EventProgress EventKind = "progress"
	// EventDropped: the script went past the rate limit of the channel
	// Stream names (context.log, step, …; see [ChannelLimits]), and
	// Dropped of its calls were dropped; Line says so in words. It comes
	// at most once a second per run, and before the run's end.
	EventDropped EventKind = "dropped"
)

// Event is one thing that happened in a run.
type Event struct {
	RunID  string
	Time   time.Time
	Kind   EventKind
	State  history.State
	Stream string // "stdout" or "stderr", for EventOutput
	Line   string
	// Step is the step an EventStep reports.
	Step *StepEvent
	// Fraction is how far the run is, from 0 to 1, for EventProgress; it
	// is negative when the script did not say.
	Fraction float64
	// Dropped is how many calls an EventDropped stands for.
	Dropped int
}

// StepEvent is a step's change, as the script's SDK reported it.
type StepEvent struct {
	Name string
	// Kind is "do", "sleep" or "waitForEvent".
	Kind string
	// Phase is "start", "retry" (Attempt is the attempt about to run and
	// Error why the last failed) or "end".
	Phase   string
	Attempt int
	// OK reports, for "end", that the step succeeded; Error says why not.
	OK    bool
	Error string
}

// Run is one execution of a script. Its methods are safe for concurrent
// use.
//
// Its goroutines: execute runs on one of the Manager's runTable, which
// Close waits for; it ends when the run has settled. attach starts
// watchBudget for each session, which returns when the session or the run
// ends; SendEvent and mirrorOutputs each start a watcher that turns the
// run's end (or kill) into a cancelled call and returns with the call.
// The supervisor's protocol cancel is waited for before the run settles;
// the child's waiter returns when the process has exited.
//
// Its fields fall in groups by what guards them: fixed at creation, the
// signals (channels closed once), what mu guards (the record, what the
// run holds on the host, how it is being stopped). The order of its tab
// opens is kept by the Manager's tabLine. The process itself is a child,
// watched by a supervisor, and its end is settled by settle; none of them
// is kept here.
type Run struct {
	m   *Manager
	id  string
	req Request
	key string // consent key of the script (real path)

	runSignals

	// mu guards runRecord, runHoldings and runStop.
	mu sync.Mutex
	runRecord
	runHoldings
	runStop

	// gate is the one door from the script to host code.
	gate hostGate
	// trace records the run's browser work (trace.go); nil when off.
	trace *trace.Recorder
	// callSites joins the call sites the script sends late to its calls.
	callSites siteBook
}

// runSignals are closed once each, and need no lock.
type runSignals struct {
	done     chan struct{} // closed when the run has ended and its entry is written
	ready    chan struct{} // closed when the script's session is attached
	cancelCh chan struct{} // closed by Cancel
	killCh   chan struct{} // closed by kill: no protocol grace
}

// runRecord is what the run is and what its history entry says (guarded
// by Run.mu).
type runRecord struct {
	state  history.State
	reason string
	entry  history.Entry
	// actionsDropped counts actions past MaxActions, summed up in the
	// log's last entry.
	actionsDropped int
	result         json.RawMessage
	header         *permissions.Header
	out            *history.Output // the output kept for history, while the process runs
	consentWait    time.Duration   // time spent asking for consent, not part of the run's duration
	historyTold    bool            // the host was told the history failed this run
}

// runHoldings is what the run holds on the host, given back when it ends
// (guarded by Run.mu).
type runHoldings struct {
	sess  *capnweb.Session
	panes map[string]*capnweb.Stub
	tabs  map[string]*runTab
	// tabsReleased is set once releaseTabs ran: no tab is known after.
	tabsReleased bool
	// cleanups are run by finish, before the run is reported done; only
	// the run's own goroutine touches them.
	cleanups []func()
	// cache is the run's own deno cache folder (runcache.go), removed
	// soon after the run ends.
	cache string
	// downloads are the run's expected downloads by ticket, and the
	// number of the last ticket (tab_download.go).
	downloads   map[string]*pendingDownload
	downloadSeq int
}

// runStop says how the run was asked to stop (guarded by Run.mu).
type runStop struct {
	cancelOn     bool
	killOn       bool
	cancelWhy    string
	overLimitWhy string      // the limit_exceeded reason of a run that went past a limit (costs.go)
	checks       *checkPacer // the turns of its waiting calls' checks (costs.go)
	seq          uint64      // its place in the order of starts (runTable.start)
}

func newRun(m *Manager, id string, req Request) *Run {
	r := &Run{m: m, id: id, req: req,
		runSignals:  runSignals{done: make(chan struct{}), ready: make(chan struct{}), cancelCh: make(chan struct{}), killCh: make(chan struct{})},
		runHoldings: runHoldings{panes: map[string]*capnweb.Stub{}},
	}
	r.gate.init()
	r.checks = newCheckPacer(m.cfg.CheckRate)
	r.key, _ = consent.ScriptKey(req.Script)
	r.entry = history.Entry{ID: id, Kind: history.KindScript, Script: req.Script, Trigger: req.Trigger, Start: time.Now().UTC()}
	r.trace = newTrace(m, id)
	return r
}

// ID returns the run's ID.
func (r *Run) ID() string { return r.id }

// Info returns the identity host calls receive.
func (r *Run) Info() RunInfo { return RunInfo{ID: r.id, Script: r.req.Script} }

// State returns the run's current state.
func (r *Run) State() history.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// Done is closed when the run has ended and its history entry is written.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait blocks until the run ends or ctx is done and returns its final
// history entry.
func (r *Run) Wait(ctx context.Context) (history.Entry, error) {
	select {
	case <-r.done:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.entry, nil
	case <-ctx.Done():
		return history.Entry{}, ctx.Err()
	}
}

// Cancel asks the run to stop: a run waiting for consent or queued ends at
// once (the consent prompt's context ends); a running script
// gets the protocol cancel (its context.signal aborts with reason), then
// after the grace period SIGTERM, then SIGKILL, on its whole process group.
func (r *Run) Cancel(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelOn {
		return
	}
	r.cancelOn, r.cancelWhy = true, reason
	close(r.cancelCh)
}

// kill stops the run without the protocol grace.
func (r *Run) kill(reason string) {
	r.Cancel(reason)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.killOn {
		r.killOn = true
		close(r.killCh)
	}
}

// revoked ends a run whose approval was withdrawn: its capabilities go at
// once, then its processes.
func (r *Run) revoked() {
	r.m.bridge.Revoke(r.id)
	r.kill("approval revoked")
}

func (r *Run) attach(s *capnweb.Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil {
		close(r.ready)
	}
	r.sess = s
	// Owned by the run: it returns when the session or the run ends.
	go r.watchBudget(s)
}

// watchBudget fails the run whose session went past one of its limits
// (its memory budget, its queue of calls): the script can no longer reach
// the host, so its process is stopped and the run ends limit_exceeded.
func (r *Run) watchBudget(s *capnweb.Session) {
	select {
	case <-s.Done():
	case <-r.done:
		return
	}
	err := s.Err()
	if !errors.Is(err, capnweb.ErrLimit) {
		return
	}
	r.overLimit(resourceMemory, err)
}

// SendEvent delivers the event called name, carrying payload (any value
// JSON can encode, at most MaxPayloadBytes), to the script: the
// step.waitForEvent waiting for that name gets it, or the script keeps it
// until one asks. A run still queued or starting is waited for, up to
// ctx. It fails with ErrRunEnded once the run is over.
func (r *Run) SendEvent(ctx context.Context, name string, payload any) error {
	if name == "" {
		return fmt.Errorf("runner: an event needs a name")
	}
	v, err := payloadValue(payload)
	if err != nil {
		return err
	}
	select {
	case <-r.ready:
	case <-r.done:
		return fmt.Errorf("%w: run %s", ErrRunEnded, r.id)
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	sess := r.sess
	r.mu.Unlock()
	// A run that ends mid-call ends the call too.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-r.done:
			stop()
		case <-ctx.Done():
		}
	}()
	if _, err := sess.Main().CallMethod(ctx, "event", name, v); err != nil {
		select {
		case <-r.done:
			return fmt.Errorf("%w: run %s", ErrRunEnded, r.id)
		default:
		}
		return fmt.Errorf("runner: sending event %q to run %s: %w", name, r.id, err)
	}
	return nil
}

// payloadValue turns an event's or trigger's payload into what the
// script receives, keeping the key order of a json.RawMessage.
func payloadValue(payload any) (any, error) {
	raw, ok := payload.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return nil, fmt.Errorf("runner: the payload is not JSON: %w", err)
		}
	}
	if len(raw) > MaxPayloadBytes {
		return nil, fmt.Errorf("%w: a payload takes at most %d bytes of JSON; this one is %d", ErrPayloadTooLarge, MaxPayloadBytes, len(raw))
	}
	v, err := capnweb.DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("runner: the payload is not JSON: %w", err)
	}
	if v == nil {
		return capnweb.Undefined{}, nil
	}
	return v, nil
}

// execute is the whole life of the run, on a goroutine the Manager owns.
func (r *Run) execute(ctx context.Context) {
	src, err := os.ReadFile(r.req.Script)
	if err != nil {
		r.refuse(fmt.Sprintf("cannot read the script: %v", errors.Unwrap(err)))
		return
	}
	h, err := permissions.Parse(src, r.req.Script)
	if err != nil {
		r.refuse(err.Error())
		return
	}
	r.mu.Lock()
	r.entry.Permissions = h.Canonical()
	r.header = h
	r.mu.Unlock()

	asked := time.Now()
	d, err := r.authorize(ctx, h)
	r.mu.Lock()
	r.consentWait = time.Since(asked)
	stopped := r.cancelOn
	r.mu.Unlock()
	switch {
	case err != nil && stopped:
		r.finish(history.StateCancelled, r.cancelReason())
		return
	case err != nil:
		r.refuse(err.Error())
		return
	}
	if d.Warning != nil {
		// The run goes on, but the user will be asked again: say why.
		r.m.log.Warn("runner: consent store", "run", r.id, "error", d.Warning)
		r.tellHost(LevelWarning, fmt.Sprintf("the approval could not be saved, so it will be asked for again: %v", d.Warning))
	}
	sdk, err := r.m.prepare(ctx)
	if err != nil {
		// The host's installation failed, not the script.
		r.fail(err.Error())
		return
	}
	entry := r.req.Script
	if r.req.Selection != nil {
		sel, cleanup, err := r.m.writeSelection(r.req.Script, r.id, r.req.Selection)
		if err != nil {
			r.refuse(err.Error())
			return
		}
		r.cleanups = append(r.cleanups, cleanup)
		entry = sel
	}
	if err := r.m.checkGraph(ctx, sdk, h, entry); err != nil {
		if errors.Is(err, ErrDenoUnusable) {
			r.fail(err.Error())
		} else {
			r.refuse(err.Error())
		}
		return
	}

	// Wait for a slot, unless cancelled first: in line by the order of
	// starts, now that the run is ready to go.
	r.setState(history.StateQueued, "")
	if !r.m.runs.queue.acquire(r.seq, r.cancelCh) {
		r.finish(history.StateCancelled, r.cancelReason())
		return
	}
	defer r.m.runs.queue.release()
	r.setState(history.StateStarting, "")
	r.spawn(sdk, h, entry)
}

// authorize asks the consent gate for as long as the run is wanted:
// Cancel (and so Close) ends the prompt's context. The gate returns then
// even when its Prompter ignores that context.
func (r *Run) authorize(ctx context.Context, h *permissions.Header) (consent.Decision, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { // ends with authorize, at the latest
		select {
		case <-r.cancelCh:
			stop()
		case <-ctx.Done():
		}
	}()
	return r.m.gate.Authorize(ctx, r.req.Script, h)
}

func (r *Run) cancelReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelReasonLocked()
}

func (r *Run) cancelReasonLocked() string {
	if r.cancelWhy == "" {
		return "cancelled"
	}
	return r.cancelWhy
}

// spawn starts deno under the computed flags, supervises it to its end
// and settles the run.
func (r *Run) spawn(sdk SDKPaths, h *permissions.Header, entry string) {
	m := r.m
	tok, err := m.bridge.Mint(rpc.Principal{RunID: r.id, ScriptPath: r.req.Script, ScriptDir: h.ScriptDir, Permitted: h.Capabilities()})
	if err != nil {
		r.finish(history.StateFailed, err.Error())
		return
	}
	defer m.bridge.Revoke(r.id) // the token, and the session if still open
	args, err := m.denoArgs(h, sdk, entry)
	if err != nil {
		r.refuse(err.Error())
		return
	}
	cache, err := m.caches.open(h, !slices.Contains(args, "--cached-only"))
	if err != nil {
		r.finish(history.StateFailed, err.Error())
		return
	}
	r.mu.Lock()
	r.cache = cache.dir
	r.mu.Unlock()
	r.cleanups = append(r.cleanups, func() { m.caches.release(cache) })
	aud := r.startAudit(h, args) // the run's accesses, into its trace (audit.go)
	defer aud.Stop()
	out := newOutput(r, m.cfg.OutputCap)
	stdout, stderr := out.writer("stdout"), out.writer("stderr")
	c, err := proc.Start(proc.Spec{Path: m.deno, Args: args, Dir: h.ScriptDir, Env: aud.Env(r.env(h, entry, tok, cache.dir)),
		Stdout: stdout, Stderr: stderr, MemoryMB: m.cfg.MemoryMB, KillGrace: m.cfg.KillGrace, Log: m.log})
	var notStarted *proc.StartError
	switch {
	case errors.As(err, &notStarted):
		// Start never reports an exit; a context that ended first is said as it is.
		why := m.denoStartErr(notStarted.Err)
		if why == nil {
			why = fmt.Errorf("runner: deno was not started: %w", notStarted.Err)
		}
		r.fail(why.Error())
		return
	case err != nil:
		// Fail closed: a run without the limit it was promised does not run.
		r.finish(history.StateFailed, err.Error())
		return
	}
	r.mu.Lock()
	r.out = out.kept
	r.mu.Unlock()
	r.setState(history.StateRunning, "")

	stopDisk := r.startDiskWatch(cache.dir, cache.linked, c.Exited())
	expired := r.supervise(c, h)
	stopDisk()
	aud.Stop() // the child has exited: all it reported is in the pipe
	stdout.flush()
	stderr.flush()
	r.settle(c, out, h, expired)
}

func (r *Run) isKilled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killOn
}

// env builds the child's environment from scratch: the runner's own
// variables, the run's own deno cache, and only what the header declares.
func (r *Run) env(h *permissions.Header, entry, token, cacheDir string) []string {
	env := append(r.m.denoEnv(cacheDir),
		"TRANQUIL_ENTRY="+entry,
		"TRANQUIL_RPC_URL="+r.m.bridge.RunURL(token), // its own route: no flood evicts its handshake
		"TRANQUIL_RPC_TOKEN="+token,
		"TRANQUIL_RUN_ID="+r.id,
		"TRANQUIL_SCRIPT_DIR="+h.ScriptDir,
	)
	if r.req.Trigger != "" {
		env = append(env, "TRANQUIL_TRIGGER="+r.req.Trigger)
	}
	if r.trace == nil {
		// Nothing keeps them: the SDK need not find its calls' sites.
		env = append(env, "TRANQUIL_CALL_SITES=off")
	}
	seen := map[string]bool{}
	add := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if !seen[k] {
			seen[k] = true
			env = append(env, kv)
		}
	}
	if len(h.Run) > 0 {
		// deno resolves run= commands through PATH, and most tools need HOME.
		for _, k := range []string{"PATH", "HOME"} {
			if v, ok := os.LookupEnv(k); ok {
				add(k + "=" + v)
			}
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		for _, want := range h.Env {
			if p, wild := strings.CutSuffix(want, "*"); (wild && strings.HasPrefix(k, p)) || k == want {
				add(kv)
			}
		}
	}
	return env
}

func (r *Run) notifyFailure(reason string) {
	r.notify(LevelError, fmt.Sprintf("%s failed (run %s): %s", filepath.Base(r.req.Script), r.id, reason))
}

// tellHost tells the host something about the run that is not its
// outcome, such as what could not be saved.
func (r *Run) tellHost(level Level, what string) {
	r.notify(level, fmt.Sprintf("%s (run %s): %s", filepath.Base(r.req.Script), r.id, what))
}

// notifyTimeout bounds one notification to the host. A notification is
// one call the host answers at once (a toast, a log line); 5 s is far past
// that, and short enough that a host that hangs cannot hold the end of a
// run (notifications come after its entry is written) for long.
const notifyTimeout = 5 * time.Second

func (r *Run) notify(level Level, msg string) { r.notifyUnder(context.Background(), level, msg) }

// notifyUnder notifies the host under ctx, for at most notifyTimeout.
func (r *Run) notifyUnder(ctx context.Context, level Level, msg string) {
	ui := r.m.cfg.Host.UI
	if ui == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	if err := ui.Notify(ctx, r.Info(), msg, level); err != nil {
		r.m.log.Warn("runner: host notification", "run", r.id, "error", err)
	}
}
