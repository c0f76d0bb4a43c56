package cdp

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// A page that changes 300 ms after it loads: a status's text, a field's
// value, a box ticked, a dialog hidden, a banner removed, a button and
// rows added.
const changingPage = `<title>changing</title>
<p role=status>Saving…</p>
<label for=n>Name</label><input id=n value="draft">
<label><input type=checkbox id=c> Agree</label>
<div role=dialog aria-label=Confirm>Sure?</div>
<div id=banner>Welcome</div>
<div id=hidden style="display:none">kept</div>
<ul id=rows><li class=row>1</li></ul>
<div id=later></div>
<script>
setTimeout(() => {
  document.querySelector("[role=status]").textContent = "  Saved   at\n 10:00 ";
  document.getElementById("n").value = "final";
  document.getElementById("c").checked = true;
  document.querySelector("[role=dialog]").style.display = "none";
  document.getElementById("banner").remove();
  document.getElementById("later").innerHTML = "<button>Late</button><span id=late-text>arrived</span>";
  document.getElementById("rows").insertAdjacentHTML("beforeend", "<li class=row>2</li><li class=row>3</li>");
}, 300);
</script>`

func changingTab(t *testing.T, log *actionLog) *Tab {
	t.Helper()
	opts := TabOptions{}
	if log != nil {
		opts.Log = log.add
	}
	return tabWith(t, serve("/changing", changingPage), opts)
}

// Expectations that hold only after the page changes pass once it does.
func TestExpectPassesAfterADelay(t *testing.T) {
	log := &actionLog{}
	tab := changingTab(t, log)
	ctx := tctx(t, 20*time.Second)
	status := Locator{Role: "status"}
	pat, err := CompilePattern(`^saved\s+AT`, "i")
	require.NoError(t, err)
	for name, c := range map[string]struct {
		loc Locator
		e   Expectation
	}{
		"text, white space aside":        {status, Expectation{Kind: ExpectText, Text: "Saved at 10:00"}},
		"text containing":                {status, Expectation{Kind: ExpectContainsText, Text: "at 10"}},
		"text matching":                  {status, Expectation{Kind: ExpectText, Pattern: pat}},
		"value":                          {Locator{Label: "Name"}, Expectation{Kind: ExpectValue, Text: "final"}},
		"checked":                        {Locator{Label: "Agree"}, Expectation{Kind: ExpectChecked}},
		"hidden":                         {Locator{Role: "dialog"}, Expectation{Kind: ExpectHidden}},
		"visible, added later":           {Locator{Role: "button", Name: "Late"}, Expectation{Kind: ExpectVisible}},
		"count":                          {Locator{Selector: ".row"}, Expectation{Kind: ExpectCount, Count: 3}},
		"text of an element added later": {Locator{Selector: "#late-text"}, Expectation{Kind: ExpectText, Text: "arrived"}},
	} {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := tab.Expect(ectx, c.loc, c.e)
		cancel()
		require.NoError(t, err, name)
	}
	// Held at once, by the unchanged parts.
	require.NoError(t, tab.Expect(ctx, Locator{Selector: "#hidden"}, Expectation{Kind: ExpectHidden}))
	require.NoError(t, tab.Expect(ctx, Locator{Label: "Name"}, Expectation{Kind: ExpectValue, Text: "final"}))

	for _, a := range log.list {
		if a.Method == "goto" {
			continue
		}
		require.Equal(t, "expect", a.Method)
		require.Equal(t, "ok", a.Outcome, a.Target)
		require.NotContains(t, a.Target, "final", "the log holds the target only")
	}
}

// An expectation that never holds fails with what was last seen.
func TestExpectTimesOutWithWhatWasSeen(t *testing.T) {
	log := &actionLog{}
	tab := changingTab(t, log)
	ctx := tctx(t, 20*time.Second)
	for _, c := range []struct {
		loc  Locator
		e    Expectation
		want string
	}{
		{Locator{Role: "status"}, Expectation{Kind: ExpectText, Text: "Done"},
			`expected text "Done" in role "status", last seen "Saved at 10:00" (waited `},
		{Locator{Role: "status"}, Expectation{Kind: ExpectContainsText, Text: "Failed"},
			`expected text containing "Failed" in role "status", last seen "Saved`},
		{Locator{Selector: "#nowhere"}, Expectation{Kind: ExpectText, Text: "x"},
			`expected text "x" in selector "#nowhere", last seen: no element matches (waited `},
		{Locator{Selector: ".row"}, Expectation{Kind: ExpectText, Text: "1"},
			`last seen: more than one element matches`},
		{Locator{Label: "Agree"}, Expectation{Kind: ExpectUnchecked},
			`expected label "Agree" not to be checked, last seen: checked`},
		{Locator{Selector: ".row"}, Expectation{Kind: ExpectCount, Count: 2},
			`expected selector ".row" to match 2 elements, last seen: 3 elements match`},
		// A role is what the accessibility tree shows: a dialog hidden
		// with display: none has none.
		{Locator{Role: "dialog"}, Expectation{Kind: ExpectVisible},
			`expected role "dialog" to be visible, last seen: no element matches`},
		{Locator{Selector: "[role=dialog]"}, Expectation{Kind: ExpectVisible},
			`expected selector "[role=dialog]" to be visible, last seen: 1 element matches, none visible`},
		{Locator{Selector: "#banner"}, Expectation{Kind: ExpectVisible},
			`last seen: no element matches`},
		{Locator{Role: "button", Name: "Late"}, Expectation{Kind: ExpectHidden},
			`expected role "button" name "Late" to be hidden, last seen: 1 visible element matches`},
	} {
		// After the page has changed: wait for it first.
		require.NoError(t, tab.Expect(ctx, Locator{Selector: "#late-text"}, Expectation{Kind: ExpectVisible}))
		ectx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
		start := time.Now()
		err := tab.Expect(ectx, c.loc, c.e)
		cancel()
		var ee *ExpectationError
		require.ErrorAs(t, err, &ee, c.want)
		require.ErrorIs(t, err, errcode.ExpectationFailed)
		require.Equal(t, errcode.ExpectationFailed, errcode.Of(err))
		require.Contains(t, err.Error(), c.want)
		require.GreaterOrEqual(t, time.Since(start), 350*time.Millisecond, "it kept checking until its time ran out")
	}

	// Wrong kinds of target fail at once, with their own code.
	start := time.Now()
	err := tab.Expect(ctx, Locator{Selector: "#banner, #rows"}, Expectation{Kind: ExpectChecked})
	require.Error(t, err)
	err = tab.Expect(ctx, Locator{Role: "status"}, Expectation{Kind: ExpectChecked})
	require.ErrorIs(t, err, errcode.BadTarget)
	require.Less(t, time.Since(start), 3*time.Second)
}

// Each waitFor state, those that come after a delay included, and a
// timeout that says what it last saw.
func TestWaitStates(t *testing.T) {
	log := &actionLog{}
	tab := changingTab(t, log)
	ctx := tctx(t, 20*time.Second)
	wait := func(loc Locator, s WaitState, d time.Duration) error {
		wctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return tab.WaitState(wctx, loc, s)
	}
	// Held at once.
	require.NoError(t, wait(Locator{Selector: "#hidden"}, StateAttached, time.Second))
	require.NoError(t, wait(Locator{Selector: "#hidden"}, StateHidden, time.Second))
	require.NoError(t, wait(Locator{Selector: "#nowhere"}, StateHidden, time.Second), "none matches: hidden")
	require.NoError(t, wait(Locator{Selector: "#nowhere"}, StateDetached, time.Second))
	// After the page changes.
	require.NoError(t, wait(Locator{Role: "dialog"}, StateHidden, 5*time.Second))
	require.NoError(t, wait(Locator{Selector: "#banner"}, StateDetached, 5*time.Second))
	require.NoError(t, wait(Locator{Role: "button", Name: "Late"}, StateVisible, 5*time.Second))
	require.NoError(t, wait(Locator{Selector: "#late-text"}, StateAttached, 5*time.Second))

	for _, c := range []struct {
		loc  Locator
		s    WaitState
		want string
	}{
		{Locator{Role: "button", Name: "Late"}, StateHidden, `waited 3`}, {Locator{Role: "button", Name: "Late"}, StateHidden, ` ms for role "button" name "Late" to be hidden; last seen: 1 visible element matches`},
		{Locator{Selector: "#hidden"}, StateDetached, `; last seen: 1 element matches`},
		{Locator{Selector: "#hidden"}, StateVisible, `last seen: 1 element matches, none visible`},
		{Locator{Selector: "#banner"}, StateAttached, `last seen: no element matches`},
	} {
		err := wait(c.loc, c.s, 300*time.Millisecond)
		var wt *WaitTimeoutError
		require.ErrorAs(t, err, &wt)
		require.ErrorIs(t, err, ErrTimeout)
		require.Contains(t, err.Error(), c.want)
	}
	require.ErrorIs(t, tab.WaitState(ctx, Locator{Selector: "p"}, "gone"), errcode.Invalid)

	raw := ""
	for _, a := range log.list {
		raw += a.Method + " " + a.Target + " " + a.Outcome + "\n"
	}
	require.Contains(t, raw, `waitFor selector "#banner" ok`)
	require.Contains(t, raw, `waitFor selector "#banner" timeout`)
}

// A reader waits for an element the page adds later, and fails with the
// reason once its time runs out.
func TestReadWaitsForTarget(t *testing.T) {
	// Most of its time is DefaultFormWait's 30 s, spent waiting on a tab
	// of its own: it waits beside the other parallel tests.
	t.Parallel()
	tab := changingTab(t, nil)
	ctx := tctx(t, 60*time.Second) // a reader without a deadline below waits 30 s
	start := time.Now()
	s, err := tab.Text(ctx, Locator{Selector: "#late-text"})
	require.NoError(t, err)
	require.Equal(t, "arrived", s)
	require.Less(t, time.Since(start), 5*time.Second)

	rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = tab.Value(rctx, Locator{Label: "Nobody"})
	require.ErrorIs(t, err, errcode.NotFound, "the reason, not a bare timeout")
	var le *LocatorError
	require.ErrorAs(t, err, &le)
	require.Greater(t, le.Waited, 200*time.Millisecond)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)

	// A reader with no deadline of its own waits as long as an action
	// (DefaultFormWait), not for ever.
	start = time.Now()
	_, err = tab.Checked(context.Background(), Locator{Selector: "#never"})
	require.ErrorIs(t, err, errcode.NotFound)
	require.InDelta(t, DefaultFormWait.Seconds(), time.Since(start).Seconds(), 2)

	// A wrong kind of element fails at once.
	start = time.Now()
	_, err = tab.Checked(ctx, Locator{Label: "Name"})
	require.ErrorIs(t, err, errcode.BadTarget)
	require.Less(t, time.Since(start), 2*time.Second)
}
