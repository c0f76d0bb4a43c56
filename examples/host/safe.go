package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tranquil/automation/display"
)

// safe is applied to every piece of text a script controls before it is
// printed: its path (and so the folders above it), notifications, output
// and log lines, pane-control names and what they return, results, error
// messages and history. Escape sequences in them could otherwise recolour
// or rewrite what the user reads, the consent prompt included, and a line
// break could forge a line of the program's own.
func safe(s string) string { return display.Line(s) }

// safeOutput is safe for one line of a script's output, where a tab is
// layout (tables of tab-separated values) and is kept.
func safeOutput(line string) string { return display.Text(strings.ReplaceAll(line, "\n", `\n`)) }

// terminalWriter is the last guard on the program's standard streams:
// whatever a print forgot to pass through safe still reaches the terminal
// escaped. Each Write is escaped on its own, which suits fmt's one Write
// per call.
type terminalWriter struct{ w io.Writer }

func (t terminalWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, display.Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escapeJSON rewrites, in encoded JSON, every character display would
// escape that encoding/json leaves raw (DEL, the C1 controls, bidi and
// other format characters) as a \u escape: it decodes to the same text,
// and prints as plain ASCII. Outside strings JSON holds only ASCII.
func escapeJSON(data []byte) []byte {
	var b bytes.Buffer
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		// ASCII other than DEL is kept: encoding/json escaped the C0
		// controls inside strings, and outside them they are layout.
		keep := r < utf8.RuneSelf && r != 0x7f
		keep = keep || r == '\u200c' || r == '\u200d' || (unicode.IsGraphic(r) && !(r == utf8.RuneError && n == 1))
		if keep {
			b.Write(data[:n])
		} else {
			units := []uint16{uint16(r)}
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				units = []uint16{uint16(r1), uint16(r2)}
			}
			for _, u := range units {
				h := strconv.FormatUint(uint64(u), 16)
				b.WriteString(`\u` + "0000"[len(h):] + h)
			}
		}
		data = data[n:]
	}
	return b.Bytes()
}
