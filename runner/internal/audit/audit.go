package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/trace"
)

// auditEnv is the variable that tells deno where to report its checks.
const auditEnv = "DENO_AUDIT_PERMISSIONS"

// maxAuditLine bounds one report: longer ones (a path of many kilobytes)
// are counted as dropped, never held.
const maxAuditLine = 8 << 10

// auditRecord is one line of deno's report.
type auditRecord struct {
	V          int             `json:"v"`
	Permission string          `json:"permission"`
	Value      json.RawMessage `json:"value"`
}

// readAudit reads deno's reports from r until EOF or an error, and
// records each in rec, judged by rules. Lines past maxAuditLine or not a
// report are counted as dropped.
func readAudit(r io.Reader, rec *trace.Recorder, rules *Rules) {
	br := bufio.NewReaderSize(r, maxAuditLine)
	long := false // within a line past maxAuditLine
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !long {
				rec.AccessDropped(1)
			}
			long = true
			continue
		case long:
			long = false
		case len(line) > 0:
			recordAudit(line, rec, rules)
		}
		if err != nil {
			return
		}
	}
}

func recordAudit(line []byte, rec *trace.Recorder, rules *Rules) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var a auditRecord
	if err := json.Unmarshal(line, &a); err != nil || a.Permission == "" {
		rec.AccessDropped(1)
		return
	}
	var value string
	if err := json.Unmarshal(a.Value, &value); err != nil {
		value = string(a.Value) // null for a check of the whole kind
	}
	shown, allowed := rules.Judge(a.Permission, value)
	rec.Access(a.Permission, shown, allowed, time.Now())
}

// Rules is what a run's deno flags allow, read back from the flags
// themselves: the same lists deno enforces.
type Rules struct {
	cwd         string   // the run's starting directory
	read, write []string // clean absolute paths
	allowNet    []netRule
	denyNet     []netRule
	env         []string // names, or prefixes ending in *
	run         []string
	imports     []netRule
	noRemote    bool
}

// netRule is one --allow-net, --deny-net or --allow-import entry.
type netRule struct {
	host     string // lower case; "" for an address rule
	wildcard bool   // *.host: host and every name under it
	prefix   netip.Prefix
	port     string // "" for every port
}

// RulesFromArgs reads the permission flags out of a deno command line;
// cwd is the directory deno starts in.
func RulesFromArgs(args []string, cwd string) *Rules {
	r := &Rules{cwd: cwd}
	for _, a := range args {
		name, val, _ := strings.Cut(a, "=")
		list := strings.Split(val, ",")
		switch name {
		case "--allow-read":
			r.read = cleanPaths(list, cwd)
		case "--allow-write":
			r.write = cleanPaths(list, cwd)
		case "--allow-net":
			r.allowNet = netRules(list)
		case "--deny-net":
			r.denyNet = netRules(list)
		case "--allow-env":
			r.env = list
		case "--allow-run":
			r.run = list
		case "--allow-import":
			r.imports = netRules(list)
		case "--no-remote":
			r.noRemote = true
		}
	}
	return r
}

func cleanPaths(list []string, cwd string) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, absPath(p, cwd))
	}
	return out
}

func absPath(p, cwd string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

func netRules(list []string) []netRule {
	out := make([]netRule, 0, len(list))
	for _, e := range list {
		host, port := splitNet(e)
		r := netRule{port: port}
		if p, err := netip.ParsePrefix(host); err == nil {
			r.prefix = p.Masked()
		} else if a, err := netip.ParseAddr(host); err == nil {
			r.prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		} else if h, ok := strings.CutPrefix(host, "*."); ok {
			r.host, r.wildcard = strings.ToLower(h), true
		} else {
			r.host = strings.ToLower(host)
		}
		out = append(out, r)
	}
	return out
}

// splitNet splits "host:port", "[v6]:port", "10.0.0.0/8:80" or "host".
func splitNet(e string) (host, port string) {
	if rest, ok := strings.CutPrefix(e, "["); ok {
		h, tail, _ := strings.Cut(rest, "]")
		return h, strings.TrimPrefix(tail, ":")
	}
	if i := strings.LastIndexByte(e, ':'); i >= 0 && strings.Count(e, ":") == 1 {
		return e[:i], e[i+1:]
	}
	return e, ""
}

// matches reports whether the rule covers host:port, and how specific
// the rule is: an exact host or address beats a range, a longer range a
// shorter, a deeper wildcard a shallower; a port adds to any.
func (r netRule) matches(host string, addr netip.Addr, port string) (bool, int) {
	if r.port != "" && r.port != port {
		return false, 0
	}
	spec := 0
	switch {
	case r.prefix.IsValid():
		if !addr.IsValid() || !r.prefix.Contains(addr) {
			return false, 0
		}
		spec = r.prefix.Bits() * 2
	case r.wildcard:
		if addr.IsValid() || (host != r.host && !strings.HasSuffix(host, "."+r.host)) {
			return false, 0
		}
		spec = strings.Count(r.host, ".") + 1
	default:
		if addr.IsValid() || host != r.host {
			return false, 0
		}
		spec = 1000
	}
	if addr.IsValid() && r.prefix.Bits() == addr.BitLen() {
		spec = 1000
	}
	if r.port != "" {
		spec++
	}
	return true, spec
}

// Judge returns how a check of kind on value is shown (a path made
// absolute, a URL cut to its host and port) and whether the run's flags
// allow it.
func (r *Rules) Judge(kind, value string) (string, bool) {
	switch kind {
	case "read", "write":
		p := absPath(value, r.cwd)
		grants := r.read
		if kind == "write" {
			grants = r.write
		}
		ok := false
		for _, g := range grants {
			if pathguard.Contains(g, p) {
				ok = true
				break
			}
		}
		return p, ok && !special(p, kind == "write")
	case "net":
		return r.judgeNet(value, r.allowNet, r.denyNet)
	case "import":
		shown, ok := r.judgeNet(value, r.imports, nil)
		return shown, ok && !r.noRemote
	case "env":
		for _, e := range r.env {
			if p, wild := strings.CutSuffix(e, "*"); (wild && strings.HasPrefix(value, p)) || e == value {
				return value, true
			}
		}
		return value, false
	case "run":
		for _, c := range r.run {
			if c == value || (!strings.ContainsAny(c, `/\`) && filepath.Base(value) == c) {
				return value, true
			}
		}
		return value, false
	}
	// sys, ffi and anything newer: the flags never grant them.
	return value, false
}

// judgeNet decides a net or import check: the most specific matching
// rule wins, and a tie goes to deny (deno 2.6 and later).
func (r *Rules) judgeNet(value string, allow, deny []netRule) (string, bool) {
	host, port := value, ""
	if u, err := url.Parse(value); err == nil && u.Scheme != "" && u.Host != "" {
		host, port = u.Hostname(), u.Port()
		if port == "" {
			port = defaultPort(u.Scheme)
		}
	} else {
		host, port = splitNet(value)
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	addr, _ := netip.ParseAddr(host)
	addr = addr.Unmap()
	shown := host
	if addr.Is6() {
		shown = "[" + host + "]"
	}
	if port != "" {
		shown += ":" + port
	}
	best := func(rules []netRule) int {
		top := -1
		for _, n := range rules {
			if ok, s := n.matches(host, addr, port); ok && s > top {
				top = s
			}
		}
		return top
	}
	a, d := best(allow), best(deny)
	return shown, a >= 0 && a > d
}

// defaultPort is the port a URL of scheme reaches when it names none.
func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// special reports whether deno refuses p, once its grant allowed it,
// because it lies in /proc, /dev or /sys (Linux; check_special_file):
// those need full access, which no run has, except the few files deno
// opens to any run that may read or write them.
func special(p string, write bool) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	switch p {
	case "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom":
		return false
	case "/dev/tty":
		return write
	}
	if pathguard.Contains("/proc/pressure", p) && p != "/proc/pressure" {
		return false
	}
	return pathguard.Contains("/dev", p) || pathguard.Contains("/proc", p) || pathguard.Contains("/sys", p)
}

// auditDrain bounds the read of what is left in the pipe once the child
// has exited. Deno's end closes with its process (the file is opened
// close-on-exec, so nothing it starts holds it) and what it wrote is in
// the pipe's buffer, so EOF comes at once; the bound is for a process
// that somehow still holds a write end.
const auditDrain = 2 * time.Second

// Pipe is a run's report pipe and the goroutine reading it. Its owner is
// whoever Starts it (runner: the run's spawn), before the child, and
// Stops it once the child has exited (or was never started); Stop returns
// when the reader has returned.
type Pipe struct {
	dir  string   // the pipe's private directory, removed by Stop
	path string   // the pipe
	r    *os.File // the read end
	// keep is a write end the host holds, so the reader sees EOF only
	// once it is closed too, not while deno has yet to open its end.
	keep *os.File
	done chan struct{} // closed when the reader returns
	once sync.Once
}

// Start makes a report pipe for a run in a new 0700 directory under
// root and starts its reader, which records into rec judged by rules
// until Stop. Where no pipe can be made (Supported is false) it returns
// errors.ErrUnsupported.
func Start(root string, rec *trace.Recorder, rules *Rules) (*Pipe, error) {
	if !Supported {
		return nil, errors.ErrUnsupported
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("runner: audit pipe: %w", err)
	}
	dir, err := os.MkdirTemp(root, "run-")
	if err != nil {
		return nil, fmt.Errorf("runner: audit pipe: %w", err)
	}
	a := &Pipe{dir: dir, path: filepath.Join(dir, "audit"), done: make(chan struct{})}
	a.r, a.keep, err = openAuditPipe(a.path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("runner: audit pipe: %w", err)
	}
	go func() {
		defer close(a.done)
		readAudit(a.r, rec, rules)
	}()
	return a, nil
}

// Env returns the child's environment: env without any DENO_AUDIT_PERMISSIONS
// it holds, and with this pipe's when a is not nil.
func (a *Pipe) Env(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !strings.EqualFold(k, auditEnv) {
			out = append(out, kv)
		}
	}
	if a != nil {
		out = append(out, auditEnv+"="+a.path)
	}
	return out
}

// Stop ends the record: the host's write end closes, the reader reads
// what deno left in the pipe, for at most auditDrain, and returns; then
// the pipe and its directory are removed. Call it once the child has
// exited; it is safe to call again, and on a nil a.
func (a *Pipe) Stop() {
	if a == nil {
		return
	}
	a.once.Do(func() {
		a.keep.Close()
		if err := a.r.SetReadDeadline(time.Now().Add(auditDrain)); err != nil {
			a.r.Close() // not pollable: closing is what ends the read
		}
		<-a.done
		a.r.Close()
		os.RemoveAll(a.dir)
	})
}

// StaleAge is how old a report pipe's directory must be before a new
// manager removes it as left by a host that died: a live run's deno opens
// its pipe within milliseconds of the directory's making, and once it has,
// the pipe works on after its name is gone.
const StaleAge = time.Minute

// Sweep removes the report pipes that hosts which died mid-run left
// under root: directories named as Start names them, old enough not
// to be another live manager's run that has not started its deno yet.
func Sweep(root string) {
	dirs, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, d := range dirs {
		if !d.IsDir() || !strings.HasPrefix(d.Name(), "run-") {
			continue
		}
		if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > StaleAge {
			os.RemoveAll(filepath.Join(root, d.Name()))
		}
	}
}
