package capnweb

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Dispatch: the reader decodes each frame and hands it to the handler of
// its message type (the handlers of tables.go). pull and release, which
// every call brings, take a fast path that builds no value tree.

// handle processes one frame from the peer. A returned error aborts the
// session.
//
// The parsed frame counts against the session's memory budget while it is
// handled, and a panic handling it ends this session only.
func (s *Session) handle(msg []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.peerPanic(r)
		}
	}()
	if done, err := s.handleFast(msg); done {
		return err
	}
	s.parser.limit, s.parser.budget = max(s.mem.left(), 1), s.mem.max
	v, err := s.parser.parse(msg)
	if err != nil {
		return err
	}
	frame := tally{m: &s.mem}
	defer frame.release()
	if err := frame.take(s.parser.cost, "a message"); err != nil {
		return err
	}
	return s.handleValue(v, msg, &frame)
}

// handleValue processes a parsed frame; msg is its text, for errors.
// frame holds what the parsed frame counts; a push or resolution that
// keeps the frame's values takes it over.
func (s *Session) handleValue(v any, msg []byte, frame *tally) error {
	m, ok := v.([]any)
	if !ok || len(m) == 0 {
		return protoErrorf("bad RPC message: %s", msg)
	}
	typ, _ := m[0].(string)
	switch typ {
	case "push":
		if len(m) != 2 {
			break
		}
		return s.handlePush(m[1], frame)
	case "stream", "pipe":
		if typ == "stream" && len(m) != 2 || typ == "pipe" && len(m) != 1 {
			break
		}
		s.mu.Lock()
		s.peerPushes++ // they share the push counter
		s.mu.Unlock()
		return fmt.Errorf("%w: %q messages (streams) are not supported by this peer", ErrUnsupported, typ)
	case "pull":
		if len(m) != 2 {
			break
		}
		id, ok := wireID(m[1])
		if !ok {
			break
		}
		return s.handlePull(id)
	case "resolve", "reject":
		if len(m) != 3 {
			break
		}
		id, ok := wireID(m[1])
		if !ok {
			break
		}
		return s.handleResolve(id, m[2], typ == "reject", frame)
	case "release":
		if len(m) != 3 {
			break
		}
		id, ok1 := wireID(m[1])
		n, ok2 := wireID(m[2])
		if !ok1 || !ok2 || n < 0 {
			break
		}
		return s.handleRelease(id, n)
	case "abort":
		if len(m) != 2 {
			break
		}
		t := s.newTally()
		defer t.release()
		ev := &evaluator{s: s, src: s, t: t}
		val, err := ev.eval(m[1], 0)
		if err != nil {
			return err
		}
		cause := s.toRemoteError(val)
		s.releaseTree(val)
		return &AbortError{Remote: true, Cause: cause}
	}
	return protoErrorf("bad RPC message: %s", msg)
}

// handleFast handles the two frames every call brings, ["pull",id] and
// ["release",id,n], spelled the way both implementations write them,
// without building a value tree. It reports false for anything else, which
// the general path then handles (and refuses if it must).
func (s *Session) handleFast(msg []byte) (bool, error) {
	const pull, release = `["pull",`, `["release",`
	switch {
	case len(msg) > len(pull) && string(msg[:len(pull)]) == pull:
		id, rest, ok := leadingID(msg[len(pull):])
		if ok && string(rest) == "]" {
			return true, s.handlePull(id)
		}
	case len(msg) > len(release) && string(msg[:len(release)]) == release:
		id, rest, ok := leadingID(msg[len(release):])
		if ok && len(rest) > 1 && rest[0] == ',' {
			n, rest, ok := leadingID(rest[1:])
			if ok && n >= 0 && string(rest) == "]" {
				return true, s.handleRelease(id, n)
			}
		}
	}
	return false, nil
}

// leadingID reads an integer in plain JSON spelling (optional minus, no
// leading zeros, at most 15 digits so it is a safe integer) from the start
// of b.
func leadingID(b []byte) (n int64, rest []byte, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	i := 0
	for i < len(b) && i < 16 && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	if i == 0 || i > 15 || i > 1 && b[0] == '0' {
		return 0, nil, false
	}
	if neg {
		n = -n
	}
	return n, b[i:], true
}

func wireID(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i > maxSafeInt || i < -maxSafeInt {
		f, ferr := strconv.ParseFloat(string(n), 64)
		if ferr != nil || f != float64(int64(f)) || f > maxSafeInt || f < -maxSafeInt {
			return 0, false
		}
		return int64(f), true
	}
	return i, true
}
