package cdp

import (
	"context"
	"slices"
	"sync"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/runtime"
)

// The quick way to a {role, name} target: find in the page where the name
// could come from, and ask the tree about those nodes and their ancestors
// only, rather than walk the whole tree (see ax.go).

// axCandidatesFn finds, in the isolated world, where the accessible name
// want could come from: the elements whose label-giving attributes or
// labels hold it, and the deepest elements whose text holds it (by their
// text). Which elements that names, and what they are named, is the tree's
// answer: axFast asks it for each of these and its ancestors (a name from
// content belongs to an ancestor of the text; a link around an image is
// named by the image's alt). Text is compared without any white space,
// since the browser puts spaces between blocks that the DOM's text lacks,
// and also as rendered (innerText), since a hidden part of an element's
// text is no part of its name. Text a style sheet generates (::before,
// ::after) counts for the elements of its rule. Open shadow roots are
// searched too, and text slotted into a closed one leads the tree there.
// It is a superset filter only; the tree decides. It stops at limit
// nodes, and then the list may miss some: axFast then leaves the lookup
// to the whole tree. Names it cannot see: a custom element's own
// ElementInternals label, text inside a closed shadow root, and style
// sheets of another origin.
const axCandidatesFn = `function (want, limit) {
  const bare = (s) => String(s == null ? "" : s).replace(/\s+/g, "").toLowerCase();
  const w = bare(want);
  const out = new Set();
  const has = (s) => s != null && bare(s).includes(w);
  // Characters of w in order: a cheap test before innerText, which lays
  // the element out.
  const spread = (s) => { let i = 0; for (let j = 0; j < s.length && i < w.length; j++) if (s[j] === w[i]) i++; return i === w.length; };
  // A name from content takes, for each embedded control, its value, for
  // an image its alt, for a part with aria-label that, and leaves out
  // aria-hidden parts: text that textContent does not show as such. flat
  // is that text, memoised. It matters only for the elements holding a
  // part whose text (own) could make up some of want, or whose removal
  // joins the text around it (embeds: those parts and their ancestors,
  // marked once); elsewhere flat is textContent, which costs nothing more.
  const EMB = "input,select,textarea,img[alt],area[alt],[aria-label],[aria-valuetext],[aria-valuenow],[aria-hidden=true],[role=listbox],[role=combobox],[role=textbox],[role=searchbox]";
  const RANGE = /^(slider|spinbutton|progressbar|scrollbar|meter)$/;
  const valueOf = (el) => {
    const role = el.getAttribute("role") || "";
    if (RANGE.test(role)) return el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow") || "";
    if (el.tagName === "SELECT") return Array.from(el.selectedOptions || [], (o) => o.textContent).join(" ");
    if (role === "listbox") return Array.from(el.querySelectorAll("[aria-selected=true]"), (o) => o.textContent).join(" ");
    if (el.tagName === "INPUT" && /^(checkbox|radio|button|submit|reset|image|file|hidden)$/.test(el.type)) return null;
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") return el.getAttribute("aria-valuetext") || el.value || "";
    if (role === "combobox" || role === "textbox" || role === "searchbox") return el.value != null ? String(el.value) : el.textContent;
    return null;
  };
  // own is what flat puts for the element itself, or null to go on into
  // its children.
  const own = (el) => {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return "";
    const v = valueOf(el);
    if (v != null) return v;
    if (el.getAttribute("aria-label")) return el.getAttribute("aria-label");
    if (el.tagName === "IMG" || el.tagName === "AREA") return el.getAttribute("alt") || "";
    return null;
  };
  // overlaps reports whether text v could be part of an occurrence of w:
  // it holds w, w holds it, or they meet end to start.
  const overlaps = (v) => {
    if (!w) return false;
    if (v.includes(w) || w.includes(v)) return true;
    for (let k = 1; k < Math.min(v.length, w.length); k++) {
      if (v.endsWith(w.slice(0, k)) || w.endsWith(v.slice(0, k))) return true;
    }
    return false;
  };
  const embeds = new Set();
  const memo = new Map();
  const flat = (n) => {
    if (n.nodeType === 3) return n.data;
    if (n.nodeType !== 1) return "";
    if (!embeds.has(n)) return n.textContent;
    if (memo.has(n)) return memo.get(n);
    let s = own(n);
    if (s == null) {
      s = "";
      for (let c = n.firstChild; c; c = c.nextSibling) s += " " + flat(c);
    }
    memo.set(n, s);
    return s;
  };
  const holds = (el) => {
    const t = bare(el.textContent);
    return t.includes(w) || (spread(t) && el.nodeType === 1 && typeof el.innerText === "string" && bare(el.innerText).includes(w)) ||
      (embeds.has(el) && bare(flat(el)).includes(w));
  };
  // seed adds an element whose name, or an ancestor's in the tree, could
  // hold want. A text holder is seeded by its first rendered text node:
  // the tree's ancestors of that text run through the slot it is shown in,
  // into shadow roots (closed ones too) that the element's own ancestors
  // skip.
  const rendered = (t) => { const r = document.createRange(); r.selectNodeContents(t); return r.getClientRects().length > 0; };
  const seed = (el, text) => {
    if (text) {
      for (let c = el.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3 && c.data.trim() && rendered(c)) { out.add(c); return; }
      }
    }
    out.add(el);
  };
  const roots = [document];
  const all = document.querySelectorAll("*");
  for (let i = 0; i < all.length && roots.length < 1000; i++) {
    const r = all[i].shadowRoot;
    if (r) { roots.push(r); for (const e of r.querySelectorAll("*")) if (e.shadowRoot) roots.push(e.shadowRoot); }
  }
  const attrs = "[aria-label],[title],[alt],[placeholder],[aria-labelledby],[aria-labeledby],[aria-valuetext],[value],input[type=submit],input[type=reset],input[type=button]";
  // One walk of each root finds both the elements attrs names and the
  // parts flat replaces (a second selector walk costs as much again).
  const found = roots.map((root) => root.querySelectorAll(attrs + "," + EMB));
  for (const els of found) {
    for (const e of els) {
      if (!e.matches(EMB)) continue;
      if ((e.tagName === "INPUT" || e.tagName === "TEXTAREA") && !e.value && !e.hasAttribute("aria-label") && !e.hasAttribute("aria-hidden") && !e.hasAttribute("role")) continue; // adds nothing
      const r = own(e);
      if (r == null || !(bare(r) ? overlaps(bare(r)) : bare(e.textContent) !== "")) continue;
      for (let el = e; el && !embeds.has(el); el = el.parentElement || (el.parentNode && el.parentNode.host) || null) embeds.add(el);
    }
  }
  for (const [ri, root] of roots.entries()) {
    for (const el of found[ri]) {
      if (!el.matches(attrs)) continue;
      if (has(el.getAttribute("aria-label")) || has(el.getAttribute("title")) || has(el.getAttribute("alt")) ||
          has(el.getAttribute("placeholder")) || has(el.getAttribute("aria-valuetext")) || has(el.getAttribute("value")) ||
          (el.tagName === "INPUT" && has(el.value))) { seed(el); continue; }
      const ids = el.getAttribute("aria-labelledby") || el.getAttribute("aria-labeledby"); // the browser reads both spellings
      // Labels a script set as elements (ariaLabelledByElements) leave
      // the attribute empty.
      const byEl = ids ? [] : Array.from(el.ariaLabelledByElements || []);
      const labels = ids ? ids.split(/\s+/).map((id) => (el.getRootNode().getElementById ? el.getRootNode() : document).getElementById(id) || document.getElementById(id)) : byEl;
      if (labels.length && has(labels.map((l) => l ? l.textContent + " " + flat(l) : "").join(" "))) seed(el);
    }
    // Text a style sheet puts before or after an element is part of its
    // name: the elements of such rules whose content could hold want.
    const generated = (rules) => {
      for (const rule of rules || []) {
        if (rule.cssRules && !rule.style) { generated(rule.cssRules); continue; } // @media, @supports, @layer
        const c = rule.style && rule.style.content;
        if (!c || c === "none" || c === "normal" || !/:(before|after|marker)/.test(rule.selectorText || "")) continue;
        const byAttr = c.includes("attr(");
        if (!byAttr && !has(c)) continue;
        let els = [];
        try { els = root.querySelectorAll(rule.selectorText.replace(/::?(before|after|marker)/g, "") || "*"); } catch { continue; }
        for (const el of els) if (!byAttr || Array.from(el.attributes).some((a) => has(a.value))) seed(el);
      }
    };
    for (const sheet of [...(root.styleSheets || []), ...(root.adoptedStyleSheets || [])]) {
      try { generated(sheet.cssRules); } catch { /* another origin's sheet */ }
    }
    for (const l of root.querySelectorAll("label, legend, caption, figcaption")) {
      if (has(l.textContent) || (embeds.has(l) && has(flat(l)))) { if (l.control) out.add(l.control); seed(l); }
    }
    // Deepest text holders, found top-down.
    const stack = [root];
    while (stack.length && out.size < limit) {
      const n = stack.pop();
      let deeper = false;
      for (const c of n.children) {
        if (holds(c)) { deeper = true; stack.push(c); }
      }
      if (!deeper && n.nodeType === 1) { seed(n, true); if (n.tagName === "LABEL" && n.control) out.add(n.control); }
    }
    if (out.size >= limit) break;
  }
  return Array.from(out).slice(0, limit);
}`

// axFastLimit is how many likely nodes axFast asks the tree about before
// it leaves the lookup to the whole tree: each costs a round trip, made
// side by side, so a few dozen cost about one.
const axFastLimit = 64

// axFast asks the tree for the nodes axCandidatesFn finds and all their
// ancestors, each named and given its role by the browser, and returns
// those of the best tier that have one of roles, as objects of the world.
// None means the whole tree has to be asked.
func (fm *forms) axFast(ctx context.Context, c *devtools.Client, uid string, world int, group string, roles []string, want string, exact bool) ([]runtime.RemoteObjectID, error) {
	args := []runtime.CallArgument{{Value: mustJSON(want)}, {Value: mustJSON(axFastLimit)}}
	r, err := c.Runtime.CallFunctionOn(ctx, runtime.NewCallFunctionOnArgs(axCandidatesFn).SetUniqueContextID(uid).
		SetArguments(args).SetObjectGroup(group))
	if err != nil {
		if contextGone(err) {
			return nil, nil
		}
		return nil, fm.p.fail(err)
	}
	if r.ExceptionDetails != nil || r.Result.ObjectID == nil {
		return nil, nil
	}
	seeds, err := fm.nodeObjects(ctx, c, *r.Result.ObjectID)
	if err != nil {
		return nil, err
	}
	if len(seeds) >= axFastLimit {
		// Cut at the limit: another element of the name may be past it, and
		// answering from the ones seen would pick one of several.
		return nil, nil
	}
	chains := make([][]accessibility.AXNode, len(seeds))
	calls := make([]func() error, len(seeds))
	for i, o := range seeds {
		calls[i] = func() error {
			// With its relatives, a node comes with its ancestors (and its
			// children); getAXNodeAndAncestors would need the domain
			// enabled, which keeps the tree up to date on every change.
			a, err := c.Accessibility.GetPartialAXTree(ctx, accessibility.NewGetPartialAXTreeArgs().SetObjectID(o).SetFetchRelatives(true))
			if err != nil {
				if protocolError(err) != nil {
					return nil // a node gone meanwhile: no answer from it
				}
				return err
			}
			chains[i] = a.Nodes
			return nil
		}
	}
	if err := all(calls); err != nil {
		return nil, fm.p.fail(err)
	}
	var cands []axNode
	seen := map[dom.BackendNodeID]bool{}
	var rows []int
	for _, chain := range chains {
		for i := range chain {
			n := &chain[i]
			if n.Ignored || n.BackendDOMNodeID == nil || seen[*n.BackendDOMNodeID] {
				continue
			}
			seen[*n.BackendDOMNodeID] = true
			an := nodeOf(n)
			if axSkip[an.role] || !slices.Contains(roles, an.role) {
				continue
			}
			if isRow(an.role) && an.name == "" {
				rows = append(rows, len(cands))
			}
			cands = append(cands, an)
		}
	}
	nameRows(ctx, c, cands, rows)
	best, _ := axMatch(cands, want, exact, true)
	return fm.adoptables(ctx, c, world, group, best)
}

// nameRows names the rows cands[at] by their cells (see rowNames), which
// a node's ancestors do not include.
func nameRows(ctx context.Context, c *devtools.Client, cands []axNode, at []int) {
	var wg sync.WaitGroup
	for _, i := range at {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := c.Accessibility.GetPartialAXTree(ctx, accessibility.NewGetPartialAXTreeArgs().SetBackendNodeID(cands[i].backend).SetFetchRelatives(true))
			if err != nil {
				return
			}
			for j := range p.Nodes {
				if n := &p.Nodes[j]; n.BackendDOMNodeID != nil && *n.BackendDOMNodeID == cands[i].backend {
					if name, ok := rowNames(p.Nodes)[n.NodeID]; ok {
						cands[i].name = name
					}
					return
				}
			}
		}()
	}
	wg.Wait()
}
