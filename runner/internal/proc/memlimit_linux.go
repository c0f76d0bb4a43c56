package proc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MemoryEnforced says whether Spec.MemoryMB is enforced on this system.
const MemoryEnforced = true

// limitMemory caps the data memory of a started process (RLIMIT_DATA:
// every private writable mapping, V8's heap, ArrayBuffers, thread stacks
// and the code space V8 reserves writable for each isolate included), soft
// and hard, so the script cannot raise it. Processes it starts inherit the
// limit, each on its own. It is set right after the process starts: deno
// runs none of the script's code before the bootstrap's handshake with the
// host, so no allocation of the script's escapes it. RLIMIT_AS cannot be
// used: V8 reserves many GiB of address space it never commits.
func limitMemory(pid, mb int) error {
	lim := unix.Rlimit{Cur: uint64(mb) << 20, Max: uint64(mb) << 20}
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, &lim, nil); err != nil {
		return fmt.Errorf("%w: setting RLIMIT_DATA on deno: %w", ErrMemoryLimit, err)
	}
	return nil
}
