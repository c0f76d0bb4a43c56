package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/trace"
)

// host trace serves the view over the data dir's history on loopback
// until interrupted.
func TestTraceCommandServesTheView(t *testing.T) {
	e := newHostEnv(t)
	h, err := history.Open(filepath.Join(e.data, "history.jsonl"), history.Options{})
	require.NoError(t, err)
	require.NoError(t, h.Put(history.Entry{ID: "run-7", Script: "/s/a.ts", State: history.StateFailed, Start: time.Now()}))
	r := trace.NewRecorder("run-7", trace.Limits{})
	r.Call(trace.Call{Method: "tab.click", Target: `role button "Send"`, Start: time.Now(), Code: "not_found"})
	enc, err := trace.Encode(r.Trace())
	require.NoError(t, err)
	require.NoError(t, h.PutTrace("run-7", enc))
	require.NoError(t, h.Close())

	cmd := exec.Command(e.bin, "--data", e.data, "trace")
	cmd.Env = e.env
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	base := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line)
	require.NotEmpty(t, base, line)

	get := func(path string) (*http.Response, string) {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}
	resp, body := get("")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	assert.Contains(t, body, "/run/run-7")
	resp, body = get("run/run-7")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "tab.click")
	assert.Contains(t, body, "not_found")

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	waited = true
	require.NoError(t, cmd.Wait(), "host trace stops cleanly when interrupted")
}

// host trace serves on loopback only.
func TestTraceCommandRefusesOtherAddresses(t *testing.T) {
	var errOut strings.Builder
	for _, addr := range []string{"0.0.0.0:0", "192.168.1.1:80", "localhost:80", "nope"} {
		errOut.Reset()
		code := realMain(context.Background(), []string{"--data", t.TempDir(), "trace", "--addr", addr}, strings.NewReader(""), io.Discard, &errOut)
		assert.Equal(t, exitUsage, code, addr)
		assert.Contains(t, errOut.String(), "loopback", addr)
	}
}

// trace ID names that run's page; an ID the history does not hold is
// refused before anything is served.
func TestTraceCommandNamesARunsPage(t *testing.T) {
	e := newHostEnv(t)
	h, err := history.Open(filepath.Join(e.data, "history.jsonl"), history.Options{})
	require.NoError(t, err)
	require.NoError(t, h.Put(history.Entry{ID: "run-8", Script: "/s/b.ts", State: history.StateFailed, Start: time.Now()}))
	require.NoError(t, h.Put(history.Entry{ID: "run-9", Script: "/s/c.ts", State: history.StateRefused, Start: time.Now()}))
	rec := trace.NewRecorder("run-8", trace.Limits{})
	rec.Call(trace.Call{Method: "tab.click", Start: time.Now(), Code: "not_found"})
	enc, err := trace.Encode(rec.Trace())
	require.NoError(t, err)
	require.NoError(t, h.PutTrace("run-8", enc))
	require.NoError(t, h.Close())

	r := e.host(t, "", "trace", "run-unknown")
	assert.Equal(t, exitFailed, r.code)
	assert.Contains(t, r.stderr, "no run run-unknown in the history")
	r = e.host(t, "", "trace", "run-9")
	assert.Equal(t, exitFailed, r.code)
	assert.Contains(t, r.stderr, "run run-9 kept no trace")

	cmd := exec.Command(e.bin, "--data", e.data, "trace", "run-8")
	cmd.Env = e.env
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	page := regexp.MustCompile(`http://127\.0\.0\.1:\d+/run/run-8`).FindString(line)
	require.NotEmpty(t, page, line)
	resp, err := http.Get(page)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "b.ts")
}

// run --trace serves a failed run's trace when the run ends and prints the
// page's address; Ctrl-C stops it, and the run's exit code stands.
func TestRunTraceServesAFailedRun(t *testing.T) {
	e := newHostEnv(t)
	script := filepath.Join(e.scripts, "missing-button.ts")
	require.NoError(t, os.WriteFile(script, []byte(`// @permissions browser forms
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.click({ role: "button", name: "No such button" }, { timeout: 500 });
`), 0o644))
	cmd, out, errOut := e.command("", "run", "--approve", "--trace", "--serve", e.site, script)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var page string
	deadline := time.Now().Add(2 * time.Minute)
	for page == "" && time.Now().Before(deadline) {
		page = regexp.MustCompile(`http://127\.0\.0\.1:\d+/run/[0-9a-f-]+`).FindString(out.String())
		select {
		case err := <-exited:
			t.Fatalf("run exited before serving its trace: %v\n%s\n%s", err, out.String(), errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.NotEmpty(t, page, "no trace address:\n%s\n%s", out.String(), errOut.String())
	resp, err := http.Get(page)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "tab.click")

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	select {
	case err := <-exited:
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, exitFailed, exit.ExitCode(), "the run's code, not the view's")
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("Ctrl-C did not stop the served trace")
	}
}
