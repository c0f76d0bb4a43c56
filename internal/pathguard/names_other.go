//go:build !windows && !darwin && !js

package pathguard

// samePath compares paths byte for byte, as Unix file systems do.
func samePath(a, b string) bool { return a == b }

// longName returns name: only Windows has short names.
func longName(_, name string) string { return name }
