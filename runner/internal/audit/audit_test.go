package audit

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/trace"
)

// requireAudit skips a test of the access record where runs' accesses
// are not recorded (audit_other.go says why).
func requireAudit(t *testing.T) {
	t.Helper()
	if !Supported {
		t.Skipf("a run's accesses are not recorded on %s: deno cannot write its report to a pipe there", runtime.GOOS)
	}
}

// The reader stops whether deno never opened the pipe, or something
// still holds a write end: Stop returns within auditDrain and the reader
// with it.
func TestAuditStopsWithoutWriter(t *testing.T) {
	requireAudit(t)
	rules := RulesFromArgs(nil, "/")
	a, err := Start(t.TempDir(), trace.NewRecorder("r", trace.Limits{}), rules)
	require.NoError(t, err)
	a.Stop()
	a.Stop()
	requireClosed(t, a.done)

	rec := trace.NewRecorder("r", trace.Limits{})
	a, err = Start(t.TempDir(), rec, rules)
	require.NoError(t, err)
	w, err := os.OpenFile(a.path, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer w.Close()
	_, err = w.WriteString(`{"v":1,"permission":"env","value":"HOME"}` + "\n" + strings.Repeat("x", maxAuditLine+10) + "\nnot json\n")
	require.NoError(t, err)
	start := time.Now()
	a.Stop()
	assert.Less(t, time.Since(start), auditDrain+time.Second)
	requireClosed(t, a.done)
	tr := rec.Trace()
	require.Len(t, tr.Accesses, 1)
	assert.Equal(t, "HOME", tr.Accesses[0].Value)
	assert.Equal(t, 2, tr.Dropped.Accesses, "the long line and the one that is not JSON")
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
	r := RulesFromArgs([]string{
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
		shown, ok := r.Judge(c.kind, c.value)
		assert.Equal(t, c.shown, shown, "%s %s", c.kind, c.value)
		assert.Equal(t, c.allowed, ok, "%s %s", c.kind, c.value)
	}
	_, ok := RulesFromArgs([]string{"--allow-import=esm.sh:443", "--no-remote"}, "/").Judge("import", "esm.sh:443")
	assert.False(t, ok, "--no-remote refuses what the list allows")
}

// A nil pipe's Env drops any DENO_AUDIT_PERMISSIONS, in any case, and adds
// none; a pipe's adds its own.
func TestEnvDropsTheHostsVariable(t *testing.T) {
	env := (*Pipe)(nil).Env([]string{"A=1", "DENO_AUDIT_PERMISSIONS=/x", "deno_audit_permissions=/y"})
	assert.Equal(t, []string{"A=1"}, env)
	requireAudit(t)
	a, err := Start(t.TempDir(), trace.NewRecorder("r", trace.Limits{}), RulesFromArgs(nil, "/"))
	require.NoError(t, err)
	defer a.Stop()
	assert.Equal(t, []string{"A=1", "DENO_AUDIT_PERMISSIONS=" + a.path}, a.Env([]string{"DENO_AUDIT_PERMISSIONS=/x", "A=1"}))
}
