package permissions

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// countingListener accepts loopback connections and counts them.
type countingListener struct {
	net.Listener
	n    atomic.Int32
	own  atomic.Int32 // connections accepted made, left out of the count
	seen sync.Map     // the remote address of every connection accepted
}

func listen(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cl := &countingListener{Listener: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			cl.seen.Store(c.RemoteAddr().String(), true)
			cl.n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return cl
}

// accepted is how many connections reached l before the call. A
// connection deno made is complete before the test's accept loop takes it
// from the backlog, later on a busy machine; so accepted makes one of its
// own, waits until the loop takes it, after all those before it, and
// leaves it out of the count.
func (l *countingListener) accepted(t *testing.T) int32 {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	me := c.LocalAddr().String()
	require.Eventually(t, func() bool { _, ok := l.seen.Load(me); return ok }, 30*time.Second, time.Millisecond)
	return l.n.Load() - l.own.Add(1)
}

func (l *countingListener) port() string {
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// bootstrapSrc stands in for the runner's bootstrap: it loads the entry
// named in the environment, as the real one does.
const bootstrapSrc = `await import("file://" + Deno.env.get("TRANQUIL_ENTRY"));` + "\n"

// probeSrc runs each named probe and prints what happened as JSON: "ok" or
// the error's name.
const probeSrc = `
const out = {};
async function probe(name, fn) {
  try { const v = await fn(); out[name] = v === undefined ? "ok" : String(v); }
  catch (e) {
    // fetch reports a denial found after name resolution as a TypeError
    // whose cause carries deno's permission message.
    const denied = e.name === "NotCapable" || /Requires net access/.test(String(e.cause?.message));
    const why = String(e.message).match(/npm package not found in cache|A remote specifier was requested/);
    out[name] = denied ? "NotCapable" : e.name + ": " + (why ? why[0] : e.message);
  }
}
const port = (n) => Number(Deno.env.get("TRANQUIL_RPC_URL").split(",")[n]);
async function dial(hostname, p) { const c = await Deno.connect({ hostname, port: p }); c.close(); }
`

// runSandboxed runs script under the flags its header computes and returns
// the probes' results.
func runSandboxed(t *testing.T, script, body string, bridge *countingListener, denied []string, ports string, extraEnv ...string) map[string]string {
	t.Helper()
	deno := testenv.Deno(t)
	src := []byte(body)
	h, err := Parse(src, script)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(script, src, 0o644))

	machinery := filepath.Join(t.TempDir(), "sdk")
	require.NoError(t, os.MkdirAll(machinery, 0o755))
	boot := filepath.Join(machinery, "main.ts")
	cfgPath := filepath.Join(machinery, "deno.json")
	require.NoError(t, os.WriteFile(boot, []byte(bootstrapSrc), 0o644))
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{"imports":{}}`), 0o644))

	args, err := RunArgs(h, FlagConfig{
		BridgeAddr:   bridge.Addr().String(),
		Bootstrap:    boot,
		SDKDir:       machinery,
		ConfigPath:   cfgPath,
		DenyLoopback: denied,
	})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, deno, args...)
	cmd.Dir = h.ScriptDir
	home := t.TempDir()
	cmd.Env = append([]string{
		"PATH=/usr/bin:/bin", "HOME=" + home, "DENO_DIR=" + filepath.Join(home, "deno"),
		"NO_COLOR=1", "DENO_NO_UPDATE_CHECK=1",
		// Should a fetch slip through, it goes to a closed loopback port.
		"NPM_CONFIG_REGISTRY=http://127.0.0.1:1/",
		"TRANQUIL_ENTRY=" + script, "TRANQUIL_RPC_URL=" + ports,
	}, extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "deno %v\nstderr:\n%s", args, stderr.String())
	out := map[string]string{}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	return out
}

func TestDenoEnforcesFilesEnvAndUndeclaredNet(t *testing.T) {
	script := scriptDir(t)
	dir := filepath.Dir(script)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("beta"), 0o644))
	bridge, other := listen(t), listen(t)

	out := runSandboxed(t, script, `// @permissions read=a.txt env=GRANTED_VAR write=out.txt
`+probeSrc+`
await probe("readA", () => Deno.readTextFile("a.txt"));
await probe("readB", () => Deno.readTextFile("b.txt"));
await probe("readOwnSource", async () => (await Deno.readTextFile("job.ts")).startsWith("// @permissions"));
await probe("envGranted", () => Deno.env.get("GRANTED_VAR"));
await probe("envSecret", () => Deno.env.get("SECRET_X"));
await probe("writeOut", () => Deno.writeTextFile("out.txt", "x"));
await probe("writeOther", () => Deno.writeTextFile("other.txt", "x"));
await probe("netOther", () => dial("127.0.0.1", port(1)));
await probe("netOtherLocalhost", () => fetch("http://localhost:" + port(1) + "/"));
await probe("netBridge", () => dial("127.0.0.1", port(0)));
await probe("run", () => new Deno.Command("/bin/true").output());
await probe("npm", async () => { await import("npm:left-pad@1.3.0"); });
await probe("remote", async () => { await import("https://modules.example/x.ts"); });
console.log(JSON.stringify(out));
`, bridge, nil, bridge.port()+","+other.port(), "GRANTED_VAR=hello", "SECRET_X=topsecret")

	assert.Equal(t, map[string]string{
		"readA":             "alpha",
		"readB":             "NotCapable",
		"readOwnSource":     "true",
		"envGranted":        "hello",
		"envSecret":         "NotCapable",
		"writeOut":          "ok",
		"writeOther":        "NotCapable",
		"netOther":          "NotCapable",
		"netOtherLocalhost": "NotCapable",
		"netBridge":         "ok",
		"run":               "NotCapable",
		"npm":               "TypeError: npm package not found in cache",
		"remote":            "TypeError: A remote specifier was requested",
	}, out)
	assert.Zero(t, other.accepted(t), "the undeclared listener saw no connection")
	assert.Equal(t, int32(1), bridge.accepted(t))
	_, err := os.Stat(filepath.Join(dir, "other.txt"))
	assert.True(t, os.IsNotExist(err))
}

func TestDenoCannotReachDeniedLoopbackEndpoint(t *testing.T) {
	script := scriptDir(t)
	bridge, devtools, service := listen(t), listen(t), listen(t)

	out := runSandboxed(t, script, `// @permissions net=127.0.0.1,localhost,0.0.0.0,127.0.0.2
`+probeSrc+`
await probe("devtools", () => dial("127.0.0.1", port(1)));
await probe("devtoolsLocalhost", () => dial("localhost", port(1)));
await probe("devtoolsAny", () => dial("0.0.0.0", port(1)));
await probe("devtoolsOtherLoopback", () => dial("127.0.0.2", port(1)));
await probe("devtoolsFetch", () => fetch("http://localhost:" + port(1) + "/json/version"));
await probe("bridge", () => dial("127.0.0.1", port(0)));
await probe("service", () => dial("127.0.0.1", port(2)));
await probe("serviceLocalhost", () => dial("localhost", port(2)));
console.log(JSON.stringify(out));
`, bridge, []string{"127.0.0.1:" + devtools.port()}, bridge.port()+","+devtools.port()+","+service.port())

	assert.Equal(t, map[string]string{
		"devtools":              "NotCapable",
		"devtoolsLocalhost":     "NotCapable",
		"devtoolsAny":           "NotCapable",
		"devtoolsOtherLoopback": "NotCapable",
		"devtoolsFetch":         "NotCapable",
		"bridge":                "ok",
		"service":               "ok",
		"serviceLocalhost":      "ok",
	}, out)
	assert.Zero(t, devtools.accepted(t), "the denied endpoint saw no connection")
	assert.Equal(t, int32(1), bridge.accepted(t))
	assert.Equal(t, int32(2), service.accepted(t))
}
