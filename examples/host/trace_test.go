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
