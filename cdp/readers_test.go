package cdp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

const readersPage = `<title>readers</title>
<label for=n>Name</label><input id=n value="Ada">
<label for=d>Locked</label><input id=d value="kept" disabled>
<label for=h>Secret</label><input id=h value="hidden value" style="display:none">
<p id=msg data-testid=msg>Hello <b>world</b></p>
<label><input type=checkbox id=c checked> Agree</label>
<div role=switch aria-checked="true" id=sw tabindex=0>Wi-Fi</div>
<select id=s aria-label=Country><option>France</option><option selected>Peru</option></select>
<a href="/x" id=link title="Go">link</a>
<ul><li class=item>a</li><li class=item>b</li><li class=item style="display:none">c</li></ul>
<div id=later></div>
<script>setTimeout(() => { document.getElementById("later").innerHTML = "<button>Late</button>"; }, 300);</script>
<label for=f>Upload</label><input type=file id=f style="display:none">
<input type=file id=fm multiple aria-label="Many">
<script>for (const id of ["f", "fm"]) document.getElementById(id).addEventListener("change", (e) => { window.changed = (window.changed || 0) + 1; });</script>`

func readersTab(t *testing.T, opts TabOptions) *Tab {
	return tabWith(t, serve("/readers", readersPage), opts)
}

func TestReaders(t *testing.T) {
	log := &actionLog{}
	tab := readersTab(t, TabOptions{Log: log.add})
	ctx := tctx(t, 20*time.Second)

	s, err := tab.Text(ctx, Locator{TestID: "msg"})
	require.NoError(t, err)
	require.Equal(t, "Hello world", s)

	for target, want := range map[Locator]string{
		{Label: "Name"}:     "Ada",
		{Label: "Locked"}:   "kept",         // disabled: read all the same
		{Label: "Secret"}:   "hidden value", // hidden too
		{Selector: "#s"}:    "Peru",         // a select's chosen label
		{Role: "combobox"}:  "Peru",
		{Selector: "#link"}: "",
	} {
		got, err := tab.Value(ctx, target)
		if target.Selector == "#link" {
			require.ErrorIs(t, err, errcode.BadTarget, "a link holds no value")
			continue
		}
		require.NoError(t, err, target.String())
		require.Equal(t, want, got, target.String())
	}

	b, err := tab.Checked(ctx, Locator{Label: "Agree"})
	require.NoError(t, err)
	require.True(t, b)
	b, err = tab.Checked(ctx, Locator{Role: "switch", Name: "Wi-Fi"})
	require.NoError(t, err)
	require.True(t, b)
	_, err = tab.Checked(ctx, Locator{Label: "Name"})
	require.ErrorIs(t, err, errcode.BadTarget)

	v, ok, err := tab.Attribute(ctx, Locator{Selector: "#link"}, "href")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "/x", v)
	_, ok, err = tab.Attribute(ctx, Locator{Selector: "#link"}, "data-none")
	require.NoError(t, err)
	require.False(t, ok)

	for target, want := range map[Locator]bool{
		{Label: "Name"}:         true,
		{Label: "Locked"}:       true, // shown, if disabled
		{Label: "Secret"}:       false,
		{Selector: ".item"}:     true, // several match: shown all the same
		{Selector: "#nowhere"}:  false,
		{Text: "No such words"}: false,
	} {
		got, err := tab.IsVisible(ctx, target)
		require.NoError(t, err, target.String())
		require.Equal(t, want, got, target.String())
	}

	n, err := tab.Count(ctx, Locator{Selector: ".item"})
	require.NoError(t, err)
	require.Equal(t, 3, n, "hidden ones count")

	start := time.Now()
	_, err = tab.Value(ctx, Locator{Selector: ".item"})
	require.ErrorIs(t, err, errcode.Ambiguous)
	require.Less(t, time.Since(start), 2*time.Second, "several matches fail at once, as for an action")

	require.NoError(t, tab.WaitVisible(ctx, Locator{Role: "button", Name: "Late"}))
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err = tab.WaitVisible(wctx, Locator{Label: "Secret"})
	var wt *WaitTimeoutError
	require.ErrorAs(t, err, &wt)

	raw := ""
	for _, a := range log.list {
		raw += a.Method + " " + a.Target + " " + a.Outcome + "\n"
	}
	require.Contains(t, raw, `text testId "msg" ok`)
	require.Contains(t, raw, `waitFor role "button" name "Late" ok`)
	for _, secret := range []string{"Ada", "kept", "hidden value", "Peru", "Hello"} {
		require.NotContains(t, raw, secret, "the log never holds what was read")
	}
}

func TestReadersOffSites(t *testing.T) {
	log := &actionLog{}
	tab := readersTab(t, TabOptions{Log: log.add, Sites: []string{"example.com"}})
	ctx := tctx(t, 20*time.Second)
	for name, f := range map[string]func() error{
		"text":    func() error { _, err := tab.Text(ctx, Locator{TestID: "msg"}); return err },
		"value":   func() error { _, err := tab.Value(ctx, Locator{Label: "Name"}); return err },
		"visible": func() error { _, err := tab.IsVisible(ctx, Locator{Label: "Name"}); return err },
		"count":   func() error { _, err := tab.Count(ctx, Locator{Selector: "li"}); return err },
		"waitFor": func() error { return tab.WaitVisible(ctx, Locator{Label: "Name"}) },
	} {
		require.ErrorIs(t, f(), errcode.SiteNotAllowed, name)
	}
	for _, a := range log.list {
		if a.Method != "goto" {
			require.Equal(t, "refused", a.Outcome, a.Method)
		}
	}
}

func TestSetFiles(t *testing.T) {
	tab := readersTab(t, TabOptions{})
	ctx := tctx(t, 20*time.Second)
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"one.txt", "two.txt"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(name), 0o600))
		paths = append(paths, p)
	}
	names := func(sel string) string {
		v, err := tab.Evaluate(ctx, `(s) => Array.from(document.querySelector(s).files, (f) => f.name).join(",")`, sel)
		require.NoError(t, err)
		return string(v)
	}

	require.NoError(t, tab.SetFiles(ctx, Locator{Label: "Upload"}, paths[:1], FormOptions{}), "a hidden input behind its label")
	require.Equal(t, `"one.txt"`, names("#f"))
	require.NoError(t, tab.SetFiles(ctx, Locator{Label: "Many"}, paths, FormOptions{}))
	require.Equal(t, `"one.txt,two.txt"`, names("#fm"))
	changed, err := tab.Evaluate(ctx, `() => window.changed`)
	require.NoError(t, err)
	require.Equal(t, "2", string(changed), "the page saw change events")

	err = tab.SetFiles(ctx, Locator{Label: "Upload"}, paths, FormOptions{})
	require.ErrorIs(t, err, errcode.BadTarget, "two files for a single input")
	err = tab.SetFiles(ctx, Locator{Label: "Name"}, paths[:1], FormOptions{})
	require.ErrorIs(t, err, errcode.BadTarget, "not a file input")
	require.NoError(t, tab.SetFiles(ctx, Locator{Label: "Many"}, nil, FormOptions{}))
	require.Equal(t, `""`, names("#fm"), "no paths clear it")
	require.NoError(t, tab.SetFiles(ctx, Locator{Label: "Many"}, paths, FormOptions{DryRun: true}))
	require.Equal(t, `""`, names("#fm"), "a dry run sets nothing")

	for _, bad := range []string{"one.txt", filepath.Join(dir, "missing.txt"), dir} {
		err := tab.SetFiles(ctx, Locator{Label: "Upload"}, []string{bad}, FormOptions{})
		require.True(t, errors.Is(err, errcode.Invalid), "%s: %v", bad, err)
		require.False(t, strings.Contains(names("#f"), "missing"))
	}
}
