package wsconn

import (
	"net"
	"time"
)

// Defaults of [TuneOptions]' bounds on lingering.
const (
	// DefaultLinger is long enough for a busy peer to read the abort and
	// close; the SDK does so within milliseconds.
	DefaultLinger = time.Second
	// DefaultLingerBytes is a few large frames: what a peer that was
	// writing one when the abort left may still have on its way.
	DefaultLingerBytes = 16 << 20
)

// lingerBuffer is what a lingering connection reads into, and discards.
const lingerBuffer = 32 << 10

type lingerBounds struct {
	time  time.Duration // < 0: no lingering
	bytes int64
}

func (o TuneOptions) lingerBounds() lingerBounds {
	b := lingerBounds{time: o.Linger, bytes: o.LingerBytes}
	if b.time == 0 {
		b.time = DefaultLinger
	}
	if b.bytes <= 0 {
		b.bytes = DefaultLingerBytes
	}
	return b
}

// lingerOnClose makes the next Close linger.
func (c *tunedConn) lingerOnClose() { c.lingerOn.Store(true) }

// Close closes the connection. After an abort (lingerOnClose) it lingers
// first, so that the peer reads why rather than "connection reset".
//
// A socket closed with bytes unread in its buffer, or that receives
// bytes once closed, is reset (RST), and a reset makes the peer's pending
// and next writes fail, and may drop what it has not yet read: a peer
// still writing a large frame when the abort left would see "connection
// reset" before it read the abort. So the connection ends its own side
// first (FIN, after the abort and the close frame), then reads and
// discards what the peer still sends until the peer closes, or until
// either bound of [TuneOptions] is reached, and only then closes. It
// blocks its caller (the session's writer, ending) that long at most.
func (c *tunedConn) Close() error {
	cw, ok := c.Conn.(closeWriter)
	if !c.lingerOn.Swap(false) || c.linger.time < 0 || !ok {
		return c.Conn.Close()
	}
	c.lingering.Store(true) // a Read still under way discards what it gets
	if cw.CloseWrite() == nil {
		c.Conn.SetReadDeadline(time.Now().Add(c.linger.time))
		buf := make([]byte, lingerBuffer)
		for left := c.linger.bytes; left > 0; {
			n, err := c.Conn.Read(buf[:min(int64(len(buf)), left)])
			left -= int64(n)
			if err != nil {
				break // the peer closed, the time is up, or the socket failed
			}
		}
	}
	return c.Conn.Close()
}

// closeWriter is a connection that can end its sending side alone
// (*net.TCPConn).
type closeWriter interface{ CloseWrite() error }

var _ closeWriter = (*net.TCPConn)(nil)
