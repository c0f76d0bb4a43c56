package wsconn

// pongFrame is an empty, unmasked pong: what a server sends, unasked, to
// acknowledge data it has no reply for (RFC 6455 §5.5.3 allows an
// unsolicited pong; clients ignore it).
var pongFrame = []byte{0x8a, 0x00}

// frameCursor follows the server's WebSocket frames as they are written,
// so that a pong goes in only between two frames, never inside one that
// is half written.
type frameCursor struct {
	hdr  [14]byte
	nhdr int    // header bytes seen of the frame under way
	left uint64 // its payload bytes still to come
}

// between reports whether the bytes so far end with a whole frame.
func (f *frameCursor) between() bool { return f.nhdr == 0 && f.left == 0 }

// advance accounts for p, written after everything before.
func (f *frameCursor) advance(p []byte) {
	for len(p) > 0 {
		if f.left > 0 {
			n := uint64(len(p))
			if n > f.left {
				n = f.left
			}
			f.left -= n
			p = p[n:]
			continue
		}
		f.hdr[f.nhdr] = p[0]
		f.nhdr++
		p = p[1:]
		if f.nhdr < 2 || f.nhdr < headerLen(f.hdr[1]) {
			continue
		}
		h := f.hdr[:f.nhdr]
		switch n := uint64(h[1] & 0x7f); n {
		case 126:
			f.left = uint64(h[2])<<8 | uint64(h[3])
		case 127:
			for _, b := range h[2:10] {
				f.left = f.left<<8 | uint64(b)
			}
		default:
			f.left = n
		}
		f.nhdr = 0
	}
}

// headerLen is the length of a frame header whose second byte is b1.
func headerLen(b1 byte) int {
	n := 2
	switch b1 & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&0x80 != 0 {
		n += 4 // the masking key
	}
	return n
}
