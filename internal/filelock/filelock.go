package filelock

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Lock takes an exclusive lock on path, creating the file if needed. It
// polls until the lock is free or ctx ends. The returned function releases
// the lock and must be called exactly once.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("filelock: %w", err)
	}
	delay := time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("filelock: %w", err)
		}
		if ok {
			return func() {
				unlockFile(f)
				f.Close()
			}, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("filelock: waiting for %s: %w", path, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}
