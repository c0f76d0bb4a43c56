//go:build !js

package permissions

import (
	"bufio"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// hostsFile is the hosts file Describe consults. A variable so that tests
// can give their own.
var hostsFile = defaultHostsFile()

// hostName reports this computer's name; a variable for tests.
var hostName = os.Hostname

func defaultHostsFile() string {
	if runtime.GOOS == "windows" {
		root := os.Getenv("SystemRoot")
		if root == "" {
			root = `C:\Windows`
		}
		return filepath.Join(root, "System32", "drivers", "etc", "hosts")
	}
	return "/etc/hosts"
}

// maxHostsFile bounds how much of the hosts file is read.
const maxHostsFile = 1 << 20

// localReach says what a net= name reaches according to this computer
// alone: its hosts file and its own name. It never asks DNS, so wording a
// grant sends nothing over the network. A wildcard entry looks at every
// name the hosts file lists under it. ok is false when neither says the
// name reaches this computer or the local network.
func localReach(entry string) (class hostClass, note string, ok bool) {
	host, _ := splitHostPort(entry)
	host = strings.ToLower(host)
	base, wild := strings.CutPrefix(host, "*.")
	matches := func(name string) bool {
		return name == base || (wild && strings.HasSuffix(name, "."+base))
	}
	if own, err := hostName(); err == nil && own != "" {
		own = strings.ToLower(strings.TrimSuffix(own, "."))
		short, _, _ := strings.Cut(own, ".")
		if matches(own) || matches(short) {
			return loopbackHost, "this computer's own name", true
		}
	}
	var private netip.Addr
	var privateName string
	for name, addr := range hostsEntries() {
		if !matches(name) {
			continue
		}
		switch addrClass(addr) {
		case loopbackHost:
			return loopbackHost, "the hosts file points " + name + " to " + addr.String(), true
		case privateHost:
			if !private.IsValid() {
				private, privateName = addr, name
			}
		}
	}
	if private.IsValid() {
		return privateHost, "the hosts file points " + privateName + " to " + private.String(), true
	}
	return 0, "", false
}

// hostsEntries yields each name of the hosts file with its address, in
// file order. A file that cannot be read yields nothing.
func hostsEntries() func(yield func(string, netip.Addr) bool) {
	return func(yield func(string, netip.Addr) bool) {
		f, err := os.Open(hostsFile)
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(io.LimitReader(f, maxHostsFile))
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			fields := strings.Fields(line)
			if len(fields) < 2 {
				continue
			}
			addr, err := netip.ParseAddr(fields[0])
			if err != nil {
				continue
			}
			addr = addr.WithZone("").Unmap()
			for _, name := range fields[1:] {
				if !yield(strings.ToLower(strings.TrimSuffix(name, ".")), addr) {
					return
				}
			}
		}
	}
}
