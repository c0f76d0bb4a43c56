package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/tranquil/automation/internal/ospath"
	"github.com/tranquil/automation/internal/pathguard"
)

// parseHost validates a net=, import= or sites= value (host or host:port)
// and returns its canonical form. A non-empty msg explains the problem.
func parseHost(v, key string) (norm, msg string) {
	if i := strings.Index(v, "://"); i >= 0 {
		rest := v[i+3:]
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			rest = rest[:j]
		}
		if j := strings.LastIndex(rest, "@"); j >= 0 {
			rest = rest[j+1:]
		}
		if rest != "" {
			return "", fmt.Sprintf("%s= takes a host, not a URL; write %s=%s", key, key, strings.ToLower(rest))
		}
		return "", fmt.Sprintf("%s= takes a host, not a URL", key)
	}
	if v == "*" {
		return "", fmt.Sprintf("%s=* would allow every host; list the hosts, or write *.example.com for a domain and its subdomains", key)
	}
	if i := strings.IndexAny(v, "/?#"); i >= 0 {
		if i > 0 {
			return "", fmt.Sprintf("%s= takes a host without a path; write %s=%s", key, key, v[:i])
		}
		return "", fmt.Sprintf("%s= takes a host, not a path", key)
	}
	if strings.Contains(v, "@") {
		return "", fmt.Sprintf("%s= takes a host without a user name; write %s=%s", key, key, v[strings.LastIndex(v, "@")+1:])
	}
	for _, r := range v {
		if r > 0x7e || r <= 0x20 {
			return "", fmt.Sprintf("%q contains characters outside plain ASCII; write an internationalized name in its xn-- form, so it cannot imitate another name", v)
		}
	}
	host, port := v, ""
	if strings.HasPrefix(v, "[") {
		end := strings.Index(v, "]")
		if end < 0 {
			return "", fmt.Sprintf("%q opens [ but never closes it; write an IPv6 address as [2001:db8::1]", v)
		}
		inner, rest := v[1:end], v[end+1:]
		if strings.Contains(inner, "%") {
			return "", fmt.Sprintf("%q has a zone id; write the address without %%zone", v)
		}
		addr, err := netip.ParseAddr(inner)
		if err != nil || !addr.Is6() {
			return "", fmt.Sprintf("%q is not an IPv6 address in brackets", v)
		}
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return "", fmt.Sprintf("%q has text after ]; write [address] or [address]:port", v)
			}
			if p == "" {
				return "", fmt.Sprintf("%q ends with : but gives no port", v)
			}
			port = p
		}
		if addr.Is4In6() {
			host = addr.Unmap().String()
		} else {
			host = "[" + addr.String() + "]"
		}
	} else {
		if strings.Count(v, ":") > 1 {
			if addr, err := netip.ParseAddr(v); err == nil && addr.Is6() {
				return "", fmt.Sprintf("IPv6 addresses must be in brackets: write %s=[%s]", key, v)
			}
			return "", fmt.Sprintf("%q has more than one colon; write host or host:port", v)
		}
		h, p, hasPort := strings.Cut(v, ":")
		if hasPort && p == "" {
			return "", fmt.Sprintf("%q ends with : but gives no port", v)
		}
		host, port = h, p
	}
	if host == "" {
		return "", fmt.Sprintf("%q has no host", v)
	}
	if port != "" {
		if strings.Contains(port, "-") {
			return "", fmt.Sprintf("port ranges are not supported; list each port, like %s=%s:%s", key, strings.ToLower(host), strings.SplitN(port, "-", 2)[0])
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strings.Trim(port, "0123456789") != "" {
			return "", fmt.Sprintf("%q is not a port; ports are numbers from 1 to 65535", port)
		}
		port = strconv.Itoa(n)
	}
	if !strings.HasPrefix(host, "[") {
		h, m := checkHostname(strings.ToLower(host), key)
		if m != "" {
			return "", m
		}
		host = h
	}
	if port != "" {
		return host + ":" + port, ""
	}
	return host, ""
}

// checkHostname validates an IPv4 literal, a DNS name or a *.domain
// wildcard, already lower-cased.
func checkHostname(h, key string) (string, string) {
	if addr, err := netip.ParseAddr(h); err == nil && addr.Is4() {
		return addr.String(), ""
	}
	if looksNumeric(h) {
		return "", fmt.Sprintf("%q reads as a numeric address in an unusual form; write IPv4 addresses as four decimal numbers like 192.0.2.1", h)
	}
	if strings.HasSuffix(h, ".") {
		return "", fmt.Sprintf("drop the trailing dot: write %s=%s", key, strings.TrimSuffix(h, "."))
	}
	name := h
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		name = rest
		if !strings.Contains(rest, ".") && rest != "localhost" {
			return "", fmt.Sprintf("%q would cover a whole top-level domain; name the domain, as in *.example.com", h)
		}
	}
	if strings.Contains(name, "*") {
		return "", fmt.Sprintf("%q: * may only open a name, as in *.example.com", h)
	}
	if len(name) > 253 {
		return "", fmt.Sprintf("%q is longer than a hostname can be", h)
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Sprintf("%q is not a valid hostname (empty or over-long label)", h)
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return "", fmt.Sprintf("%q is not a valid hostname (a label starts or ends with -)", h)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Sprintf("%q is not a valid hostname (character %q)", h, c)
			}
		}
	}
	return h, ""
}

// looksNumeric reports whether a URL parser would read h as an IPv4 address
// in one of its legacy forms (2130706433, 0x7f.1, 10.1): its last label is a
// number.
func looksNumeric(h string) bool {
	last := h[strings.LastIndex(h, ".")+1:]
	if last == "" {
		parts := strings.Split(strings.TrimSuffix(h, "."), ".")
		last = parts[len(parts)-1]
	}
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// Environment names a script can never be granted. The runner passes a
// declared variable's value into deno's own environment, so these would
// reconfigure the runtime rather than inform the script.
var (
	reservedEnvPrefixes = []string{"TRANQUIL_", "DENO_", "LD_", "DYLD_", "NPM_CONFIG_", "RUST_"}
	reservedEnvNames    = []string{"SSLKEYLOGFILE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "NODE_OPTIONS", "NODE_TLS_REJECT_UNAUTHORIZED"}
)

// checkEnv returns what is wrong with an env= value and the kind of
// error it is, or "" and nil.
func checkEnv(name string) (string, error) {
	if name == "*" {
		return "env=* would expose every variable; name them, or use a prefix such as AWS_*", ErrBadValue
	}
	prefix, wildcard := strings.CutSuffix(name, "*")
	if !validEnvName(prefix) {
		if strings.Contains(prefix, "*") {
			return fmt.Sprintf("%q: only a trailing * is allowed, as in AWS_*", name), ErrBadValue
		}
		return fmt.Sprintf("%q is not a variable name: use letters, digits and _, not starting with a digit", name), ErrBadValue
	}
	up := strings.ToUpper(prefix)
	for _, r := range reservedEnvPrefixes {
		if strings.HasPrefix(up, r) || (wildcard && strings.HasPrefix(r, up)) {
			return reservedEnvMsg(name, r+"*"), ErrReserved
		}
	}
	for _, r := range reservedEnvNames {
		if up == r || (wildcard && strings.HasPrefix(r, up)) {
			return reservedEnvMsg(name, r), ErrReserved
		}
	}
	return "", nil
}

func reservedEnvMsg(name, reserved string) string {
	switch {
	case !strings.HasSuffix(name, "*") && strings.HasPrefix(strings.ToUpper(name), "TRANQUIL_"):
		return fmt.Sprintf("env=%s is reserved: TRANQUIL_* variables carry the run's own connection to the host and are never granted to scripts", name)
	case !strings.HasSuffix(name, "*") && strings.HasPrefix(strings.ToUpper(name), "DENO_"):
		return fmt.Sprintf("env=%s is reserved: DENO_* variables configure the runtime itself (cache, V8 flags, permission broker), and granting one could switch the sandbox off", name)
	case strings.HasSuffix(name, "*"):
		return fmt.Sprintf("env=%s would include the reserved name %s; use a narrower prefix", name, reserved)
	}
	return fmt.Sprintf("env=%s is reserved: it changes how deno itself connects, trusts certificates or loads libraries", name)
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// absoluteGit is the example of an absolute command path this system
// would take.
func absoluteGit() string {
	if ospath.Windows() {
		return `C:\Program Files\Git\cmd\git.exe`
	}
	return "/usr/bin/git"
}

func checkRun(v string) string {
	switch {
	case v == "*":
		return "run=* would let the script run any program; name the commands, like run=git"
	case strings.ContainsRune(v, 0):
		return "the command contains a NUL byte"
	case strings.Contains(v, ","):
		return "deno cannot grant a command whose name contains a comma"
	case ospath.IsAbs(v):
		return ""
	case strings.ContainsAny(v, `/\`):
		return fmt.Sprintf("run= takes a command name like git or an absolute path like %s; %q is a relative path", absoluteGit(), v)
	}
	if v[0] == '-' || v[0] == '.' {
		return fmt.Sprintf("%q is not a command name", v)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._+-", c) >= 0) {
			return fmt.Sprintf("%q is not a command name; write an absolute path for unusual names", v)
		}
	}
	return ""
}

// specialRoots are trees deno grants only with full access, which scripts
// never get; a grant there could only fail or mislead.
var specialRoots = []string{"/proc", "/sys", "/dev"}

func (p *parser) resolvePath(key, v string) (Path, string, error) {
	if ospath.Windows() {
		if msg := windowsPathProblem(key, v); msg != "" {
			return Path{}, msg, ErrBadValue
		}
	}
	switch {
	case strings.ContainsRune(v, 0):
		return Path{}, "the path contains a NUL byte", ErrBadValue
	case strings.Contains(v, ","):
		return Path{}, "deno cannot grant a path that contains a comma; rename the file or folder", ErrBadValue
	case v == "~" || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, `~\`):
		return Path{}, fmt.Sprintf("~ is not expanded; write the absolute path instead of %s=%s", key, v), ErrBadValue
	case strings.HasPrefix(v, `\\`) || strings.HasPrefix(v, "//") || strings.HasPrefix(v, `\/`) || strings.HasPrefix(v, `/\`):
		// Looking up a network path can reach out to a server (and on
		// Windows send the user's credentials) before anything is approved.
		return Path{}, fmt.Sprintf("%s=%s is a network path; grant local files only", key, v), ErrBadValue
	case hasVariable(v):
		return Path{}, fmt.Sprintf("variables are not expanded in %s=%s; write the path itself", key, v), ErrBadValue
	}
	if v == "." || v == "./" || v == `.\` {
		return Path{}, fmt.Sprintf("%s=%s would grant the script's whole folder and everything in it, because deno grants folders recursively; name the files or a subfolder, like %s=%s", key, v, key, example(key)[len(key)+1:]), ErrBlanketPath
	}
	abs := v
	if !ospath.IsAbs(abs) {
		abs = ospath.Join(p.lexDir, v)
	}
	lexical, real, err := pathguard.Resolve(abs)
	if err != nil {
		return Path{}, fmt.Sprintf("cannot resolve %q: %v", v, errors.Unwrap(err)), ErrBadValue
	}
	if pathguard.Contains(lexical, p.lexDir) || pathguard.Contains(lexical, p.h.ScriptDir) {
		return Path{}, fmt.Sprintf("%s=%s is the script's own folder or one of its parents; deno grants folders recursively, so it would cover every file beside the script; name the files or a subfolder", key, v), ErrBlanketPath
	}
	if pathguard.Contains(real, p.h.ScriptDir) || pathguard.Contains(real, p.lexDir) {
		return Path{}, fmt.Sprintf("%s=%s leads through a symlink to %s, the script's own folder or one of its parents; name the files or a subfolder", key, v, real), ErrBlanketPath
	}
	if !ospath.Windows() {
		for _, root := range specialRoots {
			if pathguard.Contains(root, real) || pathguard.Contains(root, lexical) {
				return Path{}, fmt.Sprintf("%s=%s is under %s, which deno opens only to scripts with full access; it cannot be granted", key, v, root), ErrBadValue
			}
		}
	}
	kind := Missing
	if fi, err := os.Stat(real); err == nil {
		kind = File
		if fi.IsDir() {
			kind = Dir
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Path{}, fmt.Sprintf("cannot inspect %s: %v", real, errors.Unwrap(err)), ErrBadValue
	}
	return Path{Declared: v, Lexical: lexical, Resolved: real, Kind: kind}, "", nil
}

// hasVariable reports whether a path looks like it relies on shell or
// Windows variable expansion ($HOME, ${X}, %APPDATA%), which never happens.
func hasVariable(v string) bool {
	for i := 0; i+1 < len(v); i++ {
		c := v[i+1]
		if v[i] == '$' && (c == '{' || c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return true
		}
	}
	if i := strings.IndexByte(v, '%'); i >= 0 {
		if j := strings.IndexByte(v[i+1:], '%'); j > 0 && validEnvName(v[i+1:i+1+j]) {
			return true
		}
	}
	return false
}
