package importtable

import (
	"fmt"
	"slices"
	"strings"
)

// Pin is one @std package the SDK maps by its short name, at the one
// version it ships.
type Pin struct {
	Name    string // "@std/fmt"
	Version string // "1.0.8"
}

// Spec is the pin as a jsr: specifier, with an optional export subpath
// ("./colors").
func (p Pin) Spec(export string) string {
	return "jsr:" + p.Name + "@" + p.Version + strings.TrimPrefix(export, ".")
}

// ParsePin reads a pinned specifier of the SDK's import map,
// "jsr:@std/fmt@1.0.8": the package and its one exact version. It is the
// regular expression ^jsr:(@[a-z0-9-]+/[a-z0-9-]+)@(\d+\.\d+\.\d+)$
// written out: package regexp would add a seventh to the kit's WebAssembly.
func ParsePin(spec string) (Pin, bool) {
	rest, ok := strings.CutPrefix(spec, "jsr:@")
	if !ok {
		return Pin{}, false
	}
	scope, rest, ok := strings.Cut(rest, "/")
	if !ok || !pinName(scope) {
		return Pin{}, false
	}
	name, version, ok := strings.Cut(rest, "@")
	if !ok || !pinName(name) {
		return Pin{}, false
	}
	parts := strings.Split(version, ".")
	if len(parts) != 3 {
		return Pin{}, false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return Pin{}, false
		}
	}
	return Pin{Name: "@" + scope + "/" + name, Version: version}, true
}

func pinName(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// ParseSpec reads a jsr: specifier: the package ("@std/fmt") and its
// version when written; ok is false for one that names no package. It is
// the regular expression ^jsr:/?(@[^/@]+/[^/@]+)(?:@([^/]*))?(/.*)?$
// written out (a path holds no line break, as "." matches none).
func ParseSpec(spec string) (name, version string, ok bool) {
	rest, ok := strings.CutPrefix(spec, "jsr:")
	if !ok {
		return "", "", false
	}
	rest = strings.TrimPrefix(rest, "/")
	rest, ok = strings.CutPrefix(rest, "@")
	if !ok {
		return "", "", false
	}
	scope, rest, ok := strings.Cut(rest, "/")
	if !ok || scope == "" || strings.Contains(scope, "@") {
		return "", "", false
	}
	end := strings.IndexAny(rest, "/@")
	if end < 0 {
		end = len(rest)
	}
	if end == 0 {
		return "", "", false
	}
	name, rest = "@"+scope+"/"+rest[:end], rest[end:]
	if v, ok := strings.CutPrefix(rest, "@"); ok {
		end := strings.IndexByte(v, '/')
		if end < 0 {
			end = len(v)
		}
		version, rest = v[:end], v[end:]
	}
	if strings.Contains(rest, "\n") {
		return "", "", false
	}
	return name, version, true
}

// Table decides which module specifiers (resolved through the SDK's
// import map) a run may load.
type Table struct {
	Hosts bool     // the run may import from some host (import=, DefaultImports)
	NPM   []string // the SDK's own npm: packages, which deno's cache holds
	Std   []Pin    // the @std packages cached from Config.JSR; none without it
}

// Refusal says why a run cannot load spec, or "" when it can; probe
// reports a jsr: module the run loads from the module cache alone.
func (t Table) Refusal(spec string) (why string, probe bool) {
	scheme, _, ok := strings.Cut(spec, ":")
	if !ok || !isScheme(scheme) {
		return fmt.Sprintf("%q cannot be loaded: it is not a name this app maps; use %s, or a relative path (\"./lib.ts\") to a module copied next to the script", spec, t.names()), false
	}
	if IsDrivePath(spec) {
		return fmt.Sprintf("%q cannot be loaded: deno reads a Windows path in an import as a URL of scheme %s:; import the module by a relative path (\"./lib.ts\") or a file: URL", spec, strings.ToLower(scheme)), false
	}
	switch scheme = strings.ToLower(scheme); scheme {
	case "file", "node", "data":
		return "", false
	case "blob":
		return spec + " cannot be loaded: a blob: URL exists only inside the run that made it; copy the code into a module next to the script and import that", false
	case "npm":
		if t.Hosts || slices.Contains(t.NPM, spec) {
			return "", false
		}
		return spec + " cannot be loaded: a run that may import no remote code gets npm: packages only from deno's cache, which holds the SDK's own; " + t.instead(), false
	case "jsr":
		name, version, _ := ParseSpec(spec)
		if len(t.Std) == 0 && strings.HasPrefix(name, "@std/") && !t.Hosts {
			return spec + " cannot be loaded: this app names no JSR registry, so its scripts have no @std packages; " +
				"the app's host sets one (runner.Config.JSR; the example host's --jsr URL), or " + t.instead(), false
		}
		if i := slices.IndexFunc(t.Std, func(p Pin) bool { return p.Name == name }); i >= 0 {
			if version == t.Std[i].Version || t.Hosts {
				// With a host to import from, deno fetches another
				// version itself (the run has no lock then).
				return "", version == t.Std[i].Version && !t.Hosts
			}
			return fmt.Sprintf("%s cannot be loaded: this app ships %s %s only; import it by its short name (\"%s\" or \"%s/…\")", spec, name, t.Std[i].Version, name, name), false
		}
		fallthrough
	case "http", "https":
		if t.Hosts {
			return "", false
		}
		return spec + " cannot be loaded, since this app gives runs no remote code" + t.note() + "; " + t.instead(), false
	}
	return fmt.Sprintf("%s cannot be loaded: deno loads no %s: modules; copy the module next to the script and import it by a relative path", spec, scheme), false
}

// isScheme reports a URL scheme: a letter, then letters, digits, +, - and
// dots.
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// note says what remote code this app offers.
func (t Table) note() string {
	if len(t.Std) > 0 {
		return " beyond the @std packages it ships"
	}
	return " (the SDK bundles no @std modules)"
}

// names are the module names a script may import.
func (t Table) names() string {
	if len(t.Std) == 0 {
		return "\"tranquil/automation\""
	}
	return "one of the @std short names (" + t.stdNames() + ") or \"tranquil/automation\""
}

func (t Table) stdNames() string {
	var n []string
	for _, p := range t.Std {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// instead is the way out of a refused remote import.
func (t Table) instead() string {
	use := "use Deno's own APIs"
	if len(t.Std) > 0 {
		use = "use one of the @std short names (" + t.stdNames() + ") or Deno's own APIs"
	}
	return use + ", copy the module next to the script and import it by a relative path, or add import= for its host to the // @permissions line if the app allows that"
}

// IsDrivePath reports a path that starts with a drive letter and a
// separator, C:\ or C:/, which a URL parser takes for the scheme c:.
func IsDrivePath(s string) bool {
	return len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') &&
		('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}
