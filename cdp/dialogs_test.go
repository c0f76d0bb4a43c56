package cdp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

const dialogsPage = `<title>dialogs</title>
<style>button { position: absolute; left: 0; width: 100px; height: 40px }</style>
<button style="top:0" onclick="window.r = alert('hello \u202e alert')">alert</button>
<button style="top:50px" onclick="window.r = confirm('Delete everything you ever wrote, for good, with no way back?')">confirm</button>
<button style="top:100px" onclick="window.r = prompt('Your name?', 'nobody')">prompt</button>
<script>addEventListener("beforeunload", (e) => { e.preventDefault(); e.returnValue = ""; });</script>`

// actionLog collects a tab's log.
type actionLog struct {
	mu   sync.Mutex
	list []Action
}

func (l *actionLog) add(a Action) {
	l.mu.Lock()
	l.list = append(l.list, a)
	l.mu.Unlock()
}

func (l *actionLog) dialogs() []Action {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Action
	for _, a := range l.list {
		if a.Method == "dialog" {
			out = append(out, a)
		}
	}
	return out
}

// tabWith opens a tab at url with opts, closed when the test ends.
func tabWith(t *testing.T, url string, opts TabOptions) *Tab {
	t.Helper()
	tab, err := sharedConn.NewTabWith(tctx(t, 20*time.Second), url, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tab.Close(ctx)
	})
	return tab
}

func dialogTab(t *testing.T, opts TabOptions) *Tab {
	return tabWith(t, serve("/dialogs", dialogsPage), opts)
}

// clickFor clicks at (x, y) and returns what the button's handler stored,
// failing when the click takes a second or more.
func clickFor(t *testing.T, tab *Tab, y float64) string {
	t.Helper()
	ctx := tctx(t, 10*time.Second)
	start := time.Now()
	require.NoError(t, tab.Click(ctx, 50, y))
	require.Less(t, time.Since(start), time.Second, "the dialog did not hold up the click")
	v, err := tab.Evaluate(ctx, `() => String(window.r)`)
	require.NoError(t, err)
	return string(v)
}

func TestDialogsDismissedByDefault(t *testing.T) {
	log := &actionLog{}
	tab := dialogTab(t, TabOptions{Log: log.add})
	require.Equal(t, `"undefined"`, clickFor(t, tab, 20))
	require.Equal(t, `"false"`, clickFor(t, tab, 70), "confirm is cancelled")
	require.Equal(t, `"null"`, clickFor(t, tab, 120), "prompt is cancelled")

	// The page asks before it is left (it has been clicked, so it may);
	// the default is to stay.
	ctx := tctx(t, 10*time.Second)
	start := time.Now()
	_, err := tab.Goto(ctx, serve("/dialogs-next", `<title>next</title>`), Load)
	require.Less(t, time.Since(start), time.Second)
	require.ErrorIs(t, err, errcode.Navigation)
	require.ErrorContains(t, err, "beforeunload")
	title, err := tab.Title(ctx)
	require.NoError(t, err)
	require.Equal(t, "dialogs", title, "the page stayed")

	// The log entry follows the answer's reply, which may come after the
	// navigation's.
	require.Eventually(t, func() bool { return len(log.dialogs()) == 4 }, 2*time.Second, 10*time.Millisecond)
	d := log.dialogs()
	require.Equal(t, "beforeunload", d[3].Target)
	require.Equal(t, "dismissed", d[3].Outcome)
	require.Equal(t, Action{Method: "dialog", Target: `alert: hello \u202e alert`, Site: "127.0.0.1", Outcome: "dismissed"}, d[0], "the message is escaped for display")
	require.Equal(t, "confirm: Delete everything you ever wrote, for go…", d[1].Target, "only the start of a long message")
	require.Equal(t, "prompt: Your name?", d[2].Target)
}

func TestDialogsAnsweredByTheHandler(t *testing.T) {
	log := &actionLog{}
	tab := dialogTab(t, TabOptions{Log: log.add})
	var seen []Dialog
	var mu sync.Mutex
	tab.HandleDialogs(func(d Dialog) DialogAnswer {
		mu.Lock()
		seen = append(seen, d)
		mu.Unlock()
		return DialogAnswer{Accept: true, PromptText: "Ada, secretly"}
	})
	require.Equal(t, `"undefined"`, clickFor(t, tab, 20))
	require.Equal(t, `"true"`, clickFor(t, tab, 70))
	require.Equal(t, `"Ada, secretly"`, clickFor(t, tab, 120))

	ctx := tctx(t, 10*time.Second)
	next := serve("/dialogs-next", `<title>next</title>`)
	r, err := tab.Goto(ctx, next, Load)
	require.NoError(t, err, "beforeunload accepted: the page is left")
	require.Equal(t, 200, r.Status)

	mu.Lock()
	require.Len(t, seen, 4)
	require.Equal(t, "beforeunload", seen[3].Type)
	require.Equal(t, Dialog{Type: "prompt", Message: "Your name?", DefaultPrompt: "nobody", URL: site.URL + "/dialogs"}, seen[2])
	mu.Unlock()
	for _, a := range log.dialogs() {
		require.Equal(t, "accepted", a.Outcome, a.Target)
		require.NotContains(t, a.Target, "Ada", "the prompt text is never logged")
	}
}

func TestDialogsOffSitesAreDismissed(t *testing.T) {
	log := &actionLog{}
	page := serve("/dialogs-onload", `<title>onload</title><script>setTimeout(() => { window.r = confirm("go on?") }, 50)</script>`)
	ctx := tctx(t, 20*time.Second)
	tab, err := sharedConn.NewTabWith(ctx, "", TabOptions{Log: log.add, Sites: []string{"example.com"}})
	require.NoError(t, err)
	defer tab.Close(ctx)
	tab.HandleDialogs(func(Dialog) DialogAnswer { return DialogAnswer{Accept: true} })
	_, err = tab.Goto(ctx, page, Load)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(log.dialogs()) == 1 }, 5*time.Second, 10*time.Millisecond)
	d := log.dialogs()[0]
	require.Equal(t, "refused", d.Outcome, "sites= keeps the handler from accepting")
	require.True(t, strings.HasPrefix(d.Target, "confirm"))
}

// A prompt's default text is the page's to size (Chromium cuts a dialog's
// message to 10,240 characters, but not it): past maxPageTextEvent the
// dialog event is not read, and the handler gets a stand-in of the right
// type, so the dialog is still answered.
func TestDialogsPastTheBoundAreAnsweredUnread(t *testing.T) {
	tab := newTab(t, serve("/dialogs-huge", `<title>huge</title>`))
	var mu sync.Mutex
	var seen []Dialog
	tab.HandleDialogs(func(d Dialog) DialogAnswer {
		mu.Lock()
		seen = append(seen, d)
		mu.Unlock()
		return DialogAnswer{Accept: true, PromptText: "typed"}
	})
	ctx := tctx(t, 60*time.Second)
	grown := heapGrowth()
	raw, err := tab.Evaluate(ctx, `() => {
  const s = "x".repeat(8 << 20);
  return [prompt(s, "small"), prompt("small", s), prompt("again", s + s)];
}`)
	require.NoError(t, err)
	grew := grown()
	require.JSONEq(t, `["typed", "typed", "typed"]`, string(raw), "each dialog was answered")
	t.Logf("prompts with 8 and 16 MiB default texts; host heap grew by at most %.1f MiB", float64(grew)/(1<<20))
	require.Less(t, grew, int64(16<<20), "the dialogs' texts were read")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 3)
	require.Equal(t, "prompt", seen[0].Type)
	require.LessOrEqual(t, len(seen[0].Message), 10240, "Chromium cuts a message")
	for _, d := range seen[1:] {
		require.Equal(t, "prompt", d.Type)
		require.Regexp(t, `^\(a dialog of \d{7,8} bytes, too large to read\)$`, d.Message)
		require.Empty(t, d.DefaultPrompt)
	}
}
