//go:build !js

package permissions

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tranquil/automation/internal/pathguard"
)

// MachineryEnv are the environment variables every run may read: the SDK
// uses them to find the entry module and to reach the host.
var machineryEnv = []string{
	"TRANQUIL_CALL_SITES", "TRANQUIL_ENTRY", "TRANQUIL_RPC_TOKEN", "TRANQUIL_RPC_URL", "TRANQUIL_RUN_ID", "TRANQUIL_SCRIPT_DIR", "TRANQUIL_TRIGGER",
}

// MachineryEnv returns the TRANQUIL_* variables every run may read, sorted.
func MachineryEnv() []string { return slices.Clone(machineryEnv) }

// privateRanges are denied on every run, because deno checks allows by
// hostname but denies by resolved address: without them an approved
// net=api.example.com could be rebound to a machine on the user's network.
// IPv6 ranges cannot be written as deny rules in deno 2.9.
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
}

// FlagConfig is what the runner knows about a run beyond its header. Every
// path must be absolute.
type FlagConfig struct {
	// BridgeAddr is the bridge listener, "127.0.0.1:<port>". Required.
	BridgeAddr string
	// Bootstrap is the SDK module deno preloads (--preload): it connects
	// to the host before the entry runs. Required.
	Bootstrap string
	// Entry is the script module deno runs as its main module, so the
	// script sees import.meta.main true. Empty means the header's
	// ScriptPath.
	Entry string
	// SDKDir holds the SDK the script imports. Required.
	SDKDir string
	// ConfigPath is the library's own deno.json, so that no deno.json or
	// package.json near the script is discovered. Required.
	ConfigPath string
	// DenyLoopback lists loopback host:port endpoints the script must never
	// reach, such as every DevTools port the host drives. Each is denied on
	// every loopback address, including 0.0.0.0 and [::].
	DenyLoopback []string
	// Protected lists paths no read= or write= grant may reach, contain or
	// lie inside: the host's own data (approvals, history, script state,
	// the module cache). A script that could write there could approve
	// itself or poison cached code; one that could read there could read
	// other runs' output.
	Protected []string
	// DefaultImports are hosts every run may import code from, in addition
	// to the header's import= hosts. Empty means none: with nothing declared
	// either, remote imports are switched off entirely (--no-remote, which
	// also removes deno's built-in list of import hosts) and npm: packages
	// load only from the module cache (--cached-only).
	DefaultImports []string
	// Registry is the host[:port] of the JSR registry whose modules (the
	// SDK's @std names) every run may load, from the module cache only.
	// Empty means none. With no import= hosts either, a run gets
	// --allow-import=<Registry> and --cached-only instead of --no-remote:
	// jsr: modules the host cached load, and nothing is ever downloaded.
	// With import= hosts, Registry joins their --allow-import list (and
	// downloads from all of them are allowed, as for any declared host).
	Registry string
	// Lock is the deno lock file that pins the Registry's modules: their
	// versions and the integrity of what the module cache holds. With
	// Registry and no import= hosts, a run gets --lock=<Lock> --frozen in
	// place of --no-lock, so a cached module that does not match it is
	// refused. Empty means none. (A run with import= hosts gets no lock:
	// a frozen one would refuse every module those hosts serve.)
	Lock string
}

// RunArgs returns the complete argument list for deno: "run", the flags,
// then the bootstrap as a preload and the entry as the main module.
func RunArgs(h *Header, c FlagConfig) ([]string, error) {
	flags, err := Flags(h, c)
	if err != nil {
		return nil, err
	}
	return append(append([]string{"run"}, flags...), EntryArgs(h, c)...), nil
}

// EntryArgs are the last arguments of a run: the bootstrap preloaded, then
// the entry. The bootstrap connects to the host and installs the SDK's
// runtime before deno evaluates the entry, which is the main module.
func EntryArgs(h *Header, c FlagConfig) []string {
	return []string{"--preload=" + c.Bootstrap, c.entry(h)}
}

// entry is the module the run evaluates: Entry, else the script.
func (c FlagConfig) entry(h *Header) string {
	if c.Entry != "" {
		return c.Entry
	}
	return h.ScriptPath
}

// Flags computes the deno permission flags for a run of h, in a fixed order
// so that equal inputs give equal lists. It never emits --allow-all, -A,
// --allow-ffi, --allow-sys or an unscoped --allow-run.
func Flags(h *Header, c FlagConfig) ([]string, error) {
	bridge, err := netip.ParseAddrPort(c.BridgeAddr)
	if err != nil || bridge.Addr() != netip.MustParseAddr("127.0.0.1") || bridge.Port() == 0 {
		return nil, fmt.Errorf("%w: bridge address %q is not 127.0.0.1:<port>", ErrFlagConfig, c.BridgeAddr)
	}
	entry := c.entry(h)
	if c.Registry != "" {
		if norm, msg := parseHost(c.Registry, "import"); msg != "" || norm != c.Registry || strings.Contains(norm, "*") {
			return nil, fmt.Errorf("%w: registry %q is not a host[:port] (%s)", ErrFlagConfig, c.Registry, msg)
		}
	}
	if c.Lock != "" && (!filepath.IsAbs(c.Lock) || strings.Contains(c.Lock, ",")) {
		return nil, fmt.Errorf("%w: Lock %q must be an absolute path without commas", ErrFlagConfig, c.Lock)
	}
	machinery := []string{c.Bootstrap, entry, c.SDKDir, c.ConfigPath}
	for i, p := range machinery {
		name := [...]string{"Bootstrap", "Entry", "SDKDir", "ConfigPath"}[i]
		if !filepath.IsAbs(p) || strings.Contains(p, ",") {
			return nil, fmt.Errorf("%w: %s %q must be an absolute path without commas", ErrFlagConfig, name, p)
		}
	}
	for _, w := range h.Write {
		for _, m := range machinery {
			m = filepath.Clean(m)
			if pathguard.Contains(w.Resolved, m) || pathguard.Contains(m, w.Resolved) || pathguard.Contains(w.Lexical, m) {
				return nil, fmt.Errorf("%w: write=%s overlaps %s, which the runtime loads", ErrMachinery, w.Declared, m)
			}
		}
	}
	for _, p := range c.Protected {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%w: protected path %q is not absolute", ErrFlagConfig, p)
		}
		p = filepath.Clean(p)
		for _, list := range [][]Path{h.Read, h.Write} {
			for _, g := range list {
				if pathguard.Contains(g.Resolved, p) || pathguard.Contains(p, g.Resolved) || pathguard.Contains(g.Lexical, p) || pathguard.Contains(p, g.Lexical) {
					return nil, fmt.Errorf("%w: %s overlaps %s, which holds the host's own data", ErrMachinery, g.Declared, p)
				}
			}
		}
	}
	denyPorts, err := loopbackPorts(c.DenyLoopback, bridge.Port())
	if err != nil {
		return nil, err
	}
	for _, n := range h.Net {
		if classify(n) != loopbackHost {
			continue
		}
		if _, port := splitHostPort(n); port != "" {
			p, _ := strconv.Atoi(port)
			if slices.Contains(denyPorts, uint16(p)) {
				return nil, fmt.Errorf("%w: net=%s is a DevTools endpoint the host drives; scripts reach the browser through the browser permission, never directly", ErrDeniedEndpoint, n)
			}
		}
	}

	imports := dedupe(append(slices.Clone(c.DefaultImports), h.Import...))
	lock := []string{"--no-lock"}
	if c.Lock != "" && c.Registry != "" && len(imports) == 0 {
		lock = []string{"--lock=" + c.Lock, "--frozen"}
	}
	flags := append([]string{"--no-prompt"}, lock...)
	flags = append(flags, "--config="+c.ConfigPath, "--location="+Location(h))
	flags = append(flags, "--allow-net="+strings.Join(append([]string{bridge.String()}, h.Net...), ","))
	flags = append(flags, "--deny-net="+strings.Join(denyNet(h.Net, denyPorts), ","))
	flags = append(flags, "--allow-env="+strings.Join(append(MachineryEnv(), h.Env...), ","))
	read := append([]string{c.Bootstrap, entry, c.SDKDir}, resolved(h.Read)...)
	flags = append(flags, "--allow-read="+strings.Join(dedupe(read), ","))
	if len(h.Write) > 0 {
		flags = append(flags, "--allow-write="+strings.Join(resolved(h.Write), ","))
	}
	if len(h.Run) > 0 {
		flags = append(flags, "--allow-run="+strings.Join(h.Run, ","))
	}
	switch {
	case len(imports) > 0:
		if c.Registry != "" {
			imports = dedupe(append(imports, c.Registry))
		}
		flags = append(flags, "--allow-import="+strings.Join(imports, ","))
	case c.Registry != "":
		// Cached registry modules only: the explicit list replaces deno's
		// built-in import hosts, and --cached-only makes every specifier,
		// npm: ones included, load from the cache or fail.
		flags = append(flags, "--allow-import="+c.Registry, "--cached-only")
	default:
		// No remote code at all: --no-remote stops https: and jsr:, and
		// --cached-only stops npm: specifiers, which no permission governs,
		// from being fetched (a download is a channel out of the sandbox).
		flags = append(flags, "--no-remote", "--cached-only")
	}
	if err := CheckFlags(flags); err != nil {
		return nil, err
	}
	return flags, nil
}

// Location is the --location a run of h gets: an origin of the script's
// own, http://<32 hex digits>.invalid/, the digits from a SHA-256 of the
// script's path (its resolved directory and file name). Deno keys a run's
// origin-bound storage by it (localStorage and the Cache API; without it,
// by the --config every run shares), so each script has a store of its own
// and a run-selection shares its source script's. It also becomes
// globalThis.location and the base of relative URLs in fetch, WebSocket
// and new Worker; under .invalid, which never resolves, those are refused
// by the net and import grants before anything is sent.
func Location(h *Header) string {
	sum := sha256.Sum256([]byte(filepath.Join(h.ScriptDir, filepath.Base(h.ScriptPath))))
	return "http://" + hex.EncodeToString(sum[:16]) + ".invalid/"
}

// loopbackPorts validates the endpoints to deny and returns their ports,
// sorted and unique.
func loopbackPorts(endpoints []string, bridgePort uint16) ([]uint16, error) {
	var ports []uint16
	for _, e := range endpoints {
		host, port := splitHostPort(e)
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("%w: deny endpoint %q is not host:port", ErrFlagConfig, e)
		}
		if host != "localhost" && classify(host) != loopbackHost {
			return nil, fmt.Errorf("%w: deny endpoint %q is not a loopback address", ErrFlagConfig, e)
		}
		if uint16(p) == bridgePort {
			return nil, fmt.Errorf("%w: deny endpoint %q is the bridge itself", ErrFlagConfig, e)
		}
		ports = append(ports, uint16(p))
	}
	slices.Sort(ports)
	return slices.Compact(ports), nil
}

// denyNet lists the --deny-net entries: the private IPv4 ranges minus any
// address the header names explicitly (deno's address denies beat even an
// explicit allow, so a declared address must be carved out of its range),
// the IPv6 loopback and unspecified addresses unless declared, and every
// denied port on every loopback address.
func denyNet(net []string, ports []uint16) []string {
	var declared []netip.Addr
	loopbackName := false
	for _, n := range net {
		if a, ok := entryAddr(n); ok {
			declared = append(declared, a.Unmap())
		} else if classify(n) == loopbackHost {
			loopbackName = true
		}
	}
	var out []string
	for _, r := range privateRanges {
		for _, p := range subtract(r, declared) {
			out = append(out, p.String())
		}
	}
	v6 := []struct {
		addr    netip.Addr
		skipFor bool
	}{{netip.IPv6Loopback(), loopbackName}, {netip.IPv6Unspecified(), false}}
	for _, x := range v6 {
		if !x.skipFor && !slices.Contains(declared, x.addr) {
			out = append(out, "["+x.addr.String()+"]")
		}
	}
	for _, p := range ports {
		ps := strconv.Itoa(int(p))
		out = append(out, "127.0.0.0/8:"+ps, "0.0.0.0/8:"+ps, "[::1]:"+ps, "[::]:"+ps)
	}
	return out
}

// subtract returns the prefixes that cover r except the given addresses.
func subtract(r netip.Prefix, addrs []netip.Addr) []netip.Prefix {
	inside := false
	for _, a := range addrs {
		if r.Contains(a) {
			inside = true
			break
		}
	}
	if !inside {
		return []netip.Prefix{r}
	}
	if r.Bits() == r.Addr().BitLen() {
		return nil
	}
	lo := netip.PrefixFrom(r.Addr(), r.Bits()+1)
	hiAddr := r.Addr().As4()
	bit := r.Bits()
	hiAddr[bit/8] |= 0x80 >> (bit % 8)
	hi := netip.PrefixFrom(netip.AddrFrom4(hiAddr), r.Bits()+1)
	return append(subtract(lo, addrs), subtract(hi, addrs)...)
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// CheckFlags returns an error if flags hold anything a run must never get:
// --allow-all or -A, --allow-ffi, --allow-sys, any --allow-… without a
// scope, or --allow-net/--allow-import with a wildcard.
func CheckFlags(flags []string) error {
	for _, f := range flags {
		name, val, scoped := strings.Cut(f, "=")
		switch {
		case name == "-A" || name == "--allow-all" || strings.HasPrefix(name, "-A"):
			return fmt.Errorf("permissions: forbidden flag %s", f)
		case name == "--allow-ffi" || name == "--allow-sys" || name == "-S":
			return fmt.Errorf("permissions: forbidden flag %s", f)
		case strings.HasPrefix(name, "--allow-") && (!scoped || val == ""):
			return fmt.Errorf("permissions: unscoped flag %s", f)
		case len(name) == 2 && name[0] == '-' && strings.ContainsRune("RWNEISP", rune(name[1])):
			return fmt.Errorf("permissions: short flag %s is not used", f)
		case strings.HasPrefix(name, "--allow-") && slices.Contains(strings.Split(val, ","), "*"):
			return fmt.Errorf("permissions: wildcard in %s", f)
		}
	}
	return nil
}
