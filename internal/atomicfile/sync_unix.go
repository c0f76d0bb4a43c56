//go:build !windows

package atomicfile

import (
	"fmt"
	"os"
)

// syncDir makes the rename durable: without it a crash can forget the new
// directory entry even though the file's data reached the disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("atomicfile: sync directory: %w", err)
	}
	return nil
}
