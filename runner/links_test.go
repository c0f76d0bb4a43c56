package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/pathguard"
	"github.com/tranquil/automation/internal/winetest"
	"github.com/tranquil/automation/permissions"
)

// forger is a script that uses a link in its granted folder to reach the
// host's data: it reads the approval key through the link, signs an
// approval exactly as the consent store does, and writes it into the store
// for another script.
const forger = `// @permissions read=cache write=cache
const victim = %q, header = %q, at = "2026-01-01T00:00:00Z";
const dir = "cache/app";
const hex = Deno.readTextFileSync(dir + "/consent.key").trim();
const key = new Uint8Array(hex.match(/../g)!.map((b) => parseInt(b, 16)));
const enc = new TextEncoder();
const parts: number[] = [];
for (const field of ["tranquil consent approval v2", victim, header, at]) {
  const b = enc.encode(field);
  let n = b.length;
  while (n >= 0x80) { parts.push((n & 0x7f) | 0x80); n >>>= 7; }
  parts.push(n, ...b);
}
const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, new Uint8Array(parts)));
const store = JSON.parse(Deno.readTextFileSync(dir + "/consent.json"));
store.approvals[victim] = { header, approved_at: at, mac: [...mac].map((b) => b.toString(16).padStart(2, "0")).join("") };
Deno.writeTextFileSync(dir + "/consent.json", JSON.stringify(store));
console.log("forged");
`

// TestLinkIntoHostDataCannotForgeApprovals is the attack: cache/app is a
// link into the host's data dir, put there before any script ran. A script
// granted read=cache write=cache must not start, so it cannot read the key
// or write an approval; the victim script is still asked about.
func TestLinkIntoHostDataCannotForgeApprovals(t *testing.T) {
	winetest.RequireSymlinks(t)
	e := newMgr(t, nil)
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "cache"), 0o755))
	require.NoError(t, os.Symlink(e.data, filepath.Join(e.dir, "cache", "app")))
	victim := e.script(t, "victim.ts", "// @permissions run=bash\nconst out = new Deno.Command(\"bash\", { args: [\"-c\", \"echo pwned\"] }).outputSync();\nconsole.log(new TextDecoder().decode(out.stdout));\n")
	vh, err := permissions.Parse([]byte("// @permissions run=bash\n"), victim)
	require.NoError(t, err)
	key, err := consent.ScriptKey(victim)
	require.NoError(t, err)

	entry := e.runScript(t, "forger.ts", fmt.Sprintf(forger, key, vh.Canonical()))
	assert.Equal(t, history.StateRefused, entry.State, entry.Reason+entry.Output)
	assert.NotContains(t, entry.Output, "forged")
	assert.Contains(t, entry.Reason, filepath.Join(e.dir, "cache", "app"), "the refusal names the link")
	assert.Contains(t, entry.Reason, "host's own data")

	e.mu.Lock()
	e.answer, e.prompts = consent.Deny, 0
	e.mu.Unlock()
	_, entry = e.run(t, Request{Script: victim})
	assert.Equal(t, history.StateRefused, entry.State, entry.Reason+entry.Output)
	assert.NotContains(t, entry.Output, "pwned")
	e.mu.Lock()
	defer e.mu.Unlock()
	assert.Equal(t, 1, e.prompts, "the victim was asked, not approved behind the user's back")
}

// TestForgedApprovalInTheStoreAsksAgain writes an approval into the store
// the way any same-user program could, without the key: the script is
// asked about, not run.
func TestForgedApprovalInTheStoreAsksAgain(t *testing.T) {
	e := newMgr(t, nil)
	victim := e.script(t, "victim.ts", "// @permissions clipboard\nconsole.log(\"ran\");\n")
	key, err := consent.ScriptKey(victim)
	require.NoError(t, err)
	store := filepath.Join(e.data, "consent.json")
	forged := fmt.Sprintf(`{"version":2,"approvals":{%q:{"header":"clipboard","approved_at":"2026-01-01T00:00:00Z","mac":"%s"}}}`, key, strings.Repeat("ab", 32))
	require.NoError(t, os.WriteFile(store, []byte(forged), 0o600))
	e.mu.Lock()
	e.answer = consent.Deny
	e.mu.Unlock()
	_, entry := e.run(t, Request{Script: victim})
	assert.Equal(t, history.StateRefused, entry.State, entry.Reason+entry.Output)
	assert.NotContains(t, entry.Output, "ran")
	e.mu.Lock()
	defer e.mu.Unlock()
	assert.Equal(t, 1, e.prompts)
}

// TestGrantTreeLinks covers the shapes a link into the host's data can
// take, and the ones that are harmless.
func TestGrantTreeLinks(t *testing.T) {
	winetest.RequireSymlinks(t)
	e := newMgr(t, nil)
	outside := filepath.Join(filepath.Dir(e.dir), "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	link := func(target, at string) {
		t.Helper()
		p := filepath.Join(e.dir, at)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(target, p))
	}
	check := func(name, header string) error {
		t.Helper()
		p := e.script(t, name, "// @permissions "+header+"\n")
		h, err := permissions.Parse([]byte("// @permissions "+header+"\n"), p)
		require.NoError(t, err)
		return e.m.checkGrantTrees(h)
	}
	refused := func(t *testing.T, err error, link string) {
		t.Helper()
		require.ErrorIs(t, err, ErrLinkToHostData)
		var ge *GrantError
		require.ErrorAs(t, err, &ge)
		assert.Equal(t, link, ge.Link)
	}

	t.Run("deep", func(t *testing.T) {
		link(filepath.Join(e.data, "history.jsonl"), "deep/a/b/c/history")
		refused(t, check("deep.ts", "read=deep"), filepath.Join(e.dir, "deep/a/b/c/history"))
	})
	t.Run("relative", func(t *testing.T) {
		link("../../data", "rel/up")
		refused(t, check("rel.ts", "write=rel"), filepath.Join(e.dir, "rel/up"))
	})
	t.Run("an ancestor of the data", func(t *testing.T) {
		link("/", "root/slash")
		refused(t, check("root.ts", "read=root"), filepath.Join(e.dir, "root/slash"))
	})
	t.Run("dangling into the data", func(t *testing.T) {
		link(filepath.Join(e.data, "not-yet", "x"), "dangling/d")
		refused(t, check("dangling.ts", "write=dangling"), filepath.Join(e.dir, "dangling/d"))
	})
	t.Run("through a folder outside", func(t *testing.T) {
		// Deno follows one link, then the next.
		require.NoError(t, os.Symlink(filepath.Join(e.data, "consent.key"), filepath.Join(outside, "key")))
		link(outside, "hop/out")
		refused(t, check("hop.ts", "read=hop"), filepath.Join(outside, "key"))
	})
	t.Run("the module cache", func(t *testing.T) {
		link(e.m.cfg.CacheDir, "mc/cache")
		refused(t, check("mc.ts", "read=mc"), filepath.Join(e.dir, "mc/cache"))
	})
	if runtime.GOOS == "linux" {
		t.Run("proc", func(t *testing.T) {
			// Deno resolves granted/self/root/x to /x before it checks /proc.
			link("/proc/self", "proc/self")
			refused(t, check("proc.ts", "read=proc"), filepath.Join(e.dir, "proc/self"))
		})
	}
	t.Run("a folder loop ends", func(t *testing.T) {
		require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "cycle", "inner"), 0o755))
		link("..", "cycle/inner/up")
		link("../inner", "cycle/inner/same")
		assert.NoError(t, check("cycle.ts", "read=cycle"))
	})
	t.Run("a link that never resolves", func(t *testing.T) {
		link("b", "loop/a")
		link("a", "loop/b")
		require.ErrorIs(t, check("loop.ts", "read=loop"), pathguard.ErrLinkLoop, "what cannot be resolved is refused")
	})
	t.Run("harmless links", func(t *testing.T) {
		outside := filepath.Join(filepath.Dir(e.dir), "outside2")
		require.NoError(t, os.MkdirAll(outside, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(outside, "notes.txt"), nil, 0o644))
		link(outside, "fine/out")
		link("out/notes.txt", "fine/notes")
		link("/dev/null", "fine/null")
		require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "fine", "sub"), 0o755))
		link("..", "fine/sub/parent")
		assert.NoError(t, check("fine.ts", "read=fine write=fine/sub"))
	})
	t.Run("the grant itself is a link", func(t *testing.T) {
		link(e.data, "alias")
		p := e.script(t, "alias.ts", "// @permissions read=alias\nconsole.log(1)\n")
		plan, err := e.m.Plan(context.Background(), Request{Script: p})
		require.NoError(t, err)
		require.Error(t, plan.Refused)
		assert.Contains(t, plan.Refused.Error(), "host's own data")
	})
	t.Run("a link appears on the grant's path", func(t *testing.T) {
		// The header was read while ancestor/ was a folder; it is a link
		// by the time of the check.
		require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "ancestor", "inner"), 0o755))
		p := e.script(t, "anc.ts", "// @permissions read=ancestor/inner\n")
		h, err := permissions.Parse([]byte("// @permissions read=ancestor/inner\n"), p)
		require.NoError(t, err)
		require.NoError(t, os.RemoveAll(filepath.Join(e.dir, "ancestor")))
		require.NoError(t, os.MkdirAll(filepath.Join(e.data, "inner"), 0o700))
		link(e.data, "ancestor")
		refused(t, e.m.checkGrantTrees(h), filepath.Join(e.dir, "ancestor", "inner"))
	})
}

func TestGrantTreeBounds(t *testing.T) {
	e := newMgr(t, nil)
	for i := range 40 {
		e.script(t, fmt.Sprintf("big/f%d.txt", i), "x")
	}
	p := e.script(t, "big.ts", "// @permissions read=big\n")
	h, err := permissions.Parse([]byte("// @permissions read=big\n"), p)
	require.NoError(t, err)
	require.NoError(t, e.m.checkGrantTreesWithin(h, 41, time.Minute))
	err = e.m.checkGrantTreesWithin(h, 39, time.Minute)
	require.ErrorIs(t, err, ErrGrantTooLarge, "past the entry bound the run is refused, not let through")
	assert.Contains(t, err.Error(), "read=big")
	err = e.m.checkGrantTreesWithin(h, 1000, -time.Second)
	require.ErrorIs(t, err, ErrGrantTooLarge, "and past the time bound")

	start := time.Now()
	_, entry := e.run(t, Request{Script: e.script(t, "ok.ts", "// @permissions read=big\nconsole.log(\"ran\")\n")})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	t.Logf("a run with a 40-file grant: %s", time.Since(start))
}

func TestRunsFolder(t *testing.T) {
	sep := string(filepath.Separator)
	for p, want := range map[string]string{
		filepath.FromSlash("/a/.runs/x.ts"): filepath.FromSlash("/a/.runs"),
		filepath.FromSlash("/a/.runs"):      filepath.FromSlash("/a/.runs"),
		filepath.FromSlash("/a/b/.runs/c"):  filepath.FromSlash("/a/b/.runs"),
		filepath.FromSlash("/a/.runsx"):     "",
		filepath.FromSlash("/a/x.runs"):     "",
		sep:                                 "",
	} {
		got, ok := runsFolder(p)
		assert.Equal(t, want != "", ok, p)
		assert.Equal(t, want, got, p)
	}
}
