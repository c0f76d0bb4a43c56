//go:build !windows

package winetest

// Wine reports whether this program runs under Wine; only a Windows
// program can.
func Wine() bool { return false }
