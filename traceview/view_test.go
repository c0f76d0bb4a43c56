package traceview_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/cdptabs"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/testenv"
	"github.com/tranquil/automation/launch"
	"github.com/tranquil/automation/trace"
	"github.com/tranquil/automation/traceview"
)

// What a script and its pages control, hostile.
const (
	hostileHTML  = `<img src=x onerror=alert(1)>`
	hostileTitle = `</title><script>alert(2)</script>`
	hostileCtl   = "\x1b[31mred\u202eevil"
)

// source is a Source over fixed runs.
type source struct {
	runs   []history.Entry
	traces map[string]*trace.Trace
}

func (s source) Runs(context.Context) ([]history.Entry, error) { return s.runs, nil }

func (s source) Trace(_ context.Context, id string) (*trace.Trace, error) {
	if t, ok := s.traces[id]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%w: %s", traceview.ErrNotFound, id)
}

func jpegImage(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for x := range 40 {
		for y := range 30 {
			img.Set(x, y, color.RGBA{R: uint8(x * 6), G: 80, B: 160, A: 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, img, nil))
	return b.Bytes()
}

func hostileSource(t *testing.T) source {
	start := time.Now().Add(-time.Minute)
	r := trace.NewRecorder("run-bad", trace.Limits{})
	r.Navigation(trace.Navigation{At: start, Tab: "t1", Kind: "goto", URL: "http://127.0.0.1/" + hostileHTML})
	r.Call(trace.Call{Method: "tab.fill", Target: `label "Name"`, Tab: "t1", Page: "http://127.0.0.1/form", Start: start, Duration: 12 * time.Millisecond})
	r.Console(trace.ConsoleLine{At: start.Add(time.Millisecond), Tab: "t1", Level: "log", Text: hostileHTML + hostileTitle + hostileCtl})
	seq := r.Call(trace.Call{Method: "tab.click", Target: `role button ` + hostileTitle, Tab: "t1", Page: "http://127.0.0.1/form",
		Start: start.Add(2 * time.Millisecond), Duration: 300 * time.Millisecond, Code: "not_found", Error: "no element matches " + hostileHTML})
	r.Failure(trace.Failure{Seq: seq, Image: jpegImage(t), ImageType: trace.JPEG, Outline: "main\n  button " + hostileHTML})
	r.Step(trace.Step{At: start.Add(3 * time.Millisecond), Kind: "do", Name: hostileCtl, Phase: "end", Error: hostileTitle})
	r.Access("read", "/work/in.txt", true, start)
	for range 3 {
		r.Access("read", "/work/"+hostileHTML+hostileCtl, false, start.Add(4*time.Millisecond))
	}
	r.Access("env", hostileTitle, true, start)
	code := 1
	return source{
		runs: []history.Entry{
			{ID: "run-ok", Script: "/scripts/ok.ts", State: history.StateSucceeded, Start: start.Add(time.Second), Duration: time.Second},
			{ID: "run-bad", Script: "/scripts/" + hostileHTML + hostileTitle + ".ts", State: history.StateFailed, ExitCode: &code,
				Start: start, Duration: 2 * time.Second, Reason: hostileTitle, FirstError: hostileHTML + hostileCtl,
				Output: "out " + hostileHTML + "\n" + hostileTitle + "\n" + hostileCtl + "\n"},
		},
		traces: map[string]*trace.Trace{"run-bad": r.Trace()},
	}
}

// The view in real Chromium: the run list, the failed action with its
// screenshot loaded, everything hostile shown as text with control
// characters visible, no script, a strict CSP.
func TestViewInChromium(t *testing.T) {
	srv := httptest.NewServer(traceview.New(hostileSource(t), traceview.Options{}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bt, err := cdptabs.Launch(ctx, launch.Options{Path: testenv.Chromium(t), Args: testenv.ChromiumArgs()})
	require.NoError(t, err)
	t.Cleanup(func() { bt.Shutdown() })
	tab, err := bt.Browser().NewTab(ctx, "about:blank")
	require.NoError(t, err)
	t.Cleanup(func() { tab.Close(context.Background()) })

	eval := func(fn string, v any) {
		t.Helper()
		raw, err := tab.Evaluate(ctx, fn)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, v), "%s", raw)
	}

	_, err = tab.Goto(ctx, srv.URL+"/", cdp.Load)
	require.NoError(t, err)
	var list struct {
		Rows    int
		Links   []string
		Images  int
		Scripts int
		Text    string
	}
	eval(`() => ({
		rows: document.querySelectorAll("#runs tbody tr").length,
		links: [...document.querySelectorAll("#runs a")].map(a => a.getAttribute("href")),
		images: document.images.length, scripts: document.scripts.length,
		text: document.body.textContent })`, &list)
	assert.Equal(t, 2, list.Rows)
	assert.Equal(t, []string{"/run/run-ok", "/run/run-bad"}, list.Links)
	assert.Zero(t, list.Images, "no element injected")
	assert.Zero(t, list.Scripts)
	assert.Contains(t, list.Text, hostileHTML)
	assert.Contains(t, list.Text, hostileTitle)

	_, err = tab.Goto(ctx, srv.URL+"/run/run-bad", cdp.Load)
	require.NoError(t, err)
	var run struct {
		Title       string
		Images      int
		Loaded      bool
		Width       int
		Scripts     int
		Script      string
		Output      string
		Timeline    string
		FailedRows  int
		Outline     string
		InjectedImg int
		Accesses    [][]string
		DeniedRows  int
	}
	eval(`async () => {
		const shot = document.querySelector("img.shot");
		if (shot && !shot.complete) await shot.decode().catch(() => {});
		return {
			title: document.title, images: document.images.length,
			loaded: !!shot && shot.complete, width: shot ? shot.naturalWidth : 0,
			scripts: document.scripts.length,
			script: document.getElementById("script").textContent,
			output: document.getElementById("output").textContent,
			timeline: document.getElementById("timeline").textContent,
			failedRows: document.querySelectorAll("#timeline tr.failed").length,
			outline: document.querySelector("pre.outline").textContent,
			injectedImg: document.querySelectorAll("img[src=x], img[onerror]").length,
			accesses: [...document.querySelectorAll("#accesses tbody tr")].map(tr => [...tr.cells].slice(0, 4).map(td => td.textContent)),
			deniedRows: document.querySelectorAll("#accesses tr.failed").length,
		};
	}`, &run)
	assert.Equal(t, 1, run.Images, "only the screenshot")
	assert.True(t, run.Loaded)
	assert.Equal(t, 40, run.Width, "the screenshot loaded")
	assert.Zero(t, run.Scripts, "no script element, injected or not")
	assert.Zero(t, run.InjectedImg)
	assert.Contains(t, run.Title, hostileHTML, "the title shows the script's name as text")
	assert.Contains(t, run.Title, "</title><script>")
	assert.Contains(t, run.Script, hostileHTML+hostileTitle)
	for _, s := range []string{hostileHTML, hostileTitle, `\x1b[31mred\u202eevil`} {
		assert.Contains(t, run.Output, s)
	}
	assert.NotContains(t, run.Output, "\x1b")
	assert.NotContains(t, run.Output, "\u202e")
	assert.NotContains(t, run.Timeline, "\u202e")
	assert.Contains(t, run.Timeline, "tab.click")
	assert.Contains(t, run.Timeline, "not_found")
	assert.Contains(t, run.Timeline, "300 ms")
	assert.Contains(t, run.Timeline, "no element matches "+hostileHTML)
	assert.Contains(t, run.Timeline, `\x1b[31mred\u202eevil`, "the console line and step, control characters visible")
	assert.GreaterOrEqual(t, run.FailedRows, 2, "the failed click and the failed step")
	assert.Contains(t, run.Outline, "button "+hostileHTML)
	assert.Equal(t, [][]string{
		{"read", "/work/in.txt", "allowed", "1"},
		{"read", "/work/" + hostileHTML + `\x1b[31mred\u202eevil`, "denied", "3"},
		{"env", hostileTitle, "allowed", "1"},
	}, run.Accesses, "each access a row, the script's paths and names as text")
	assert.Equal(t, 1, run.DeniedRows)
}

func TestViewHeadersAndRefusals(t *testing.T) {
	src := hostileSource(t)
	bad := src.traces["run-bad"]
	bad.Shots = append(bad.Shots, trace.Shot{Seq: bad.Failures[0].Seq, When: trace.Before, Image: jpegImage(t), ImageType: trace.JPEG})
	srv := httptest.NewServer(traceview.New(src, traceview.Options{}))
	t.Cleanup(srv.Close)
	get := func(path, host string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, p := range []string{"/", "/run/run-bad", "/run/run-bad/shot/0", "/run/run-bad/action/0", "/view.css", "/run/nope", "/run/run-bad/shot/9"} {
		resp := get(p, "")
		csp := resp.Header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "default-src 'none'", p)
		assert.NotContains(t, csp, "script-src", p)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), p)
	}
	assert.Equal(t, http.StatusOK, get("/run/run-bad", "").StatusCode)
	assert.Equal(t, "image/jpeg", get("/run/run-bad/shot/0", "").Header.Get("Content-Type"))
	assert.Equal(t, http.StatusNotFound, get("/run/nope", "").StatusCode)
	assert.Equal(t, http.StatusNotFound, get("/run/run-ok", "").StatusCode, "a run without a trace")
	assert.Equal(t, http.StatusNotFound, get("/run/run-bad/shot/9", "").StatusCode)
	assert.Equal(t, http.StatusNotFound, get("/run/run-bad/shot/-1", "").StatusCode)
	assert.Equal(t, "image/jpeg", get("/run/run-bad/action/0", "").Header.Get("Content-Type"))
	assert.Equal(t, http.StatusNotFound, get("/run/run-bad/action/1", "").StatusCode)
	assert.Equal(t, http.StatusNotFound, get("/run/run-bad/action/-1", "").StatusCode)
	assert.Equal(t, http.StatusNotFound, get("/run/run-ok/action/0", "").StatusCode, "a run without a trace")
	assert.Equal(t, http.StatusMisdirectedRequest, get("/", "rebound.example:80").StatusCode, "a rebound name is refused")
	assert.Equal(t, http.StatusOK, get("/", "localhost").StatusCode)
	resp, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// FromHistory reads what a history.Store keeps.
func TestFromHistory(t *testing.T) {
	h, err := history.Open(t.TempDir()+"/history.jsonl", history.Options{})
	require.NoError(t, err)
	require.NoError(t, h.Put(history.Entry{ID: "r1", State: history.StateFailed, Start: time.Now()}))
	src := traceview.FromHistory(h)
	_, err = src.Trace(context.Background(), "r1")
	require.True(t, errors.Is(err, history.ErrNoTrace), "%v", err)
	data, err := trace.Encode(hostileSource(t).traces["run-bad"])
	require.NoError(t, err)
	require.NoError(t, h.PutTrace("r1", data))
	tr, err := src.Trace(context.Background(), "r1")
	require.NoError(t, err)
	require.Len(t, tr.Calls, 2)
	runs, err := src.Runs(context.Background())
	require.NoError(t, err)
	require.Len(t, runs, 1)

	// The run page finds the run's entry without listing every run.
	w := httptest.NewRecorder()
	traceview.New(src, traceview.Options{}).ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/run/r1", nil))
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), `<dd id="state" class="state-failed nw">failed</dd>`)
}

// The run list filters by state on the server, from a link's query, and
// a state it does not know is shown as text and matches nothing.
func TestRunListFilter(t *testing.T) {
	h := traceview.New(layoutRuns(), traceview.Options{})
	get := func(path string) string {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		require.Equal(t, http.StatusOK, w.Code, path)
		return w.Body.String()
	}
	all := get("/")
	for _, id := range []string{"run-ok", "run-failed", "run-cancelled", "run-retried"} {
		assert.Contains(t, all, `href="/run/`+id+`"`)
	}
	assert.Contains(t, all, `href="/?state=failed"`)
	failed := get("/?state=failed")
	assert.Contains(t, failed, `href="/run/run-failed"`)
	assert.NotContains(t, failed, `href="/run/run-ok"`)
	assert.Contains(t, failed, `class="state-failed current" href="/?state=failed" aria-current="page"`)
	odd := get("/?state=" + url.QueryEscape(hostileHTML))
	assert.NotContains(t, odd, hostileHTML)
	assert.NotContains(t, odd, `href="/run/`)

	// The result: indented, escaped.
	run := get("/run/run-ok")
	assert.Contains(t, run, "&#34;&lt;b&gt;eggs&lt;/b&gt;&#34;")
	assert.Contains(t, run, "\n  &#34;ordered&#34;: 3,")
}

// A call's site is the script's label: the run page shows the line it
// names only from a script file inside the script's folder, escaped, and
// none with Options.NoSource; a site naming a file elsewhere, a file that
// is no script, or a line past the end shows its name alone.
func TestCallSiteLines(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "scripts")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "lib"), 0o755))
	write := func(p, text string) { require.NoError(t, os.WriteFile(p, []byte(text), 0o644)) }
	write(filepath.Join(dir, "job.ts"), "const a = 1;\nawait tab.click(\""+hostileHTML+"\");\n")
	write(filepath.Join(dir, "lib", "x.ts"), "export const SECRET_LIB = 1;\n")
	write(filepath.Join(dir, "notes.txt"), "SECRET_NOTES\n")
	write(filepath.Join(root, "outside.ts"), "SECRET_OUTSIDE\n")
	require.NoError(t, os.Symlink(filepath.Join(root, "outside.ts"), filepath.Join(dir, "link.ts")))
	calls := []trace.Call{
		{Seq: 1, Method: "tab.click", File: "job.ts", Line: 2, Column: 7},
		{Seq: 2, Method: "tab.fill", File: "../outside.ts", Line: 1},
		{Seq: 3, Method: "tab.fill", File: "notes.txt", Line: 1},
		{Seq: 4, Method: "tab.fill", File: "link.ts", Line: 1},
		{Seq: 5, Method: "tab.fill", File: filepath.ToSlash(filepath.Join(root, "outside.ts")), Line: 1},
		{Seq: 6, Method: "tab.fill", File: "file://" + filepath.ToSlash(filepath.Join(root, "outside.ts")), Line: 1},
		{Seq: 7, Method: "tab.fill", File: "job.ts", Line: 99},
		{Seq: 8, Method: "tab.fill", File: hostileHTML + ".ts", Line: 1},
		{Seq: 9, Method: "tab.fill", File: "lib/x.ts", Line: 1},
	}
	src := source{runs: []history.Entry{{ID: "r1", Script: filepath.Join(dir, "job.ts"), State: history.StateSucceeded}},
		traces: map[string]*trace.Trace{"r1": {RunID: "r1", Calls: calls}}}
	get := func(o traceview.Options) string {
		w := httptest.NewRecorder()
		traceview.New(src, o).ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/run/r1", nil))
		require.Equal(t, http.StatusOK, w.Code)
		return w.Body.String()
	}
	page := get(traceview.Options{})
	assert.Contains(t, page, "job.ts:2")
	assert.Contains(t, page, "await tab.click(&#34;&lt;img src=x onerror=alert(1)&gt;&#34;);")
	assert.Contains(t, page, "SECRET_LIB", "a module in a folder below the script's")
	for _, secret := range []string{"SECRET_NOTES", "SECRET_OUTSIDE", hostileHTML} {
		assert.NotContains(t, page, secret)
	}
	for _, name := range []string{"../outside.ts:1", "notes.txt:1", "link.ts:1", "job.ts:99"} {
		assert.Contains(t, page, name, "the site is named even when its line is not shown")
	}
	assert.NotContains(t, get(traceview.Options{NoSource: true}), "await tab.click")
}
