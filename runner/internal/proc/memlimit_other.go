//go:build !linux && !windows

package proc

// MemoryEnforced says whether Spec.MemoryMB is enforced on this system.
// macOS and the BSDs offer no cgo-free way to limit another process's
// memory (macOS does not enforce RLIMIT_DATA on mmap, which is how V8 and
// deno allocate), so only V8's heap cap (Config.HeapMB) applies there.
const MemoryEnforced = false

func limitMemory(pid, mb int) error { return nil }
