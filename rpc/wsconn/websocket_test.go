package wsconn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/rpc/capnweb"
)

// TestWebSocketLimits checks the transport-level limits on a real
// WebSocket: the read limit and binary frames.
func TestWebSocketLimits(t *testing.T) {
	testenv.CheckGoroutines(t)
	ended := make(chan error, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		s, err := capnweb.NewSession(New(c, 1024), bulkAPI{}, nil)
		if err != nil {
			return
		}
		<-s.Done()
		s.Close()
		ended <- s.Err()
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// A frame over the read limit.
	c, _, err := websocket.Dial(ctx, url, nil)
	require.NoError(t, err)
	c.CloseRead(ctx) // answer the server's close handshake
	require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(`["push","`+strings.Repeat("x", 2000)+`"]`)))
	err = <-ended
	require.ErrorIs(t, err, capnweb.ErrLimit)
	c.CloseNow()

	// A binary frame.
	c, _, err = websocket.Dial(ctx, url, nil)
	require.NoError(t, err)
	require.NoError(t, c.Write(ctx, websocket.MessageBinary, []byte(`["pull",1]`)))
	_, msg, err := c.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, `["abort",["error","Error","binary frame (10 bytes); Cap'n Web uses text frames"]]`, string(msg))
	_, _, err = c.Read(ctx)
	require.Equal(t, StatusAbort, websocket.CloseStatus(err))
	require.ErrorIs(t, <-ended, capnweb.ErrProtocol)
	c.CloseNow()
}
