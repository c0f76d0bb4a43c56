package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/errcode"
)

// Roles and names as the browser computes them. Chromium keeps, for screen
// readers, every element's role and accessible name (the full accname
// algorithm: aria-labelledby chains, embedded control values, generated
// content, hidden subtrees, title fallbacks) across open and closed shadow
// roots, and page code cannot change how it is computed. {role, name} and
// {label} targets are found there (Accessibility.queryAXTree), then handed
// to the isolated world, which checks and keeps them like any other match.

// axNode is one candidate from the accessibility tree.
type axNode struct {
	backend dom.BackendNodeID
	role    string
	name    string
}

// axTarget reports whether the accessibility tree resolves target.
func axTarget(loc Locator) bool {
	return loc.Ref == "" && (loc.Role != "" || loc.Label != "")
}

// treeNodes asks frame fr's tree ("" for the main frame's) for its nodes
// of roles. Each frame's tree is its own: the main frame's does not reach
// into frames.
func (fm *forms) treeNodes(ctx context.Context, c *devtools.Client, fr string, roles []string) ([]axNode, error) {
	if fr != "" {
		return fm.frameAX(ctx, c, fr, roles)
	}
	doc, err := c.DOM.GetDocument(ctx, dom.NewGetDocumentArgs().SetDepth(0))
	if err != nil {
		return nil, fm.p.fail(err)
	}
	return fm.queryAX(ctx, c, doc.Root.BackendNodeID, roles)
}

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
      if (ids && has(ids.split(/\s+/).map((id) => { const l = (el.getRootNode().getElementById ? el.getRootNode() : document).getElementById(id) || document.getElementById(id); return l ? l.textContent + " " + flat(l) : ""; }).join(" "))) seed(el);
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
	errs := make([]error, len(seeds))
	var wg sync.WaitGroup
	for i, o := range seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// With its relatives, a node comes with its ancestors (and its
			// children); getAXNodeAndAncestors would need the domain
			// enabled, which keeps the tree up to date on every change.
			a, err := c.Accessibility.GetPartialAXTree(ctx, accessibility.NewGetPartialAXTreeArgs().SetObjectID(o).SetFetchRelatives(true))
			if err != nil {
				errs[i] = err
				return
			}
			chains[i] = a.Nodes
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && protocolError(err) == nil {
			return nil, fm.p.fail(err) // a node gone meanwhile is a protocol error, and no answer
		}
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

// formsElementsShortWrapper is formsElementsWrapper for a document that
// already holds the runtime; it answers no_runtime otherwise.
const formsElementsShortWrapper = `function (hash, name, target, ...els) {
  if (!globalThis.__tqForms || globalThis.__tqFormsHash !== hash) return { ok: false, code: "no_runtime" };
  return globalThis.__tqForms[name](els, target);
}`

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// queryAX asks the tree for each role at once and returns the nodes that
// can be targets, in the tree's order for each role.
func (fm *forms) queryAX(ctx context.Context, c *devtools.Client, root dom.BackendNodeID, roles []string) ([]axNode, error) {
	var qs []*accessibility.QueryAXTreeArgs
	for _, role := range withCells(roles) {
		qs = append(qs, accessibility.NewQueryAXTreeArgs().SetBackendNodeID(root).SetRole(role))
	}
	return fm.queryMany(ctx, c, qs, roles)
}

func isRow(role string) bool { return role == "row" || role == "LayoutTableRow" }

// withCells adds to roles the roles of a row's cells when roles hold
// "row": rowNames needs them.
func withCells(roles []string) []string {
	if !slices.ContainsFunc(roles, isRow) {
		return roles
	}
	out := slices.Clone(roles)
	for _, r := range cellRoles {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// queryMany makes the tree queries side by side and returns the nodes of
// roles (any role, when nil) they found, in the queries' order.
func (fm *forms) queryMany(ctx context.Context, c *devtools.Client, qs []*accessibility.QueryAXTreeArgs, roles []string) ([]axNode, error) {
	results := make([][]accessibility.AXNode, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Accessibility.QueryAXTree(ctx, q)
			if err != nil {
				errs[i] = err
				return
			}
			results[i] = r.Nodes
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fm.p.fail(err)
		}
	}
	var all []accessibility.AXNode
	for _, rs := range results {
		all = append(all, rs...)
	}
	return dedupeNodes(axNodes(all, roles)), nil
}

// axNodes keeps the nodes that can be targets, of roles when roles is
// not nil.
func axNodes(nodes []accessibility.AXNode, roles []string) []axNode {
	rows := rowNames(nodes)
	var out []axNode
	for i := range nodes {
		n := &nodes[i]
		if n.Ignored || n.BackendDOMNodeID == nil {
			continue
		}
		an := nodeOf(n)
		if name, ok := rows[n.NodeID]; ok {
			an.name = name
		}
		if axSkip[an.role] || (roles != nil && !slices.Contains(roles, an.role)) {
			continue
		}
		out = append(out, an)
	}
	return out
}

func nodeOf(n *accessibility.AXNode) axNode {
	an := axNode{role: axString(n.Role), name: norm(axString(n.Name))}
	if n.BackendDOMNodeID != nil {
		an.backend = *n.BackendDOMNodeID
	}
	return an
}

// cellRoles are the roles of a row's cells.
var cellRoles = []string{"cell", "gridcell", "columnheader", "rowheader", "LayoutTableCell"}

// rowNames names the rows among nodes that the tree leaves unnamed.
// Chromium gives a row no name from its content, where WAI-ARIA (and
// Playwright) name a row by its cells; so a row's name is its cells'
// names as the tree gives them, joined by spaces, when nodes hold them.
func rowNames(nodes []accessibility.AXNode) map[accessibility.AXNodeID]string {
	var rows map[accessibility.AXNodeID][]string
	for i := range nodes {
		if isRow(axString(nodes[i].Role)) && axString(nodes[i].Name) == "" {
			if rows == nil {
				rows = map[accessibility.AXNodeID][]string{}
			}
			rows[nodes[i].NodeID] = []string{}
		}
	}
	if rows == nil {
		return nil
	}
	for i := range nodes {
		n := &nodes[i]
		if n.ParentID == nil || !slices.Contains(cellRoles, axString(n.Role)) {
			continue
		}
		if cells, ok := rows[*n.ParentID]; ok {
			if name := norm(axString(n.Name)); name != "" {
				rows[*n.ParentID] = append(cells, name)
			}
		}
	}
	out := make(map[accessibility.AXNodeID]string, len(rows))
	for id, cells := range rows {
		out[id] = strings.Join(cells, " ")
	}
	return out
}

// dedupeNodes drops repeats of a node, keeping the first.
func dedupeNodes(nodes []axNode) []axNode {
	out := nodes[:0:0]
	seen := map[dom.BackendNodeID]bool{}
	for _, n := range nodes {
		if !seen[n.backend] {
			seen[n.backend] = true
			out = append(out, n)
		}
	}
	return out
}

// frameAX is queryAX for a frame below the main one. It reads the
// frame's whole tree: Accessibility.queryAXTree waits for a rendering
// update, which an out-of-process frame scrolled out of view does not get
// (it would wait until the frame is shown), while the whole tree is
// served as it stands.
func (fm *forms) frameAX(ctx context.Context, c *devtools.Client, fr string, roles []string) ([]axNode, error) {
	r, err := c.Accessibility.GetFullAXTree(ctx, accessibility.NewGetFullAXTreeArgs().SetFrameID(page.FrameID(fr)))
	if err != nil {
		if protocolError(err) != nil {
			return nil, &LocatorError{Code: errcode.StaleRef, Message: "the frame went away while it was searched; try again"}
		}
		return nil, fm.p.fail(err)
	}
	// Only the root of each document carries its frame; a frame inside
	// this one is in the tree too, and is searched on its own.
	byID := make(map[accessibility.AXNodeID]*accessibility.AXNode, len(r.Nodes))
	for i := range r.Nodes {
		byID[r.Nodes[i].NodeID] = &r.Nodes[i]
	}
	frameOf := map[accessibility.AXNodeID]string{}
	var docOf func(n *accessibility.AXNode, depth int) string
	docOf = func(n *accessibility.AXNode, depth int) string {
		if f, ok := frameOf[n.NodeID]; ok {
			return f
		}
		f := fr
		switch {
		case n.FrameID != nil:
			f = string(*n.FrameID)
		case n.ParentID != nil && depth < 4096:
			if p := byID[*n.ParentID]; p != nil {
				f = docOf(p, depth+1)
			}
		}
		frameOf[n.NodeID] = f
		return f
	}
	rows := rowNames(r.Nodes)
	var out []axNode
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.Ignored || n.BackendDOMNodeID == nil || docOf(n, 0) != fr {
			continue
		}
		if name, ok := rows[n.NodeID]; ok {
			n.Name = &accessibility.AXValue{Value: mustJSON(name)}
		}
		an := nodeOf(n)
		if !axSkip[an.role] && slices.Contains(roles, an.role) {
			out = append(out, an)
		}
	}
	return out, nil
}

func axString(v *accessibility.AXValue) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Value, &s) == nil {
		return s
	}
	return strings.Trim(string(v.Value), `"`)
}

// norm collapses whitespace as accname matching does.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// axMatch picks the best tier of nodes whose name matches want: with exact
// set, names equal to it; otherwise names equal to it ignoring case, else
// names holding it ignoring case. When none matches, near is every node of
// the roles, the closest names first, for the error (see axNotFound).
func axMatch(nodes []axNode, want string, exact, named bool) (best []axNode, near []axNode) {
	if !named {
		return nodes, nil
	}
	w := norm(want)
	lw := strings.ToLower(w)
	var whole, part []axNode
	for _, n := range nodes {
		switch {
		case exact && n.name == w:
			whole = append(whole, n)
		case exact:
		case strings.ToLower(n.name) == lw:
			whole = append(whole, n)
		case lw != "" && strings.Contains(strings.ToLower(n.name), lw):
			part = append(part, n)
		}
	}
	if len(whole) > 0 {
		return whole, nil
	}
	if len(part) > 0 {
		return part, nil
	}
	near = slices.Clone(nodes)
	score := make(map[string]float64, len(near))
	for _, n := range near {
		if _, ok := score[n.name]; !ok {
			score[n.name] = closeness(n.name, w)
		}
	}
	sort.SliceStable(near, func(i, j int) bool { return score[near[i].name] > score[near[j].name] })
	return nil, near
}

// closeness scores how alike a name is to want, from 0 to 1: the Dice
// coefficient of their pairs of letters and digits, ignoring case and
// everything else, so that "Email" is close to "E-mail address" and
// "Phone" is not.
func closeness(name, want string) float64 {
	a, b := letterPairs(name), letterPairs(want)
	if len(a)+len(b) == 0 {
		return 0
	}
	left := map[string]int{}
	for _, p := range b {
		left[p]++
	}
	shared := 0
	for _, p := range a {
		if left[p] > 0 {
			left[p]--
			shared++
		}
	}
	return 2 * float64(shared) / float64(len(a)+len(b))
}

// letterPairs lists the adjacent pairs of s's letters and digits,
// lower-cased; a single letter is a pair of its own.
func letterPairs(s string) []string {
	var rs []rune
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 1 {
		return []string{string(rs)}
	}
	out := make([]string, 0, max(len(rs)-1, 0))
	for i := 1; i < len(rs); i++ {
		out = append(out, string(rs[i-1:i+1]))
	}
	return out
}

// maxNear is how many of the closest names a miss lists: enough to spot
// a typo, few enough to read.
const maxNear = 3

// axNotFound is the miss of loc among near (every node of its roles, the
// closest names first): the names there are when they are few
// (maxNear at most), else how many there were and the few names that come
// close to the one wanted. Only names are shown, never what a field holds.
func axNotFound(loc Locator, near []axNode) error {
	msg, only, them, many := "no element with that role and name", "the only element of that role with a name is",
		"the elements of that role with names are", "%d elements of that role have names"
	switch {
	case loc.Label != "":
		msg, only, them, many = "no field with that label", "the only field with a label is", "the fields with labels are", "%d fields have labels"
	case loc.Name == "":
		msg = "no element with that role"
	}
	var all, cands []Candidate
	want := norm(loc.Label + loc.Name)
	for _, n := range near {
		if n.name == "" {
			continue
		}
		c := Candidate{Tag: n.role, Label: n.name}
		all = append(all, c)
		if len(cands) < maxNear && closeness(n.name, want) > 0 {
			cands = append(cands, c)
		}
	}
	switch named := len(all); {
	case named == 0 || want == "":
	case named <= maxNear:
		// Few enough to name every one: a list says more than a count.
		msg += "; " + plural(named, only, them)
		cands = all
	default:
		msg += "; " + fmt.Sprintf(many, named)
		if len(cands) > 0 {
			msg += plural(len(cands), "; the closest is", "; the closest are")
		}
	}
	return &LocatorError{Code: errcode.NotFound, Target: loc.String(), Message: msg, Candidates: cands}
}

// adoptables gives each node's element as an object of the isolated world.
func (fm *forms) adoptables(ctx context.Context, c *devtools.Client, worldID int, group string, nodes []axNode) ([]runtime.RemoteObjectID, error) {
	objs := make([]runtime.RemoteObjectID, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.DOM.ResolveNode(ctx, dom.NewResolveNodeArgs().SetBackendNodeID(n.backend).
				SetExecutionContextID(runtime.ExecutionContextID(worldID)).SetObjectGroup(group))
			if err != nil {
				errs[i] = err
				return
			}
			if r.Object.ObjectID != nil {
				objs[i] = *r.Object.ObjectID
			}
		}()
	}
	wg.Wait()
	var out []runtime.RemoteObjectID
	for i, err := range errs {
		if err != nil {
			if contextGone(err) || protocolError(err) != nil {
				continue // the node went away meanwhile
			}
			return nil, fm.p.fail(err)
		}
		if objs[i] != "" {
			out = append(out, objs[i])
		}
	}
	return out, nil
}
