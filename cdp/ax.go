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
	an := axNode{role: axString(n.Role), name: normalizeSpace(axString(n.Name))}
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
			if name := normalizeSpace(axString(n.Name)); name != "" {
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

// axMatch picks the best tier of nodes whose name matches want: with exact
// set, names equal to it; otherwise names equal to it ignoring case, else
// names holding it ignoring case. When none matches, near is every node of
// the roles, the closest names first, for the error (see axNotFound).
func axMatch(nodes []axNode, want string, exact, named bool) (best []axNode, near []axNode) {
	if !named {
		return nodes, nil
	}
	w := normalizeSpace(want)
	lw := strings.ToLower(w)
	var whole, part []axNode
	for _, n := range nodes {
		if exact {
			if n.name == w {
				whole = append(whole, n)
			}
			continue
		}
		// Lower-cased once: a page's names can be long, and many.
		switch lower := strings.ToLower(n.name); {
		case lower == lw:
			whole = append(whole, n)
		case lw != "" && strings.Contains(lower, lw):
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
// "Phone" is not. A page's name can be megabytes and is scored on every
// miss, so its pairs are counted as they are read, never kept.
func closeness(name, want string) float64 {
	left := map[letterPair]int{}
	inWant := eachLetterPair(want, func(p letterPair) { left[p]++ })
	shared := 0
	inName := eachLetterPair(name, func(p letterPair) {
		if left[p] > 0 {
			left[p]--
			shared++
		}
	})
	if inName+inWant == 0 {
		return 0
	}
	return 2 * float64(shared) / float64(inName+inWant)
}

// letterPair is two adjacent letters or digits, lower-cased; a single
// letter is a pair of its own, with -1 second.
type letterPair [2]rune

// eachLetterPair calls found with each pair of s's letters and digits, in
// order, and returns how many there were.
func eachLetterPair(s string, found func(letterPair)) int {
	prev, letters := rune(-1), 0
	for _, r := range s {
		if r = unicode.ToLower(r); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue
		}
		if letters++; letters > 1 {
			found(letterPair{prev, r})
		}
		prev = r
	}
	if letters == 1 {
		found(letterPair{prev, -1})
		return 1
	}
	return max(letters-1, 0)
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
	want := normalizeSpace(loc.Label + loc.Name)
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
