package launch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/execstart"
)

// DefaultFlags returns the flags every Chromium launch gets: first
// --no-first-run, --no-default-browser-check and --disable-extensions
// (which Electron apps get too), then flags that switch off background
// work that slows or destabilises automation (updates, sync, throttling
// of hidden tabs, crash reporting, popup blocking) and the browser's own
// network traffic (component updates, safe-browsing lists, metrics,
// pings), without touching site isolation, so cross-site navigations swap
// renderers exactly as they do for users. Each call returns a new slice,
// so a caller's changes reach neither the launcher nor other callers.
func DefaultFlags() []string { return browserproc.DefaultFlags() }

// lifecycleFlags are owned by the launcher; callers may not pass them
// because they would break endpoint discovery or cleanup.
var lifecycleFlags = []string{
	"--user-data-dir", "--remote-debugging-port", "--remote-debugging-address",
	"--remote-debugging-pipe",
}

// checkArgs refuses flags the launcher owns, and a bare "--", after which
// the launcher's own flags would be read as positional arguments.
func checkArgs(args []string) error {
	for _, a := range args {
		if a == "--" {
			return &Error{Kind: ErrValidation, Msg: `a bare "--" is not allowed in the arguments`}
		}
		for _, f := range lifecycleFlags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return &Error{Kind: ErrValidation, Msg: "flag " + f + " is owned by the launcher"}
			}
		}
	}
	return nil
}

// Options configures [Chromium]. The zero value launches headless
// Chromium found on PATH with a fresh temporary profile.
type Options struct {
	// Path is the browser executable. Empty means the first of chromium,
	// chromium-browser, google-chrome found on PATH.
	Path string
	// Headful shows a window. The zero value runs headless.
	Headful bool
	// Args are extra flags, appended after [DefaultFlags]. Flags that the
	// launcher owns (profile directory, debugging port or pipe) are refused
	// with ErrValidation.
	Args []string
	// TempDir is where the temporary profile directory is created. Empty
	// means os.TempDir().
	TempDir string
	// StartTimeout bounds the wait until the browser answers over its
	// debugging pipe. Zero means 30s.
	StartTimeout time.Duration
	// Stderr receives the browser's stderr. Nil discards it; it is always
	// drained, because a full pipe can stall the browser.
	Stderr io.Writer
	// Connect configures the connection ([Process.Browser]); nil means
	// the defaults of [cdp.Connect].
	Connect *cdp.Options
}

// Process is one browser or Electron app this package started, or, from
// [Launcher.Attach], one the caller started that a Launcher tracks. Both
// ways in return it: [Chromium] a plain headless Chromium for the host's
// own use, [Launcher.Launch] a browser or desktop app named by a [Spec].
// [Process.Browser] is its connection, a [cdp.Browser]; the package doc
// says why the noun is Process.
//
// A Process owns what it started: the process (and its process group
// where the OS has one), the temporary profile directory and the
// connection; [Process.Close] ends all three. One goroutine waits for the
// process and one drains stderr; both end when the process exits. An
// attachment (Owned false) owns only its connection.
//
// The methods report the process and its connection. The fields are what
// a Launcher made of the launch; a process from [Chromium] is Owned and of
// KindChromium, with the other fields zero. They do not change after the
// Process is returned.
type Process struct {
	// ID names the process in its Launcher's Status, Probe and Cleanup:
	// "launch-…" or "attach-…"; empty for [Chromium]'s.
	ID string
	// Owned is true for launches, false for attachments: only an owned
	// process is stopped and its profile removed.
	Owned bool
	Kind  Kind
	// App is what the Launcher resolved the Spec's target to.
	App App

	// Handoff and TargetType are the launch's, defaults filled in.
	Handoff    Handoff
	TargetType TargetType
	// Target is the target handed off: the first of TargetType when the
	// launch connected, nil for HandoffConnect or when there was none.
	// Status and Probe compare the app's targets against it.
	Target *cdp.TargetInfo
	// Targets are the app's page and webview targets at launch (not for
	// HandoffConnect).
	Targets []cdp.TargetInfo
	// Snapshot is Target's element refs at launch (HandoffSnapshot).
	Snapshot *Snapshot
	// HandoffProblem says what the handoff could not do, such as "no
	// webview target"; the launch itself succeeded.
	HandoffProblem string

	cmd      *exec.Cmd // nil for an attachment
	exe      string
	dataDir  string
	endpoint string
	port     int
	pipe     bool
	browser  *cdp.Browser
	started  time.Time
	stderr   *stderrTail

	done    chan struct{} // closed once the process has been reaped
	waitErr error         // set before done is closed

	closeOnce sync.Once
	closeErr  error

	l       *Launcher // the Launcher tracking it; nil for Chromium's
	cleaned bool      // guarded by l.mu
}

// Chromium starts Chromium with a temporary profile and
// --remote-debugging-pipe, and returns once the browser has answered over
// the pipe; [Process.Browser] is the connection. The browser opens no
// debugging port, so no other process (nor a page it shows) can reach it.
// The caller must call Close. Errors match ErrLaunch and one of
// ErrValidation, ErrTimeout or ErrUpstream; an *Error carries
// diagnostics.
func Chromium(ctx context.Context, opts Options) (*Process, error) {
	if err := checkArgs(opts.Args); err != nil {
		return nil, err
	}
	path := opts.Path
	if path == "" {
		var err error
		if path, err = findChromium(); err != nil {
			return nil, err
		}
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	p, err := start(ctx, startSpec{
		path: path, args: chromiumArgs(!opts.Headful, opts.Args),
		tempDir: opts.TempDir, timeout: timeout, stderr: opts.Stderr,
		pipe: true, connect: opts.Connect,
	})
	if err != nil {
		return nil, err
	}
	p.Kind = KindChromium
	return p, nil
}

func findChromium() (string, error) {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", &Error{Kind: ErrValidation, Msg: "no chromium on PATH"}
}

// chromiumArgs is the command line of a Chromium launch after the
// lifecycle flags that start adds.
func chromiumArgs(headless bool, extra []string) []string {
	var args []string
	if headless {
		args = append(args, "--headless=new")
	}
	args = append(args, browserproc.SandboxArgs()...)
	args = append(args, DefaultFlags()...)
	args = append(args, extra...)
	return append(browserproc.MergeFeatureLists(args), "about:blank")
}

// profilePrefix names every profile directory this package creates; with
// the owner file inside, it marks the directories a Launcher may sweep.
const profilePrefix = "tranquil-browser-"

// profileTmp is the browser's TMPDIR, inside its profile directory.
const profileTmp = "tmp"

// singletonTail is what Chromium appends to TMPDIR for its singleton
// socket; maxSocketPath the longest socket path every Unix takes (macOS's
// sun_path holds 104 bytes with the terminating NUL, Linux's 108).
const (
	singletonTail = "/org.chromium.Chromium.XXXXXX/SingletonSocket"
	maxSocketPath = 103
)

// ownerFile records, inside a profile directory, which host process created
// it and which browser uses it.
const ownerFile = "tranquil-owner"

// startSpec is one process start: everything but the lifecycle flags.
type startSpec struct {
	path    string
	args    []string
	env     []string // added to the host's environment
	tempDir string
	timeout time.Duration
	stderr  io.Writer
	// pipe speaks CDP over a pipe pair (--remote-debugging-pipe) instead
	// of a port, connecting with the connect options.
	pipe    bool
	connect *cdp.Options
}

// start creates the profile, starts the process in its own group with
// --user-data-dir and either the debugging pipe or
// --remote-debugging-port=0 first, and waits until the browser answers on
// the pipe or names its port in DevToolsActivePort. On failure nothing is
// left behind.
func start(ctx context.Context, s startSpec) (*Process, error) {
	dataDir, err := os.MkdirTemp(s.tempDir, profilePrefix)
	if err != nil {
		return nil, &Error{Kind: ErrUpstream, Msg: "profile directory", Err: err}
	}
	if err := writeOwner(dataDir, 0); err != nil {
		os.RemoveAll(dataDir)
		return nil, &Error{Kind: ErrUpstream, Msg: "profile directory", Err: err}
	}
	if err := browserproc.WriteProfilePrefs(dataDir); err != nil {
		os.RemoveAll(dataDir)
		return nil, &Error{Kind: ErrUpstream, Msg: "profile directory", Err: err}
	}
	cmd := exec.Command(s.path)
	cmd.SysProcAttr = browserproc.Attr()
	cmd.Env = os.Environ()
	// Chromium keeps its singleton socket in an org.chromium.Chromium.*
	// directory under TMPDIR and never removes it; inside the profile it
	// goes with the profile at Close or in a sweep. A socket's path is
	// short (sun_path), so a profile too deep for one keeps the host's
	// TMPDIR, and Close and Sweep remove the directory the profile's
	// SingletonSocket link names.
	if tmp := filepath.Join(dataDir, profileTmp); len(tmp)+len(singletonTail) <= maxSocketPath {
		if err := os.Mkdir(tmp, 0o700); err != nil {
			os.RemoveAll(dataDir)
			return nil, &Error{Kind: ErrUpstream, Msg: "profile directory", Err: err}
		}
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	}
	cmd.Env = append(cmd.Env, s.env...)
	args := []string{"--user-data-dir=" + dataDir}
	var pp *browserproc.Pipes
	if s.pipe {
		if pp, err = browserproc.NewPipes(); err != nil {
			os.RemoveAll(dataDir)
			return nil, &Error{Kind: ErrUpstream, Msg: "debugging pipe", Err: err}
		}
		flags, err := browserproc.PassPipes(cmd, pp.BrowserReads, pp.BrowserWrites)
		if err != nil {
			pp.CloseAll()
			os.RemoveAll(dataDir)
			return nil, &Error{Kind: ErrUpstream, Msg: "debugging pipe", Err: err}
		}
		args = append(args, flags...)
	} else {
		args = append(args, "--remote-debugging-port=0")
	}
	cmd.Args = append(append(cmd.Args, args...), s.args...)
	started := time.Now()
	var stderr io.ReadCloser
	cmd, err = execstart.Start(ctx, func() (*exec.Cmd, error) {
		c := exec.Command(s.path)
		c.Args, c.Env, c.SysProcAttr, c.ExtraFiles = cmd.Args, cmd.Env, cmd.SysProcAttr, cmd.ExtraFiles
		var err error
		stderr, err = c.StderrPipe()
		return c, err
	})
	// The browser holds its own copies of its ends now; ours would keep
	// the pipes open after it died, hiding its death from the reader.
	pp.CloseBrowserEnds()
	if err != nil {
		pp.CloseAll()
		os.RemoveAll(dataDir)
		return nil, &Error{Kind: ErrUpstream, Msg: "start " + s.path, Err: err}
	}
	p := &Process{Owned: true, cmd: cmd, exe: s.path, dataDir: dataDir, pipe: s.pipe, done: make(chan struct{}), stderr: newStderrTail(), started: started}
	_ = writeOwner(dataDir, cmd.Process.Pid)
	sink := s.stderr
	if sink == nil {
		sink = io.Discard
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(io.MultiWriter(p.stderr, sink), stderr)
	}()
	go func() {
		// exec.Cmd.Wait closes the pipe, so the drain must finish first.
		<-drained
		p.waitErr = cmd.Wait()
		close(p.done)
	}()

	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if s.pipe {
		err = p.connectPipe(wctx, pp, s.connect, s.timeout)
	} else {
		err = p.waitEndpoint(wctx, s.timeout)
	}
	if err != nil {
		_ = p.Close()
		if le, ok := err.(*Error); ok && le.Diagnostics != nil {
			// Now that the group is gone, say so.
			le.Diagnostics.PIDAlive = false
		}
		return nil, err
	}
	return p, nil
}

// connectPipe puts a connection on the pipes and waits until the browser
// answers Browser.getVersion on it: the handler is up and commands are
// served. The connection then belongs to p.
func (p *Process) connectPipe(ctx context.Context, pp *browserproc.Pipes, opts *cdp.Options, timeout time.Duration) error {
	b, err := cdp.ConnectPipe(ctx, pp.FromBrowser, pp.ToBrowser, opts)
	if err == nil {
		p.browser = b
		answered := make(chan error, 1)
		go func() {
			_, err := b.Client().Browser.GetVersion(ctx)
			answered <- err
		}()
		select {
		case err = <-answered:
			if err == nil {
				return nil
			}
		case <-p.done:
		case <-ctx.Done():
		}
	}
	if ctx.Err() == nil {
		// The pipe failed early (on connecting or on the first command),
		// most likely because the process exited: give its reap a moment
		// so that the error says how it ended.
		select {
		case <-p.done:
		case <-time.After(time.Second):
		}
	}
	select {
	case <-p.done:
		return &Error{Kind: ErrUpstream, Msg: "process exited before answering on the debugging pipe",
			Err: p.waitErr, Diagnostics: p.diagnostics(timeout)}
	default:
	}
	if ctx.Err() != nil {
		kind := ErrTimeout
		if ctx.Err() == context.Canceled {
			kind = ErrUpstream
		}
		return &Error{Kind: kind, Msg: "no answer on the debugging pipe", Err: ctx.Err(), Diagnostics: p.diagnostics(timeout)}
	}
	return &Error{Kind: ErrUpstream, Msg: "no answer on the debugging pipe", Err: err, Diagnostics: p.diagnostics(timeout)}
}

// writeOwner records the host's pid and the browser's (0 before start).
func writeOwner(dir string, browserPID int) error {
	s := fmt.Sprintf("host=%d\nbrowser=%d\n", os.Getpid(), browserPID)
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(s), 0o600)
}

// waitEndpoint polls DevToolsActivePort. The stderr line the browser prints
// at the same moment wakes the poll early; the file stays the only source
// of truth, since app output may imitate that line.
func (p *Process) waitEndpoint(ctx context.Context, timeout time.Duration) error {
	file := filepath.Join(p.dataDir, "DevToolsActivePort")
	interval := 25 * time.Millisecond
	tick := time.NewTimer(interval)
	defer tick.Stop()
	wake := p.stderr.listening
	fast := 0 // quick looks left after the stderr line
	for {
		if b, err := os.ReadFile(file); err == nil {
			if port, path, err := browserproc.ActivePort(b); err == nil {
				p.port = port
				p.endpoint = "ws://127.0.0.1:" + strconv.Itoa(port) + path
				return nil
			}
		}
		select {
		case <-p.done:
			return &Error{Kind: ErrUpstream, Msg: "process exited before publishing its endpoint",
				Err: p.waitErr, Diagnostics: p.diagnostics(timeout)}
		case <-ctx.Done():
			kind := ErrTimeout
			if ctx.Err() == context.Canceled {
				kind = ErrUpstream
			}
			return &Error{Kind: kind, Msg: "no DevToolsActivePort", Err: ctx.Err(), Diagnostics: p.diagnostics(timeout)}
		case <-wake:
			// The file is written around the same moment: look closely now.
			wake, interval, fast = nil, 2*time.Millisecond, 100
			tick.Reset(interval)
		case <-tick.C:
			if fast--; fast == 0 {
				interval = 25 * time.Millisecond
			}
			tick.Reset(interval)
		}
	}
}

// diagnostics describes the process while the launch is still waiting.
func (p *Process) diagnostics(timeout time.Duration) *Diagnostics {
	d := &Diagnostics{
		Executable: p.exe,
		PID:        p.cmd.Process.Pid,
		ProfileDir: p.dataDir,
		Elapsed:    time.Since(p.started),
		Timeout:    timeout,
		Stderr:     p.stderr.lines(20),
	}
	if !p.pipe {
		d.PortFile = filepath.Join(p.dataDir, "DevToolsActivePort")
	}
	select {
	case <-p.done:
		if p.waitErr != nil {
			d.Exit = p.waitErr.Error()
		} else {
			d.Exit = "exit status 0"
		}
	default:
		d.PIDAlive = true
	}
	if d.PortFile != "" {
		_, err := os.Stat(d.PortFile)
		d.PortFilePresent = err == nil
	}
	return d
}

// Browser is the connection: for a Chromium launch its debugging pipe,
// the only one it can have; for an Electron app or an attachment a
// WebSocket to its port. The process owns it: Close closes it, and closing
// a pipe early makes the browser exit, because Chromium ends when its pipe
// does.
func (p *Process) Browser() *cdp.Browser { return p.browser }

// Endpoint is the browser-level WebSocket URL, ready for [cdp.Connect]. It
// is empty for a browser launched with a debugging pipe, which has none:
// use [Process.Browser].
func (p *Process) Endpoint() string { return p.endpoint }

// Port is the debugging port the browser chose or was attached on; 0 for
// a browser launched with a debugging pipe, which opens no port.
func (p *Process) Port() int { return p.port }

// DataDir is the temporary profile directory (--user-data-dir), removed
// by Close; empty for an attachment.
func (p *Process) DataDir() string { return p.dataDir }

// Executable is the program started; empty for an attachment.
func (p *Process) Executable() string { return p.exe }

// Pid is the browser's process id; 0 for an attachment.
func (p *Process) Pid() int {
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Done is closed once the process has exited and been reaped. It is nil
// for an attachment, whose process this package does not watch.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill ends the browser at once, without a graceful phase, and does not
// wait. It is for simulating a crash; use Close for an orderly end. An
// attachment's process is not this package's to kill: ErrValidation.
func (p *Process) Kill() error {
	if p.cmd == nil {
		return fmt.Errorf("%w: %s was not started by this package", ErrValidation, p.ID)
	}
	return browserproc.KillTree(p.cmd.Process, true)
}

// Close stops the browser: it closes the connection, sends a polite
// signal to the process group, a forced kill after three seconds, then it
// reaps the process and removes the profile directory, all within
// DefaultCleanupBudget. A Launcher's process is closed by
// [Launcher.Cleanup] of its ID, which it then no longer lists, and Close
// of an attachment closes only the connection. It is safe to call more
// than once.
func (p *Process) Close() error {
	if p.l != nil {
		_, err := p.l.Cleanup(context.Background(), p.ID)
		return err
	}
	p.closeOnce.Do(func() {
		if p.browser != nil {
			_ = p.browser.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), DefaultCleanupBudget)
		defer cancel()
		if err := p.stop(ctx); err != nil {
			p.closeErr = err
			return
		}
		p.closeErr = p.removeProfile(ctx)
	})
	return p.closeErr
}

// stop sends SIGTERM to the process group, SIGKILL after the grace (see
// [Launcher.Cleanup]), and waits until the process is reaped, within
// ctx. It never signals after the reap, when the pid may belong to
// someone else, except for the group members the leader left behind,
// which still hold the group id.
func (p *Process) stop(ctx context.Context) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = browserproc.KillTree(p.cmd.Process, false)
	grace := stopGrace
	if dl, ok := ctx.Deadline(); ok {
		grace = min(grace, time.Until(dl)/2)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	case <-ctx.Done():
	}
	select {
	case <-p.done:
	default:
		_ = browserproc.KillTree(p.cmd.Process, true)
		look := time.NewTimer(killedLook)
		defer look.Stop()
		select {
		case <-p.done:
		case <-ctx.Done():
			select {
			case <-p.done:
			case <-look.C:
				return fmt.Errorf("launch: process %d did not exit after SIGKILL within the cleanup budget", p.Pid())
			}
		}
	}
	if browserproc.GroupAlive(p.Pid()) {
		_ = browserproc.KillTree(p.cmd.Process, true)
	}
	return nil
}

// removeProfile removes the profile directory. Children of the group may
// hold files in it briefly after the leader is reaped, so it retries for a
// second, within ctx. A directory already gone is success.
func (p *Process) removeProfile(ctx context.Context) error {
	removeSingletonDir(p.dataDir)
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for {
		err := os.RemoveAll(p.dataDir)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("launch: remove profile: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// removeSingletonDir removes the directory the profile's singleton socket
// lives in when that is outside the profile (the environment set TMPDIR,
// or the profile predates the browser's own TMPDIR): Chromium never
// removes it. Only a directory named as Chromium names it is touched.
func removeSingletonDir(profile string) {
	target, err := os.Readlink(filepath.Join(profile, "SingletonSocket"))
	if err != nil || !filepath.IsAbs(target) {
		return
	}
	dir := filepath.Dir(target)
	if strings.HasPrefix(dir, profile+string(filepath.Separator)) {
		return
	}
	if base := filepath.Base(dir); strings.HasPrefix(base, "org.chromium.Chromium.") || strings.HasPrefix(base, "com.google.Chrome.") {
		os.RemoveAll(dir)
	}
}

// stderrTail keeps the last bytes of a process's stderr for diagnostics and
// notices the DevTools line.
type stderrTail struct {
	mu        sync.Mutex
	buf       []byte
	seen      bool
	listening chan struct{}
}

const stderrTailSize = 8 << 10

var devtoolsLine = []byte("DevTools listening on ws://")

func newStderrTail() *stderrTail { return &stderrTail{listening: make(chan struct{})} }

func (s *stderrTail) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, b...)
	if !s.seen && bytes.Contains(s.buf, devtoolsLine) {
		s.seen = true
		close(s.listening)
	}
	if over := len(s.buf) - stderrTailSize; over > 0 {
		s.buf = append(s.buf[:0], s.buf[over:]...)
	}
	return len(b), nil
}

// lines returns up to n last complete or partial lines.
func (s *stderrTail) lines(n int) []string {
	s.mu.Lock()
	text := strings.TrimRight(string(s.buf), "\n")
	s.mu.Unlock()
	if text == "" {
		return nil
	}
	ls := strings.Split(text, "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return ls
}
