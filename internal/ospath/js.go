//go:build js

package ospath

import "path/filepath"

// windows is the way paths read for the call the program is answering:
// the program is single-threaded and answers one call at a time, and
// UseWindows sets it at the start of each.
var windows bool

// UseWindows makes paths read as Windows paths (true) or Unix ones until
// it is called again. Only the testing kit's WebAssembly build has it.
func UseWindows(w bool) { windows = w }

// Windows reports whether paths are Windows paths.
func Windows() bool { return windows }

// Separator is the path separator, as a string.
func Separator() string {
	if windows {
		return `\`
	}
	return "/"
}

// IsAbs is filepath.IsAbs.
func IsAbs(p string) bool {
	if windows {
		return winIsAbs(p)
	}
	return filepath.IsAbs(p)
}

// Clean is filepath.Clean.
func Clean(p string) string {
	if windows {
		return winClean(p)
	}
	return filepath.Clean(p)
}

// Dir is filepath.Dir.
func Dir(p string) string {
	if windows {
		return winDir(p)
	}
	return filepath.Dir(p)
}

// Join is filepath.Join.
func Join(elem ...string) string {
	if windows {
		return winJoin(elem)
	}
	return filepath.Join(elem...)
}

// VolumeName is filepath.VolumeName.
func VolumeName(p string) string {
	if windows {
		return winFromSlash(p[:winVolumeNameLen(p)])
	}
	return ""
}
