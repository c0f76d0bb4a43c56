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
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
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
		if noTrace || !auditPipes {
			assert.ErrorIs(t, err, history.ErrNoTrace, "NoTrace records no accesses either")
		} else {
			assert.NoError(t, err)
		}
	}
	env := (*auditLog)(nil).env([]string{"A=1", "DENO_AUDIT_PERMISSIONS=/x", "deno_audit_permissions=/y"})
	assert.Equal(t, []string{"A=1"}, env)
}

// The reader stops whether deno never opened the pipe, or something
// still holds a write end: stop returns within auditDrain and the reader
// with it.
func TestAuditStopsWithoutWriter(t *testing.T) {
	requireAudit(t)
	rules := rulesFromArgs(nil, "/")
	a, err := startAudit(t.TempDir(), trace.NewRecorder("r", trace.Limits{}), rules)
	require.NoError(t, err)
	a.stop()
	a.stop()
	requireClosed(t, a.done)

	rec := trace.NewRecorder("r", trace.Limits{})
	a, err = startAudit(t.TempDir(), rec, rules)
	require.NoError(t, err)
	w, err := os.OpenFile(a.path, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer w.Close()
	_, err = w.WriteString(`{"v":1,"permission":"env","value":"HOME"}` + "\n" + strings.Repeat("x", maxAuditLine+10) + "\nnot json\n")
	require.NoError(t, err)
	start := time.Now()
	a.stop()
	assert.Less(t, time.Since(start), auditDrain+time.Second)
	requireClosed(t, a.done)
	tr := rec.Trace()
	require.Len(t, tr.Accesses, 1)
	assert.Equal(t, "HOME", tr.Accesses[0].Value)
	assert.Equal(t, 2, tr.Dropped.Accesses, "the long line and the one that is not JSON")
}

// requireAudit skips a test of the access record where runs' accesses
// are not recorded (audit_other.go says why).
func requireAudit(t *testing.T) {
	t.Helper()
	if !auditPipes {
		t.Skipf("a run's accesses are not recorded on %s: deno cannot write its report to a pipe there", runtime.GOOS)
	}
}

func requireClosed(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	default:
		t.Fatal("the reader is still running")
	}
}

// The judge reads deno's rules off the flags: most specific wins, a tie
// goes to deny, URLs are cut to host and port, wildcards cover the apex.
func TestAccessRulesJudge(t *testing.T) {
	requireAudit(t)
	r := rulesFromArgs([]string{
		"--allow-net=127.0.0.1:4000,api.example.com,*.cdn.example,10.1.2.3",
		"--deny-net=10.0.0.0/8,127.0.0.0/8:9222,[::1]",
		"--allow-env=HOME,AWS_*", "--allow-read=/w/in", "--allow-write=/w/out",
		"--allow-import=esm.sh:443",
	}, "/w")
	for _, c := range []struct {
		kind, value, shown string
		allowed            bool
	}{
		{"net", "127.0.0.1:4000", "127.0.0.1:4000", true},
		{"net", "127.0.0.1:9222", "127.0.0.1:9222", false},
		{"net", "https://API.example.com/path?token=secret", "api.example.com:443", true},
		{"net", "cdn.example:80", "cdn.example:80", true},
		{"net", "a.b.cdn.example:80", "a.b.cdn.example:80", true},
		{"net", "example.com:443", "example.com:443", false},
		{"net", "10.1.2.3:22", "10.1.2.3:22", true},
		{"net", "10.1.2.4:22", "10.1.2.4:22", false},
		{"net", "[::1]:80", "[::1]:80", false},
		{"env", "AWS_KEY", "AWS_KEY", true},
		{"env", "HOMEX", "HOMEX", false},
		{"read", "in/a.txt", "/w/in/a.txt", true},
		{"read", "in/../secret", "/w/secret", false},
		{"read", "/w/inner", "/w/inner", false},
		{"write", "/w/out", "/w/out", true},
		{"write", "in/a.txt", "/w/in/a.txt", false},
		{"import", "esm.sh:443", "esm.sh:443", true},
		{"sys", "hostname", "hostname", false},
		{"ffi", "/lib/x.so", "/lib/x.so", false},
	} {
		shown, ok := r.judge(c.kind, c.value)
		assert.Equal(t, c.shown, shown, "%s %s", c.kind, c.value)
		assert.Equal(t, c.allowed, ok, "%s %s", c.kind, c.value)
	}
	_, ok := rulesFromArgs([]string{"--allow-import=esm.sh:443", "--no-remote"}, "/").judge("import", "esm.sh:443")
	assert.False(t, ok, "--no-remote refuses what the list allows")
}

// A host that died mid-run left its run's report pipe behind: the next
// manager removes it, but never a directory young enough to be another
// live manager's run about to start its deno.
func TestStaleAuditPipesSwept(t *testing.T) {
	root := t.TempDir()
	audit := filepath.Join(root, "audit")
	old, young, other := filepath.Join(audit, "run-old"), filepath.Join(audit, "run-young"), filepath.Join(audit, "keep")
	for _, d := range []string{old, young, other} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(old, "audit"), nil, 0o600))
	then := time.Now().Add(-2 * staleAudit)
	require.NoError(t, os.Chtimes(old, then, then))
	require.NoError(t, os.Chtimes(other, then, then))
	m, err := New(Config{DataDir: root, DenoPath: testenv.Deno(t)})
	require.NoError(t, err)
	defer m.Close()
	assert.NoDirExists(t, old)
	assert.DirExists(t, young)
	assert.DirExists(t, other, "only directories named as the runner names them")
}
