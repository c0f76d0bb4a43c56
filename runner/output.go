package runner

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tranquil/automation/history"
)

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

// output is what a run keeps and sends of its process's output, shared by
// both streams.
type output struct {
	r      *Run
	kept   *history.Output
	budget *eventBudget
	errs   firstError // the stderr scan
}

func newOutput(r *Run, limit int) *output {
	return &output{r: r, kept: history.NewOutput(limit), budget: &eventBudget{left: limit}}
}

// lineWriter splits one stream of a run's output into lines, as os/exec
// copies it from the process; a line longer than maxEventLine arrives in
// pieces, so no line can stall it. Each stream has its own, written by
// one goroutine at a time.
type lineWriter struct {
	o      *output
	stream string
	scan   bool // stderr: look for the first error
	part   []byte
}

func (o *output) writer(stream string) *lineWriter {
	return &lineWriter{o: o, stream: stream, scan: stream == "stderr"}
}

// Write takes the next bytes of the stream.
func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := maxEventLine - len(w.part)
		i := bytes.IndexByte(p[:min(len(p), room)], '\n')
		switch {
		case i >= 0:
			w.piece(p[:i+1])
			p = p[i+1:]
		case len(p) < room:
			w.part = append(w.part, p...)
			p = nil
		default:
			w.piece(p[:room])
			p = p[room:]
		}
	}
	return n, nil
}

// flush hands on the stream's last line when it had no newline; it is
// called once the stream has ended.
func (w *lineWriter) flush() {
	if len(w.part) > 0 {
		w.piece(nil)
	}
}

// piece ends the current line with tail.
func (w *lineWriter) piece(tail []byte) {
	line := tail
	if len(w.part) > 0 {
		line = append(w.part, tail...)
		w.part = w.part[:0]
	}
	o, r := w.o, w.o.r
	text := strings.TrimRight(string(line), "\r\n")
	if w.scan && r.siteLine(text) {
		return // the bootstrap's, for the trace
	}
	o.kept.Write(line)
	if w.scan {
		o.errs.see(text)
	}
	if ok, announce := o.budget.take(len(line)); ok {
		r.emit(Event{RunID: r.id, Time: time.Now(), Kind: EventOutput, Stream: w.stream, Line: text})
	} else if announce {
		r.emit(Event{RunID: r.id, Time: time.Now(), Kind: EventOutput, Stream: w.stream, Line: "[output limit reached; further output is kept only in part]"})
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
	// ended is the code the bootstrap's exitLine named, when endedSet:
	// the script ended itself with it, so it is the script's, not the
	// bootstrap's.
	ended    int
	endedSet bool
}

// exitLine is what the bootstrap prints before a script's own non-zero
// exit (Deno.exit, context.exit), with the code.
const exitLine = "tranquil: the script ended itself with exit code "

// endedItself reports whether the script itself ended the run with code.
func (f *firstError) endedItself(code int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.endedSet && f.ended == code
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
	if n, err := strconv.Atoi(strings.TrimPrefix(line, exitLine)); err == nil && strings.HasPrefix(line, exitLine) {
		f.ended, f.endedSet = n, true
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
