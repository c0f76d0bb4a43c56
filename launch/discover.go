package launch

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// App is an installed application a [Launcher] can start.
type App struct {
	Name string
	// BundleID is the macOS bundle identifier.
	BundleID string
	// DesktopID is the Linux desktop file ID, such as "code.desktop".
	DesktopID string
	// AppPath is the .app bundle (macOS), the .desktop file (Linux), or
	// whatever path the app was given by.
	AppPath        string
	ExecutablePath string
	Platform       string
	// Packaging is "flatpak" or "snap" for an app installed in such a
	// sandbox, whose desktop file runs a launcher (flatpak run, /snap/bin)
	// that fails the Electron check: ExecutablePath is then the app's
	// own Electron binary inside the installation. Launching it runs the
	// app outside its sandbox, which a Flatpak app whose libraries come
	// from its runtime may not survive. Empty otherwise.
	Packaging string
	// Sensitive lists advisory categories of private data the app likely
	// holds: "notes", "chat", "mail", "developer-workspace",
	// "passwords-auth". It never blocks anything; use Spec.Deny for
	// that.
	Sensitive []string
}

// Discovery is the result of [Discover].
type Discovery struct {
	// Platform is "linux", "darwin" or "unsupported".
	Platform string
	Apps     []App
}

// Discover lists installed Electron apps whose name, ID or path contains
// query (case-insensitively; empty matches all), at most max of them (zero
// means 100). On Linux it reads the .desktop files in the XDG data
// directories ($XDG_DATA_HOME, $XDG_DATA_DIRS) and the Flatpak and Snap
// export directories, and keeps those whose Exec resolves to a binary that
// passes [CheckElectron]; for a Flatpak or Snap app that is the Electron
// binary inside its installation (see [App.Packaging]), found by a bounded
// search. On macOS it reads the .app bundles in /Applications and
// ~/Applications and in their folders one level down. Elsewhere the
// platform is
// "unsupported" and the list empty. Unreadable or malformed entries are
// skipped. Only ctx's end is an error.
func Discover(ctx context.Context, query string, max int) (Discovery, error) {
	return discover(ctx, hostEnv(), query, max)
}

// discoverEnv is where discovery looks, so tests can point it anywhere.
type discoverEnv struct {
	goos     string
	appDirs  []string // Linux: …/applications; macOS: directories holding .app bundles
	pathList string   // PATH, to resolve a bare Exec
	// flatpakRoots are Flatpak installations (…/flatpak, holding app/<id>),
	// snapRoot the directory holding each snap (/snap).
	flatpakRoots []string
	snapRoot     string
}

func hostEnv() discoverEnv {
	e := discoverEnv{goos: runtime.GOOS, pathList: os.Getenv("PATH")}
	home, _ := os.UserHomeDir()
	switch e.goos {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		e.goos = "linux"
		dataHome := os.Getenv("XDG_DATA_HOME")
		if dataHome == "" && home != "" {
			dataHome = filepath.Join(home, ".local", "share")
		}
		dirs := []string{dataHome}
		dataDirs := os.Getenv("XDG_DATA_DIRS")
		if dataDirs == "" {
			dataDirs = "/usr/local/share:/usr/share"
		}
		dirs = append(dirs, filepath.SplitList(dataDirs)...)
		dirs = append(dirs, "/var/lib/flatpak/exports/share", "/var/lib/snapd/desktop")
		e.flatpakRoots = []string{"/var/lib/flatpak"}
		e.snapRoot = "/snap"
		if home != "" {
			dirs = append(dirs, filepath.Join(home, ".local", "share", "flatpak", "exports", "share"))
			e.flatpakRoots = append(e.flatpakRoots, filepath.Join(home, ".local", "share", "flatpak"))
		}
		for _, d := range dirs {
			if d != "" && filepath.IsAbs(d) {
				e.appDirs = append(e.appDirs, filepath.Join(d, "applications"))
			}
		}
	case "darwin":
		e.appDirs = []string{"/Applications"}
		if home != "" {
			e.appDirs = append(e.appDirs, filepath.Join(home, "Applications"))
		}
	}
	return e
}

func discover(ctx context.Context, env discoverEnv, query string, max int) (Discovery, error) {
	if max <= 0 {
		max = 100
	}
	d := Discovery{Platform: env.goos, Apps: []App{}}
	if env.goos != "linux" && env.goos != "darwin" {
		d.Platform = "unsupported"
		return d, nil
	}
	q := strings.ToLower(query)
	seen := map[string]bool{} // desktop IDs: the first directory wins, as in XDG
	for _, dir := range env.appDirs {
		var candidates []App
		if env.goos == "linux" {
			candidates = desktopApps(dir, env, seen)
		} else {
			candidates = bundleApps(dir)
		}
		for _, app := range candidates {
			if err := ctx.Err(); err != nil {
				return d, err
			}
			if q != "" && !strings.Contains(strings.ToLower(app.Name+"\x00"+app.BundleID+"\x00"+app.DesktopID+"\x00"+app.AppPath+"\x00"+app.ExecutablePath), q) {
				continue
			}
			if _, err := checkElectron(env.goos, app.ExecutablePath); err != nil {
				continue
			}
			d.Apps = append(d.Apps, app)
			if len(d.Apps) == max {
				return d, nil
			}
		}
	}
	return d, nil
}

// desktopApps reads the .desktop files under one applications directory.
func desktopApps(dir string, env discoverEnv, seen map[string]bool) []App {
	var apps []App
	_ = filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".desktop") {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		id := strings.ReplaceAll(filepath.ToSlash(rel), "/", "-")
		if seen[id] {
			return nil
		}
		seen[id] = true
		b, err := readLimited(path)
		if err != nil {
			return nil
		}
		app, err := desktopApp(b, path, id, env)
		if err == nil {
			apps = append(apps, app)
		}
		return nil
	})
	return apps
}

// desktopApp turns a desktop file into an App, resolving its Exec.
func desktopApp(b []byte, path, id string, env discoverEnv) (App, error) {
	de, err := parseDesktop(b)
	if err != nil {
		return App{}, err
	}
	if de.Type != "Application" || de.Hidden {
		return App{}, errors.New("not a visible application")
	}
	argv, err := splitExec(de.Exec)
	if err != nil {
		return App{}, err
	}
	prog := programOf(argv)
	if prog == "" {
		return App{}, errors.New("exec names no program")
	}
	exe, err := lookPathIn(prog, env.pathList)
	if err != nil {
		return App{}, err
	}
	packaging := ""
	if real, kind := sandboxedBinary(argv, exe, env); real != "" {
		exe, packaging = real, kind
	}
	if !strings.HasSuffix(id, ".desktop") {
		id += ".desktop"
	}
	app := App{Name: de.Name, DesktopID: id, AppPath: path, ExecutablePath: exe, Platform: "linux", Packaging: packaging}
	app.Sensitive = sensitivity(app.Name+" "+id+" "+exe, de.Categories)
	return app, nil
}

// sandboxedBinary finds the Electron binary of a Flatpak app ("flatpak run
// … [--command=X] ID") in its installation's files, or of a snap
// (/snap/bin/NAME[.APP]) under /snap/NAME/current. It returns "" when
// exe is no such launcher or nothing inside passes the Electron check.
func sandboxedBinary(argv []string, exe string, env discoverEnv) (path, kind string) {
	switch {
	case filepath.Base(exe) == "flatpak":
		id, command := flatpakRun(argv)
		if id == "" {
			return "", ""
		}
		for _, root := range env.flatpakRoots {
			files := filepath.Join(root, "app", id, "current", "active", "files")
			if p := findElectron(files, command); p != "" {
				return p, "flatpak"
			}
		}
	case env.snapRoot != "" && filepath.Dir(exe) == filepath.Join(env.snapRoot, "bin"):
		name, app, _ := strings.Cut(filepath.Base(exe), ".")
		if app == "" {
			app = name
		}
		if p := findElectron(filepath.Join(env.snapRoot, name, "current"), app); p != "" {
			return p, "snap"
		}
	}
	return "", ""
}

// flatpakRun reads "flatpak run [options] ID …": the app ID and the
// --command option's value.
func flatpakRun(argv []string) (id, command string) {
	i := slices.IndexFunc(argv, func(a string) bool { return a == "run" })
	if i < 0 {
		return "", ""
	}
	for _, a := range argv[i+1:] {
		if c, ok := strings.CutPrefix(a, "--command="); ok {
			command = c
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return a, command
	}
	return "", ""
}

// maxElectronSearch bounds the entries findElectron looks at, since a
// snap or Flatpak tree can hold a whole runtime.
const (
	maxElectronSearch = 20000
	maxElectronDepth  = 6
)

// findElectron searches root for an executable that passes the Electron
// check, preferring one named like name (a launcher script at bin/<name>
// usually wraps the real binary elsewhere in the tree). Only directories
// holding a resources folder are looked at closely; links are not
// followed out of the tree.
func findElectron(root, name string) string {
	var found []string
	seen := 0
	_ = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > maxElectronSearch {
			return filepath.SkipAll
		}
		if e.IsDir() {
			rel, _ := filepath.Rel(root, p)
			if rel != "." && strings.Count(rel, string(filepath.Separator)) >= maxElectronDepth {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		if fi, err := os.Stat(filepath.Join(filepath.Dir(p), "resources")); err != nil || !fi.IsDir() {
			return nil
		}
		if _, err := checkElectron("linux", p); err == nil {
			found = append(found, p)
		}
		return nil
	})
	for _, p := range found {
		if filepath.Base(p) == name {
			return p
		}
	}
	if len(found) > 0 {
		return found[0]
	}
	return ""
}

// programOf skips an "env VAR=value …" prefix, which snap exports use.
func programOf(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	if filepath.Base(argv[0]) != "env" {
		return argv[0]
	}
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
			continue
		}
		return a
	}
	return ""
}

func lookPathIn(prog, pathList string) (string, error) {
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			return "", fmt.Errorf("relative program %q", prog)
		}
		return prog, nil
	}
	for _, d := range filepath.SplitList(pathList) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// desktopEntry is the part of a desktop file discovery uses.
type desktopEntry struct {
	Name, Exec, Type string
	Hidden           bool
	Categories       []string
}

// parseDesktop reads the [Desktop Entry] group of a desktop file (the
// freedesktop.org Desktop Entry Specification): unlocalised keys, with the
// string escapes \s \n \t \r \\ undone.
func parseDesktop(b []byte) (desktopEntry, error) {
	var de desktopEntry
	group := ""
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				return de, fmt.Errorf("bad group header %q", line)
			}
			group = line[1 : len(line)-1]
			if group == "Desktop Entry" {
				if found {
					return de, errors.New("duplicate [Desktop Entry] group")
				}
				found = true
			}
			continue
		}
		if group != "Desktop Entry" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return de, fmt.Errorf("line without '=': %q", line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "Name":
			de.Name = unescapeDesktop(v)
		case "Exec":
			de.Exec = unescapeDesktop(v)
		case "Type":
			de.Type = v
		case "Hidden", "NoDisplay":
			de.Hidden = de.Hidden || v == "true"
		case "Categories":
			for _, c := range strings.Split(v, ";") {
				if c = strings.TrimSpace(c); c != "" {
					de.Categories = append(de.Categories, c)
				}
			}
		}
	}
	if !found {
		return de, errors.New("no [Desktop Entry] group")
	}
	if de.Name == "" || de.Exec == "" {
		return de, errors.New("missing Name or Exec")
	}
	return de, nil
}

func unescapeDesktop(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var sb strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 == len(v) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch v[i] {
		case 's':
			sb.WriteByte(' ')
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case '\\':
			sb.WriteByte('\\')
		default:
			// Not a string escape: keep it for the Exec quoting rules.
			sb.WriteByte('\\')
			sb.WriteByte(v[i])
		}
	}
	return sb.String()
}

// splitExec splits an Exec value into arguments by the spec's quoting
// rules and drops field codes (%f, %U, …); "%%" is a literal percent.
func splitExec(s string) ([]string, error) {
	var argv []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("dangling backslash")
			}
			i++
			cur.WriteByte(s[i])
		case quoted && c == '"':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '"':
			quoted, inArg = true, true
		case c == ' ' || c == '\t':
			if inArg {
				argv = append(argv, cur.String())
				cur.Reset()
				inArg = false
			}
		case c == '%':
			if i+1 == len(s) {
				return nil, errors.New("dangling %")
			}
			i++
			if s[i] == '%' {
				cur.WriteByte('%')
				inArg = true
			} else if !strings.ContainsRune("fFuUdDnNickvm", rune(s[i])) {
				return nil, fmt.Errorf("unknown field code %%%c", s[i])
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote")
	}
	if inArg {
		argv = append(argv, cur.String())
	}
	return argv, nil
}

// bundleApps reads the .app bundles inside dir and in its folders one
// level down, where suites and stores put theirs (/Applications/Utilities,
// /Applications/Setapp). A bundle that is a symbolic link, as some package
// managers leave in ~/Applications, is read through the link; a linked
// folder is not searched.
func bundleApps(dir string) []App { return bundlesIn(dir, 1) }

func bundlesIn(dir string, depth int) []App {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var apps []App
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		link := e.Type()&fs.ModeSymlink != 0
		isDir := e.IsDir()
		if link {
			fi, err := os.Stat(p)
			isDir = err == nil && fi.IsDir()
		}
		switch {
		case !isDir:
		case strings.HasSuffix(e.Name(), ".app"):
			if app, err := readBundle(p); err == nil {
				apps = append(apps, app)
			}
		case depth > 0 && !link:
			apps = append(apps, bundlesIn(p, depth-1)...)
		}
	}
	return apps
}

// readBundle reads a macOS .app bundle's Info.plist.
func readBundle(bundle string) (App, error) {
	b, err := readLimited(filepath.Join(bundle, "Contents", "Info.plist"))
	if err != nil {
		return App{}, err
	}
	pl, err := parsePlist(b)
	if err != nil {
		return App{}, err
	}
	exe := pl["CFBundleExecutable"]
	if exe == "" || strings.ContainsAny(exe, `/\`) || exe == "." || exe == ".." {
		return App{}, errors.New("launch: Info.plist: bad or missing CFBundleExecutable")
	}
	name := pl["CFBundleDisplayName"]
	if name == "" {
		name = pl["CFBundleName"]
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(bundle), ".app")
	}
	app := App{
		Name: name, BundleID: pl["CFBundleIdentifier"], AppPath: bundle,
		ExecutablePath: filepath.Join(bundle, "Contents", "MacOS", exe), Platform: "darwin",
	}
	app.Sensitive = sensitivity(app.Name+" "+app.BundleID, []string{pl["LSApplicationCategoryType"]})
	return app, nil
}

// parsePlist reads the string values of the top-level dictionary of an XML
// property list. Binary plists are refused.
func parsePlist(b []byte) (map[string]string, error) {
	if bytes.HasPrefix(b, []byte("bplist")) {
		return nil, errors.New("launch: Info.plist: binary property lists are not read")
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	out := map[string]string{}
	depth := 0   // element depth
	dictAt := -1 // depth of the top-level dict's children
	key := ""
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			if err == io.EOF && dictAt >= 0 && depth == 0 {
				return out, nil
			}
			return nil, fmt.Errorf("launch: Info.plist: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if dictAt < 0 && t.Name.Local == "dict" {
				if depth != 2 {
					return nil, errors.New("launch: Info.plist: top-level dict expected")
				}
				dictAt = depth + 1
			}
			text.Reset()
		case xml.CharData:
			if text.Len() < 4096 {
				text.Write(t)
			}
		case xml.EndElement:
			if depth == dictAt {
				switch t.Name.Local {
				case "key":
					key = text.String()
				case "string":
					if key != "" {
						out[key] = strings.TrimSpace(text.String())
					}
					key = ""
				default:
					key = ""
				}
			}
			depth--
			if depth < 0 {
				return nil, errors.New("launch: Info.plist: unbalanced")
			}
		}
	}
}

// sensitiveHints maps advisory categories to words in an app's name, ID or
// desktop categories.
var sensitiveHints = []struct {
	category string
	words    []string
}{
	{"notes", []string{"notes", "obsidian", "notion", "joplin", "logseq", "evernote", "standard notes", "simplenote", "bear"}},
	{"chat", []string{"slack", "discord", "teams", "signal", "telegram", "whatsapp", "element", "mattermost", "rocket.chat", "instantmessaging", "chat"}},
	{"mail", []string{"mail", "thunderbird", "outlook", "mailspring", "email"}},
	{"developer-workspace", []string{"visual studio code", "vscode", "code.desktop", "com.microsoft.vscode", "cursor", "windsurf", "github desktop", "postman", "insomnia", "development", "ide"}},
	{"passwords-auth", []string{"1password", "bitwarden", "keepass", "lastpass", "dashlane", "authy", "authenticator", "password"}},
}

func sensitivity(text string, categories []string) []string {
	hay := " " + strings.ToLower(text+" "+strings.Join(categories, " ")) + " "
	var out []string
	for _, h := range sensitiveHints {
		for _, w := range h.words {
			if containsWord(hay, w) {
				out = append(out, h.category)
				break
			}
		}
	}
	return slices.Clip(out)
}

// containsWord matches w at word boundaries, so "ide" does not match
// "slide".
func containsWord(hay, w string) bool {
	for i := 0; ; {
		j := strings.Index(hay[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before, after := byte(' '), byte(' ')
		if j > 0 {
			before = hay[j-1]
		}
		if k := j + len(w); k < len(hay) {
			after = hay[k]
		}
		if !isWordByte(before) && !isWordByte(after) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
