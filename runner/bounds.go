package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tranquil/automation/rpc/capnweb"

	"github.com/tranquil/automation/errcode"
)

// Bounds of what a script hands the host. Every channel from a script's
// session to host code has a size limit per item and, where the script
// decides how often, a rate limit per run; [ChannelLimits] lists them, and
// the guide's "Limits" section words them for script authors.
const (
	// MaxLineBytes bounds a context.log line and a ui.notify message.
	MaxLineBytes = 64 << 10
	// MaxReportBytes bounds a context.progress message and a step's
	// error: text for one line of a runs panel.
	MaxReportBytes = 1 << 10
	// MaxStepNameBytes bounds a step's name in a step event.
	MaxStepNameBytes = 256
	// MaxPaneNameBytes bounds a pane control's name: a button's label.
	MaxPaneNameBytes = 128
	// MaxPaneResultBytes bounds the JSON of what a pane control returns
	// to [Manager.InvokePaneControl].
	MaxPaneResultBytes = 64 << 10
	// MaxConfigValueBytes bounds the JSON of one config value; a script's
	// values together are bounded too (4 MiB).
	MaxConfigValueBytes = 1 << 20
	// MaxOpenPathBytes bounds the path of ui.open, past any real path.
	MaxOpenPathBytes = 4 << 10
	// MaxClipboardBytes bounds the text of clipboard.write.
	MaxClipboardBytes = 1 << 20
)

// Channel names one way a script hands the host something: a method of
// the script API, or the results of pane controls.
type Channel string

// The channels of [ChannelLimits].
const (
	ChannelLog        Channel = "context.log"
	ChannelProgress   Channel = "context.progress"
	ChannelStep       Channel = "step"
	ChannelResult     Channel = "context.result"
	ChannelNotify     Channel = "ui.notify"
	ChannelOpen       Channel = "ui.open"
	ChannelClipboard  Channel = "clipboard.write"
	ChannelConfig     Channel = "config.set"
	ChannelPane       Channel = "paneControls.register"
	ChannelPaneResult Channel = "paneControls results"
)

// ChannelLimit is how one channel is bounded.
type ChannelLimit struct {
	Channel Channel
	// What names what MaxBytes bounds.
	What string
	// MaxBytes bounds one item: a line's or a name's bytes, a value's JSON.
	MaxBytes int
	// Cut says what happens past MaxBytes: the text is cut, and ends in
	// a marker saying how many bytes were cut ("… [N bytes cut]"); when
	// false the call fails with code limit_exceeded instead.
	Cut bool
	// PerSecond is the rate a run may keep up on the channel, Burst how
	// many calls it may make at once before that rate applies (a token
	// bucket per run and channel). Zero means the channel has no rate
	// limit: the host, not the script, decides how often it is used, or
	// it reaches the host only once.
	PerSecond, Burst int
	// Drop says what happens past the rate: the calls are dropped, and one
	// marker (an [EventDropped], or for ui.notify one notification) then
	// says how many; when false they fail with code limit_exceeded.
	Drop bool
}

// channelLimits is the table [ChannelLimits] returns and the runner
// enforces. The rates are far past what a script that shows its work to a
// person makes (a few hundred log lines a second, a notification or two),
// and low enough that a loop calling them as fast as it can costs the host
// little.
var channelLimits = []ChannelLimit{
	{Channel: ChannelLog, What: "a line", MaxBytes: MaxLineBytes, Cut: true, PerSecond: 300, Burst: 1000, Drop: true},
	{Channel: ChannelProgress, What: "a message", MaxBytes: MaxReportBytes, Cut: true, PerSecond: 100, Burst: 500, Drop: true},
	{Channel: ChannelStep, What: "a step's name (its error: MaxReportBytes)", MaxBytes: MaxStepNameBytes, Cut: true, PerSecond: 300, Burst: 1000, Drop: true},
	{Channel: ChannelNotify, What: "a message", MaxBytes: MaxLineBytes, Cut: true, PerSecond: 10, Burst: 50, Drop: true},
	{Channel: ChannelResult, What: "the value, as JSON", MaxBytes: MaxResultBytes},
	{Channel: ChannelOpen, What: "a path", MaxBytes: MaxOpenPathBytes, PerSecond: 10, Burst: 50},
	{Channel: ChannelClipboard, What: "the text", MaxBytes: MaxClipboardBytes, PerSecond: 10, Burst: 50},
	{Channel: ChannelConfig, What: "a value, as JSON", MaxBytes: MaxConfigValueBytes, PerSecond: 50, Burst: 200},
	{Channel: ChannelPane, What: "a name", MaxBytes: MaxPaneNameBytes, PerSecond: 20, Burst: 100},
	{Channel: ChannelPaneResult, What: "a returned value, as JSON", MaxBytes: MaxPaneResultBytes},
}

// ChannelLimits returns the bound of every channel from a script to the
// host, in a fixed order.
func ChannelLimits() []ChannelLimit { return slices.Clone(channelLimits) }

func limitOf(ch Channel) ChannelLimit {
	for _, l := range channelLimits {
		if l.Channel == ch {
			return l
		}
	}
	panic("runner: no limit for channel " + string(ch))
}

// Errors of values a script hands the host.
var (
	// ErrNotSerializable: a value from the script is not data; it holds a
	// function or an object passed by reference. The runner released
	// every reference in it. Scripts see code not_serializable.
	ErrNotSerializable = errors.New("runner: " + string(errcode.NotSerializable) + ": only data (JSON) passes from a script to the host")
	// ErrLimitExceeded: a value from the script is past its channel's
	// limit ([ChannelLimits]). Scripts see code limit_exceeded.
	ErrLimitExceeded = errors.New("runner: " + string(errcode.LimitExceeded) + ": a script's value is past the host's limit")
)

// releaseStubs releases every stub inside v, a value the script sent, and
// reports whether there was one.
func releaseStubs(v any) bool {
	found := false
	var walk func(any, int)
	walk = func(v any, depth int) {
		if depth > 256 { // capnweb's own nesting bound is lower
			return
		}
		switch x := v.(type) {
		case *capnweb.Stub:
			x.Release()
			found = true
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		case map[string]any:
			for _, e := range x {
				walk(e, depth+1)
			}
		case *capnweb.Object:
			for _, e := range x.All() {
				walk(e, depth+1)
			}
		case []capnweb.Value:
			for _, e := range x {
				walk(e, depth+1)
			}
		case *capnweb.RemoteError:
			walk(x.Props, depth+1)
			walk(x.Value, depth+1)
		}
	}
	walk(v, 0)
	return found
}

// notDataErr is the error a script gets for a value holding a function,
// where only data may go.
func notDataErr(api, what string) error {
	return codeErr(errcode.NotSerializable, capnweb.NameTypeError, "%s: %s holds a function; only data (JSON) reaches the app", api, what)
}

// dataJSON encodes v, a value the script handed the host, as JSON: a
// function anywhere in it, or anything else JSON cannot hold, is refused
// with code not_serializable. Stubs in arguments belong to the call, and
// capnweb releases them when it returns.
func dataJSON(api, what string, v any) (json.RawMessage, error) {
	if releaseStubs(v) {
		return nil, notDataErr(api, what)
	}
	raw, err := encodePlain(v)
	if err != nil {
		return nil, codeErr(errcode.NotSerializable, capnweb.NameTypeError, "%s: %s: %v", api, what, err)
	}
	return raw, nil
}

// markerEvery is how often, at most, a run's dropped calls are reported:
// often enough that the host learns of a flood while it lasts, rarely
// enough that the reports are no flood of their own.
const markerEvery = time.Second

// gateDrain bounds how long the end of a run waits for host calls its
// script made that are still running. Their contexts are cancelled when
// the gate closes, so a host that honours them returns at once; this,
// like notifyTimeout, bounds one that does not.
const gateDrain = 5 * time.Second

// hostGate is the one door from a run's script to host code: its events
// (OnEvent), its UI, clipboard and workspace calls, its config writes and
// the host's calls of its pane controls all pass it, under its limits.
// When the run settles it closes: nothing of the script's passes after
// that, the calls already inside are cancelled and waited for (up to
// gateDrain), and the run's end event is the last event it emits. Calls a
// session still had queued when it was revoked meet a closed gate. Its
// marker timer reports dropped calls on a goroutine of the timer's;
// closeGate stops it, and a report under way ends with the run's events.
type hostGate struct {
	// emitMu is held while an event is handed to OnEvent, so that a run's
	// events leave one at a time, in order, and none after the end.
	emitMu sync.Mutex
	mu     sync.Mutex // guards what follows
	closed bool       // no more of the script's
	ended  bool       // the end event was emitted: no more at all
	// calls counts host calls inside the gate; drained is closed when it
	// drops to zero after the gate closed.
	calls   int
	drained chan struct{}
	// inflight cancels each call inside, by the number it entered with:
	// cutCalls ends those under way when the run is told to end, not
	// those its script makes after (its clean-up, within the grace).
	inflight map[uint64]inflightCall
	entered  uint64
	ctx      context.Context // cancelled when the gate closes
	cancel   context.CancelFunc
	buckets  map[Channel]*bucket
	marker   *time.Timer // reports dropped calls; armed by a drop
	armed    bool
}

// bucket is a token bucket: tokens refill at the channel's rate up to its
// burst, and each call takes one.
type bucket struct {
	tokens  float64
	last    time.Time
	dropped int // calls dropped since the last marker
}

func (g *hostGate) init() {
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.buckets = map[Channel]*bucket{}
	g.inflight = map[uint64]inflightCall{}
}

// inflightCall is a host call inside the gate: its cancel, and where it
// entered, so that a call that outlives its cancel can be named.
type inflightCall struct {
	cancel context.CancelFunc
	// pcs are the callers of enter, nearest first: host methods enter
	// through the interceptor (invoke), some through helpers of their
	// own (act, read), so the method itself is a few frames up. Unused
	// entries are 0.
	pcs [entryFrames]uintptr
}

// entryFrames is how many callers of enter a call keeps: enough to reach
// the host method from its deepest helper chain (Click, pointerAct, act,
// invoke), and two more.
const entryFrames = 6

// hostMethodRe matches a host API method, as runtime names it.
var hostMethodRe = regexp.MustCompile(`\.\(\*?\w+API\)\.[A-Z]\w*$`)

// name is the host method the call was made to: the first of its callers
// that is one, or else its nearest caller.
func (c inflightCall) name() string {
	frames := runtime.CallersFrames(c.pcs[:])
	first := ""
	for {
		f, more := frames.Next()
		if first == "" {
			first = f.Function
		}
		if hostMethodRe.MatchString(f.Function) {
			return f.Function
		}
		if !more {
			return first
		}
	}
}

// stuckCalls names the host methods of the calls still inside the gate.
func (g *hostGate) stuckCalls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var names []string
	for _, c := range g.inflight {
		if n := c.name(); n != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// takeLocked takes a token of ch's bucket, reporting whether there was one.
func (g *hostGate) takeLocked(ch Channel, now time.Time) bool {
	l := limitOf(ch)
	if l.PerSecond == 0 {
		return true
	}
	b := g.buckets[ch]
	if b == nil {
		b = &bucket{tokens: float64(l.Burst), last: now}
		g.buckets[ch] = b
	}
	b.tokens = min(float64(l.Burst), b.tokens+now.Sub(b.last).Seconds()*float64(l.PerSecond))
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

// rateErr is the error of a call past its channel's rate.
func rateErr(ch Channel) error {
	l := limitOf(ch)
	return limitErr(l.PerSecond, "%s may be called at most %d times a second (%d at once); slow down", ch, l.PerSecond, l.Burst)
}

// enter lets a host call of the script's in, taking a token of ch (none
// when ch is ""). It fails with ErrRunEnded once the run has settled, and
// with code limit_exceeded past ch's rate. The call then runs under the
// returned context, cancelled when the gate closes, and calls leave when
// it is done.
func (r *Run) enter(ctx context.Context, ch Channel) (_ context.Context, leave func(), err error) {
	var pcs [entryFrames]uintptr
	runtime.Callers(2, pcs[:]) // outside the lock: it walks the stack
	g := &r.gate
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		// Code closed: a script's call that arrives after its run ended
		// (from an unload handler, or queued as the run ended).
		return nil, nil, &capnweb.Error{Name: capnweb.NameError, Props: map[string]any{"code": string(errcode.Closed)},
			Message: "the run has ended: nothing more of the script's reaches the app", Err: fmt.Errorf("%w: run %s", ErrRunEnded, r.id)}
	}
	if ch != "" && !g.takeLocked(ch, time.Now()) {
		g.mu.Unlock()
		return nil, nil, rateErr(ch)
	}
	ctx, cancel := context.WithCancel(ctx)
	g.calls++
	g.entered++
	n := g.entered
	g.inflight[n] = inflightCall{cancel: cancel, pcs: pcs}
	g.mu.Unlock()
	stop := context.AfterFunc(g.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.inflight, n)
		g.calls--
		if g.calls == 0 && g.drained != nil {
			close(g.drained)
			g.drained = nil
		}
	}, nil
}

// cutCalls cancels the host calls of the run's script under way now: told
// to end, a run's script learns at once that what it waits for will not
// come (code cancelled), and its context.signal handlers run within the
// grace. Calls it makes after pass as before.
func (r *Run) cutCalls() {
	g := &r.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.inflight {
		c.cancel()
	}
}

// admit takes a token of ch for a call that is dropped past the rate: ok
// is false when the call must be dropped, or the run has settled.
func (r *Run) admit(ch Channel) bool {
	g := &r.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	if g.takeLocked(ch, time.Now()) {
		return true
	}
	g.buckets[ch].dropped++
	if !g.armed {
		g.armed = true
		if g.marker == nil {
			g.marker = time.AfterFunc(markerEvery, r.reportDropped)
		} else {
			g.marker.Reset(markerEvery)
		}
	}
	return false
}

// scriptEvent hands the host an event of the script's on channel ch,
// unless the run has settled or ch is past its rate (then it counts as
// dropped; "" takes no token). also runs with the event, in its order (a
// log line's copy in the output).
func (r *Run) scriptEvent(ch Channel, e Event, also func()) {
	if ch != "" && !r.admit(ch) {
		return
	}
	r.traceEvent(e)
	r.emitIf(func(g *hostGate) bool { return !g.closed }, e, also)
}

// emit hands the host an event of the run's, unless its end was emitted.
func (r *Run) emit(e Event) {
	r.emitIf(func(g *hostGate) bool { return !g.ended }, e, nil)
}

// emitIf emits e, and runs also, if open says the gate lets it through; a
// terminal state event ends the run's events.
func (r *Run) emitIf(open func(*hostGate) bool, e Event, also func()) {
	g := &r.gate
	g.emitMu.Lock()
	defer g.emitMu.Unlock()
	g.mu.Lock()
	ok := open(g)
	if ok && e.Kind == EventState && e.State.Terminal() {
		g.closed, g.ended = true, true
	}
	g.mu.Unlock()
	if !ok {
		return
	}
	if also != nil {
		also()
	}
	r.m.emit(e)
}

// reportDropped tells the host how many calls of each channel it dropped
// since it last did: an EventDropped each, and one notification for
// ui.notify. The marker's timer calls it, and so does closeGate.
func (r *Run) reportDropped() {
	g := &r.gate
	g.emitMu.Lock()
	g.mu.Lock()
	g.armed = false
	closing, ended := g.closed, g.ended
	counts := map[Channel]int{}
	for ch, b := range g.buckets {
		if b.dropped > 0 {
			counts[ch] = b.dropped
			b.dropped = 0
		}
	}
	g.mu.Unlock()
	var notify string
	for _, l := range channelLimits {
		n := counts[l.Channel]
		if n == 0 || ended {
			continue
		}
		what := fmt.Sprintf("[tranquil: %d %s calls dropped: a run may make %d a second]", n, l.Channel, l.PerSecond)
		switch l.Channel {
		case ChannelNotify:
			notify = what // a host call: not under emitMu
			continue
		case ChannelLog:
			r.writeOutput(what)
		}
		r.m.emit(Event{RunID: r.id, Time: time.Now(), Kind: EventDropped, Stream: string(l.Channel), Line: what, Dropped: n})
	}
	g.emitMu.Unlock()
	if notify != "" {
		r.notifyDropped(closing, notify)
	}
}

// notifyDropped tells the host's UI how many notifications were dropped:
// through the gate while the run goes on, directly as it closes.
func (r *Run) notifyDropped(closing bool, what string) {
	ctx := context.Background()
	if !closing {
		c, leave, err := r.enter(ctx, "")
		if err != nil {
			return
		}
		defer leave()
		ctx = c
	}
	r.notifyUnder(ctx, LevelWarning, what)
}

// closeGate closes the run's gate: nothing of the script's reaches the
// host from now on. The host calls inside are cancelled and waited for,
// up to gateDrain, and what was dropped is reported. It is idempotent.
func (r *Run) closeGate() {
	g := &r.gate
	g.emitMu.Lock()
	g.mu.Lock()
	already := g.closed
	g.closed = true
	if g.marker != nil {
		g.marker.Stop()
	}
	var drained chan struct{}
	if g.calls > 0 {
		if g.drained == nil {
			g.drained = make(chan struct{})
		}
		drained = g.drained
	}
	g.mu.Unlock()
	g.emitMu.Unlock()
	if already {
		return
	}
	g.cancel()
	if drained != nil {
		t := time.NewTimer(gateDrain)
		select {
		case <-drained:
		case <-t.C:
			r.m.log.Warn("runner: a host call of the run's did not return when cancelled", "run", r.id, "calls", g.stuckCalls())
		}
		t.Stop()
	}
	r.reportDropped()
}

// writeOutput adds a line to the output the history keeps.
func (r *Run) writeOutput(line string) {
	r.mu.Lock()
	out := r.out
	r.mu.Unlock()
	if out != nil {
		out.Write([]byte(line + "\n"))
	}
}
