package runner

import (
	"errors"
	"strconv"

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
	return 0 // no session yet: no call can be under way
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

// byteCount words n bytes for a person.
func byteCount(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
