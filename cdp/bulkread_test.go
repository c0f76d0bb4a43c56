package cdp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

const tablesPage = `<title>tables</title>
<table id=orders>
<caption>Orders</caption>
<thead><tr><th>Order</th><th>Customer</th><th>Paid</th></tr></thead>
<tbody>
<tr><td>#1042</td><td>Ada <b>Lovelace</b></td><td><img alt="yes" src="data:,"></td></tr>
<tr style="display:none"><td>#0</td><td>hidden</td><td></td></tr>
<tr><td>#1043</td><td><span aria-label="Grace Hopper">GH</span></td><td><input value="no"></td></tr>
<tr><td>#1044</td><td>Alan<table><tr><td>nested</td></tr></table></td><td><span aria-hidden=true>*</span>no</td></tr>
</tbody></table>
<div role=grid id=people aria-label=People>
  <div role=row><span role=columnheader>Name</span><span role=columnheader>Role</span></div>
  <div role=rowgroup>
    <div role=row><span role=gridcell>Ada</span><span role=gridcell>Admin</span></div>
    <div role=row><span role=gridcell>Bob</span><span role=gridcell>Guest</span></div>
  </div>
</div>
<table id=plain><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>
<ul><li>One</li><li>Two <i>and a half</i></li><li style="display:none">Three</li></ul>
<input class=f value=x><input class=f value=y><select class=f><option>Pick</option><option selected>Olives</option></select>
<p id=para>not a table</p>
<style>.pre::before { content: "~" }</style>
<table aria-label=Edge><tr><th>1</th><th>2</th><th>3</th><th>4</th><th>5</th><th>6</th><th>7</th></tr><tr><td><button>Edit</button> row</td><td>a<br>b</td><td><span style="display:block">x</span><span>y</span></td>
<td><input type=checkbox aria-label=Pick></td><td><select><option>One</option><option selected>Two</option></select></td>
<td><span class=pre>z</span></td><td><a href="#x">Link</a>&nbsp;text</td></tr></table>
<div id=big></div>`

// Texts, values and tables come back whole in one call; the page's own
// structure (header row, hidden rows, nested tables, names from alt and
// aria-label) decides what a cell says.
func TestBulkReads(t *testing.T) {
	tab := newTab(t, serve("/tables", tablesPage))
	ctx := tctx(t, 20*time.Second)
	texts, err := tab.Texts(ctx, Locator{Selector: "li"})
	require.NoError(t, err)
	assert.Equal(t, []string{"One", "Two and a half", "Three"}, texts, "a hidden match reads as innerText reads it: its text")
	texts, err = tab.Texts(ctx, Locator{Selector: "li", Nth: ptr(-2)})
	require.NoError(t, err)
	assert.Equal(t, []string{"Two and a half"}, texts)
	texts, err = tab.Texts(ctx, Locator{Selector: ".none"})
	require.NoError(t, err)
	assert.Equal(t, []string{}, texts)
	texts, err = tab.Texts(ctx, Locator{Role: "gridcell"})
	require.NoError(t, err)
	assert.Equal(t, []string{"Ada", "Admin", "Bob", "Guest"}, texts)

	vals, err := tab.Values(ctx, Locator{Selector: ".f"})
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "y", "Olives"}, vals)
	_, err = tab.Values(ctx, Locator{Selector: "li"})
	assert.ErrorIs(t, err, errcode.BadTarget)

	tb, err := tab.Table(ctx, Locator{Role: "table", Name: "Orders"})
	require.NoError(t, err)
	assert.Equal(t, Table{
		Headers: []string{"Order", "Customer", "Paid"},
		Rows:    [][]string{{"#1042", "Ada Lovelace", "yes"}, {"#1043", "Grace Hopper", "no"}, {"#1044", "Alan nested", "no"}},
	}, tb)
	tb, err = tab.Table(ctx, Locator{Role: "grid", Name: "People"})
	require.NoError(t, err)
	assert.Equal(t, Table{Headers: []string{"Name", "Role"}, Rows: [][]string{{"Ada", "Admin"}, {"Bob", "Guest"}}}, tb)
	tb, err = tab.Table(ctx, Locator{Selector: "#people [role=rowgroup]"})
	require.NoError(t, err)
	assert.Equal(t, Table{Headers: []string{}, Rows: [][]string{{"Ada", "Admin"}, {"Bob", "Guest"}}}, tb)
	tb, err = tab.Table(ctx, Locator{Selector: "#plain"})
	require.NoError(t, err)
	assert.Equal(t, Table{Headers: []string{}, Rows: [][]string{{"a", "b"}, {"c", "d"}}}, tb)
	_, err = tab.Table(ctx, Locator{Selector: "#para"})
	assert.ErrorIs(t, err, errcode.BadTarget)
}

// A bulk read past its bounds fails limit_exceeded in the page, before
// anything is sent: too many characters, or too many cells.
func TestBulkReadLimits(t *testing.T) {
	tab := newTab(t, serve("/tables", tablesPage))
	ctx := tctx(t, 30*time.Second)
	_, err := tab.Evaluate(ctx, fmt.Sprintf(`() => { document.getElementById("big").textContent = "x".repeat(%d); }`, MaxReadChars+1))
	require.NoError(t, err)
	_, err = tab.Texts(ctx, Locator{Selector: "#big"})
	require.ErrorIs(t, err, errcode.LimitExceeded)
	assert.Contains(t, err.Error(), "limit of a bulk read")

	rows := MaxReadCells/4 + 1
	_, err = tab.Evaluate(ctx, fmt.Sprintf(`() => {
  document.getElementById("big").textContent = "";
  const t = document.createElement("table");
  t.id = "huge";
  t.innerHTML = "<tr><td>a</td><td>b</td><td>c</td><td>d</td></tr>".repeat(%d);
  document.body.append(t);
}`, rows))
	require.NoError(t, err)
	_, err = tab.Table(ctx, Locator{Selector: "#huge"})
	require.ErrorIs(t, err, errcode.LimitExceeded)
	_, err = tab.Texts(ctx, Locator{Selector: "#huge td"})
	require.ErrorIs(t, err, errcode.LimitExceeded)
	texts, err := tab.Texts(ctx, Locator{Selector: "#huge tr:first-child td"})
	require.NoError(t, err)
	assert.Equal(t, "a b c d", strings.Join(texts, " "))
	// A target with its own nth reads that one match only, however many
	// there are to count.
	for nth, want := range map[int][]string{5: {"b"}, -1: {"d"}, 4 * rows: {}} {
		texts, err = tab.Texts(ctx, Locator{Selector: "#huge td", Nth: ptr(nth)})
		require.NoError(t, err, "nth %d", nth)
		assert.Equal(t, want, texts, "nth %d", nth)
	}
}

// axCellNames lists, in tree order, the names Chromium's accessibility
// tree gives the cells of the table or grid named table.
func axCellNames(t *testing.T, tab *Tab, table string) []string {
	t.Helper()
	r, err := tab.Client().Accessibility.GetFullAXTree(tctx(t, 10*time.Second), accessibility.NewGetFullAXTreeArgs())
	require.NoError(t, err)
	byID := map[accessibility.AXNodeID]accessibility.AXNode{}
	for _, n := range r.Nodes {
		byID[n.NodeID] = n
	}
	str := func(v *accessibility.AXValue) string {
		var s string
		if v != nil {
			_ = json.Unmarshal(v.Value, &s)
		}
		return s
	}
	var out []string
	var walk func(id accessibility.AXNodeID, in string)
	walk = func(id accessibility.AXNodeID, in string) {
		n := byID[id]
		role := str(n.Role)
		switch {
		case n.Ignored:
		case role == "table" || role == "grid" || role == "treegrid":
			in = str(n.Name)
		case in == table && (role == "cell" || role == "gridcell" || role == "columnheader" || role == "rowheader"):
			out = append(out, str(n.Name))
		}
		for _, c := range n.ChildIDs {
			walk(c, in)
		}
	}
	walk(r.Nodes[0].NodeID, "")
	return out
}

// The cells table reads are the cells, and the names, of Chromium's
// accessibility tree.
func TestTableNamesAreTheTreesNames(t *testing.T) {
	tab := newTab(t, serve("/tables", tablesPage))
	ctx := tctx(t, 20*time.Second)
	for name, role := range map[string]string{"Orders": "table", "People": "grid", "Edge": "table"} {
		tb, err := tab.Table(ctx, Locator{Role: role, Name: name})
		require.NoError(t, err)
		cells := slices.Clone(tb.Headers)
		for _, r := range tb.Rows {
			cells = append(cells, r...)
		}
		assert.Equal(t, axCellNames(t, tab, name), cells, name)
	}
}

// TestBulkReadCountsCharactersAsThePageDoes: what earlier frames read is
// charged against MaxReadChars in UTF-16 units, the page's own count,
// not in bytes.
func TestBulkReadCountsCharactersAsThePageDoes(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "日本": 2, "😀": 2, "a😀é": 4} {
		if got := utf16Len(s); got != want {
			t.Errorf("utf16Len(%q) = %d, want %d", s, got, want)
		}
	}
}

// Over frames, a bulk read lists the main frame's matches then each
// frame's, and a target's nth counts over all of them, as Count does.
func TestBulkReadNthOverFrames(t *testing.T) {
	inner := serve("/bulk-inner", `<!doctype html><ul><li>three</li><li>four</li></ul>`)
	tab := newTab(t, serve("/bulk-outer", `<!doctype html><ul><li>one</li><li>two</li></ul><iframe src="`+inner+`"></iframe>`))
	ctx := tctx(t, 20*time.Second)
	require.Eventually(t, func() bool {
		n, err := tab.Count(ctx, Locator{Selector: "li"})
		return err == nil && n == 4
	}, 10*time.Second, 50*time.Millisecond, "the frame's items are counted")
	texts, err := tab.Texts(ctx, Locator{Selector: "li"})
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two", "three", "four"}, texts)
	for nth, want := range map[int][]string{0: {"one"}, 2: {"three"}, -1: {"four"}, -3: {"two"}, 4: {}} {
		texts, err = tab.Texts(ctx, Locator{Selector: "li", Nth: ptr(nth)})
		require.NoError(t, err, "nth %d", nth)
		assert.Equal(t, want, texts, "nth %d", nth)
	}
}
