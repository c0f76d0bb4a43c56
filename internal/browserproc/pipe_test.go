package browserproc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/leakcheck"
)

// fakeBrowserEnv makes the test binary a fake browser: it speaks the
// DevTools pipe protocol on the ends it was handed, as Chromium does
// under --remote-debugging-pipe.
const fakeBrowserEnv = "BROWSERPROC_FAKE_BROWSER"

const fakeProduct = "FakeBrowser/1.0"

func TestMain(m *testing.M) {
	if os.Getenv(fakeBrowserEnv) != "" {
		os.Exit(fakeBrowser())
	}
	leakcheck.Main(m)
}

// fakeBrowser answers Browser.getVersion and refuses every other method
// until its pipe closes or it is told Browser.close. It finds its ends as
// Chromium does: fds 3 and 4, or on Windows the handles that
// --remote-debugging-io-pipes names.
func fakeBrowser() int {
	in, out, err := browserEnds(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake browser:", err)
		return 2
	}
	r := bufio.NewReader(in)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			return 0
		}
		var req struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(msg[:len(msg)-1], &req); err != nil {
			fmt.Fprintln(os.Stderr, "fake browser: bad message:", err)
			return 2
		}
		reply := map[string]any{"id": req.ID}
		switch req.Method {
		case "Browser.getVersion":
			reply["result"] = map[string]any{"protocolVersion": "1.3", "product": fakeProduct, "revision": "0", "userAgent": "fake", "jsVersion": "0"}
		case "Browser.close":
			reply["result"] = map[string]any{}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "'" + req.Method + "' wasn't found"}
		}
		b, _ := json.Marshal(reply)
		if _, err := out.Write(append(b, 0)); err != nil || req.Method == "Browser.close" {
			return 0
		}
	}
}

// A browser started with the pipes PassPipes hands it (on Windows,
// inherited handles named on its command line; elsewhere fds 3 and 4)
// is driven over them: a connection on our ends gets its answer, and the
// browser sees the pipe close when the connection does.
func TestPipesReachTheBrowser(t *testing.T) {
	pp, err := browserproc.NewPipes()
	if err != nil {
		t.Fatal(err)
	}
	defer pp.CloseAll()
	cmd := exec.Command(os.Args[0], "--headless=new")
	cmd.Env = append(os.Environ(), fakeBrowserEnv+"=1")
	cmd.SysProcAttr = browserproc.Attr()
	cmd.Stderr = os.Stderr
	flags, err := browserproc.PassPipes(cmd, pp.BrowserReads, pp.BrowserWrites)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Args = append(cmd.Args, flags...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pp.CloseBrowserEnds()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := cdp.ConnectPipe(ctx, pp.FromBrowser, pp.ToBrowser, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := b.Client().Browser.GetVersion(ctx)
	if err != nil {
		t.Fatalf("Browser.getVersion over the pipe: %v", err)
	}
	if v.Product != fakeProduct {
		t.Errorf("product %q, want %q", v.Product, fakeProduct)
	}
	if _, err := b.Client().Target.GetTargets(ctx, nil); err == nil || !strings.Contains(err.Error(), "wasn't found") {
		t.Errorf("an unknown method: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the browser did not end cleanly when its pipe closed: %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatal("the browser did not see its pipe close")
	}
}
