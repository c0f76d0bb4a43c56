package history

import (
	"fmt"
	"unicode/utf8"
)

// Defaults and bounds of the byte caps of Options.
const (
	// DefaultEntryCap is Options.EntryCap when it is zero: room for the
	// runner's default 1 MiB of output, escaped as JSON, beside a result
	// and an action log.
	DefaultEntryCap = 2 << 20
	// MinEntryCap is the least Options.EntryCap: room for every field of
	// an entry cut to fieldKeep bytes, escaped.
	MinEntryCap = 64 << 10
	// DefaultMaxBytes is Options.MaxBytes when it is zero.
	DefaultMaxBytes = 128 << 20
	// MaxIDBytes bounds a run's ID, which is never cut.
	MaxIDBytes = 1 << 10
)

// fieldKeep is what the last way of fitting an entry keeps of each of its
// text fields.
const fieldKeep = 1 << 10

// cutRoom is room in an entry's line for the marker a cut of its output
// adds.
const cutRoom = 64

// fit returns e and its line, or, when the line is longer than limit
// bytes, a smaller form of e that fits and its line: its output cut in
// the middle (the head and the tail kept, as Output keeps them, and
// OutputTruncated set), then without actions, warnings and result, then
// with each text field cut to fieldKeep bytes. An ID past MaxIDBytes is
// refused by Put before, so the last form always fits a limit of at least
// MinEntryCap.
func fit(e Entry, line []byte, limit int) (Entry, []byte, error) {
	var err error
	for len(line) > limit && e.Output != "" {
		bare := e
		bare.Output = ""
		base, err := encodeEntry(bare)
		if err != nil {
			return Entry{}, nil, err
		}
		// Escapes make the output take more in the line than in itself:
		// keep the share of it that fits, as the line encodes it.
		room, took := int64(limit-len(base)-cutRoom), int64(len(line)-len(base))
		keep := int64(0)
		if room > 0 {
			keep = int64(len(e.Output)) * room / took
		}
		e.Output, e.OutputTruncated = cutMiddle(e.Output, len(e.Output)-int(keep)), true
		if line, err = encodeEntry(e); err != nil {
			return Entry{}, nil, err
		}
	}
	for step := 0; len(line) > limit; step++ {
		switch step {
		case 0:
			e.Actions = nil
		case 1:
			e.Warnings = nil
		case 2:
			e.Result = nil
		case 3:
			for _, p := range []*string{&e.Script, &e.Trigger, &e.Signal, &e.Reason, &e.FirstError, &e.Permissions} {
				*p = truncateUTF8(*p, fieldKeep)
			}
		default:
			return Entry{}, nil, fmt.Errorf("%w: run %s does not fit in %d bytes", ErrInvalidEntry, e.ID, limit)
		}
		if line, err = encodeEntry(e); err != nil {
			return Entry{}, nil, err
		}
	}
	return e, line, nil
}

// cutMiddle removes at least n bytes from the middle of s, leaving its
// head and tail around a line that says how many were left out; the cut
// never splits a UTF-8 sequence. With n at least len(s), nothing is left.
func cutMiddle(s string, n int) string {
	if n >= len(s) {
		return ""
	}
	keep := len(s) - n
	head, tail := keep/2, len(s)-(keep-keep/2)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n… %d bytes omitted …\n%s", s[:head], tail-head, s[tail:])
}
