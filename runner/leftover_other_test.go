//go:build !linux

package runner

// adoptOrphans does nothing where the system has no child subreaper.
func adoptOrphans() {}

// leftDeno finds no processes where there is no /proc to read; the
// goroutine check still catches a Cmd not waited for.
func leftDeno() []string { return nil }

// killLeftDeno has nothing to kill where leftDeno finds nothing.
func killLeftDeno() {}
