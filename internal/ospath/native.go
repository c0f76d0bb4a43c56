//go:build !js

package ospath

import (
	"path/filepath"
	"runtime"
)

// Windows reports whether paths are Windows paths.
func Windows() bool { return runtime.GOOS == "windows" }

// Separator is filepath.Separator, as a string.
func Separator() string { return string(filepath.Separator) }

// IsAbs is filepath.IsAbs.
func IsAbs(p string) bool { return filepath.IsAbs(p) }

// Clean is filepath.Clean.
func Clean(p string) string { return filepath.Clean(p) }

// Dir is filepath.Dir.
func Dir(p string) string { return filepath.Dir(p) }

// Join is filepath.Join.
func Join(elem ...string) string { return filepath.Join(elem...) }

// VolumeName is filepath.VolumeName.
func VolumeName(p string) string { return filepath.VolumeName(p) }
