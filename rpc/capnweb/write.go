package capnweb

// The write path: frames queue in s.outq and leave in order, written by
// whichever goroutine finds nobody writing, or by the writer goroutine
// (see item 4 of the contract in concurrency.go).

func (s *Session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// enqueueLocked queues a frame; s.mu must be held. The caller must call
// flush once it has released s.mu.
func (s *Session) enqueueLocked(b []byte) {
	if s.ended {
		return
	}
	s.outq = append(s.outq, b)
}

// flush sends the queued frames. When nobody is writing, the caller writes
// them itself, which saves waking the writer goroutine on the path of every
// call. The reader may do so only without waiting: a reader blocked on a
// full socket, facing a peer blocked the same way, would stop both sides.
// So the reader writes through the transport's no-wait path when it has
// one, and leaves what the socket did not take to the writer goroutine.
func (s *Session) flush() {
	s.mu.Lock()
	if s.writing || len(s.outq) == 0 {
		s.mu.Unlock()
		return
	}
	if s.ended {
		s.mu.Unlock()
		s.signal()
		return
	}
	s.writing = true
	if s.inReader.Load() {
		nw, ok := s.t.(NoWaitSender)
		if !ok {
			s.writing = false
			s.mu.Unlock()
			s.signal()
			return
		}
		batch := s.outq
		s.outq = nil
		s.mu.Unlock()
		sent, flushed, err := nw.SendNoWait(s.ioCtx, batch)
		s.mu.Lock()
		if !sent {
			s.outq = append(batch, s.outq...)
		}
		s.writing = false
		// The writer skips its wake-ups while we write, so it must hear
		// from us about anything left, and about the end (it closes).
		again := !sent || !flushed || len(s.outq) > 0 || s.ended
		s.mu.Unlock()
		if err != nil {
			s.end(&AbortError{Remote: true, Cause: err}, nil, false)
		}
		if again {
			s.signal()
		}
		return
	}
	s.drainLocked()
	s.writing = false
	again := s.ended || len(s.outq) > 0
	s.mu.Unlock()
	if again {
		s.signal()
	}
}

// drainLocked writes queued frames until none are left, releasing s.mu
// while it writes. s.writing must be set by the caller.
func (s *Session) drainLocked() {
	for len(s.outq) > 0 {
		batch := s.outq
		s.outq = nil
		s.mu.Unlock()
		var err error
		bt, batched := s.t.(Batcher)
		batched = batched && len(batch) > 1
		if batched {
			bt.BeginBatch()
		}
		for _, b := range batch {
			if err = s.t.Send(s.ioCtx, b); err != nil {
				break
			}
		}
		if batched {
			if ferr := bt.EndBatch(); err == nil {
				err = ferr
			}
		}
		if err != nil {
			s.end(&AbortError{Remote: true, Cause: err}, nil, false)
			s.mu.Lock()
			s.outq = nil
			return
		}
		s.mu.Lock()
	}
}

func (s *Session) writeLoop() {
	defer s.wg.Done()
	bt, batched := s.t.(Batcher)
	for range s.wake {
		s.mu.Lock()
		if s.writing {
			// An inline writer is at work; it signals again when done.
			s.mu.Unlock()
			continue
		}
		s.writing = true
		s.drainLocked()
		s.mu.Unlock()
		var err error
		if batched {
			// The reader may have left part of its last batch unwritten.
			err = bt.EndBatch()
		}
		s.mu.Lock()
		s.writing = false
		ended, reason, again := s.ended, s.closeErr, len(s.outq) > 0
		s.mu.Unlock()
		switch {
		case ended:
			s.t.Close(reason)
			s.ioCancel()
			return
		case err != nil:
			s.end(&AbortError{Remote: true, Cause: err}, nil, false) // wakes this loop to close
		case again:
			s.signal()
		}
	}
}
