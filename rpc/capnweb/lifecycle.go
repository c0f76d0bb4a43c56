package capnweb

import (
	"errors"
	"time"
)

// Lifecycle: how a session ends. Close, Abort, the peer's abort or close
// and a failing transport all come through end, once.

// Close ends the session without an abort message, closes the transport
// normally and waits for every goroutine of the session. It is idempotent.
func (s *Session) Close() error {
	s.end(ErrClosed, nil, false)
	s.wg.Wait()
	return nil
}

// Abort ends the session, telling the peer why: it sends an abort message
// carrying reason (encoded like a call's error), then closes the transport
// with the reason. Unlike Close it does not wait for the session's
// goroutines, so a method may abort its own session; call Close afterwards
// to wait.
func (s *Session) Abort(reason error) {
	if reason == nil {
		reason = errors.New("session aborted")
	}
	s.end(&AbortError{Cause: reason}, reason, true)
}

// end moves the session to its final state once. With sendAbort, an abort
// frame carrying reason is queued before the transport closes.
func (s *Session) end(err error, reason error, sendAbort bool) {
	var abortFrame []byte
	if sendAbort {
		sent := reason
		if s.opts.AbortReason != nil {
			if r := s.opts.AbortReason(reason); r != nil {
				sent = r
			}
		}
		re := s.lowerError(sent, 0)
		s.mu.Lock()
		b := []byte(`["abort",`)
		b, encErr := s.encode(b, re, 0)
		s.mu.Unlock()
		if encErr == nil {
			abortFrame = append(b, ']')
		}
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.err = err
	s.closeErr = reason
	if abortFrame != nil {
		s.outq = append(s.outq, abortFrame)
	}
	imports := s.imports
	exports := s.exports
	for _, imp := range imports {
		imp.inTable = false
	}
	s.imports = map[int64]*importEntry{}
	s.exports = map[int64]*exportEntry{}
	close(s.done)
	s.mu.Unlock()
	s.signal()
	s.cancel()
	if s.handoff != nil {
		s.handoff.Stop()
	}
	time.AfterFunc(s.opts.closeTimeout(), s.ioCancel)

	failure := err
	for _, imp := range imports {
		if imp.fut != nil {
			imp.fut.settle(nil, failure)
		}
	}
	for _, e := range exports {
		e := e
		e.fut.onDone(func() { s.releaseTree(e.fut.val) })
	}
	// Dispose whatever is still alive, main included.
	s.objMu.Lock()
	var left []*localObj
	for o := range s.objs {
		if !o.disposed {
			o.disposed = true
			left = append(left, o)
		}
	}
	s.objs = map[*localObj]struct{}{}
	s.byKey = map[any]*localObj{}
	s.objMu.Unlock()
	for _, o := range left {
		o.dispose()
	}
}
