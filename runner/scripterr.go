package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/internal/textfold"
)

// scriptMessage words a browser error for the script that made the call:
// what happened, where it waited and what it saw, and what to do. cdp
// writes its messages for people, so this adds the advice that names the
// script's own knobs (its timeout, its sites=) and takes the message of
// the error that carries the code, leaving out whatever wrapped it on the
// way. code is the error's code. No Go, protocol or bridge wording gets
// through (plainWords).
func scriptMessage(err error, code errcode.Code) string {
	var se *cdp.SiteError
	var wt *cdp.WaitTimeoutError
	var le *cdp.LocatorError
	var coded errcode.Coder
	switch {
	case errors.As(err, &se):
		if se.Sites == nil {
			return fmt.Sprintf("%s refused: the document at %s is not a web page", se.Method, se.Site)
		}
		return fmt.Sprintf("%s refused on %s, which is not on this script's sites= (%s): add %s to sites= in its // @permissions line if it should act there, or check the tab's address",
			se.Method, se.Site, strings.Join(se.Sites, ", "), se.Site)
	case errors.As(err, &wt):
		if errors.Is(wt.Err, context.Canceled) {
			return plainWords(wt.Error(), code)
		}
		return plainWords(wt.Error(), code) + ": " + fixTimeout
	case code == errcode.Closed:
		return "the tab was closed, or its browser is gone: open the tab again"
	case errors.Is(err, context.Canceled):
		return "the call was cancelled: the run is ending"
	case errors.As(err, &le) && le.Waited > 0:
		// Said first: how long it waited, and for what; then what it saw.
		seen := *le
		seen.Target, seen.Waited = "", 0
		msg := fmt.Sprintf("waited %s for %s: %s", waitedFor(le.Waited), le.Target, seen.Error())
		return plainWords(msg, code) + fixOf(code, true)
	case code == errcode.Timeout:
		// A bare deadline, of a wait cdp does not name.
		return "timed out: the call took longer than its timeout: " + fixTimeout
	case errors.As(err, &coded):
		return plainWords(scrubEndpoints(coded.Error()), code) + fixOf(code, false)
	}
	return plainWords(scrubEndpoints(err.Error()), code)
}

// fixTimeout is the advice for a call that ran out of time.
const fixTimeout = "pass a larger { timeout }, or wait for what comes before it first (tab.waitFor, tab.waitForNavigation)"

// fixOf is the advice that follows a message of code, "" when cdp's own
// message says it already or there is none. waited is whether the call
// waited for its target first.
func fixOf(code errcode.Code, waited bool) string {
	switch code {
	case errcode.NotFound:
		if waited {
			return ": check the target, or pass a larger { timeout } if it comes later"
		}
		return ": check the target, or wait for it first (tab.waitFor)"
	case errcode.Hidden, errcode.Disabled:
		return ": wait for it (tab.waitFor, tab.expect), or name the element meant"
	case errcode.Obscured:
		return ": close or wait out what covers it first"
	case errcode.StaleRef:
		return ": look the element up again"
	case errcode.NotStable:
		return ": wait for the page to settle (tab.expect) first"
	}
	return ""
}

// waitedFor writes a wait's length as the messages of cdp do: "300 ms",
// "5 s".
func waitedFor(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Round(10*time.Millisecond).Milliseconds())
	}
	return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
}

// hasGoWording reports whether msg holds words of Go, of the DevTools
// protocol or of the bridge, which mean nothing to a script's author:
// what the regular expression
//
//	context deadline exceeded|context canceled|\bcdp[.:]|\brpcc\b|rpc error|(?i:websocket)|\bEOF\b|capnweb|\*[a-z]+\.[A-Z]\w+|\b(?:cdp|rpcc|runtime|net|os|io|syscall)\.[A-Z]\w+|goroutine|panic
//
// matches. A message can quote a page's or a script's text of megabytes,
// which that expression took tens of milliseconds to scan: this reads each
// byte once and looks a few bytes around it.
func hasGoWording(msg string) bool {
	for i := 0; i < len(msg); i++ {
		rest := msg[i:]
		switch msg[i] {
		case 'c':
			if strings.HasPrefix(rest, "context deadline exceeded") || strings.HasPrefix(rest, "context canceled") ||
				strings.HasPrefix(rest, "capnweb") {
				return true
			}
			// cdp.Name is this too, and rpcc.Name is \brpcc\b.
			if wordStartsAt(msg, i) && len(rest) > 3 && rest[:3] == "cdp" && (rest[3] == '.' || rest[3] == ':') {
				return true
			}
		case 'r':
			if strings.HasPrefix(rest, "rpc error") || isWordAt(msg, i, "rpcc") {
				return true
			}
		case 'E':
			if isWordAt(msg, i, "EOF") {
				return true
			}
		case 'g':
			if strings.HasPrefix(rest, "goroutine") {
				return true
			}
		case 'p':
			if strings.HasPrefix(rest, "panic") {
				return true
			}
		case 'w', 'W':
			// 'e' folds to 'E' alone: most w's are over at it.
			if len(rest) > 1 && rest[1]|0x20 == 'e' {
				if _, ok := textfold.HasPrefix(rest, "websocket"); ok {
					return true
				}
			}
		case '.':
			if exportedNameAt(msg, i+1) && (goTypeEndsAt(msg, i) || goPackageEndsAt(msg, i)) {
				return true
			}
		}
	}
	return false
}

// goTypeEndsAt reports whether msg[:end] ends with \*[a-z]+.
func goTypeEndsAt(msg string, end int) bool {
	j := end
	for j > 0 && 'a' <= msg[j-1] && msg[j-1] <= 'z' {
		j--
	}
	return j < end && j > 0 && msg[j-1] == '*'
}

// goPackageEndsAt reports whether msg[:end] ends with one of the packages
// whose names give Go away, as a whole word.
func goPackageEndsAt(msg string, end int) bool {
	for _, pkg := range [...]string{"runtime", "net", "os", "io", "syscall"} {
		if strings.HasSuffix(msg[:end], pkg) && wordStartsAt(msg, end-len(pkg)) {
			return true
		}
	}
	return false
}

// exportedNameAt reports whether msg at i holds [A-Z]\w.
func exportedNameAt(msg string, i int) bool {
	return i+1 < len(msg) && 'A' <= msg[i] && msg[i] <= 'Z' && isWordByte(msg[i+1])
}

// isWordAt reports whether msg holds word at i as a whole word (\bword\b).
func isWordAt(msg string, i int, word string) bool {
	end := i + len(word)
	return strings.HasPrefix(msg[i:], word) && wordStartsAt(msg, i) && (end == len(msg) || !isWordByte(msg[end]))
}

// wordStartsAt reports whether no word character comes right before i,
// as \b before a word character means. A byte of a multi-byte character
// is none, as regexp's \b counts only ASCII.
func wordStartsAt(msg string, i int) bool { return i == 0 || !isWordByte(msg[i-1]) }

// isWordByte reports whether b is \w: [0-9A-Za-z_].
func isWordByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_'
}

// plainWords returns msg unless it holds Go, protocol or bridge wording
// (a failure deep in a connection); then what code means, in words.
func plainWords(msg string, code errcode.Code) string {
	if !hasGoWording(msg) {
		return msg
	}
	switch code {
	case errcode.Error, "":
		return "the browser did not carry out the call: its connection failed; try again"
	case errcode.Navigation:
		return "the page failed to load"
	}
	return code.Meaning()
}
