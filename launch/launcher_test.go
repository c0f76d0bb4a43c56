package launch

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/testenv"
)

// assertGone checks that nothing of a launch is left: no process in its
// group, nothing on its port, no profile directory.
func assertGone(t *testing.T, pid, port int, profile string) {
	t.Helper()
	assert.False(t, browserproc.Alive(pid), "browser pid %d still runs", pid)
	assert.False(t, browserproc.GroupAlive(pid) && groupHasLive(pid), "process group %d still has members", pid)
	if port > 0 {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			t.Errorf("port %d still accepts connections", port)
		}
	}
	_, err := os.Stat(profile)
	assert.True(t, os.IsNotExist(err), "profile %s still exists (%v)", profile, err)
}

// groupHasLive reports a live (not zombie) member of a process group.
func groupHasLive(pgid int) bool { return len(groupPIDs(pgid)) > 0 }

func newLauncher(t *testing.T) *Launcher {
	l := NewLauncher(LauncherOptions{TempDir: tempRoot})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			t.Errorf("launcher close: %v", err)
		}
	})
	return l
}

func TestLauncherLaunchProbeCleanup(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	l := newLauncher(t)
	inst, err := l.Launch(ctx, Spec{ExecutablePath: testenv.Chromium(t)})
	require.NoError(t, err)
	assert.True(t, inst.Owned)
	assert.Equal(t, KindChromium, inst.Kind, "auto picks chromium by name")
	assert.True(t, strings.HasPrefix(inst.ID, "launch-"))
	assert.Positive(t, inst.Pid())
	assert.Zero(t, inst.Port(), "a Chromium launch talks over a pipe")
	assert.Empty(t, inst.Endpoint())
	assertNoListener(t, inst.Pid())
	assert.DirExists(t, inst.DataDir())
	assert.Equal(t, tempRoot, filepath.Dir(inst.DataDir()))
	assert.NotEmpty(t, inst.Executable())

	// Attached: drive the page through the launch's own connection.
	targets, err := inst.Browser().Targets(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, targets)
	tab, err := inst.Browser().Attach(ctx, targets[0].ID)
	require.NoError(t, err)
	url := serve("/launcher/probe", `<title>Probe me</title><p>Hello from the probe page</p><input id=q name=query autofocus>`)
	_, err = tab.Goto(ctx, url, cdp.Load)
	require.NoError(t, err)
	require.NoError(t, tab.WaitFor(ctx, cdp.Predicate(`() => document.activeElement && document.activeElement.id === "q"`)))

	st, err := l.Status(ctx, inst.ID)
	require.NoError(t, err)
	require.Len(t, st, 1)
	assert.True(t, st[0].ProcessAlive)
	assert.False(t, st[0].PortAlive, "there is no port")
	assert.True(t, st[0].Connected)
	assert.False(t, st[0].Stale)
	assert.NotEmpty(t, st[0].Targets)

	pr, err := l.Probe(ctx, inst.ID, 5*time.Second)
	require.NoError(t, err)
	assert.Empty(t, pr.Errors)
	assert.Equal(t, "Probe me", pr.Title)
	assert.Equal(t, url, pr.URL)
	assert.Equal(t, `input#q[name="query"]`, pr.Focused)
	assert.Contains(t, pr.Text, "Hello from the probe page")
	require.NotNil(t, pr.Active)
	assert.Equal(t, targets[0].ID, pr.Active.ID)
	assert.NotEmpty(t, pr.Targets)

	reports, err := l.Cleanup(ctx, inst.ID)
	require.NoError(t, err)
	require.Len(t, reports, 1)
	assert.True(t, reports[0].OK())
	var names []string
	for _, s := range reports[0].Steps {
		names = append(names, s.Name)
		want := StepOK
		if s.Name == StepPort {
			want = StepSkipped // no port to check
		}
		assert.Equal(t, want, s.Outcome, s.Name)
	}
	assert.Equal(t, []string{StepConnection, StepProcess, StepPort, StepProfile}, names)
	assertGone(t, inst.Pid(), inst.Port(), inst.DataDir())
	assert.ErrorIs(t, tab.Err(), cdp.ErrBrowserClosed)

	// Cleanup again: safe, and still all ok.
	reports, err = l.Cleanup(ctx, inst.ID)
	require.NoError(t, err)
	assert.True(t, reports[0].OK())
	assertGone(t, inst.Pid(), inst.Port(), inst.DataDir())

	st, err = l.Status(ctx, inst.ID)
	require.NoError(t, err)
	assert.True(t, st[0].Cleaned)
	assert.False(t, st[0].Stale)
	all, err := l.Status(ctx)
	require.NoError(t, err)
	assert.Empty(t, all, "a cleaned launch leaves the list")

	_, err = l.Probe(ctx, inst.ID, 0)
	assert.ErrorIs(t, err, ErrTabDrift)
	_, err = l.Status(ctx, "launch-nope")
	assert.ErrorIs(t, err, ErrValidation)
	_, err = l.Cleanup(ctx, "launch-nope")
	assert.ErrorIs(t, err, ErrValidation)
}

func TestLauncherTwoAtOnce(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	l := newLauncher(t)
	var wg sync.WaitGroup
	insts := make([]*Process, 2)
	errs := make([]error, 2)
	for i := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			insts[i], errs[i] = l.Launch(ctx, Spec{ExecutablePath: testenv.Chromium(t), Kind: KindChromium})
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	a, b := insts[0], insts[1]
	assert.NotEqual(t, a.ID, b.ID)
	assert.NotEqual(t, a.Pid(), b.Pid())
	assert.NotSame(t, a.Browser(), b.Browser())
	assert.NotEqual(t, a.DataDir(), b.DataDir())
	for _, inst := range insts {
		pr, err := l.Probe(ctx, inst.ID, 0)
		require.NoError(t, err)
		assert.Equal(t, "about:blank", pr.URL)
	}
	st, err := l.Status(ctx)
	require.NoError(t, err)
	assert.Len(t, st, 2)

	reports, err := l.Cleanup(ctx)
	require.NoError(t, err)
	assert.Len(t, reports, 2)
	for _, inst := range insts {
		assertGone(t, inst.Pid(), inst.Port(), inst.DataDir())
	}
}

func TestLauncherStatusAfterOutsideKill(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	l := newLauncher(t)
	inst, err := l.Launch(ctx, Spec{ExecutablePath: testenv.Chromium(t), Kind: KindChromium})
	require.NoError(t, err)

	// Someone else kills the browser.
	p, err := os.FindProcess(inst.Pid())
	require.NoError(t, err)
	require.NoError(t, p.Signal(os.Kill))

	var st Status
	require.Eventually(t, func() bool {
		s, err := l.Status(ctx, inst.ID)
		if err != nil || len(s) != 1 {
			return false
		}
		st = s[0]
		return !st.ProcessAlive && !st.Connected
	}, 10*time.Second, 50*time.Millisecond)
	assert.True(t, st.Stale)
	assert.False(t, st.Cleaned)
	all, err := l.Status(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.True(t, all[0].Stale)

	_, err = l.Probe(ctx, inst.ID, time.Second)
	assert.ErrorIs(t, err, ErrTabDrift)

	// Cleanup of a dead launch signals nothing and removes the profile.
	reports, err := l.Cleanup(ctx, inst.ID)
	require.NoError(t, err)
	assert.True(t, reports[0].OK())
	assertGone(t, inst.Pid(), inst.Port(), inst.DataDir())
}

func TestLauncherAttachIsManual(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	p := launchWithPort(t) // a browser the user started with a port

	l := newLauncher(t)
	inst, err := l.Attach(ctx, "http://127.0.0.1:"+strconv.Itoa(p.Port()))
	require.NoError(t, err)
	assert.False(t, inst.Owned)
	assert.Equal(t, p.Port(), inst.Port())
	assert.Equal(t, p.Endpoint(), inst.Endpoint())

	st, err := l.Status(ctx, inst.ID)
	require.NoError(t, err)
	assert.True(t, st[0].PortAlive)
	assert.False(t, st[0].Stale)
	pr, err := l.Probe(ctx, inst.ID, 0)
	require.NoError(t, err)
	assert.Equal(t, "about:blank", pr.URL)

	reports, err := l.Cleanup(ctx, inst.ID)
	require.NoError(t, err)
	steps := reports[0].Steps
	assert.Equal(t, StepOK, steps[0].Outcome)
	for _, s := range steps[1:] {
		assert.Equal(t, StepSkipped, s.Outcome, s.Name)
	}
	// The browser it did not start is untouched.
	select {
	case <-p.Done():
		t.Fatal("cleanup of an attachment ended the browser")
	default:
	}
	assert.True(t, portAnswers(ctx, p.Port()))
	assert.DirExists(t, p.DataDir())

	_, err = l.Attach(ctx, "http://127.0.0.1:1")
	assert.ErrorIs(t, err, ErrUpstream)
}

// TestLauncherProcessClose: a Launcher's Process is the same noun as
// Chromium's, and its Close is the Launcher's Cleanup of its ID; an
// attachment's Close only closes the connection, and it cannot be killed.
func TestLauncherProcessClose(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	l := newLauncher(t)
	p, err := l.Launch(ctx, Spec{ExecutablePath: testenv.Chromium(t), Kind: KindChromium, Handoff: HandoffConnect})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "closing again is safe")
	assertGone(t, p.Pid(), p.Port(), p.DataDir())
	<-p.Done()
	st, err := l.Status(ctx, p.ID)
	require.NoError(t, err)
	assert.True(t, st[0].Cleaned)
	all, err := l.Status(ctx)
	require.NoError(t, err)
	assert.Empty(t, all, "a closed launch leaves the list")

	withPort := launchWithPort(t)
	a, err := l.Attach(ctx, withPort.Endpoint())
	require.NoError(t, err)
	assert.Zero(t, a.Pid())
	assert.Nil(t, a.Done())
	assert.ErrorIs(t, a.Kill(), ErrValidation)
	require.NoError(t, a.Close())
	<-a.Browser().Done()
	assert.True(t, portAnswers(ctx, withPort.Port()), "closing an attachment leaves the browser running")
}

// fakeElectron lays out an app that passes the Linux Electron evidence
// check, with script as its executable.
func fakeElectron(t *testing.T, dir, name, script string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "resources"), 0o755))
	for _, f := range []string{"resources/app.asar", "chrome_100_percent.pak", "resources.pak", "snapshot_blob.bin"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644))
	}
	exe := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(exe, []byte(script), 0o755))
	return exe
}

func TestLauncherTimeout(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	// The fake app never writes DevToolsActivePort, ignores SIGTERM (so
	// the launcher must escalate) and leaves a child in its group.
	exe := fakeElectron(t, t.TempDir(), "stuck", "#!/bin/sh\ntrap '' TERM\necho 'fake app: starting' >&2\necho 'fake app: waiting forever' >&2\nsleep 600 &\nwhile :; do sleep 1; done\n")
	l := newLauncher(t)
	start := time.Now()
	_, err := l.Launch(ctx, Spec{ExecutablePath: exe, Timeout: time.Second, Env: []string{"FAKE_APP=1"}})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrTimeout)
	assert.ErrorIs(t, err, ErrLaunch)
	assert.NotErrorIs(t, err, ErrUpstream)
	var le *Error
	require.ErrorAs(t, err, &le)
	d := le.Diagnostics
	require.NotNil(t, d)
	assert.Positive(t, d.PID)
	assert.False(t, d.PortFilePresent)
	assert.Equal(t, time.Second, d.Timeout)
	assert.GreaterOrEqual(t, d.Elapsed, time.Second)
	assert.Equal(t, []string{"fake app: starting", "fake app: waiting forever"}, d.Stderr)
	assert.Contains(t, err.Error(), "fake app: waiting forever")
	assert.Contains(t, err.Error(), "single instance", "the commonest cause is named")
	assert.True(t, d.PIDAlive, "the app was running when the launch gave up")
	assert.Less(t, time.Since(start), 10*time.Second)

	// The whole group is gone, and so is the profile.
	assert.False(t, groupHasLive(d.PID), "fake app's process group survived")
	assert.False(t, browserproc.Alive(d.PID))
	_, serr := os.Stat(d.ProfileDir)
	assert.True(t, os.IsNotExist(serr))
	st, err := l.Status(ctx)
	require.NoError(t, err)
	assert.Empty(t, st, "a failed launch is not recorded")
}

func TestLauncherEarlyExit(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 30*time.Second)
	exe := fakeElectron(t, t.TempDir(), "quits", "#!/bin/sh\necho \"env says $FAKE_APP\" >&2\nexit 3\n")
	l := newLauncher(t)
	_, err := l.Launch(ctx, Spec{ExecutablePath: exe, Kind: KindElectron, Env: []string{"FAKE_APP=hello"}})
	assert.ErrorIs(t, err, ErrUpstream)
	var le *Error
	require.ErrorAs(t, err, &le)
	require.NotNil(t, le.Diagnostics, "the app ran: %v", err)
	assert.Equal(t, []string{"env says hello"}, le.Diagnostics.Stderr)
	assert.Equal(t, "exit status 3", le.Diagnostics.Exit)
	assert.False(t, le.Diagnostics.PIDAlive)
	assert.NotContains(t, err.Error(), "single instance", "a crash is not a hand-over")

	// A second instance of a single-instance app hands over and exits 0.
	exe = fakeElectron(t, t.TempDir(), "second", "#!/bin/sh\nexit 0\n")
	_, err = l.Launch(ctx, Spec{ExecutablePath: exe, Kind: KindElectron})
	assert.ErrorIs(t, err, ErrUpstream)
	assert.Contains(t, err.Error(), "single instance")
}

func TestLaunchSpecValidation(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	l := newLauncher(t)
	chromium := testenv.Chromium(t)
	cases := map[string]Spec{
		"no target":                 {},
		"two targets":               {ExecutablePath: chromium, AppName: "x"},
		"user data dir":             {ExecutablePath: chromium, AppArgs: []string{"--user-data-dir=/tmp/x"}},
		"user data dir bare":        {ExecutablePath: chromium, AppArgs: []string{"--user-data-dir"}},
		"debugging port":            {ExecutablePath: chromium, AppArgs: []string{"--remote-debugging-port=9222"}},
		"debugging address":         {ExecutablePath: chromium, AppArgs: []string{"--remote-debugging-address=0.0.0.0"}},
		"debugging pipe":            {ExecutablePath: chromium, AppArgs: []string{"--remote-debugging-pipe"}},
		"bare double dash":          {ExecutablePath: chromium, AppArgs: []string{"--window-size=800,600", "--", "x"}},
		"negative timeout":          {ExecutablePath: chromium, Timeout: -time.Second},
		"bad env":                   {ExecutablePath: chromium, Env: []string{"NOEQUALS"}},
		"unknown kind":              {ExecutablePath: chromium, Kind: "firefox"},
		"missing executable":        {ExecutablePath: "/nonexistent/app"},
		"directory executable":      {ExecutablePath: t.TempDir()},
		"electron kind on chromium": {ExecutablePath: chromium, Kind: KindElectron},
		"auto on a non-electron":    {ExecutablePath: "/bin/sh"},
		"unknown app name":          {AppName: "No Such App Anywhere"},
		"unknown bundle id":         {BundleID: "com.example.nothing"},
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := l.Launch(ctx, spec)
			assert.ErrorIs(t, err, ErrValidation)
			assert.ErrorIs(t, err, ErrLaunch)
		})
	}
	// Allowed flags pass through.
	assert.NoError(t, checkArgs([]string{"--window-size=800,600", "--lang=en", "--user-data-directory-ish"}))
}

func TestLaunchTimeoutClamp(t *testing.T) {
	// A huge timeout is cut to the cap rather than refused: the fake app
	// exits at once, so the launch ends long before either.
	exe := fakeElectron(t, t.TempDir(), "quits", "#!/bin/sh\nexit 0\n")
	l := newLauncher(t)
	_, err := l.Launch(tctx(t, 30*time.Second), Spec{ExecutablePath: exe, Timeout: time.Hour})
	var le *Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, MaxTimeout, le.Diagnostics.Timeout)
	_, err = l.Launch(tctx(t, 30*time.Second), Spec{ExecutablePath: exe})
	require.ErrorAs(t, err, &le)
	assert.Equal(t, DefaultTimeout, le.Diagnostics.Timeout)
}

func TestPolicyMatrix(t *testing.T) {
	app := App{Name: "Slack", DesktopID: "com.slack.Slack.desktop", AppPath: "/usr/share/applications/com.slack.Slack.desktop", ExecutablePath: "/usr/lib/slack/slack"}
	cases := []struct {
		name        string
		allow, deny []string
		blocked     bool
		list, entry string
	}{
		{name: "no lists"},
		{name: "allow matches name", allow: []string{"Slack"}},
		{name: "allow matches id", allow: []string{"com.slack"}},
		{name: "allow matches exe path", allow: []string{"/usr/lib/slack"}},
		{name: "allow misses", allow: []string{"Obsidian"}, blocked: true, list: "allow"},
		{name: "deny matches", deny: []string{"slack/slack"}, blocked: true, list: "deny", entry: "slack/slack"},
		{name: "deny misses", deny: []string{"1Password", "Bitwarden"}},
		{name: "both, deny wins", allow: []string{"Slack"}, deny: []string{"Slack"}, blocked: true, list: "deny", entry: "Slack"},
		{name: "both, allowed", allow: []string{"Slack"}, deny: []string{"Bitwarden"}},
		{name: "both, neither matches", allow: []string{"Code"}, deny: []string{"Bitwarden"}, blocked: true, list: "allow"},
		{name: "allow ignores case", allow: []string{"SLACK"}},
		{name: "deny ignores case", deny: []string{"LIB/Slack"}, blocked: true, list: "deny", entry: "LIB/Slack"},
		{name: "empty entries match nothing", allow: []string{""}, deny: []string{""}, blocked: true, list: "allow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkPolicy(app, c.allow, c.deny)
			if !c.blocked {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrPolicyBlocked)
			var pe *PolicyError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, c.list, pe.List)
			assert.Equal(t, c.entry, pe.Entry)
		})
	}
}

func TestLaunchPolicyBlocksBeforeStart(t *testing.T) {
	ctx := tctx(t, 30*time.Second)
	dir := filepath.Join(t.TempDir(), "Bitwarden")
	exe := fakeElectron(t, dir, "bitwarden", "#!/bin/sh\necho started > \"$MARK\"\n")
	mark := filepath.Join(t.TempDir(), "mark")
	l := newLauncher(t)
	_, err := l.Launch(ctx, Spec{AppPath: dir, Deny: []string{"Bitwarden"}, Env: []string{"MARK=" + mark}})
	assert.ErrorIs(t, err, ErrPolicyBlocked)
	var pe *PolicyError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "deny", pe.List)
	assert.Equal(t, "name", pe.Field)
	assert.Contains(t, err.Error(), `deny entry "Bitwarden"`)
	_, err = l.Launch(ctx, Spec{ExecutablePath: exe, Allow: []string{"Slack"}, Env: []string{"MARK=" + mark}})
	assert.ErrorIs(t, err, ErrPolicyBlocked)
	assert.NoFileExists(t, mark, "a blocked app must not run")
}

// chromiumAsElectron lays out a fake Electron app that runs headless
// Chromium on url, so the Electron path (a debugging port, the handoff)
// runs against a real browser.
func chromiumAsElectron(t *testing.T, url string) string {
	t.Helper()
	return fakeElectron(t, t.TempDir(), "app", "#!/bin/sh\nexec "+testenv.Chromium(t)+" --headless=new --disable-gpu \"$@\" "+url+"\n")
}

func TestLauncherElectronHandoff(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 90*time.Second)
	url := serve("/launcher/handoff", `<title>App</title><button>Save</button><a href="/x">Docs</a>`+
		`<input aria-label="Search"><button style="display:none">Hidden</button>`)
	l := newLauncher(t)
	exe := chromiumAsElectron(t, url)

	inst, err := l.Launch(ctx, Spec{ExecutablePath: exe, Kind: KindElectron})
	require.NoError(t, err)
	assert.Equal(t, HandoffSnapshot, inst.Handoff)
	assert.Equal(t, TargetPage, inst.TargetType)
	assert.Positive(t, inst.Port())
	require.NotNil(t, inst.Target, inst.HandoffProblem)
	assert.Equal(t, url, inst.Target.URL)
	assert.NotEmpty(t, inst.Targets)
	require.NotNil(t, inst.Snapshot, inst.HandoffProblem)
	assert.Empty(t, inst.HandoffProblem)
	assert.Equal(t, 3, inst.Snapshot.RefCount)
	assert.Equal(t, []ElementRef{{"e1", "button", "Save"}, {"e2", "link", "Docs"}, {"e3", "textbox", "Search"}}, inst.Snapshot.Refs)
	assert.Equal(t, cdp.Locator{Role: "button", Name: "Save", Exact: true}, inst.Snapshot.Refs[0].Locator())

	st, err := l.Status(ctx, inst.ID)
	require.NoError(t, err)
	assert.Empty(t, st[0].Mismatch)
	pr, err := l.Probe(ctx, inst.ID, 0)
	require.NoError(t, err)
	require.NotNil(t, pr.Snapshot)
	assert.Equal(t, 3, pr.Snapshot.RefCount)
	assert.Empty(t, pr.Mismatch)

	// The app's page drifts to about:blank: status and probe say so.
	tab, err := inst.Browser().Attach(ctx, inst.Target.ID)
	require.NoError(t, err)
	_, err = tab.Goto(ctx, "about:blank", cdp.Load)
	require.NoError(t, err)
	st, err = l.Status(ctx, inst.ID)
	require.NoError(t, err)
	assert.Contains(t, st[0].Mismatch, "about:blank")
	pr, err = l.Probe(ctx, inst.ID, 0)
	require.NoError(t, err)
	assert.Contains(t, pr.Mismatch, "about:blank")
	assert.Equal(t, 0, pr.Snapshot.RefCount)

	// tabs lists without a snapshot; connect does neither; a webview
	// target that is not there is a problem, not a failure.
	tabs, err := l.Launch(ctx, Spec{ExecutablePath: exe, Kind: KindElectron, Handoff: HandoffTabs})
	require.NoError(t, err)
	assert.NotEmpty(t, tabs.Targets)
	assert.NotNil(t, tabs.Target)
	assert.Nil(t, tabs.Snapshot)
	conn, err := l.Launch(ctx, Spec{ExecutablePath: exe, Kind: KindElectron, Handoff: HandoffConnect, TargetType: TargetWebview})
	require.NoError(t, err)
	assert.Nil(t, conn.Target)
	assert.Empty(t, conn.Targets)
	pr, err = l.Probe(ctx, conn.ID, 0)
	require.NoError(t, err)
	assert.Nil(t, pr.Active, "a page is no webview")
	assert.Contains(t, pr.Errors, "no webview target")

	_, err = l.Launch(ctx, Spec{ExecutablePath: exe, Handoff: "screenshot"})
	assert.ErrorIs(t, err, ErrValidation)
	_, err = l.Launch(ctx, Spec{ExecutablePath: exe, TargetType: "iframe"})
	assert.ErrorIs(t, err, ErrValidation)
}
