package launch

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/testenv"
)

// launchWithPort starts headless Chromium with --remote-debugging-port=0
// and reads the port from DevToolsActivePort, the way a user-started
// browser or an Electron launch looks. Chromium opens no port, so tests of
// attaching need this. It ends with the test.
func launchWithPort(t *testing.T) *Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := start(ctx, startSpec{path: testenv.Chromium(t), args: chromiumArgs(true, nil), tempDir: tempRoot, timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("launch with a port: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

// listeners returns the local ports on which processes of the process
// group pgid listen for TCP (v4 or v6): LISTEN sockets in /proc/net/tcp
// and tcp6 whose inode one of the group's processes holds open.
func listeners(t *testing.T, pgid int) []int {
	t.Helper()
	inodes := map[string]bool{}
	for _, pid := range groupPIDs(pgid) {
		fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
			}
		}
	}
	var ports []int
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			if port, err := strconv.ParseInt(hexPort, 16, 32); err == nil {
				ports = append(ports, int(port))
			}
		}
		f.Close()
	}
	return ports
}

// groupPIDs lists the live (not zombie) processes of a process group.
func groupPIDs(pgid int) []int {
	var pids []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b)[i+1:])
		// state ppid pgrp …
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// assertNoListener fails t if the browser's process group listens on any
// TCP port.
func assertNoListener(t *testing.T, pgid int) {
	t.Helper()
	if n := len(groupPIDs(pgid)); n == 0 {
		t.Fatalf("process group %d has no processes to check", pgid)
	}
	if ports := listeners(t, pgid); len(ports) > 0 {
		t.Errorf("browser group %d listens on TCP ports %v", pgid, ports)
	}
}
