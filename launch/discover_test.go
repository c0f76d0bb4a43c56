package launch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/testenv"
)

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), mode))
}

func TestCheckElectronLinuxLayouts(t *testing.T) {
	root := t.TempDir()
	good := fakeElectron(t, filepath.Join(root, "good"), "app", "#!/bin/sh\n")
	ev, err := checkElectron("linux", good)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "good", "resources", "app.asar"), ev.Archive)
	assert.Len(t, ev.Paks, 2)
	assert.Equal(t, filepath.Join(root, "good", "snapshot_blob.bin"), ev.Snapshot)

	// The bare electron binary: default_app.asar and the context snapshot.
	d := filepath.Join(root, "electron-dist")
	write(t, filepath.Join(d, "electron"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(d, "resources", "default_app.asar"), "x", 0o644)
	write(t, filepath.Join(d, "resources.pak"), "x", 0o644)
	write(t, filepath.Join(d, "v8_context_snapshot.bin"), "x", 0o644)
	ev, err = checkElectron("linux", filepath.Join(d, "electron"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(d, "v8_context_snapshot.bin"), ev.Snapshot)

	// A symlink on PATH is followed to the real binary's directory.
	link := filepath.Join(root, "bin", "app")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	require.NoError(t, os.Symlink(good, link))
	ev, err = checkElectron("linux", link)
	require.NoError(t, err)
	assert.Equal(t, good, ev.Executable)

	negative := map[string]func(dir string) string{
		"no asar": func(dir string) string {
			exe := fakeElectron(t, dir, "app", "#!/bin/sh\n")
			require.NoError(t, os.Remove(filepath.Join(dir, "resources", "app.asar")))
			return exe
		},
		"no pak": func(dir string) string {
			exe := fakeElectron(t, dir, "app", "#!/bin/sh\n")
			require.NoError(t, os.Remove(filepath.Join(dir, "resources.pak")))
			require.NoError(t, os.Remove(filepath.Join(dir, "chrome_100_percent.pak")))
			return exe
		},
		"no snapshot": func(dir string) string {
			exe := fakeElectron(t, dir, "app", "#!/bin/sh\n")
			require.NoError(t, os.Remove(filepath.Join(dir, "snapshot_blob.bin")))
			return exe
		},
		"not executable": func(dir string) string {
			exe := fakeElectron(t, dir, "app", "#!/bin/sh\n")
			require.NoError(t, os.Chmod(exe, 0o644))
			return exe
		},
		"a directory":   func(dir string) string { fakeElectron(t, dir, "app", ""); return dir },
		"missing":       func(dir string) string { return filepath.Join(dir, "nothing") },
		"empty path":    func(string) string { return "" },
		"plain program": func(string) string { return "/bin/sh" },
	}
	for name, mk := range negative {
		t.Run(name, func(t *testing.T) {
			_, err := checkElectron("linux", mk(filepath.Join(t.TempDir(), "app-dir")))
			assert.ErrorIs(t, err, ErrValidation)
		})
	}
	_, err = CheckElectron(testenv.Chromium(t))
	assert.ErrorIs(t, err, ErrValidation, "Chromium is not Electron")
}

// fakeBundle lays out a macOS .app bundle; electron adds the framework.
func fakeBundle(t *testing.T, dir, name, id string, electron bool) string {
	t.Helper()
	app := filepath.Join(dir, name+".app")
	write(t, filepath.Join(app, "Contents", "Info.plist"), `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>CFBundleExecutable</key>
	<string>`+name+`</string>
	<key>CFBundleIdentifier</key>
	<string>`+id+`</string>
	<key>CFBundleName</key>
	<string>`+name+`</string>
	<key>LSMinimumSystemVersion</key>
	<string>10.15</string>
	<key>NSAppTransportSecurity</key>
	<dict><key>CFBundleExecutable</key><string>nested-must-not-win</string></dict>
	<key>LSRequiresNativeExecution</key>
	<true/>
</dict>
</plist>`, 0o644)
	write(t, filepath.Join(app, "Contents", "MacOS", name), "#!/bin/sh\n", 0o755)
	if electron {
		require.NoError(t, os.MkdirAll(filepath.Join(app, "Contents", "Frameworks", "Electron Framework.framework"), 0o755))
	}
	return app
}

func TestCheckElectronMacLayouts(t *testing.T) {
	dir := t.TempDir()
	good := fakeBundle(t, dir, "Slack", "com.tinyspeck.slackmacgap", true)
	ev, err := checkElectron("darwin", filepath.Join(good, "Contents", "MacOS", "Slack"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(good, "Contents", "Frameworks", "Electron Framework.framework"), ev.Framework)

	plain := fakeBundle(t, dir, "TextEdit", "com.apple.TextEdit", false)
	_, err = checkElectron("darwin", filepath.Join(plain, "Contents", "MacOS", "TextEdit"))
	assert.ErrorIs(t, err, ErrValidation)
	// A Linux layout is not evidence on macOS.
	exe := fakeElectron(t, filepath.Join(dir, "linux"), "app", "#!/bin/sh\n")
	_, err = checkElectron("darwin", exe)
	assert.ErrorIs(t, err, ErrValidation)

	app, err := resolveAppPath("darwin", good)
	require.NoError(t, err)
	assert.Equal(t, "Slack", app.Name)
	assert.Equal(t, "com.tinyspeck.slackmacgap", app.BundleID)
	assert.Equal(t, filepath.Join(good, "Contents", "MacOS", "Slack"), app.ExecutablePath)
	assert.Equal(t, []string{"chat"}, app.Sensitive)
}

func TestResolveAppPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "MyApp")
	exe := fakeElectron(t, dir, "myapp", "#!/bin/sh\n")
	write(t, filepath.Join(dir, "chrome-sandbox"), "", 0o755)
	write(t, filepath.Join(dir, "libffmpeg.so"), "", 0o755)
	app, err := resolveAppPath("linux", dir)
	require.NoError(t, err)
	assert.Equal(t, exe, app.ExecutablePath)
	assert.Equal(t, "MyApp", app.Name)

	write(t, filepath.Join(dir, "other-tool"), "", 0o755)
	_, err = resolveAppPath("linux", dir)
	assert.ErrorIs(t, err, ErrValidation, "two candidate binaries")

	desktop := filepath.Join(t.TempDir(), "myapp.desktop")
	write(t, desktop, "[Desktop Entry]\nType=Application\nName=My App\nExec=\""+exe+"\" --flag %U\n", 0o644)
	app, err = resolveAppPath("linux", desktop)
	require.NoError(t, err)
	assert.Equal(t, exe, app.ExecutablePath)
	assert.Equal(t, "My App", app.Name)
	assert.Equal(t, "myapp.desktop", app.DesktopID)

	_, err = resolveAppPath("linux", filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, ErrValidation)
	bad := filepath.Join(t.TempDir(), "bad.desktop")
	write(t, bad, "[Desktop Entry]\nName=x\n", 0o644)
	_, err = resolveAppPath("linux", bad)
	assert.ErrorIs(t, err, ErrValidation)
}

func TestDiscoverDesktopFiles(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "home-data"))
	t.Setenv("XDG_DATA_DIRS", a+string(os.PathListSeparator)+b)
	t.Setenv("HOME", filepath.Join(root, "home"))
	bin := filepath.Join(root, "bin")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	slack := fakeElectron(t, filepath.Join(root, "opt", "Slack"), "slack", "#!/bin/sh\n")
	code := fakeElectron(t, filepath.Join(root, "opt", "code"), "code", "#!/bin/sh\n")
	notes := fakeElectron(t, filepath.Join(root, "opt", "notes"), "notes", "#!/bin/sh\n")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.Symlink(notes, filepath.Join(bin, "notes")))

	apps := filepath.Join(a, "applications")
	write(t, filepath.Join(apps, "slack.desktop"), "# Slack\n[Desktop Entry]\nName=Slack\nName[de]=Slack DE\nExec="+slack+" %U\nType=Application\nCategories=Network;InstantMessaging;\n\n[Desktop Action new]\nExec=/bin/false\n", 0o644)
	write(t, filepath.Join(apps, "vendor", "code.desktop"), "[Desktop Entry]\nName=Visual Studio Code\nExec=env FOO=1 \""+code+"\" --unity-launch %F\nType=Application\nCategories=Development;IDE;\n", 0o644)
	write(t, filepath.Join(apps, "notes.desktop"), "[Desktop Entry]\nName=Notes\\sApp\nExec=notes\nType=Application\n", 0o644)
	write(t, filepath.Join(apps, "shell.desktop"), "[Desktop Entry]\nName=Shell\nExec=/bin/sh\nType=Application\n", 0o644)
	write(t, filepath.Join(apps, "hidden.desktop"), "[Desktop Entry]\nName=Hidden\nExec="+slack+"\nType=Application\nNoDisplay=true\n", 0o644)
	write(t, filepath.Join(apps, "link.desktop"), "[Desktop Entry]\nName=Link\nURL=https://example.com\nType=Link\n", 0o644)
	write(t, filepath.Join(apps, "broken.desktop"), "[Desktop Entry\nName=Broken\n", 0o644)
	write(t, filepath.Join(apps, "quote.desktop"), "[Desktop Entry]\nName=Quote\nExec=\""+slack+"\n", 0o644)
	// The same desktop ID later in XDG_DATA_DIRS is shadowed.
	write(t, filepath.Join(b, "applications", "slack.desktop"), "[Desktop Entry]\nName=Slack Old\nExec="+slack+"\nType=Application\n", 0o644)

	ctx := context.Background()
	d, err := Discover(ctx, "", 0)
	require.NoError(t, err)
	assert.Equal(t, "linux", d.Platform)
	byName := map[string]App{}
	var names []string
	for _, app := range d.Apps {
		byName[app.Name] = app
		names = append(names, app.Name)
	}
	sort.Strings(names)
	assert.Equal(t, []string{"Notes App", "Slack", "Visual Studio Code"}, names)
	assert.Equal(t, "slack.desktop", byName["Slack"].DesktopID)
	assert.Equal(t, slack, byName["Slack"].ExecutablePath)
	assert.Equal(t, []string{"chat"}, byName["Slack"].Sensitive)
	assert.Equal(t, "vendor-code.desktop", byName["Visual Studio Code"].DesktopID)
	assert.Equal(t, code, byName["Visual Studio Code"].ExecutablePath)
	assert.Equal(t, []string{"developer-workspace"}, byName["Visual Studio Code"].Sensitive)
	assert.Equal(t, filepath.Join(bin, "notes"), byName["Notes App"].ExecutablePath)
	assert.Equal(t, []string{"notes"}, byName["Notes App"].Sensitive)

	d, err = Discover(ctx, "CODE", 0)
	require.NoError(t, err)
	require.Len(t, d.Apps, 1)
	assert.Equal(t, "Visual Studio Code", d.Apps[0].Name)
	d, err = Discover(ctx, "", 2)
	require.NoError(t, err)
	assert.Len(t, d.Apps, 2)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Discover(cctx, "", 0)
	assert.ErrorIs(t, err, context.Canceled)

	// Launch by name and by desktop ID resolves through discovery; a deny
	// entry on the resolved binary proves it without starting anything.
	l := newLauncher(t)
	_, err = l.Launch(ctx, Spec{AppName: "slack", Deny: []string{slack}})
	var pe *PolicyError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "executable path", pe.Field)
	_, err = l.Launch(ctx, Spec{BundleID: "vendor-code", Deny: []string{"vendor-code.desktop"}})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "desktop id", pe.Field)
}

func TestDiscoverMacAndUnsupported(t *testing.T) {
	dir := t.TempDir()
	fakeBundle(t, dir, "Obsidian", "md.obsidian", true)
	fakeBundle(t, dir, "Bitwarden", "com.bitwarden.desktop", true)
	fakeBundle(t, dir, "Safari", "com.apple.Safari", false)
	write(t, filepath.Join(dir, "Binary.app", "Contents", "Info.plist"), "bplist00\x00\x01", 0o644)
	ctx := context.Background()
	d, err := discover(ctx, discoverEnv{goos: "darwin", appDirs: []string{dir, filepath.Join(dir, "missing")}}, "", 0)
	require.NoError(t, err)
	assert.Equal(t, "darwin", d.Platform)
	require.Len(t, d.Apps, 2)
	assert.Equal(t, "Bitwarden", d.Apps[0].Name)
	assert.Equal(t, []string{"passwords-auth"}, d.Apps[0].Sensitive)
	assert.Equal(t, "md.obsidian", d.Apps[1].BundleID)
	assert.Equal(t, []string{"notes"}, d.Apps[1].Sensitive)

	d, err = discover(ctx, discoverEnv{goos: "windows"}, "", 0)
	require.NoError(t, err)
	assert.Equal(t, "unsupported", d.Platform)
	assert.NotNil(t, d.Apps)
	assert.Empty(t, d.Apps)
}

// Bundles in a folder of /Applications (a suite's, a store's) are found,
// and one installed as a link; a folder deeper down, or reached through a
// link, is not searched.
func TestDiscoverMacBundlesInFoldersAndLinks(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	fakeBundle(t, filepath.Join(dir, "Setapp"), "Obsidian", "md.obsidian", true)
	fakeBundle(t, filepath.Join(dir, "a", "b"), "Deep", "com.example.deep", true)
	linked := fakeBundle(t, elsewhere, "Linked", "com.example.linked", true)
	require.NoError(t, os.Symlink(linked, filepath.Join(dir, "Linked.app")))
	fakeBundle(t, filepath.Join(elsewhere, "suite"), "Behind", "com.example.behind", true)
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "suite"), filepath.Join(dir, "suite")))
	d, err := discover(context.Background(), discoverEnv{goos: "darwin", appDirs: []string{dir}}, "", 0)
	require.NoError(t, err)
	var ids []string
	for _, a := range d.Apps {
		ids = append(ids, a.BundleID)
	}
	assert.ElementsMatch(t, []string{"md.obsidian", "com.example.linked"}, ids)
}

func TestSensitivityIsWordBased(t *testing.T) {
	assert.Empty(t, sensitivity("Slides Presenter", nil), `"ide" inside "Slides" is not a match`)
	assert.Equal(t, []string{"mail", "passwords-auth"}, sensitivity("Proton Mail", []string{"Password"}))
	assert.Empty(t, sensitivity("Calculator", []string{"Utility"}))
}

func TestSplitExec(t *testing.T) {
	cases := map[string][]string{
		`/opt/app/app %U`:                    {"/opt/app/app"},
		`"/opt/My App/app" --x=1 %f`:         {"/opt/My App/app", "--x=1"},
		`app "a \"quoted\" \\ \$ arg"`:       {"app", `a "quoted" \ $ arg`},
		`app 100%%`:                          {"app", "100%"},
		`  app   two  `:                      {"app", "two"},
		"env A=1 B=2 /usr/bin/app --flag %F": {"env", "A=1", "B=2", "/usr/bin/app", "--flag"},
	}
	for in, want := range cases {
		got, err := splitExec(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{`"unterminated`, `app %`, `app %z`, `"a\`} {
		_, err := splitExec(bad)
		assert.Error(t, err, bad)
	}
	assert.Equal(t, "/usr/bin/app", programOf([]string{"env", "A=1", "-u", "/usr/bin/app"}))
	assert.Equal(t, "", programOf([]string{"env", "A=1"}))
}

func TestParseOwnerAndSweep(t *testing.T) {
	h, b, ok := parseOwner([]byte("host=12\nbrowser=34\n"))
	assert.True(t, ok)
	assert.Equal(t, [2]int{12, 34}, [2]int{h, b})
	for _, bad := range []string{"", "browser=3\n", "host=x\n", "host=1\nother=2\n", "host=-1\n", "junk"} {
		_, _, ok := parseOwner([]byte(bad))
		assert.False(t, ok, bad)
	}

	dead := deadPID(t)
	dir := t.TempDir()
	mk := func(name, owner string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(p, 0o755))
		if owner != "" {
			write(t, filepath.Join(p, ownerFile), owner, 0o600)
		}
		return p
	}
	stale := mk(profilePrefix+"stale", "host="+itoa(dead)+"\nbrowser="+itoa(dead)+"\n")
	staleNoBrowser := mk(profilePrefix+"early", "host="+itoa(dead)+"\nbrowser=0\n")
	live := mk(profilePrefix+"live", "host="+itoa(os.Getpid())+"\nbrowser=0\n")
	liveBrowser := mk(profilePrefix+"orphan-running", "host="+itoa(dead)+"\nbrowser="+itoa(os.Getpid())+"\n")
	noOwner := mk(profilePrefix+"noowner", "")
	foreign := mk("someone-else", "host="+itoa(dead)+"\nbrowser="+itoa(dead)+"\n")
	garbled := mk(profilePrefix+"garbled", "host=\x00")
	require.NoError(t, os.Symlink(stale, filepath.Join(dir, profilePrefix+"link")))

	l := NewLauncher(LauncherOptions{TempDir: dir})
	sort.Strings(l.Swept())
	assert.ElementsMatch(t, []string{stale, staleNoBrowser}, l.Swept())
	for _, p := range []string{live, liveBrowser, noOwner, foreign, garbled} {
		assert.DirExists(t, p)
	}
	assert.NoDirExists(t, stale)
}

func itoa(n int) string { return strconv.Itoa(n) }

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("/bin/true")
	require.NoError(t, cmd.Run())
	require.False(t, browserproc.Alive(cmd.Process.Pid))
	return cmd.Process.Pid
}

// TestDiscoverFlatpakAndSnap: a sandboxed app's desktop file runs a
// launcher that is no Electron binary; discovery finds the app's own
// binary inside its installation and lists it.
func TestDiscoverFlatpakAndSnap(t *testing.T) {
	root := t.TempDir()
	flatpak := filepath.Join(root, "flatpak")
	files := filepath.Join(flatpak, "app", "com.example.Chat", "current", "active", "files")
	// bin/chat is the wrapper script the sandbox runs; the Electron
	// binary is under extra/.
	write(t, filepath.Join(files, "bin", "chat"), "#!/bin/sh\nexec /app/extra/chat/chat \"$@\"\n", 0o755)
	chat := fakeElectron(t, filepath.Join(files, "extra", "chat"), "chat", "#!/bin/sh\n")
	fakeElectron(t, filepath.Join(files, "extra", "helper"), "helper", "#!/bin/sh\n")
	snap := filepath.Join(root, "snap")
	code := fakeElectron(t, filepath.Join(snap, "code", "current", "usr", "share", "code"), "code", "#!/bin/sh\n")
	write(t, filepath.Join(snap, "bin", "code"), "#!/bin/sh\n", 0o755)

	apps := filepath.Join(root, "exports", "applications")
	write(t, filepath.Join(apps, "com.example.Chat.desktop"), "[Desktop Entry]\nName=Chat\n"+
		"Exec=/usr/bin/flatpak run --branch=stable --arch=x86_64 --command=chat --file-forwarding com.example.Chat @@u %U @@\nType=Application\n", 0o644)
	write(t, filepath.Join(apps, "code_code.desktop"), "[Desktop Entry]\nName=Code\n"+
		"Exec=env BAMF_DESKTOP_FILE_HINT=/var/lib/snapd/desktop/applications/code_code.desktop "+filepath.Join(snap, "bin", "code")+" --force-user-env %F\nType=Application\n", 0o644)
	write(t, filepath.Join(apps, "gone.desktop"), "[Desktop Entry]\nName=Gone\nExec=/usr/bin/flatpak run org.example.Gone\nType=Application\n", 0o644)

	env := discoverEnv{goos: "linux", appDirs: []string{apps}, flatpakRoots: []string{filepath.Join(root, "missing"), flatpak}, snapRoot: snap}
	d, err := discover(context.Background(), env, "", 0)
	require.NoError(t, err)
	byName := map[string]App{}
	for _, a := range d.Apps {
		byName[a.Name] = a
	}
	require.Len(t, d.Apps, 2, "%+v", d.Apps)
	assert.Equal(t, chat, byName["Chat"].ExecutablePath)
	assert.Equal(t, "flatpak", byName["Chat"].Packaging)
	assert.Equal(t, code, byName["Code"].ExecutablePath)
	assert.Equal(t, "snap", byName["Code"].Packaging)
}
