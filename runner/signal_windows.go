//go:build windows

package runner

import "os/exec"

func signalOf(*exec.ExitError) string { return "" }
