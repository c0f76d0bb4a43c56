package traceview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// span formats a duration as a reader compares them: "850 ms", "11.4 s",
// "2 min 05 s", "1 h 02 min". Below a millisecond it keeps one decimal,
// so a fast call does not read as taking no time at all.
func span(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + span(-d)
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
	case d < time.Second:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(float64(d.Truncate(100*time.Millisecond))/float64(time.Second), 'f', 1, 64) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%d min %02d s", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%d h %02d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// offset formats when something happened relative to the run's start:
// "+0.4 s", "+1 min 05 s". Something recorded before the start (a clock
// step) shows as "+0.0 s" rather than a negative time that reads as a bug.
func offset(start, at time.Time) string {
	d := at.Sub(start)
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return "+" + strconv.FormatFloat(float64(d.Truncate(100*time.Millisecond))/float64(time.Second), 'f', 1, 64) + " s"
	}
	return "+" + span(d)
}

// barScale is the width of the SVG a duration bar is drawn in: bars are
// SVG rectangles positioned by attributes, since the CSP allows no inline
// style and a class per width would be a table of hundreds.
const barScale = 1000

// minBar keeps a call too short to measure visible as a sliver.
const minBar = 4

// bar is where a span sits in the run, in barScale units.
type bar struct{ X, W int }

// barOf places [at, at+d) within a run of total starting at start.
func barOf(start, at time.Time, d, total time.Duration) bar {
	if total <= 0 {
		return bar{W: minBar}
	}
	x := scale(at.Sub(start), total)
	w := scale(d, total)
	w = max(w, minBar)
	x = min(x, barScale-minBar)
	w = min(w, barScale-x)
	return bar{X: x, W: w}
}

func scale(d, total time.Duration) int {
	f := float64(d) / float64(total) * barScale
	if f < 0 || math.IsNaN(f) {
		return 0
	}
	return int(min(f, barScale))
}

// maxResult bounds the result the run page shows; a script's result is
// its own and may be large.
const maxResult = 16 << 10

// prettyJSON indents a run's result for reading, cut to maxResult bytes.
func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return cutEnd(string(raw), maxResult)
	}
	return cutEnd(b.String(), maxResult)
}

// cutEnd keeps the start of s, at most n bytes on a rune boundary, with
// "…" marking the cut.
func cutEnd(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// sameSentence reports whether a and b say the same thing, so the run
// page prints it once: equal, or one holding the other, once trimmed.
func sameSentence(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == "" || b == "" {
		return false
	}
	return strings.Contains(a, b) || strings.Contains(b, a)
}
