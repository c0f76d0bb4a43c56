//go:build windows

package proc

import "os/exec"

func signalOf(*exec.ExitError) string { return "" }
