package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const tempMarker = ".tmp-"

// WriteFile atomically replaces path with data, with the given permission
// bits. The temporary file is named "."+base+".tmp-*" in the same directory,
// so the rename never crosses filesystems.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+tempMarker+"*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err = rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	return syncDir(dir)
}

// IsTemp reports whether name (a base name) is a temporary file WriteFile
// made for target (also a base name).
func IsTemp(name, target string) bool {
	return strings.HasPrefix(name, "."+target+tempMarker)
}
