//go:build windows

package runner

import (
	"log/slog"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

// isolate does nothing before start on Windows; contain puts the process in
// a job object once it runs.
func isolate(*exec.Cmd) {}

// contain places the started child in a job object that kills every process
// in it when the job is closed: at the end of the run (end), or when the
// host itself dies and Windows closes its handles. That covers the commands
// a run= grant starts, which a plain process kill would leave behind. A
// child that spawns before it is assigned escapes the job; deno does not
// spawn anything before the script runs.
func contain(cmd *exec.Cmd, log *slog.Logger) (end func()) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		log.Warn("runner: no job object for the run", "error", err)
		return func() {}
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
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
		log.Warn("runner: no job object for the run", "error", err)
		windows.CloseHandle(job)
		return func() {}
	}
	return func() {
		windows.TerminateJobObject(job, 1)
		windows.CloseHandle(job)
	}
}

// terminate has no graceful signal to send on Windows; the protocol cancel
// is the graceful phase there, so it goes straight to kill.
func terminate(cmd *exec.Cmd) { kill(cmd) }

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
