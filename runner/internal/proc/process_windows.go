//go:build windows

package proc

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

// isolate does nothing before start on Windows; contain puts the process in
// a job object once it runs.
func isolate(*exec.Cmd) {}

// MemoryEnforced says whether Spec.MemoryMB is enforced on this system.
const MemoryEnforced = true

// processGroup is a started child and the job object holding it and what
// it starts; job is zero when none could be made (see contain).
type processGroup struct {
	proc *os.Process
	job  windows.Handle
}

// contain places the started child in a job object that kills every process
// in it when the job is closed: at the end of the run (close), or when the
// host itself dies and Windows closes its handles. That covers the commands
// a run= grant starts, which a plain process kill would leave behind. A
// child that spawns before it is assigned escapes the job; deno does not
// spawn anything before the script runs.
//
// With memoryMB positive, the job also caps the memory committed by all of
// its processes together (JOB_OBJECT_LIMIT_JOB_MEMORY); an allocation past
// it fails. A job that cannot be set up then fails the run, since the
// limit would be missing; without a limit it is only logged.
func contain(cmd *exec.Cmd, memoryMB int, log *slog.Logger) (*processGroup, error) {
	g := &processGroup{proc: cmd.Process}
	fail := func(err error) (*processGroup, error) {
		if memoryMB > 0 {
			return g, fmt.Errorf("%w: job object: %w", ErrMemoryLimit, err)
		}
		log.Warn("runner: no job object for the run", "error", err)
		return g, nil
	}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fail(err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if memoryMB > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_JOB_MEMORY
		info.JobMemoryLimit = uintptr(memoryMB) << 20
	}
	_, err = windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err == nil {
		var h windows.Handle
		h, err = windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
		if err == nil {
			err = windows.AssignProcessToJobObject(job, h)
			windows.CloseHandle(h)
		}
	}
	if err != nil {
		windows.CloseHandle(job)
		return fail(err)
	}
	g.job = job
	return g, nil
}

// terminate has no graceful signal to send on Windows; the protocol cancel
// is the graceful phase there, so it goes straight to kill.
func (g *processGroup) terminate() error { return g.kill() }

// kill ends every process of the job, or the child alone without one.
func (g *processGroup) kill() error {
	if g.job != 0 {
		windows.TerminateJobObject(g.job, 1)
	}
	return g.proc.Kill()
}

// close ends what is left in the job and releases it. The group is
// not used after.
func (g *processGroup) close() {
	if g.job != 0 {
		windows.TerminateJobObject(g.job, 1)
		windows.CloseHandle(g.job)
	}
}
