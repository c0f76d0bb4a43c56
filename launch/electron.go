package launch

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Kind says what a [Spec] starts.
type Kind string

const (
	// KindAuto (or "") starts an Electron app when the target passes the
	// Electron evidence check, Chromium when the executable is named like a
	// Chromium browser, and refuses anything else.
	KindAuto Kind = "auto"
	// KindChromium starts a Chromium browser: headless unless asked
	// otherwise, with DefaultFlags.
	KindChromium Kind = "chromium"
	// KindElectron starts an Electron app, after the evidence check.
	KindElectron Kind = "electron"
)

// ElectronEvidence is what [CheckElectron] found beside an executable.
type ElectronEvidence struct {
	// Executable is the checked file, symlinks resolved.
	Executable string
	// Archive is resources/app.asar or resources/default_app.asar (Linux
	// and Windows layouts).
	Archive string
	// Paks are the Chromium resource packs beside the executable.
	Paks []string
	// Snapshot is the V8 snapshot file beside the executable.
	Snapshot string
	// Framework is "Electron Framework.framework" inside the bundle (macOS).
	Framework string
}

// CheckElectron tells whether executable belongs to an Electron app, from
// the files Electron ships with it: on macOS the Electron framework inside
// the .app bundle; elsewhere an app.asar or default_app.asar under
// resources/ plus Chromium .pak and V8 snapshot files beside the binary. A
// target without them fails with ErrValidation naming what is missing. This
// keeps the launcher from driving the wrong program; it is not a security
// boundary, since anyone can lay those files out.
func CheckElectron(executable string) (*ElectronEvidence, error) {
	return checkElectron(runtime.GOOS, executable)
}

func checkElectron(goos, executable string) (*ElectronEvidence, error) {
	exe, err := checkExecutable(goos, executable)
	if err != nil {
		return nil, err
	}
	ev := &ElectronEvidence{Executable: exe}
	if goos == "darwin" {
		bundle := bundleOf(exe)
		if bundle == "" {
			return nil, notElectron(exe, "an enclosing .app bundle")
		}
		fw := filepath.Join(bundle, "Contents", "Frameworks", "Electron Framework.framework")
		if fi, err := os.Stat(fw); err != nil || !fi.IsDir() {
			return nil, notElectron(exe, "Contents/Frameworks/Electron Framework.framework")
		}
		ev.Framework = fw
		return ev, nil
	}
	dir := filepath.Dir(exe)
	var missing []string
	for _, name := range []string{"app.asar", "default_app.asar"} {
		p := filepath.Join(dir, "resources", name)
		if _, err := os.Stat(p); err == nil {
			ev.Archive = p
			break
		}
	}
	if ev.Archive == "" {
		missing = append(missing, "resources/app.asar or resources/default_app.asar")
	}
	ev.Paks, _ = filepath.Glob(filepath.Join(dir, "*.pak"))
	if len(ev.Paks) == 0 {
		missing = append(missing, "*.pak")
	}
	for _, name := range []string{"v8_context_snapshot.bin", "snapshot_blob.bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			ev.Snapshot = p
			break
		}
	}
	if ev.Snapshot == "" {
		missing = append(missing, "v8_context_snapshot.bin or snapshot_blob.bin")
	}
	if len(missing) > 0 {
		return nil, notElectron(exe, strings.Join(missing, ", "))
	}
	return ev, nil
}

func notElectron(exe, missing string) error {
	return &Error{Kind: ErrValidation, Msg: fmt.Sprintf("%s is not an Electron app: no %s", exe, missing)}
}

// checkExecutable resolves symlinks and insists on a regular file that may
// be executed.
func checkExecutable(goos, path string) (string, error) {
	if path == "" {
		return "", &Error{Kind: ErrValidation, Msg: "empty executable path"}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", &Error{Kind: ErrValidation, Msg: "executable path", Err: err}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", &Error{Kind: ErrValidation, Msg: "executable " + path, Err: err}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", &Error{Kind: ErrValidation, Msg: "executable " + path, Err: err}
	}
	if !fi.Mode().IsRegular() || (goos != "windows" && fi.Mode().Perm()&0o111 == 0) {
		return "", &Error{Kind: ErrValidation, Msg: path + " is not an executable file"}
	}
	return real, nil
}

// bundleOf returns the innermost X.app directory enclosing path, or "".
func bundleOf(path string) string {
	for d := filepath.Dir(path); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasSuffix(d, ".app") {
			return d
		}
	}
	return ""
}

// chromiumNames are executables KindAuto treats as a Chromium browser.
var chromiumNames = []string{
	"chromium", "chromium-browser", "chrome", "google-chrome", "google-chrome-stable",
	"google-chrome-beta", "google-chrome-unstable", "chrome-headless-shell",
	"Google Chrome", "Chromium", "chrome.exe", "msedge", "msedge.exe", "microsoft-edge",
}

func looksLikeChromium(exe string) bool {
	return slices.Contains(chromiumNames, filepath.Base(exe))
}

// helperNames are files beside an Electron binary that are executable but
// are not the app.
var helperNames = []string{"chrome-sandbox", "chrome_crashpad_handler", "crashpad_handler"}

// appDirExecutable finds the app binary in an unpacked Electron directory:
// the one executable regular file at its top level that is not a helper or
// a shared library.
func appDirExecutable(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", &Error{Kind: ErrValidation, Msg: "app path " + dir, Err: err}
	}
	var found []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || slices.Contains(helperNames, name) || strings.Contains(name, ".so") ||
			strings.HasSuffix(name, ".pak") || strings.HasSuffix(name, ".bin") || strings.HasSuffix(name, ".dat") {
			continue
		}
		info, err := e.Info()
		if err != nil || info.Mode().Perm()&0o111 == 0 && !strings.HasSuffix(strings.ToLower(name), ".exe") {
			continue
		}
		found = append(found, filepath.Join(dir, name))
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", &Error{Kind: ErrValidation, Msg: "app path " + dir + " holds no executable; pass ExecutablePath"}
	default:
		return "", &Error{Kind: ErrValidation, Msg: fmt.Sprintf("app path %s holds several executables %v; pass ExecutablePath", dir, found)}
	}
}

// resolveAppPath turns an AppPath (a .app bundle, a .desktop file, an app
// directory or an executable) into an App.
func resolveAppPath(goos, path string) (App, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return App{}, &Error{Kind: ErrValidation, Msg: "app path", Err: err}
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return App{}, &Error{Kind: ErrValidation, Msg: "app path " + path, Err: err}
	}
	switch {
	case fi.IsDir() && strings.HasSuffix(abs, ".app"):
		app, err := readBundle(abs)
		if err != nil {
			return App{}, &Error{Kind: ErrValidation, Msg: "app bundle " + path, Err: err}
		}
		return app, nil
	case fi.IsDir():
		exe, err := appDirExecutable(abs)
		if err != nil {
			return App{}, err
		}
		return App{Name: filepath.Base(abs), AppPath: abs, ExecutablePath: exe, Platform: goos}, nil
	case strings.HasSuffix(abs, ".desktop"):
		b, err := readLimited(abs)
		if err != nil {
			return App{}, &Error{Kind: ErrValidation, Msg: "desktop file " + path, Err: err}
		}
		app, err := desktopApp(b, abs, strings.TrimSuffix(filepath.Base(abs), ".desktop"), hostEnv())
		if err != nil {
			return App{}, &Error{Kind: ErrValidation, Msg: "desktop file " + path, Err: err}
		}
		return app, nil
	default:
		return App{Name: exeName(abs), AppPath: abs, ExecutablePath: abs, Platform: goos}, nil
	}
}

func exeName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// readLimited reads a small metadata file, refusing huge ones.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const limit = 256 << 10
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}
