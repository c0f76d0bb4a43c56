package runner_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cpuTime is the CPU this process has used, user and kernel.
func cpuTime(t testing.TB) time.Duration {
	h, err := syscall.GetCurrentProcess()
	require.NoError(t, err)
	var created, exited, kernel, user syscall.Filetime
	require.NoError(t, syscall.GetProcessTimes(h, &created, &exited, &kernel, &user))
	ticks := func(f syscall.Filetime) time.Duration {
		return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100 // 100 ns ticks
	}
	return ticks(kernel) + ticks(user)
}
