package capnweb

import (
	"context"
	"errors"
	"testing"
)

func TestMainAfterEndFails(t *testing.T) {
	a, b := memPipe()
	s, err := NewSession(a, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Close(nil)
	s.Close()
	_, err = s.Main().CallMethod(context.Background(), "cancel", "x")
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("call on an ended session's main: %v", err)
	}
}
