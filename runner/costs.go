package runner

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/rpc"

	"github.com/tranquil/automation/rpc/capnweb"

	"github.com/tranquil/automation/errcode"
)

// What a run costs the host is counted per run, wherever the host pays
// it: memory against the run's session budget ([Config.SessionBudget]),
// which holds the script's frames and everything host code builds for the
// run (the browser's replies to its page calls, evaluate results as they
// are decoded); the other resources by their own limits (see doc.go,
// "What a run may cost the host"). Past a limit the run fails with code
// limit_exceeded naming the resource, and nothing else is touched.

// DefaultSessionBudget is the memory budget of a run's session when
// [Config.SessionBudget] is zero: far above what a script that passes
// values to the host and reads pages needs, and small enough that
// MaxConcurrent runs together cannot take a desktop app down.
const DefaultSessionBudget = 64 << 20

// Cost is one thing a run costs the host and how it is bounded, as
// [Costs] lists them.
type Cost struct {
	// Resource names it, as a limit_exceeded reason does.
	Resource string
	// Limit is the bound a zero configuration sets, in Unit.
	Limit int64
	// Unit is what Limit counts.
	Unit string
	// Setting says how a host changes it.
	Setting string
	// Past says what happens past it.
	Past string
}

// costs is the table Costs returns. The guide's section "What a run may
// cost the app" words every row, and a test holds the two together.
var costs = []Cost{
	{Resource: resourceMemory, Limit: DefaultSessionBudget, Unit: "bytes",
		Setting: "Config.SessionBudget",
		Past:    "the run fails limit_exceeded: what the script sent and holds, and what the browser sent back for it (every reply to its page calls, evaluate results as they are decoded), counted before it is built"},
	{Resource: resourceDisk, Limit: DefaultDiskLimit, Unit: "bytes",
		Setting: "Config.DiskLimit",
		Past:    "the run fails limit_exceeded: what deno writes to the run's own cache folder, which goes with the run"},
	{Resource: "download", Limit: DefaultMaxDownloadBytes, Unit: "bytes of one file tab.waitForDownload saves",
		Setting: "Config.MaxDownloadBytes",
		Past:    "the download is cancelled, nothing of it is kept, and the call fails limit_exceeded"},
	{Resource: "tab slots", Limit: DefaultMaxBackgroundTabs / 2, Unit: "tabs of each kind",
		Setting: "half of Config.MaxBackgroundTabs and of Config.MaxForegroundTabs, at least one",
		Past:    "the run's further opens wait for one of its own tabs to close, and fail timeout if none does; other runs' opens go on"},
	{Resource: "checks", Limit: DefaultCheckRate, Unit: "checks a second by the run's waiting calls together",
		Setting: "Config.CheckRate",
		Past:    "further checks wait their turn: however many waits a run leaves pending, its polling costs the host no more"},
	{Resource: "calls in flight", Limit: rpc.DefaultMaxInFlight, Unit: "calls",
		Setting: "the bridge's MaxInFlight",
		Past:    "further calls wait their turn; what they hold counts as memory"},
	{Resource: "connections", Limit: rpc.DefaultMaxConnecting, Unit: "connections not yet upgraded, all runs together",
		Setting: "the bridge's MaxConnecting",
		Past:    "the oldest is closed"},
	{Resource: "pattern", Limit: cdp.MaxPatternBytes, Unit: "bytes of a RegExp's source",
		Setting: "cdp.MaxPatternBytes",
		Past:    "the call fails limit_exceeded before the pattern is compiled"},
	{Resource: "bulk read", Limit: cdp.MaxReadCells, Unit: "strings in one tab.texts, tab.values or tab.table call",
		Setting: "cdp.MaxReadCells, and cdp.MaxReadChars characters in all",
		Past:    "the call fails limit_exceeded in the page, before anything is sent"},
	{Resource: "typed keys", Limit: cdp.MaxTypeKeys, Unit: "characters one tab.type call types",
		Setting: "cdp.MaxTypeKeys",
		Past:    "the call fails limit_exceeded before a key is pressed"},
	{Resource: "pattern text", Limit: cdp.MaxMatchBytes, Unit: "bytes of the text a pattern is matched against",
		Setting: "cdp.MaxMatchBytes",
		Past:    "the pattern is matched against the first MaxMatchBytes; a match also ends with its call"},
}

// Costs lists what a run may cost the host, each with the bound a zero
// [Config] sets and what happens past it, in a fixed order.
func Costs() []Cost { return slices.Clone(costs) }

// Resources a run is charged for, as named in a limit_exceeded reason.
const (
	resourceMemory = "memory"
	resourceDisk   = "disk"
)

// overLimit fails the run for going past its limit of resource: the first
// reason is kept for the history entry, and the run's process is stopped
// without the protocol grace.
func (r *Run) overLimit(resource string, err error) {
	reason := limitReason(resource, limitWords(err))
	r.noteOverLimit(reason)
	r.kill(reason)
}

// noteOverLimit records reason as the limit the run went past, unless one
// was recorded first.
func (r *Run) noteOverLimit(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.overLimitWhy == "" {
		r.overLimitWhy = reason
	}
}

// limitReason is the history reason of a run that went past its limit of
// resource: the code, the resource, then what asked for more.
func limitReason(resource, what string) string {
	return string(errcode.LimitExceeded) + ": " + resource + ": " + what
}

// limitWords is what asked for more, in capnweb's words without its
// prefixes.
func limitWords(err error) string {
	var ae *capnweb.AbortError
	if errors.As(err, &ae) {
		err = ae.Cause
	}
	return capnweb.WireMessage(err)
}

// runMeter is the run's memory ledger as package cdp sees it: the run's
// session budget. A charge that does not fit fails the run.
type runMeter struct{ r *Run }

func (m runMeter) session() *capnweb.Session {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	return m.r.sess
}

func (m runMeter) Left() int64 {
	if s := m.session(); s != nil {
		return s.MemoryLeft()
	}
	return 1 << 62 // no session: nothing to bound by, as Take charges nothing
}

func (m runMeter) Take(n int64, what string) error {
	s := m.session()
	if s == nil {
		return nil
	}
	if err := s.Reserve(n, what); err != nil {
		m.r.overLimit(resourceMemory, err)
		return err
	}
	return nil
}

func (m runMeter) Give(n int64) {
	if s := m.session(); s != nil {
		s.Unreserve(n)
	}
}

// decodeResult decodes a JSON value the browser returned for the run,
// charging the run's memory for the JSON and for what decoding builds
// before building it; the charge is given back once the value is handed
// to the session, which counts it again as it sends it.
func (r *Run) decodeResult(raw []byte, what string) (any, error) {
	n := int64(len(raw)) + capnweb.JSONCost(raw)
	m := runMeter{r}
	if err := m.Take(n, what); err != nil {
		return nil, limitErr(int(min(n, 1<<31-1)), "%s of %s would take the run past its memory budget (%s); return less, or page through it",
			what, byteCount(int64(len(raw))), byteCount(r.m.cfg.SessionBudget))
	}
	defer m.Give(n)
	return capnweb.DecodeJSON(raw)
}

// byteCount words n bytes for a person: whole MiB or KiB without a
// fraction, others to a tenth.
func byteCount(n int64) string {
	unit := func(size int64, name string) string {
		if n%size == 0 {
			return strconv.FormatInt(n/size, 10) + " " + name
		}
		return strconv.FormatFloat(float64(n)/float64(size), 'f', 1, 64) + " " + name
	}
	switch {
	case n >= 1<<20:
		return unit(1<<20, "MiB")
	case n >= 1<<10:
		return unit(1<<10, "KiB")
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// DefaultCheckRate is [Config.CheckRate] when it is zero: ten waits at
// their slowest backoff (a check every 100 ms) at once, far more than a
// script waiting on its pages needs.
const DefaultCheckRate = 100

// checkPacer gives a run's checks their turns at most rate a second, with
// bursts of up to a quarter second's worth: the rate as a virtual clock
// (tat, the time the next turn is due at) that each turn moves on by one
// interval. It counts the turns it gave.
type checkPacer struct {
	every, burst time.Duration // every 0: no pacing
	turns        atomic.Int64
	mu           sync.Mutex
	tat          time.Time
}

// newCheckPacer paces rate checks a second; a rate below one paces
// nothing, and only counts.
func newCheckPacer(rate int) *checkPacer {
	if rate < 1 {
		return &checkPacer{}
	}
	return &checkPacer{every: time.Second / time.Duration(rate), burst: time.Second / 4}
}

func (p *checkPacer) Turn(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.every == 0 {
		p.turns.Add(1)
		return nil
	}
	p.mu.Lock()
	now := time.Now()
	if p.tat.Before(now) {
		p.tat = now
	}
	at := p.tat.Add(-p.burst)
	p.tat = p.tat.Add(p.every)
	p.mu.Unlock()
	if wait := time.Until(at); wait > 0 {
		tm := time.NewTimer(wait)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
			// The turn goes back, so waits given up leave no debt to
			// those that go on.
			p.mu.Lock()
			p.tat = p.tat.Add(-p.every)
			p.mu.Unlock()
			return ctx.Err()
		}
	}
	p.turns.Add(1)
	return nil
}
