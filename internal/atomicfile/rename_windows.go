//go:build windows

package atomicfile

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// renameWait bounds how long rename retries a replace that an open
// handle blocks. A reader holds the file for one read; two seconds is far
// more than that and short enough to report a lasting lock.
const renameWait = 2 * time.Second

// rename replaces path with tmp. Windows refuses to replace a file that
// another handle has open without FILE_SHARE_DELETE, which is how Go and
// most programs open files, so a reader of path (a watcher polling it,
// another process loading it) makes the replace fail with access denied
// or a sharing violation for as long as it reads. The replace is tried
// again until it goes through or renameWait has passed.
func rename(tmp, path string) error {
	deadline := time.Now().Add(renameWait)
	pause := time.Millisecond
	for {
		err := os.Rename(tmp, path)
		if err == nil || !transient(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func transient(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
