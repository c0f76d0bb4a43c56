package capnweb

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
)

// Goroutine identity and state, read from the runtime's stack dumps: the
// turns of concurrency.go need to know which goroutine runs a call and
// whether it is parked.

type gidKey struct{}

// withGoroutine returns ctx noting the calling goroutine's ID, for the
// calls that goroutine runs. Worker goroutines and readers do it once.
func withGoroutine(ctx context.Context) context.Context {
	return context.WithValue(ctx, gidKey{}, goroutineID())
}

func goroutineOf(ctx context.Context) uint64 {
	g, _ := ctx.Value(gidKey{}).(uint64)
	return g
}

// goroutineID returns the calling goroutine's ID, read from its stack
// header. It costs about a microsecond, so it is read once per goroutine,
// not per call.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		n, _ := strconv.ParseUint(string(b[:i]), 10, 64)
		return n
	}
	return 0
}

type blockState int

const (
	notBlocked  blockState = iota
	blockedWait            // parked on a channel, timer, network, condition
	blockedLock            // parked on a mutex or semaphore
)

// goroutineBlocked reports how goroutine g is parked, from the runtime's
// dump of every goroutine. The dump stops the world for a moment, so it
// is taken only when a call has held its object for a while with another
// waiting behind it.
func goroutineBlocked(g uint64) blockState {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		if len(buf) >= 64<<20 {
			return notBlocked
		}
		buf = make([]byte, 2*len(buf))
	}
	head := []byte("goroutine " + strconv.FormatUint(g, 10) + " [")
	i := 0
	for {
		j := bytes.Index(buf[i:], head)
		if j < 0 {
			return notBlocked // gone: it finished
		}
		i += j
		if i == 0 || buf[i-1] == '\n' {
			break
		}
		i += len(head)
	}
	state := buf[i+len(head):]
	if k := bytes.IndexAny(state, ",]"); k >= 0 {
		state = state[:k]
	}
	switch s := string(state); s {
	case "running", "runnable", "syscall", "preempted", "copystack":
		return notBlocked
	case "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock", "semacquire":
		return blockedLock
	default:
		if bytes.HasPrefix(state, []byte("GC ")) {
			return notBlocked
		}
		return blockedWait
	}
}
