package runner_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/mirror"
	"github.com/tranquil/automation/runner"
	"github.com/tranquil/automation/trace"
)

// downloadSite serves /file (payload as the attachment report.csv), /named
// (an attachment whose suggested name is the query's n), and / (links to
// both, and a button that downloads a blob it made with <a download>).
func downloadSite(t *testing.T, payload []byte) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>dl</title><a id=file href="/file">report</a><button id=blob onclick="blob()">blob</button>
<script>
function blob() {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob(["made in the page"]));
  a.download = "made.txt";
  document.body.append(a);
  a.click();
}
</script>`)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(payload)
	})
	mux.HandleFunc("/named", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename*=UTF-8''`+url.PathEscape(r.URL.Query().Get("n")))
		w.Header().Set("Content-Type", "application/octet-stream")
		fmt.Fprint(w, "hostile")
	})
	srv := testenv.Site(mux)
	t.Cleanup(srv.Close)
	return srv
}

// filesUnder lists the files under root, relative to it.
func filesUnder(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// A script saves what a page downloads into its write= grant, from a tab
// in the background: the bytes are the served ones, a blob the page made
// is saved too, a name already there is kept without overwrite and
// replaced with it, the trace and the action log show the saves, and a
// download the script did not ask for leaves nothing.
func TestDownloadIntoTheWriteGrant(t *testing.T) {
	t.Parallel() // see parallel_test.go
	payload := make([]byte, 300<<10)
	_, _ = rand.Read(payload)
	srv := downloadSite(t, payload)
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(srv.URL)}})
	entry := e.run(t, "dl.ts", `// @permissions browser forms write=downloads
import { context, tabs } from "tranquil/automation";
const active = (await tabs.active()).id;
const tab = await tabs.open("`+srv.URL+`/", { background: true });
const file = await tab.waitForDownload(() => tab.click({ selector: "#file" }), { path: "downloads/" });
const blob = await tab.waitForDownload(() => tab.click({ selector: "#blob" }), { path: "downloads/page/made-here.txt" });
let again = "none";
try { await tab.waitForDownload(() => tab.click({ selector: "#file" }), { path: "downloads/" }); }
catch (e) { again = (e as { code: string }).code; }
const replaced = await tab.waitForDownload(() => tab.click({ selector: "#blob" }), { path: "downloads/report.csv", overwrite: true });
let thrown = "";
try { await tab.waitForDownload(() => { throw new Error("boom"); }, { path: "downloads/" }); }
catch (e) { thrown = (e as Error).message; }
let late = "none";
try { await tab.waitForDownload(() => tab.waitFor("#file"), { path: "downloads/", timeout: 500 }); }
catch (e) { late = (e as { code: string }).code; }
let slow = "none";
try { await tab.waitForDownload(() => new Promise((r) => setTimeout(r, 800)), { path: "downloads/", timeout: 300 }); }
catch (e) { slow = (e as { code: string }).code; }
// Not asked for: refused, as always.
await tab.click({ selector: "#file" });
await new Promise((r) => setTimeout(r, 1500));
await context.result({ file, blob, again, replaced, thrown, late, slow, stillActive: (await tabs.active()).id === active });
`)
	var res struct {
		File, Blob, Replaced struct {
			Name string
			Size int64
			Path string
		}
		Again, Thrown, Late, Slow string
		StillActive               bool
	}
	result(t, entry, &res)
	t.Logf("%+v", res)
	assert.Equal(t, "report.csv", res.File.Name)
	assert.Equal(t, int64(len(payload)), res.File.Size)
	assert.Equal(t, "downloads/report.csv", res.File.Path)
	assert.Equal(t, "made-here.txt", res.Blob.Name)
	assert.Equal(t, "downloads/page/made-here.txt", res.Blob.Path)
	assert.Equal(t, "invalid", res.Again, "a file already there is not overwritten without overwrite")
	assert.Equal(t, "downloads/report.csv", res.Replaced.Path)
	assert.Equal(t, "boom", res.Thrown, "an action that throws is what the call throws")
	assert.Equal(t, "timeout", res.Late, "no download within the timeout")
	assert.Equal(t, "timeout", res.Slow, "the expectation ended at its deadline, before the action did")
	assert.True(t, res.StillActive, "the background tab stayed in the background")
	e.tabs.mu.Lock()
	focused := e.tabs.focused
	e.tabs.mu.Unlock()
	assert.Zero(t, focused, "nothing was focused through the host")

	dir := filepath.Join(e.dir, "downloads")
	assert.ElementsMatch(t, []string{"report.csv", "page/made-here.txt"}, filesUnder(t, dir), "only what the script asked for was saved")
	made, err := os.ReadFile(filepath.Join(dir, "page", "made-here.txt"))
	require.NoError(t, err)
	assert.Equal(t, "made in the page", string(made))
	replaced, err := os.ReadFile(filepath.Join(dir, "report.csv"))
	require.NoError(t, err)
	assert.Equal(t, "made in the page", string(replaced), "overwrite replaced the first download")
	for _, d := range downloadFolders() {
		assert.Empty(t, filesUnder(t, d), "the host's temporary download folder %s keeps nothing", d)
	}

	acts := actions(entry)
	site := strings.Split(hostOfURL(srv.URL), ":")[0]
	assert.Contains(t, acts, "download:ok@"+site)
	assert.Contains(t, acts, "download:invalid@"+site)
	var saved []string
	for _, a := range entry.Actions {
		if a.Method == "download" && a.Outcome == "ok" {
			saved = append(saved, a.Target)
		}
	}
	assert.Equal(t, []string{"downloads/report.csv", "downloads/page/made-here.txt", "downloads/report.csv"}, saved)

	tr, err := e.m.Trace(entry.ID)
	require.NoError(t, err)
	var calls []trace.Call
	for _, c := range tr.Calls {
		if c.Method == "tab.waitForDownload" {
			calls = append(calls, c)
		}
	}
	require.Len(t, calls, 6, "each waitForDownload is one call in the trace, but one whose action threw")
	assert.Empty(t, calls[0].Code)
	assert.Equal(t, srv.URL+"/", calls[0].Page)
	assert.Equal(t, "invalid", calls[2].Code)
	assert.Equal(t, "timeout", calls[4].Code)
	assert.Equal(t, "timeout", calls[5].Code)
}

// A download over Config.MaxDownloadBytes is cancelled: the call fails
// limit_exceeded and nothing of it is kept.
func TestDownloadOverTheLimit(t *testing.T) {
	t.Parallel() // see parallel_test.go
	srv := downloadSite(t, make([]byte, 64<<10))
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(srv.URL)}, config: func(c *runner.Config) { c.MaxDownloadBytes = 1000 }})
	entry := e.run(t, "big.ts", `// @permissions browser forms write=downloads
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+srv.URL+`/");
try { await tab.waitForDownload(() => tab.click({ selector: "#file" }), { path: "downloads/" }); await context.result("saved"); }
catch (e) { await context.result([(e as { code: string }).code, (e as Error).message, String((e as { details: { limit?: number } }).details.limit)]); }
`)
	var res []string
	result(t, entry, &res)
	require.Len(t, res, 3)
	assert.Equal(t, "limit_exceeded", res[0])
	assert.Equal(t, "tab.waitForDownload: the download is larger than the app's limit of 1000 bytes; nothing of it was kept", strings.SplitN(res[1], " (at ", 2)[0])
	assert.Equal(t, "1000", res[2], "the error's limit")
	assert.Empty(t, filesUnder(t, filepath.Join(e.dir, "downloads")))
}

// The bytes saved are the bytes served, checked on their own so that a
// failure says so.
func TestDownloadBytesEqualTheServedFile(t *testing.T) {
	t.Parallel() // see parallel_test.go
	payload := make([]byte, 1<<20+17)
	_, _ = rand.Read(payload)
	srv := downloadSite(t, payload)
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(srv.URL)}})
	entry := e.run(t, "bytes.ts", `// @permissions browser forms write=out
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+srv.URL+`/");
const clicked = await tab.waitForDownload(() => tab.click({ selector: "#file" }), { path: "out/copy.bin" });
// goto rejects, as a download is no page; the download is saved all the same.
const went = await tab.waitForDownload(() => tab.goto("`+srv.URL+`/file"), { path: "out/went.bin" });
await context.result({ size: clicked.size, went: went.size });
`)
	var res struct{ Size, Went int64 }
	result(t, entry, &res)
	for _, name := range []string{"copy.bin", "went.bin"} {
		got, err := os.ReadFile(filepath.Join(e.dir, "out", name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(payload, got), "%s: saved %d bytes, served %d", name, len(got), len(payload))
	}
	assert.Equal(t, int64(len(payload)), res.Size)
	assert.Equal(t, int64(len(payload)), res.Went)
}

// Without a write= grant covering the destination the call is refused
// not_granted before the action runs, and the download it would have
// caught is refused as every other is.
func TestDownloadRefusedWithoutAWriteGrant(t *testing.T) {
	t.Parallel() // see parallel_test.go
	srv := downloadSite(t, []byte("x"))
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(srv.URL)}})
	entry := e.run(t, "nogrant.ts", `// @permissions browser forms write=elsewhere
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+srv.URL+`/");
let clicked = false;
const codes = [];
for (const path of ["downloads/", "../outside/", "/tmp/", "elsewhere/../x/"]) {
  try { await tab.waitForDownload(async () => { clicked = true; await tab.click({ selector: "#file" }); }, { path }); codes.push("saved"); }
  catch (e) { codes.push((e as { code: string }).code); }
}
await context.result({ codes, clicked });
`)
	var res struct {
		Codes   []string
		Clicked bool
	}
	result(t, entry, &res)
	assert.Equal(t, []string{"not_granted", "not_granted", "not_granted", "not_granted"}, res.Codes)
	assert.False(t, res.Clicked, "the action never ran")
	for _, f := range filesUnder(t, filepath.Dir(e.dir)) {
		assert.NotContains(t, f, "report.csv", "nothing was written")
	}
	assert.Contains(t, actions(entry), "download:not_granted@")
}

// Whatever name the page suggests, the file lands in the folder the
// script named: folders are stripped, "..", drive letters, devices,
// control characters and over-long names made safe.
func TestDownloadHostileSuggestedNamesStayInside(t *testing.T) {
	t.Parallel() // see parallel_test.go
	srv := downloadSite(t, nil)
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(srv.URL)}})
	names := []string{"../../x", `C:\x`, "con", strings.Repeat("n", 300) + ".txt", "a\x01b\x1fc\x7f.txt", "..", `..\..\y`, "/etc/z"}
	var list []string
	for _, n := range names {
		list = append(list, fmt.Sprintf("%q", url.QueryEscape(n)))
	}
	entry := e.run(t, "hostile.ts", `// @permissions browser page-js write=grant/in
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+srv.URL+`/");
const saved = [];
for (const n of [`+strings.Join(list, ", ")+`]) {
  const f = await tab.waitForDownload(
    () => tab.evaluate((u) => { location.href = u; }, "/named?n=" + n),
    { path: "grant/in/" },
  );
  saved.push(f.path);
}
await context.result(saved);
`)
	var saved []string
	result(t, entry, &saved)
	t.Logf("saved as %q", saved)
	require.Len(t, saved, len(names))
	in := filepath.Join(e.dir, "grant", "in")
	files := filesUnder(t, filepath.Join(e.dir, "grant"))
	require.Len(t, files, len(names), "each download is a file of its own in the grant: %q", files)
	for _, f := range files {
		assert.True(t, strings.HasPrefix(f, "in/") && !strings.Contains(strings.TrimPrefix(f, "in/"), "/"), "%q is directly in the folder", f)
		name := filepath.Base(f)
		assert.LessOrEqual(t, len(name), 200, name)
		assert.NotContains(t, []string{"con", ".", ".."}, strings.ToLower(name))
		for _, r := range name {
			assert.False(t, r < 0x20 || r == 0x7f, "%q has a control character", name)
		}
	}
	for _, p := range saved {
		assert.True(t, strings.HasPrefix(p, "grant/in/"), p)
	}
	for _, n := range []string{"x", "y", "z"} {
		_, err := os.Stat(filepath.Join(e.dir, n))
		assert.ErrorIs(t, err, fs.ErrNotExist, "nothing landed beside the script")
	}
	_, err := os.Stat(filepath.Join(in, "con"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// downloadFolders lists the temporary download folders there now.
func downloadFolders() []string {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), "tranquil-downloads-*"))
	return m
}

// A downloaded file is one of the run's outputs: the script's mirror
// copies it as it copies what the script wrote itself.
func TestDownloadIsMirrored(t *testing.T) {
	t.Parallel() // see parallel_test.go
	payload := []byte("a,b\n1,2\n")
	srv := downloadSite(t, payload)
	var store *mirror.Store
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(srv.URL)}, config: func(c *runner.Config) {
		s, err := mirror.OpenBeside(c.Gate.Store(), mirror.Options{})
		require.NoError(t, err)
		c.Mirrors, store = s, s
	}})
	src := `// @permissions browser forms write=downloads
import { tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("` + srv.URL + `/");
await tab.waitForDownload(() => tab.click({ selector: "#file" }), { path: "downloads/" });
`
	script := filepath.Join(e.dir, "mirrored.ts")
	require.NoError(t, os.WriteFile(script, []byte(src), 0o644))
	dest := filepath.Join(filepath.Dir(e.dir), "Documents", "reports")
	_, err := store.Set(context.Background(), mirror.ScopeScript, script, dest)
	require.NoError(t, err)
	entry := e.run(t, "mirrored.ts", src)
	require.Equal(t, "succeeded", string(entry.State), "reason %q output:\n%s", entry.Reason, entry.Output)
	got, err := os.ReadFile(filepath.Join(dest, "downloads", "report.csv"))
	require.NoError(t, err, "the mirror has the downloaded file")
	assert.Equal(t, payload, got)
	m, ok, err := store.Status(context.Background(), script)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, mirror.OutcomeCopied, m.State.Outcome())
}

// A run holds at most maxPendingDownloads expectations at once, and one
// whose action outlives its timeout ends there: the wait says the time
// is up, and the download the action starts afterwards is not saved.
func TestDownloadExpectationsAreBounded(t *testing.T) {
	t.Parallel() // see parallel_test.go
	srv := downloadSite(t, []byte("late"))
	e := newBrowserEnvWith(t, envOptions{allowLocal: []string{hostOfURL(srv.URL)}})
	entry := e.run(t, "bounded.ts", `// @permissions browser forms write=downloads
import { context, tabs } from "tranquil/automation";
const tab = await tabs.active();
await tab.goto("`+srv.URL+`/");
const code = (e: unknown) => (e as { code?: string }).code ?? String(e);
// Eight waits whose actions hold until released, then a ninth.
let release = () => {};
const held = new Promise<void>((r) => release = r);
const waits = Array.from({ length: 8 }, () =>
  tab.waitForDownload(() => held, { path: "downloads/", timeout: 20000 }).then(() => "saved", code));
await new Promise((r) => setTimeout(r, 300));
const ninth = await tab.waitForDownload(() => {}, { path: "downloads/" }).then(() => "saved", code);
release();
// Released, the eight end as the actions did nothing: no download began.
const eight = await Promise.all(waits);
// An action that outlives the expectation: it downloads after its end.
const late = await tab.waitForDownload(async () => {
  await new Promise((r) => setTimeout(r, 800));
  await tab.click({ selector: "#file" });
}, { path: "downloads/", timeout: 200 }).then(() => "saved", (e) => code(e) + ": " + (e as Error).message);
await context.result({ ninth, eight, late });
`)
	var res struct {
		Ninth string
		Eight []string
		Late  string
	}
	result(t, entry, &res)
	assert.Equal(t, "limit_exceeded", res.Ninth, "the ninth expectation at once")
	require.Len(t, res.Eight, 8)
	for _, c := range res.Eight {
		assert.NotEqual(t, "saved", c)
	}
	assert.True(t, strings.HasPrefix(res.Late, "timeout: "), "the late action's wait: %s", res.Late)
	assert.Contains(t, res.Late, "its time is up")
	assert.Empty(t, filesUnder(t, filepath.Join(e.dir, "downloads")), "the late download was not saved")
}
