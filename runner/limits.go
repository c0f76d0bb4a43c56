package runner

import (
	"fmt"
	"strings"

	"github.com/tranquil/automation/rpc/capnweb"
	"github.com/tranquil/automation/runner/internal/proc"

	"github.com/tranquil/automation/errcode"
)

// Limits of a run.
const (
	// DefaultMemoryHeadroomMB is what a zero [Config.MemoryMB] adds to
	// [Config.HeapMB]: room for ArrayBuffers and other memory outside
	// V8's heap, and for the about 560 MiB V8 reserves at start.
	DefaultMemoryHeadroomMB = 1024
	// MinMemoryMB is the least [Config.MemoryMB] accepted: deno 2.9 does
	// not start on Linux under about 640 MiB.
	MinMemoryMB = 768
	// MaxPaneControls bounds the pane controls one run has registered at
	// once; replacing a registered name does not count again.
	MaxPaneControls = 64
	// MaxResultBytes bounds the value of context.result, as JSON. The
	// result goes into the run history whole.
	MaxResultBytes = 1 << 20
	// MaxActions bounds a run's action log in its history entry: a script
	// that evaluates in a loop logs every call. The first MaxActions-1 are
	// kept, then one entry saying how many more were not.
	MaxActions = 1000
	// MaxPayloadBytes bounds the JSON of an event's payload
	// ([Run.SendEvent]) and of a trigger's ([Request.TriggerPayload]),
	// which reaches the script through its environment.
	MaxPayloadBytes = 64 << 10
)

// ErrMemoryLimit reports a memory limit that cannot be applied: a
// [Config.MemoryMB] too low for deno to start, or an operating system that
// refused the limit (the run is then not started).
var ErrMemoryLimit = proc.ErrMemoryLimit

// setMemoryLimit fills in the zero value of MemoryMB and checks it; a
// negative value means no limit and is kept as -1.
func setMemoryLimit(cfg *Config) error {
	switch {
	case cfg.MemoryMB == 0:
		cfg.MemoryMB = cfg.HeapMB + DefaultMemoryHeadroomMB
	case cfg.MemoryMB < 0:
		cfg.MemoryMB = -1
	case cfg.MemoryMB < MinMemoryMB:
		return fmt.Errorf("%w: MemoryMB %d is below %d, under which deno cannot start", ErrMemoryLimit, cfg.MemoryMB, MinMemoryMB)
	}
	return nil
}

// limitErr is the error a script gets for going past a limit.
func limitErr(limit int, format string, args ...any) error {
	return capnweb.Errorf(capnweb.NameRangeError, map[string]any{"code": string(errcode.LimitExceeded), "limit": limit}, format, args...)
}

// outOfMemory reports whether deno printed line because the process ran
// out of memory: V8's fatal heap and process errors, a failed allocation
// in deno's own code (which aborts), or an ArrayBuffer the limit refused
// (a RangeError the script did not catch).
func outOfMemory(line string) bool {
	return strings.Contains(line, "Fatal JavaScript out of memory") ||
		strings.Contains(line, "Fatal process out of memory") ||
		(strings.HasPrefix(line, "memory allocation of ") && strings.HasSuffix(line, " failed")) ||
		strings.Contains(line, "RangeError: Array buffer allocation failed")
}

// outOfMemory returns the first line that said the process ran out of
// memory, or "".
func (f *firstError) outOfMemory() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.oom
}

// oomReason is the history reason of a run that died of memory; line is
// what deno said.
func (m *Manager) oomReason(line string) string {
	process := "not limited on this system"
	if proc.MemoryEnforced && m.cfg.MemoryMB > 0 {
		process = fmt.Sprintf("%d MiB", m.cfg.MemoryMB)
	} else if m.cfg.MemoryMB < 0 {
		process = "not limited"
	}
	return fmt.Sprintf("out of memory: the run reached its memory limit (JavaScript heap %d MiB, process %s): %s",
		m.cfg.HeapMB, process, strings.Trim(line, "# "))
}
