package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc"
	"github.com/tranquil/automation/rpc/capnweb"
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
// use. A Run's goroutines belong to its Manager.
type Run struct {
	m   *Manager
	id  string
	req Request
	key string // consent key of the script (real path)

	done     chan struct{}
	ready    chan struct{} // closed when the script's session is attached
	cancelCh chan struct{} // closed by Cancel
	killCh   chan struct{} // closed by kill: no protocol grace

	mu     sync.Mutex
	state  history.State
	reason string
	entry  history.Entry
	// actionsDropped counts actions past MaxActions, summed up in the
	// log's last entry.
	actionsDropped int
	sess           *capnweb.Session
	panes          map[string]*capnweb.Stub
	result         json.RawMessage
	cancelOn       bool
	killOn         bool
	timedOut       bool
	cancelWhy      string
	historyTold    bool     // the host was told the history failed this run
	cleanups       []func() // run by finish, before the run is reported done
	header         *permissions.Header
	tabs           map[string]*runTab
	out            *history.Output // the output kept for history, while the process runs
	consentWait    time.Duration   // time spent asking for consent, not part of the run's duration

	openMu   sync.Mutex // orders background opens; see awaitOpenTurn
	openNext int
	openTurn chan struct{}
}

func newRun(m *Manager, id string, req Request) *Run {
	r := &Run{m: m, id: id, req: req, done: make(chan struct{}), ready: make(chan struct{}), cancelCh: make(chan struct{}), killCh: make(chan struct{}), panes: map[string]*capnweb.Stub{}}
	r.key, _ = consent.ScriptKey(req.Script)
	r.entry = history.Entry{ID: id, Kind: history.KindScript, Script: req.Script, Trigger: req.Trigger, Start: time.Now().UTC()}
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

// Cancel asks the run to stop: a queued run ends at once; a running script
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

func (r *Run) setState(s history.State, reason string) {
	r.mu.Lock()
	r.state, r.reason = s, reason
	r.entry.State, r.entry.Reason = s, reason
	e := r.entry
	r.mu.Unlock()
	r.m.record(r, e)
	r.m.emit(Event{RunID: r.id, Time: time.Now(), Kind: EventState, State: s, Line: reason})
}

// finish writes the final entry and closes done.
func (r *Run) finish(s history.State, reason string) {
	for _, f := range r.cleanups {
		f()
	}
	r.mu.Lock()
	r.entry.End = time.Now().UTC()
	// The run's own time: a person reading the consent prompt is not it.
	r.entry.Duration = r.entry.End.Sub(r.entry.Start) - r.consentWait
	r.entry.Result = r.result
	for _, p := range r.panes {
		p.Release()
	}
	clear(r.panes)
	r.mu.Unlock()
	r.setState(s, reason)
	r.m.forget(r.id)
	close(r.done)
}

// fail ends a run the host could not carry out (its deno is unusable, the
// SDK could not be laid down), and tells the host.
func (r *Run) fail(reason string) {
	r.mu.Lock()
	r.entry.FirstError = reason
	r.mu.Unlock()
	r.finish(history.StateFailed, reason)
	r.notifyFailure(reason)
}

// refuse ends a run that never started a process.
func (r *Run) refuse(reason string) {
	r.mu.Lock()
	r.entry.FirstError = reason
	r.mu.Unlock()
	r.finish(history.StateRefused, reason)
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
	d, err := r.m.gate.Authorize(ctx, r.req.Script, h)
	r.mu.Lock()
	r.consentWait = time.Since(asked)
	r.mu.Unlock()
	if err != nil {
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
		sel, cleanup, err := r.m.writeSelection(r.req.Script, r.id, r.req.Selection.Text)
		if err != nil {
			r.refuse(err.Error())
			return
		}
		r.cleanups = append(r.cleanups, cleanup)
		entry = sel
	}
	if err := r.m.graphs.check(ctx, r.m, sdk, h, entry); err != nil {
		if errors.Is(err, ErrDenoUnusable) {
			r.fail(err.Error())
		} else {
			r.refuse(err.Error())
		}
		return
	}

	// Wait for a slot, unless cancelled first.
	if !r.m.queue.acquire(r.cancelCh) {
		r.finish(history.StateCancelled, r.cancelReason())
		return
	}
	defer r.m.queue.release()
	r.setState(history.StateStarting, "")
	r.spawn(ctx, sdk, h, entry)
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

// spawn starts deno under the computed flags and supervises it to the end.
func (r *Run) spawn(ctx context.Context, sdk SDKPaths, h *permissions.Header, entry string) {
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
	if err := sealWebCache(m.cfg.CacheDir, h); err != nil {
		r.finish(history.StateFailed, err.Error())
		return
	}

	cmd := exec.Command(m.deno, args...)
	cmd.Dir = h.ScriptDir
	cmd.Env = r.env(h, entry, tok)
	isolate(cmd)
	outR, outW, err := os.Pipe()
	if err != nil {
		r.finish(history.StateFailed, err.Error())
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		r.finish(history.StateFailed, err.Error())
		return
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		r.fail(m.denoStartErr(err).Error()) // Start never reports an exit
		return
	}
	endGroup, err := contain(cmd, m.cfg.MemoryMB, m.log)
	if err != nil {
		// Fail closed: a run without the limit it was promised does not run.
		kill(cmd)
		cmd.Wait()
		outR.Close()
		errR.Close()
		r.finish(history.StateFailed, err.Error())
		return
	}
	r.setState(history.StateRunning, "")

	out := history.NewOutput(m.cfg.OutputCap)
	r.mu.Lock()
	r.out = out
	r.mu.Unlock()
	budget := &eventBudget{left: m.cfg.OutputCap}
	var stderrHead firstError
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); r.pump(outR, "stdout", out, budget, nil) }()
	go func() { defer readers.Done(); r.pump(errR, "stderr", out, budget, &stderrHead) }()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timeout := m.cfg.DefaultTimeout
	if h.TimeoutDeclared {
		timeout = h.Timeout
	}
	var timer <-chan time.Time
	if !h.NoTimeout {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}

	var waitErr error
	select {
	case waitErr = <-exited:
	case <-timer:
		r.mu.Lock()
		r.timedOut = true
		r.mu.Unlock()
		waitErr = r.stop(cmd, exited, fmt.Sprintf("timed out after %s", timeout), false)
	case <-r.cancelCh:
		waitErr = r.stop(cmd, exited, r.cancelReason(), r.isKilled())
	}
	// The run is over: nothing it started may outlive it.
	kill(cmd)
	endGroup()
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(2 * time.Second):
		// A process that left the group still holds a pipe; stop reading.
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()
	// Process death revokes everything: the session and token, then the
	// tabs the run opened.
	m.bridge.Revoke(r.id)
	r.releaseTabs()

	r.mu.Lock()
	r.entry.Output, r.entry.OutputTruncated = out.String(), out.Truncated()
	r.entry.FirstError = stderrHead.String()
	r.entry.Warnings = stderrHead.warningLines()
	if r.cancelOn && !r.timedOut {
		// The script's last words on cancellation are the reason itself,
		// or a stack the reason explains better.
		r.entry.FirstError = r.cancelReasonLocked()
	}
	code, sig := exitStatus(waitErr)
	if code >= 0 {
		r.entry.ExitCode = &code
	}
	r.entry.Signal = sig
	timedOut, cancelled := r.timedOut, r.cancelOn
	r.mu.Unlock()

	switch {
	case timedOut:
		r.finish(history.StateTimedOut, fmt.Sprintf("timed out after %s", timeout))
		r.notifyFailure("timed out after " + timeout.String())
	case cancelled:
		r.finish(history.StateCancelled, r.cancelReason())
	case code == 0:
		r.mirrorOutputs(h) // its failure stays in the mirror's state
		r.finish(history.StateSucceeded, "")
	case code == exitDenied:
		r.finish(history.StateRefused, firstNonEmpty(stderrHead.raw(), "the SDK could not provide a capability this script needs"))
	default:
		reason := firstNonEmpty(r.entryFirstError(), describeExit(code, sig))
		if oom := stderrHead.outOfMemory(); oom != "" {
			reason = m.oomReason(oom)
		}
		r.finish(history.StateFailed, reason)
		r.notifyFailure(reason)
	}
}

func (r *Run) isKilled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killOn
}

func (r *Run) entryFirstError() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.entry.FirstError
}

// stop ends a running process: the protocol cancel, then after the grace
// SIGTERM to the group, then SIGKILL. With now, it skips to SIGKILL.
func (r *Run) stop(cmd *exec.Cmd, exited <-chan error, reason string, now bool) error {
	m := r.m
	if !now {
		r.mu.Lock()
		sess := r.sess
		r.mu.Unlock()
		if sess != nil {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), m.cfg.CancelGrace)
				defer cancel()
				sess.Main().CallMethod(ctx, "cancel", reason)
			}()
		}
		select {
		case err := <-exited:
			return err
		case <-time.After(m.cfg.CancelGrace):
		case <-r.killCh:
		}
		terminate(cmd)
		select {
		case err := <-exited:
			return err
		case <-time.After(m.cfg.KillGrace):
		case <-r.killCh:
		}
	}
	kill(cmd)
	return <-exited
}

// env builds the child's environment from scratch: the runner's own
// variables, deno's cache, and only what the header declares.
func (r *Run) env(h *permissions.Header, entry, token string) []string {
	env := append(r.m.baseEnv(),
		"TRANQUIL_ENTRY="+entry,
		"TRANQUIL_RPC_URL="+r.m.bridge.RunURL(token), // its own route: no flood evicts its handshake
		"TRANQUIL_RPC_TOKEN="+token,
		"TRANQUIL_RUN_ID="+r.id,
		"TRANQUIL_SCRIPT_DIR="+h.ScriptDir,
	)
	if r.req.Trigger != "" {
		env = append(env, "TRANQUIL_TRIGGER="+r.req.Trigger)
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

func (r *Run) notify(level Level, msg string) {
	ui := r.m.cfg.Host.UI
	if ui == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ui.Notify(ctx, r.Info(), msg, level); err != nil {
		r.m.log.Warn("runner: host notification", "run", r.id, "error", err)
	}
}

// maxEventLine bounds one output event; longer lines arrive in pieces.
const maxEventLine = 64 << 10

// eventBudget bounds the output bytes sent as events across both streams.
type eventBudget struct {
	mu   sync.Mutex
	left int
	told bool
}

// take reports whether n more bytes may be sent, and whether this is the
// moment to say the budget ran out.
func (b *eventBudget) take(n int) (ok, announce bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left >= n {
		b.left -= n
		return true, false
	}
	b.left = 0
	if !b.told {
		b.told = true
		return false, true
	}
	return false, false
}

// pump reads one stream to its end, line by line; a line longer than the
// buffer arrives in pieces, so no line can break the reader.
func (r *Run) pump(rd io.Reader, stream string, out *history.Output, budget *eventBudget, errs *firstError) {
	br := bufio.NewReaderSize(rd, maxEventLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			out.Write(line)
			text := strings.TrimRight(string(line), "\r\n")
			if errs != nil {
				errs.see(text)
			}
			if ok, announce := budget.take(len(line)); ok {
				r.m.emit(Event{RunID: r.id, Time: time.Now(), Kind: EventOutput, Stream: stream, Line: text})
			} else if announce {
				r.m.emit(Event{RunID: r.id, Time: time.Now(), Kind: EventOutput, Stream: stream, Line: "[output limit reached; further output is kept only in part]"})
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// firstError remembers the first "error: …" line deno prints for an
// uncaught exception and the first stack frame after it.
type firstError struct {
	mu    sync.Mutex
	msg   string
	frame string
	lines int
	oom   string // the first line saying the process ran out of memory
	// warnings are the bootstrap's warning lines (calls the script left
	// running at its end), for the history entry.
	warnings []string
}

// The bootstrap prints its warnings on stderr under warningPrefix; a run
// keeps at most maxWarnings of them, each cut at maxWarningLen bytes.
const (
	warningPrefix = "tranquil: warning: "
	maxWarnings   = 20
	maxWarningLen = 1 << 10
)

func (f *firstError) warningLines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.warnings)
}

// truncate cuts s to at most n bytes, never inside a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func (f *firstError) see(line string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lines++
	if f.oom == "" && outOfMemory(line) {
		f.oom = line
	}
	switch {
	case strings.HasPrefix(line, warningPrefix):
		if len(f.warnings) < maxWarnings {
			f.warnings = append(f.warnings, truncate(strings.TrimPrefix(line, warningPrefix), maxWarningLen))
		}
	case f.msg == "" && (strings.HasPrefix(line, "error: ") || strings.HasPrefix(line, "tranquil: ")):
		f.msg = line
	case f.msg != "" && f.frame == "" && strings.HasPrefix(strings.TrimSpace(line), "at "):
		f.frame = strings.TrimSpace(line)
	}
}

func (f *firstError) raw() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msg
}

// String gives the error line with the first stack frame after it; for an
// uncaught error thrown by the script, that frame is the script's file:line.
func (f *firstError) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.msg == "" {
		return ""
	}
	if f.frame == "" {
		return f.msg
	}
	return f.msg + " " + f.frame
}

func exitStatus(err error) (code int, signal string) {
	if err == nil {
		return 0, ""
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if sig := signalOf(ee); sig != "" {
			return -1, sig
		}
		return ee.ExitCode(), ""
	}
	return -1, ""
}

// describeExit words how a process ended that neither the script nor the
// runner explained: a signal the runner did not send came from outside
// the app (a user's kill, the OOM killer, a shutdown).
func describeExit(code int, sig string) string {
	if sig != "" {
		if name, ok := signalNames[sig]; ok {
			sig = name
		}
		return fmt.Sprintf("the process was stopped from outside the app (signal %s)", sig)
	}
	return fmt.Sprintf("exited with code %d", code)
}

// signalNames gives the usual names of the signals Go describes in words.
var signalNames = map[string]string{
	"killed": "SIGKILL", "terminated": "SIGTERM", "interrupt": "SIGINT", "hangup": "SIGHUP",
	"aborted": "SIGABRT", "segmentation fault": "SIGSEGV", "quit": "SIGQUIT",
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func splitLines(s string) []string { return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") }
