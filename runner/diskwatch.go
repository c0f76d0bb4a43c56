package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"
)

// DefaultDiskLimit is [Config.DiskLimit] when it is zero: far above what
// deno keeps for a script's own modules, well below what fills a disk.
const DefaultDiskLimit = 256 << 20

// diskPoll is how often a run's cache folder is measured.
const diskPoll = time.Second

// diskBlock is the least a file or folder counts for: what one takes on
// most file systems, so that a flood of empty files costs what it takes.
const diskBlock = 4 << 10

// errOverLimit stops a walk that has seen enough.
var errOverLimit = errors.New("over the limit")

// diskUsage measures dir: every file and folder under it, links not
// followed and hard links in linked not counted (the shared packages a
// run links to are not its), each counted as its size rounded up to
// diskBlock. It stops once past limit, so a walk reads at most
// limit/diskBlock entries.
func diskUsage(dir string, limit int64, linked linkedFiles) int64 {
	var total int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone while walked, or unreadable: not the run's to pay
		}
		size := int64(diskBlock)
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				if linked.holds(p, fi) {
					return nil
				}
				size = max(size, (fi.Size()+diskBlock-1)/diskBlock*diskBlock)
			}
		}
		if total += size; total > limit {
			return errOverLimit
		}
		return nil
	})
	return total
}

// startDiskWatch measures the run's cache folder every diskPoll until
// exited is closed or the returned stop is called, which returns once the
// watch has. Past Config.DiskLimit it fails the run limit_exceeded, as
// watchBudget does for its session, and touches nothing else: the folder
// is the run's own. With no limit it watches nothing.
func (r *Run) startDiskWatch(dir string, linked linkedFiles, exited <-chan struct{}) (stop func()) {
	limit := r.m.cfg.DiskLimit
	if limit < 0 {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(diskPoll)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-exited:
				return
			case <-t.C:
			}
			if diskUsage(dir, limit, linked) > limit {
				reason := limitReason(resourceDisk, fmt.Sprintf("the run went past its disk limit of %s: what deno keeps of the modules it loads and makes", byteCount(limit)))
				r.noteOverLimit(reason)
				r.kill(reason)
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
