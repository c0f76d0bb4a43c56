package execstart

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// attempts bounds the tries: 5 ms doubling to 200 ms between them is a
// little over a second in all.
const attempts = 9

// Start builds a command with build and starts it. While the start fails
// with ETXTBSY it waits and starts a new command from build (a Cmd starts
// once), until ctx ends or the tries run out; then it returns the last
// error. build may set up pipes; what it made for a command that failed to
// start, exec.Cmd has already closed.
func Start(ctx context.Context, build func() (*exec.Cmd, error)) (*exec.Cmd, error) {
	delay := 5 * time.Millisecond
	for try := 1; ; try++ {
		cmd, err := build()
		if err != nil {
			return nil, err
		}
		err = cmd.Start()
		if err == nil {
			return cmd, nil
		}
		if !errors.Is(err, syscall.ETXTBSY) || try == attempts {
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}
