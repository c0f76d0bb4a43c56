package capnweb

// Host code that builds values on a peer's behalf (a browser's reply to a
// call the peer made, decoded for it) charges them to the same budget as
// the peer's own frames: one count per session of what the peer makes the
// host hold, wherever the memory is taken.

// Reserve charges n bytes of host memory to the session's budget before
// the caller takes it; what names it in the error. It fails with an error
// wrapping ErrLimit, and charges nothing, when n does not fit what is
// left. The caller gives it back with Unreserve once the memory is no
// longer held. Reserve does not end the session: the caller decides what
// going past the budget ends.
func (s *Session) Reserve(n int64, what string) error {
	return s.mem.take(n, what)
}

// Unreserve gives back n bytes taken with Reserve.
func (s *Session) Unreserve(n int64) { s.mem.give(n) }

// MemoryLeft is what the session's budget has left: the most a Reserve can
// take now. It is a large number for a session with no budget.
func (s *Session) MemoryLeft() int64 { return s.mem.left() }

// JSONCost is an upper bound on what [DecodeJSON] builds from data, in
// the units the session's budget counts: a slot per value, a header per
// array and object, and the bytes of every string and key. It reads data
// once and builds nothing, so a caller can charge a value before decoding
// it. data need not be valid JSON; the bound is then of no use, but
// DecodeJSON fails on it anyway.
func JSONCost(data []byte) int64 {
	n := int64(slotBytes)
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{':
			n += slotBytes + objectBytes
		case '[':
			n += slotBytes + sliceBytes
		case '"':
			// A key counts as a value would: an upper bound.
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			n += slotBytes + sliceBytes + int64(j-i)
			i = j
		case 't', 'f', 'n':
			n += slotBytes + 8
			for i+1 < len(data) && data[i+1] >= 'a' && data[i+1] <= 'z' {
				i++
			}
		case ' ', '\t', '\r', '\n', ',', ':', '}', ']':
		default: // a number
			n += slotBytes + 8
			for i+1 < len(data) && isNumberByte(data[i+1]) {
				i++
			}
		}
	}
	return n
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
