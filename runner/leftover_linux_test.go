package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// adoptOrphans makes this process the reaper of its orphaned
// descendants, so that a deno whose parent died (a re-executed host, a
// run= command's own deno) is still found below it by leftDeno.
func adoptOrphans() {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "runner tests: cannot adopt orphans, so only direct children are checked: %v\n", err)
	}
}

// leftDeno returns the live deno processes below this one, as "PID
// (parent PPID)".
func leftDeno() []string {
	var left []string
	for pid, ppid := range denoBelow() {
		left = append(left, fmt.Sprintf("%d (parent %d)", pid, ppid))
	}
	return left
}

// killLeftDeno kills the deno processes below this one, so that a failed
// gate leaves none behind.
func killLeftDeno() {
	for pid := range denoBelow() {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// denoBelow maps the PID of each live deno process below this one to its
// parent's.
func denoBelow() map[int]int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	type proc struct {
		ppid int
		deno bool
	}
	procs := map[int]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		procs[pid] = proc{ppid: ppid, deno: s[open+1:end] == "deno"}
	}
	self := os.Getpid()
	below := func(pid int) bool {
		for seen := 0; pid > 1 && seen < len(procs); seen++ {
			p, ok := procs[pid]
			if !ok {
				return false
			}
			if p.ppid == self {
				return true
			}
			pid = p.ppid
		}
		return false
	}
	left := map[int]int{}
	for pid, p := range procs {
		if p.deno && below(pid) {
			left[pid] = p.ppid
		}
	}
	return left
}
