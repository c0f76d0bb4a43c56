package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/runner/internal/audit"
	"github.com/tranquil/automation/trace"
)

// accessOf is the trace's entry for kind and value with that outcome.
func accessOf(tr *trace.Trace, kind, value string, allowed bool) (trace.Access, bool) {
	for _, a := range tr.Accesses {
		if a.Kind == kind && a.Value == value && a.Allowed == allowed {
			return a, true
		}
	}
	return trace.Access{}, false
}

// A real run reads and writes granted files, is denied a read, a write,
// connections and a sys call, reads env names, and loops 100,000 times on
// a denied read. Its trace lists each access once with its count, and
// for every probe the outcome the trace says is the one deno gave the
// script. The env value never reaches the trace; the stored trace stays
// small and nothing is left on disk.
func TestAccessRecordAgreesWithDeno(t *testing.T) {
	requireAudit(t)
	service, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer service.Close()
	go acceptAll(service)
	sport := service.Addr().(*net.TCPAddr).Port
	const envValue = "VALUE-audit-7h3k"
	t.Setenv("AUDIT_TEST_NAME", envValue)
	e := newMgr(t, nil)
	e.script(t, "in.txt", "granted")
	e.script(t, "secret.txt", "denied")
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "outdir"), 0o755))
	const loops = 100_000
	entry := e.runScript(t, "accesses.ts", fmt.Sprintf(`// @permissions read=in.txt write=outdir env=AUDIT_TEST_NAME net=127.0.0.1:%d
import { context } from "tranquil/automation";
const out: Record<string, boolean> = {};
async function probe(name: string, fn: () => unknown) {
  try { await fn(); out[name] = true; } catch (e) {
    if ((e as Error).name !== "NotCapable") throw e;
    out[name] = false;
  }
}
async function dial(hostname: string, port: number) { (await Deno.connect({ hostname, port })).close(); }
await probe("readIn", () => Deno.readTextFile("in.txt"));
await probe("writeOut", () => Deno.writeTextFile("outdir/out.txt", "x"));
await probe("readSecret", () => Deno.readTextFile("secret.txt"));
await probe("writeSecret", () => Deno.writeTextFile("secret.txt", "x"));
await probe("readDevNull", () => Deno.readTextFile("/dev/null"));
await probe("netService", () => dial("127.0.0.1", %d));
await probe("netOther", () => dial("127.0.0.1", 1));
await probe("netName", () => dial("localhost", %d));
await probe("envName", () => Deno.env.get("AUDIT_TEST_NAME"));
await probe("envOther", () => Deno.env.get("AUDIT_TEST_OTHER"));
await probe("sys", () => Deno.hostname());
let denied = 0;
for (let i = 0; i < %d; i++) {
  try { Deno.readTextFileSync("secret.txt"); } catch { denied++; }
}
await context.result({ out, denied });
`, sport, sport, sport, loops))
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	var res struct {
		Out    map[string]bool
		Denied int
	}
	require.NoError(t, json.Unmarshal(entry.Result, &res))
	require.Equal(t, loops, res.Denied)

	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	at := func(name string) string { return filepath.Join(e.dir, name) }
	probes := []struct {
		name, kind, value string
		want              bool // what deno did, as this header grants it
	}{
		{"readIn", "read", at("in.txt"), true},
		{"writeOut", "write", at("outdir/out.txt"), true},
		{"readSecret", "read", at("secret.txt"), false},
		{"writeSecret", "write", at("secret.txt"), false},
		{"readDevNull", "read", "/dev/null", false},
		{"netService", "net", fmt.Sprintf("127.0.0.1:%d", sport), true},
		{"netOther", "net", "127.0.0.1:1", false},
		{"netName", "net", fmt.Sprintf("localhost:%d", sport), false},
		{"envName", "env", "AUDIT_TEST_NAME", true},
		{"envOther", "env", "AUDIT_TEST_OTHER", false},
		{"sys", "sys", "hostname", false},
	}
	for _, p := range probes {
		assert.Equal(t, p.want, res.Out[p.name], "%s: what deno did", p.name)
		a, ok := accessOf(tr, p.kind, p.value, res.Out[p.name])
		if assert.True(t, ok, "%s: %s %s allowed=%v is in the trace: %+v", p.name, p.kind, p.value, res.Out[p.name], tr.Accesses) {
			assert.GreaterOrEqual(t, a.Count, 1, p.name)
			assert.False(t, a.First.IsZero() || a.Last.Before(a.First), p.name)
		}
		_, wrong := accessOf(tr, p.kind, p.value, !res.Out[p.name])
		assert.False(t, wrong, "%s: never judged the other way", p.name)
	}
	for _, a := range tr.Accesses {
		t.Logf("%-6s %-7v %6d %s", a.Kind, a.Allowed, a.Count, a.Value)
	}
	loop, _ := accessOf(tr, "read", at("secret.txt"), false)
	assert.Equal(t, loops+1, loop.Count, "the loop's checks and the probe's, as deno reported them")
	assert.Zero(t, tr.Dropped.Accesses)

	data, err := e.m.hist.Trace(entry.ID)
	require.NoError(t, err)
	assert.Less(t, len(data), 64<<10, "the stored trace does not grow with the loop")
	assert.False(t, bytes.Contains(data, []byte(envValue)))
	js, _ := json.Marshal(tr)
	assert.NotContains(t, string(js), envValue, "an env name, never its value")
	left, err := os.ReadDir(filepath.Join(e.data, "audit"))
	require.NoError(t, err)
	assert.Empty(t, left, "the pipe and its directory are gone")
}

// The script cannot reach the record: a grant on the pipe's directory is
// refused, and a script given the pipe's path cannot open, truncate or
// list it, nor read or set the variable that names it. What it tried
// appears, denied, and nothing it wrote does.
func TestAuditOutOfTheScriptsReach(t *testing.T) {
	requireAudit(t)
	e := newMgr(t, nil)
	root := filepath.Join(e.data, "audit")
	refused := e.runScript(t, "grab.ts", fmt.Sprintf("// @permissions write=%s\nconsole.log(1);\n", root))
	assert.Equal(t, history.StateRefused, refused.State, refused.Reason)

	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "w"), 0o755))
	p := e.script(t, "forge.ts", `// @permissions write=w read=w
import { context, step } from "tranquil/automation";
const ev = await step.waitForEvent("path", { timeout: 60000 });
const fifo = ev.payload as string;
const forged = JSON.stringify({ v: 1, datetime: "2026-01-01T00:00:00Z", permission: "read", value: "/forged" }) + "\n";
const out: Record<string, string> = {};
async function probe(name: string, fn: () => unknown) {
  try { await fn(); out[name] = "ok"; } catch (e) { out[name] = (e as Error).name; }
}
await probe("write", () => Deno.writeTextFile(fifo, forged, { append: true }));
await probe("truncate", () => Deno.truncate(fifo));
await probe("open", () => Deno.open(fifo, { write: true }));
await probe("list", () => Array.from(Deno.readDirSync(fifo + "/..")));
await probe("envGet", () => Deno.env.get("DENO_AUDIT_PERMISSIONS"));
await probe("envSet", () => Deno.env.set("DENO_AUDIT_PERMISSIONS", "w/mine.jsonl"));
await probe("symlink", () => Deno.symlink(fifo, "w/link"));
await context.result(out);
`)
	r, err := e.m.Start(context.Background(), Request{Script: p})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var fifo string
	require.Eventually(t, func() bool {
		dirs, _ := filepath.Glob(filepath.Join(root, "run-*", "audit"))
		if len(dirs) == 1 {
			fifo = dirs[0]
		}
		return fifo != ""
	}, 30*time.Second, 10*time.Millisecond)
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type())
	di, err := os.Stat(filepath.Dir(fifo))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	require.NoError(t, r.SendEvent(ctx, "path", fifo))
	entry, err := r.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
	var out map[string]string
	require.NoError(t, json.Unmarshal(entry.Result, &out))
	for _, k := range []string{"write", "truncate", "open", "list", "envGet", "envSet", "symlink"} {
		assert.Equal(t, "NotCapable", out[k], k)
	}
	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	_, ok := accessOf(tr, "write", fifo, false)
	assert.True(t, ok, "the attempt is recorded, denied: %+v", tr.Accesses)
	_, ok = accessOf(tr, "env", "DENO_AUDIT_PERMISSIONS", false)
	assert.True(t, ok)
	for _, a := range tr.Accesses {
		assert.NotEqual(t, "/forged", a.Value)
		if a.Value == fifo {
			assert.False(t, a.Allowed)
		}
	}
}

// The host's own DENO_AUDIT_PERMISSIONS never reaches a run, traced or not.
func TestAuditEnvNotInherited(t *testing.T) {
	hostFile := filepath.Join(t.TempDir(), "host-audit.jsonl")
	t.Setenv("DENO_AUDIT_PERMISSIONS", hostFile)
	for _, noTrace := range []bool{false, true} {
		e := newMgr(t, func(c *Config) { c.NoTrace = noTrace })
		entry := e.runScript(t, "env.ts", "// @permissions none\ntry { Deno.readTextFileSync(\"x\"); } catch { /* denied */ }\n")
		require.Equal(t, history.StateSucceeded, entry.State, entry.Reason+entry.Output)
		_, err := os.Stat(hostFile)
		assert.True(t, os.IsNotExist(err), "noTrace=%v: the host's audit file was written", noTrace)
		_, err = e.m.Trace(entry.ID)
		if noTrace || !audit.Supported {
			assert.ErrorIs(t, err, history.ErrNoTrace, "NoTrace records no accesses either")
		} else {
			assert.NoError(t, err)
		}
	}
}

// requireAudit skips a test of the access record where runs' accesses
// are not recorded (runner/internal/audit/audit_other.go says why).
func requireAudit(t *testing.T) {
	t.Helper()
	if !audit.Supported {
		t.Skipf("a run's accesses are not recorded on %s: deno cannot write its report to a pipe there", runtime.GOOS)
	}
}

// A host that died mid-run left its run's report pipe behind: the next
// manager removes it, but never a directory young enough to be another
// live manager's run about to start its deno.
func TestStaleAuditPipesSwept(t *testing.T) {
	root := t.TempDir()
	pipes := filepath.Join(root, "audit")
	old, young, other := filepath.Join(pipes, "run-old"), filepath.Join(pipes, "run-young"), filepath.Join(pipes, "keep")
	for _, d := range []string{old, young, other} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(old, "audit"), nil, 0o600))
	then := time.Now().Add(-2 * audit.StaleAge)
	require.NoError(t, os.Chtimes(old, then, then))
	require.NoError(t, os.Chtimes(other, then, then))
	m, err := New(Config{DataDir: root, DenoPath: testenv.Deno(t)})
	require.NoError(t, err)
	defer m.Close()
	assert.NoDirExists(t, old)
	assert.DirExists(t, young)
	assert.DirExists(t, other, "only directories named as the runner names them")
}
