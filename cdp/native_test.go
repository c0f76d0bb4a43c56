package cdp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// nativePage has one input of every type Chromium draws, a multiple select,
// and a contenteditable. Each field logs the trusted-ness and kind of the
// events it gets, as a framework listening for input and change would.
const nativePage = `<!doctype html><title>native</title>
<label>Text <input type=text></label>
<label>Search <input type=search></label>
<label>Email <input type=email></label>
<label>Password <input type=password></label>
<label>Phone <input type=tel></label>
<label>Site <input type=url></label>
<label>Count <input type=number min=0 max=100></label>
<label>Day <input type=date></label>
<label>Hour <input type=time></label>
<label>Meeting <input type=datetime-local></label>
<label>Period <input type=month></label>
<label>Sprint <input type=week></label>
<label>Colour <input type=color></label>
<label>Volume <input type=range min=0 max=10 step=1></label>
<label>Notes <textarea></textarea></label>
<div contenteditable=true aria-label=Story id=story></div>
<label for=toppings>Toppings</label>
<select id=toppings multiple size=4><option value=ch>Cheese</option><option>Ham</option><option>Olives</option><option disabled>Anchovies</option></select>
<script>
window.events = [];
for (const f of document.querySelectorAll("input, textarea")) {
  for (const type of ["input", "change"]) f.addEventListener(type, () => events.push(f.type + ":" + type));
}
document.getElementById("toppings").addEventListener("change", () => events.push("toppings:change"));
</script>`

func TestFillEveryInputType(t *testing.T) {
	tab := newTab(t, serve("/native", nativePage))
	ctx := tctx(t, 30*time.Second)
	cases := []struct{ label, value, kept string }{
		{"Text", "plain words", "plain words"},
		{"Search", "query", "query"},
		{"Email", "ada@example.com", "ada@example.com"},
		{"Password", "s3cret!", "s3cret!"},
		{"Phone", "+44 20 7946 0000", "+44 20 7946 0000"},
		{"Site", "https://example.com/", "https://example.com/"},
		{"Count", "42", "42"},
		{"Day", "2024-03-05", "2024-03-05"},
		{"Hour", "13:45", "13:45"},
		{"Meeting", "2024-03-05T13:45", "2024-03-05T13:45"},
		{"Period", "2024-03", "2024-03"},
		{"Sprint", "2024-W10", "2024-W10"},
		{"Colour", "#FF8800", "#ff8800"},
		{"Volume", "7", "7"},
		{"Notes", "line one\nline two", "line one\nline two"},
		{"Story", "Once upon a time", "Once upon a time"},
	}
	for _, c := range cases {
		st, err := tab.Fill(ctx, Locator{Label: c.label}, c.value, FormOptions{})
		require.NoError(t, err, c.label)
		require.Equal(t, c.kept, st.Value, c.label)
	}
	v, err := tab.Evaluate(ctx, `() => [...document.querySelectorAll("input")].map(i => i.value)`)
	require.NoError(t, err)
	require.JSONEq(t, `["plain words","query","ada@example.com","s3cret!","+44 20 7946 0000","https://example.com/","42",
		"2024-03-05","13:45","2024-03-05T13:45","2024-03","2024-W10","#ff8800","7"]`, string(v))
	v, err = tab.Evaluate(ctx, `() => ["date", "color", "range"].map(t => events.filter(e => e.startsWith(t + ":")).join(" "))`)
	require.NoError(t, err)
	require.JSONEq(t, `["date:input date:change", "color:input color:change", "range:input range:change"]`, string(v))

	// Values the control does not take are not committed: a malformed
	// date, a volume off its step, text in a number field.
	for _, c := range []struct{ label, value string }{{"Day", "5 March"}, {"Day", "2024-02-30"}, {"Volume", "7.5"}, {"Volume", "11"}, {"Count", "forty"}} {
		_, err := tab.Fill(ctx, Locator{Label: c.label}, c.value, FormOptions{})
		require.ErrorIs(t, err, errcode.NotCommitted, c.label+" "+c.value)
	}
	// Numbers are strings that compare as numbers.
	st, err := tab.Fill(ctx, Locator{Label: "Volume"}, "3.0", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "3", st.Value)
	// Filling again replaces, and "" clears, a picker input too.
	st, err = tab.Fill(ctx, Locator{Label: "Day"}, "", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "", st.Value)
}

func TestSelectAllMultiple(t *testing.T) {
	tab := newTab(t, serve("/native-multi", nativePage))
	ctx := tctx(t, 30*time.Second)
	selected := func() string {
		v, err := tab.Evaluate(ctx, `() => [...document.getElementById("toppings").selectedOptions].map(o => o.value)`)
		require.NoError(t, err)
		return string(v)
	}
	got, err := tab.SelectAll(ctx, Locator{Label: "Toppings"}, []string{"Cheese", "Olives"}, FormOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"Cheese", "Olives"}, got)
	require.JSONEq(t, `["ch","Olives"]`, selected())

	// Exactly the options given: the earlier ones are unselected.
	got, err = tab.SelectAll(ctx, Locator{Label: "Toppings"}, []string{"Ham", "ch"}, FormOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"Cheese", "Ham"}, got)
	require.JSONEq(t, `["ch","Ham"]`, selected())

	// Select picks one, alone.
	shown, err := tab.Select(ctx, Locator{Label: "Toppings"}, "Olives", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Olives", shown)
	require.JSONEq(t, `["Olives"]`, selected())

	got, err = tab.SelectAll(ctx, Locator{Label: "Toppings"}, nil, FormOptions{})
	require.NoError(t, err)
	require.Empty(t, got)
	require.JSONEq(t, `[]`, selected())

	_, err = tab.SelectAll(ctx, Locator{Label: "Toppings"}, []string{"Ham"}, FormOptions{DryRun: true})
	require.NoError(t, err)
	require.JSONEq(t, `[]`, selected(), "a dry run changes nothing")

	_, err = tab.SelectAll(tctx(t, 300*time.Millisecond), Locator{Label: "Toppings"}, []string{"Ham", "Anchovies"}, FormOptions{})
	require.ErrorIs(t, err, errcode.Disabled)
	_, err = tab.SelectAll(tctx(t, 300*time.Millisecond), Locator{Label: "Toppings"}, []string{"Ham", "Pineapple"}, FormOptions{})
	require.ErrorIs(t, err, errcode.NoOption)
	_, err = tab.SelectAll(ctx, Locator{Label: "Text"}, []string{"Ham"}, FormOptions{})
	require.ErrorIs(t, err, errcode.NotSelect)
	v, err := tab.Evaluate(ctx, `() => events.filter(e => e === "toppings:change").length`)
	require.NoError(t, err)
	require.Equal(t, "4", string(v))
}
