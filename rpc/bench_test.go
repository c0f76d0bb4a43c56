package rpc

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tranquil/automation/permissions"
)

// BenchmarkHandshake measures connect+AUTH+OK against a bare WebSocket
// connect to the same server, interleaved in one run, and reports both
// medians and their ratio (target ≤ 1.5).
func BenchmarkHandshake(b *testing.B) {
	br, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	ctx := context.Background()
	hi := hello(permissions.CapUI)
	var bare, full []time.Duration
	for b.Loop() {
		start := time.Now()
		c, _, err := websocket.Dial(ctx, br.URL(), nil)
		if err != nil {
			b.Fatal(err)
		}
		bare = append(bare, time.Since(start))
		c.CloseNow()

		tok, err := br.Mint(principal("bench", permissions.CapUI))
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		c, _, err = websocket.Dial(ctx, br.URL(), nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Write(ctx, websocket.MessageText, []byte("AUTH "+tok+" "+hi)); err != nil {
			b.Fatal(err)
		}
		_, reply, err := c.Read(ctx)
		if err != nil || !strings.HasPrefix(string(reply), "OK ") {
			b.Fatalf("handshake: %q %v", reply, err)
		}
		full = append(full, time.Since(start))
		c.CloseNow()
	}
	pb, pf := median(bare), median(full)
	b.ReportMetric(float64(pb.Microseconds()), "bare-µs")
	b.ReportMetric(float64(pf.Microseconds()), "handshake-µs")
	b.ReportMetric(float64(pf)/float64(pb), "ratio")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
