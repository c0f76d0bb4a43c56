package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/testenv"
)

// testBrowser is a headless Chromium these tests started themselves, over
// its debugging pipe or with a DevTools port. Package launch starts
// browsers, but it imports this package, so the tests here start theirs
// the same way with less: the flags, process group and profile of a
// launch, none of its diagnostics. Its profile lives in tempRoot, where
// testenv.BrowserLeaks looks.
type testBrowser struct {
	cmd      *exec.Cmd
	dir      string
	browser  *Browser // over the pipe; nil for a port
	endpoint string   // with a port; "" for the pipe
	port     int
	done     chan struct{} // closed once the process is reaped

	closeOnce sync.Once
	closeErr  error
}

// startChromium starts chromium and returns once it answers over its pipe
// (pipe) or has published its port. opts configure the pipe connection.
func startChromium(ctx context.Context, chromium string, pipe bool, opts *Options) (*testBrowser, error) {
	return startChromiumWith(ctx, chromium, pipe, opts)
}

// startChromiumWith is startChromium with more command-line flags.
func startChromiumWith(ctx context.Context, chromium string, pipe bool, opts *Options, flags ...string) (*testBrowser, error) {
	dir, err := os.MkdirTemp(tempRoot, "test-browser-")
	if err != nil {
		return nil, err
	}
	// Chromium keeps its singleton socket under TMPDIR: inside the profile
	// it goes with the profile.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := browserproc.WriteProfilePrefs(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(chromium, append(append([]string{"--user-data-dir=" + dir, "--headless=new"}, testenv.ChromiumArgs()...), flags...)...)
	cmd.SysProcAttr = browserproc.Attr()
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var pp *browserproc.Pipes
	if pipe {
		if pp, err = browserproc.NewPipes(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		flags, err := browserproc.PassPipes(cmd, pp.BrowserReads, pp.BrowserWrites)
		if err != nil {
			pp.CloseAll()
			os.RemoveAll(dir)
			return nil, err
		}
		cmd.Args = append(cmd.Args, flags...)
	} else {
		cmd.Args = append(cmd.Args, "--remote-debugging-port=0")
	}
	cmd.Args = append(append(append(cmd.Args, browserproc.SandboxArgs()...), browserproc.DefaultFlags()...), "about:blank")
	err = cmd.Start()
	pp.CloseBrowserEnds()
	if err != nil {
		pp.CloseAll()
		os.RemoveAll(dir)
		return nil, err
	}
	p := &testBrowser{cmd: cmd, dir: dir, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if pipe {
		err = p.connect(ctx, pp, opts)
	} else {
		err = p.waitPort(ctx)
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("start %s: %w", chromium, err)
	}
	return p, nil
}

// connect puts a connection on the pipes and waits until the browser
// answers on it.
func (p *testBrowser) connect(ctx context.Context, pp *browserproc.Pipes, opts *Options) error {
	b, err := ConnectPipe(ctx, pp.FromBrowser, pp.ToBrowser, opts)
	if err != nil {
		pp.CloseAll()
		return err
	}
	p.browser = b
	_, err = b.Client().Browser.GetVersion(ctx)
	return err
}

// waitPort polls DevToolsActivePort.
func (p *testBrowser) waitPort(ctx context.Context) error {
	for {
		if b, err := os.ReadFile(filepath.Join(p.dir, "DevToolsActivePort")); err == nil {
			if port, path, err := browserproc.ActivePort(b); err == nil {
				p.port, p.endpoint = port, "ws://127.0.0.1:"+strconv.Itoa(port)+path
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before publishing its port")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (p *testBrowser) Browser() *Browser     { return p.browser }
func (p *testBrowser) Endpoint() string      { return p.endpoint }
func (p *testBrowser) Port() int             { return p.port }
func (p *testBrowser) DataDir() string       { return p.dir }
func (p *testBrowser) Pid() int              { return p.cmd.Process.Pid }
func (p *testBrowser) Done() <-chan struct{} { return p.done }

// Kill ends the browser's process group at once, as a crash would.
func (p *testBrowser) Kill() error { return browserproc.KillTree(p.cmd.Process, true) }

// Close closes the connection, ends the process group (SIGTERM, SIGKILL
// after three seconds), reaps the browser and removes its profile.
func (p *testBrowser) Close() error {
	p.closeOnce.Do(func() {
		if p.browser != nil {
			p.browser.Close()
		}
		select {
		case <-p.done:
		default:
			_ = browserproc.KillTree(p.cmd.Process, false)
			select {
			case <-p.done:
			case <-time.After(3 * time.Second):
				_ = browserproc.KillTree(p.cmd.Process, true)
				select {
				case <-p.done:
				case <-time.After(5 * time.Second):
					p.closeErr = fmt.Errorf("browser %d did not exit after SIGKILL", p.Pid())
					return
				}
			}
		}
		if browserproc.GroupAlive(p.Pid()) {
			_ = browserproc.KillTree(p.cmd.Process, true)
		}
		// The group's helpers may hold files in the profile for a moment.
		for i := 0; ; i++ {
			err := os.RemoveAll(p.dir)
			if err == nil {
				return
			}
			if i == 20 {
				p.closeErr = err
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	return p.closeErr
}

// peerFlags are the flags of the browser a Playwright or puppeteer peer
// launches, as JSON: those of a browser these tests start themselves,
// names outside loopback unresolvable included.
func peerFlags() []byte {
	flags, err := json.Marshal(append(append(browserproc.DefaultFlags(), browserproc.SandboxArgs()...), testenv.ChromiumArgs()...))
	if err != nil {
		panic(err) // a list of strings always encodes
	}
	return flags
}
