package cdp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// comboPage imitates the markup and behaviour of the custom dropdowns of
// common component libraries: react-select (the combobox is an input that
// is emptied once a choice is made; the choice shows in a sibling), its
// async variant (options come only after typing), Select2 (a visually
// hidden native select, a combobox span after it, a popup with a search
// box at the end of the body), Choices.js (a hidden select inside a
// combobox div, a search box in its popup), a plain listbox, and one that
// never registers a pick.
const comboPage = `<!doctype html><title>combos</title>
<style>
.menu { border: 1px solid #999; background: white; }
.menu [role=option] { padding: 4px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.rs-control { display: flex; border: 1px solid #999; width: 240px; }
</style>
<p><label for=flavour-input>Flavour</label></p>
<div class=rs id=flavour><div class=rs-control><div class=rs-values><div class=rs-placeholder>Select...</div>
<div class=rs-input-wrap><input id=flavour-input role=combobox aria-expanded=false aria-autocomplete=list autocomplete=off></div></div><div>▾</div></div>
<span class=sr aria-live=polite></span></div>

<p><label for=author-input>Author</label></p>
<div class=rs id=author data-async=1><div class=rs-control><div class=rs-values><div class=rs-placeholder>Type to search</div>
<div class=rs-input-wrap><input id=author-input role=combobox aria-expanded=false aria-autocomplete=list autocomplete=off></div></div></div>
<span class=sr aria-live=polite></span></div>

<p><label for=city>City</label>
<select id=city class=sr><option value=""></option><option value=par>Paris</option><option value=ber>Berlin</option><option value=rom>Rome</option></select><span class=s2>
<span class=s2-sel role=combobox aria-haspopup=true aria-expanded=false tabindex=0 aria-labelledby=s2-rendered style="display:inline-block;width:200px;border:1px solid #999">
<span id=s2-rendered role=textbox aria-readonly=true>Pick a city</span></span></span></p>

<p><label for=size>Size</label></p>
<div class=choices id=size-widget role=combobox aria-expanded=false tabindex=0 style="width:200px;border:1px solid #999">
<div><select id=size hidden><option value="">Choose</option><option>Small</option><option>Medium</option><option>Large</option></select>
<div class=single><div class=item>Choose a size</div></div></div>
<div class=dropdown hidden><input type=search class=ch-search aria-label="Search sizes"><div role=listbox class=menu>
<div role=option>Small</div><div role=option>Medium</div><div role=option>Large</div></div></div></div>

<ul role=listbox aria-label=Colour id=colours class=menu>
<li role=option aria-selected=false>Red</li><li role=option aria-selected=false>Green</li></ul>

<p><label for=stuck-input>Stuck</label></p>
<div class=rs id=stuck data-stuck=1><div class=rs-control><div class=rs-values><div class=rs-placeholder>Select...</div>
<div class=rs-input-wrap><input id=stuck-input role=combobox aria-expanded=false></div></div></div></div>
<p><label>Browser <input list=browsers></label><datalist id=browsers><option value=Firefox><option value=chrome label="Google Chrome"></datalist></p>
<div style="height:600px"></div>
<script>
const flavours = ["Chocolate", "Strawberry", "Vanilla", "Salted caramel"];
const authors = ["Ada Lovelace", "Alan Turing", "Grace Hopper"];
for (const rs of document.querySelectorAll(".rs")) {
  const input = rs.querySelector("input"), values = rs.querySelector(".rs-values");
  const live = rs.querySelector("[aria-live]");
  let menu = null;
  const close = () => { if (menu) menu.remove(); menu = null; input.setAttribute("aria-expanded", "false"); };
  const render = () => {
    if (!menu) {
      menu = document.createElement("div");
      menu.className = "menu"; menu.setAttribute("role", "listbox"); menu.id = rs.id + "-listbox";
      rs.appendChild(menu);
      input.setAttribute("aria-controls", menu.id); input.setAttribute("aria-expanded", "true");
    }
    const q = input.value.toLowerCase();
    const all = rs.dataset.async ? (q.length >= 2 ? authors : []) : flavours;
    menu.innerHTML = "";
    for (const f of all.filter((f) => f.toLowerCase().includes(q))) {
      const o = document.createElement("div");
      o.setAttribute("role", "option"); o.textContent = f;
      o.addEventListener("click", () => {
        if (rs.dataset.stuck) return;
        values.querySelector(".rs-placeholder, .rs-single").outerHTML = '<div class=rs-single></div>';
        values.querySelector(".rs-single").textContent = f;
        if (live) live.textContent = "option " + f + ", selected.";
        input.value = ""; close();
      });
      menu.appendChild(o);
    }
  };
  rs.querySelector(".rs-control").addEventListener("mousedown", (e) => { if (e.target !== input) e.preventDefault(); input.focus(); menu ? close() : render(); });
  input.addEventListener("input", () => rs.dataset.async ? setTimeout(render, 150) : render());
}

const city = document.getElementById("city"), sel = document.querySelector(".s2-sel");
sel.addEventListener("click", () => {
  if (document.querySelector(".s2-drop")) return;
  const r = sel.getBoundingClientRect();
  const drop = document.createElement("span");
  drop.className = "s2-drop menu";
  drop.style.cssText = "position:absolute;left:" + r.left + "px;top:" + (r.bottom + scrollY) + "px;width:200px";
  drop.innerHTML = '<input class=s2-search type=search role=searchbox aria-controls=s2-results><ul id=s2-results role=listbox></ul>';
  document.body.appendChild(drop);
  sel.setAttribute("aria-expanded", "true");
  const search = drop.querySelector("input"), list = drop.querySelector("ul");
  const fill = () => {
    list.innerHTML = "";
    for (const o of city.options) {
      if (!o.value || !o.text.toLowerCase().includes(search.value.toLowerCase())) continue;
      const li = document.createElement("li");
      li.setAttribute("role", "option"); li.textContent = o.text;
      li.addEventListener("mouseup", () => {
        city.value = o.value; city.dispatchEvent(new Event("change"));
        document.getElementById("s2-rendered").textContent = o.text;
        drop.remove(); sel.setAttribute("aria-expanded", "false");
      });
      list.appendChild(li);
    }
  };
  fill(); search.addEventListener("input", fill); search.focus();
});

const size = document.getElementById("size-widget"), dropdown = size.querySelector(".dropdown");
size.addEventListener("click", (e) => {
  if (dropdown.contains(e.target)) return;
  dropdown.hidden = false; size.setAttribute("aria-expanded", "true"); dropdown.querySelector("input").focus();
});
for (const o of size.querySelectorAll("[role=option]")) o.addEventListener("click", () => {
  size.querySelector(".item").textContent = o.textContent;
  document.getElementById("size").value = o.textContent;
  dropdown.hidden = true; size.setAttribute("aria-expanded", "false");
});

for (const o of document.querySelectorAll("#colours [role=option]")) o.addEventListener("click", () => {
  for (const p of document.querySelectorAll("#colours [role=option]")) p.setAttribute("aria-selected", String(p === o));
});
</script>`

func TestSelectCustomComboboxes(t *testing.T) {
	tab := newTab(t, serve("/combos", comboPage))
	ctx := tctx(t, 30*time.Second)
	state := func(js string) string { return evalJS(t, ctx, tab, js) }
	// react-select: the input is emptied once the choice is made; what is
	// read back is the single value shown beside it.
	shown, err := tab.Select(ctx, Locator{Label: "Flavour"}, "Vanilla", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Vanilla", shown)
	require.JSONEq(t, `["", "Vanilla"]`, state(`() => [document.getElementById("flavour-input").value, document.querySelector("#flavour .rs-single").textContent]`))
	shown, err = tab.Select(ctx, Locator{Label: "Flavour"}, "salted", FormOptions{}) // by part of its text
	require.NoError(t, err)
	require.Equal(t, "Salted caramel", shown)

	// Async options show only once the filter holds text: it is typed.
	shown, err = tab.Select(ctx, Locator{Label: "Author"}, "Grace Hopper", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Grace Hopper", shown)

	// Select2: the label names the hidden select; its widget is driven.
	shown, err = tab.Select(ctx, Locator{Label: "City"}, "Berlin", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Berlin", shown)
	require.Equal(t, `"ber"`, state(`() => document.getElementById("city").value`))

	// Choices.js: the select is hidden inside the widget.
	shown, err = tab.Select(ctx, Locator{Label: "Size"}, "Medium", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Medium", shown)
	el, err := tab.Resolve(ctx, Locator{Label: "Size"})
	require.NoError(t, err)
	require.Equal(t, "size-widget", el.Element.ID, "the hidden select resolves to its widget")

	// A listbox shows its selected options.
	shown, err = tab.Select(ctx, Locator{Role: "listbox", Name: "Colour"}, "Green", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Green", shown)

	// With parts, the value read back is still what the widget shows, not
	// its emptied filter input.
	shown, err = tab.Select(ctx, Locator{Label: "Flavour"}, "Chocolate", FormOptions{Parts: map[string]string{"option": "[role=option]"}})
	require.NoError(t, err)
	require.Equal(t, "Chocolate", shown)

	// A pick the widget ignores is not committed; an option that never
	// shows is no_option at the deadline.
	_, err = tab.Select(ctx, Locator{Label: "Stuck"}, "Vanilla", FormOptions{})
	require.ErrorIs(t, err, errcode.NotCommitted)
	_, err = tab.Select(tctx(t, 800*time.Millisecond), Locator{Label: "Author"}, "Nobody Atall", FormOptions{})
	require.ErrorIs(t, err, errcode.NoOption)

	// A datalist's suggestions are the browser's own: the choice is typed.
	shown, err = tab.Select(ctx, Locator{Label: "Browser"}, "Google Chrome", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "chrome", shown)
	shown, err = tab.Select(ctx, Locator{Label: "Browser"}, "Firefox", FormOptions{})
	require.NoError(t, err)
	require.Equal(t, "Firefox", shown)

	// A dry run opens nothing.
	_, err = tab.Select(ctx, Locator{Label: "City"}, "Rome", FormOptions{DryRun: true})
	require.NoError(t, err)
	require.JSONEq(t, `["ber", false]`, state(`() => [document.getElementById("city").value, !!document.querySelector(".s2-drop")]`))
}
