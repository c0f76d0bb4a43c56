package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/runtime"
)

// Roles and names as the browser computes them. Chromium keeps, for screen
// readers, every element's role and accessible name (the full accname
// algorithm: aria-labelledby chains, embedded control values, generated
// content, hidden subtrees, title fallbacks) across open and closed shadow
// roots, and page code cannot change how it is computed. {role, name} and
// {label} targets are found there (Accessibility.queryAXTree), then handed
// to the isolated world, which checks and keeps them like any other match.

// axRoles maps a role as scripts write it (WAI-ARIA) to the roles
// Chromium's tree reports for it.
var axRoles = map[string][]string{
	"img":          {"image", "img"},
	"image":        {"image"},
	"textbox":      {"textbox"},
	"presentation": {"none"},
	"none":         {"none"},
	"document":     {"RootWebArea", "document"},
}

// labelRoles are the roles of controls a label can name.
var labelRoles = []string{
	"textbox", "searchbox", "combobox", "checkbox", "radio", "switch", "slider", "spinbutton",
	"listbox", "button", "Date", "DateTime", "InputTime", "ColorWell", "menuitemcheckbox", "menuitemradio",
}

// axSkip are Chromium's internal roles that are never a target.
var axSkip = map[string]bool{"StaticText": true, "InlineTextBox": true, "LineBreak": true}

// axNode is one candidate from the accessibility tree.
type axNode struct {
	backend dom.BackendNodeID
	role    string
	name    string
}

// axTarget reports whether the accessibility tree resolves target.
func axTarget(t Target) bool {
	return t.Ref == "" && (t.Role != "" || t.Label != "")
}

// resolveAX resolves a {role[, name]} or {label} target through the
// accessibility tree of the main frame's document.
func (t *Tab) resolveAX(ctx context.Context, target Target) (*Element, error) {
	uid, origin, err := t.realm(ctx, sdkWorld, "")
	if err != nil {
		return nil, err
	}
	if err := t.checkRealm(ctx, origin); err != nil {
		return nil, err
	}
	t.mu.Lock()
	worldID := t.worldID
	ok := t.worldCtx == uid
	t.mu.Unlock()
	if !ok || worldID == 0 {
		return nil, &TargetError{Code: "stale_ref", Target: target.String(), Message: "the page changed while the target was looked up; try again"}
	}
	doc, err := t.c.DOM.GetDocument(ctx, dom.NewGetDocumentArgs().SetDepth(0))
	if err != nil {
		return nil, t.fail(err)
	}
	roles, want := axQuery(target)
	nodes, err := t.queryAX(ctx, doc.Root.BackendNodeID, roles)
	if err != nil {
		return nil, err
	}
	best, near := axMatch(nodes, want, target.Exact, target.Name != "" || target.Label != "")
	if len(best) == 0 {
		return nil, axNotFound(target, near)
	}
	objs, err := t.adoptables(ctx, worldID, best)
	if err != nil {
		return nil, err
	}
	defer func() {
		go func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
			defer cancel()
			_ = t.c.Runtime.ReleaseObjectGroup(cctx, runtime.NewReleaseObjectGroupArgs(axGroup))
		}()
	}()
	args := []runtime.CallArgument{{Value: mustJSON(formsHash)}, {Value: mustJSON("adopt")}, {Value: mustJSON(target)}}
	for _, o := range objs {
		args = append(args, runtime.CallArgument{ObjectID: &o})
	}
	r, err := t.c.Runtime.CallFunctionOn(ctx, runtime.NewCallFunctionOnArgs(formsElementsWrapper).
		SetExecutionContextID(runtime.ExecutionContextID(worldID)).SetArguments(args).SetReturnByValue(true).SetAwaitPromise(true))
	if err != nil {
		if contextGone(err) {
			return nil, &TargetError{Code: "stale_ref", Target: target.String(), Message: "the page navigated while the target was looked up; try again"}
		}
		return nil, t.fail(err)
	}
	if r.ExceptionDetails != nil {
		return nil, evalErrorOf(r.ExceptionDetails)
	}
	return elementOf(target, r.Result.Value)
}

// axGroup names the objects a lookup holds, released after it.
const axGroup = "tranquil-ax"

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// axQuery is what to ask the tree: the roles, and the name to match.
func axQuery(target Target) (roles []string, name string) {
	if target.Label != "" {
		return labelRoles, target.Label
	}
	role := strings.TrimSpace(target.Role)
	if rs, ok := axRoles[strings.ToLower(role)]; ok {
		return rs, target.Name
	}
	return []string{strings.ToLower(role)}, target.Name
}

// queryAX asks the tree for each role at once and returns the nodes that
// can be targets, in the tree's order for each role.
func (t *Tab) queryAX(ctx context.Context, root dom.BackendNodeID, roles []string) ([]axNode, error) {
	results := make([][]axNode, len(roles))
	errs := make([]error, len(roles))
	var wg sync.WaitGroup
	for i, role := range roles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := t.c.Accessibility.QueryAXTree(ctx, accessibility.NewQueryAXTreeArgs().SetBackendNodeID(root).SetRole(role))
			if err != nil {
				errs[i] = err
				return
			}
			for _, n := range r.Nodes {
				if n.Ignored || n.BackendDOMNodeID == nil {
					continue
				}
				an := axNode{backend: *n.BackendDOMNodeID, role: axString(n.Role), name: norm(axString(n.Name))}
				if axSkip[an.role] {
					continue
				}
				results[i] = append(results[i], an)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, t.fail(err)
		}
	}
	var out []axNode
	seen := map[dom.BackendNodeID]bool{}
	for _, rs := range results {
		for _, n := range rs {
			if !seen[n.backend] {
				seen[n.backend] = true
				out = append(out, n)
			}
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
// names holding it ignoring case. near lists other names of the role, the
// closest first, for the error when nothing matches.
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
	sort.SliceStable(near, func(i, j int) bool { return closeness(near[i].name, lw) > closeness(near[j].name, lw) })
	return nil, near[:min(len(near), 5)]
}

// closeness scores how much of want a name shares: the longest common run
// of characters, ignoring case.
func closeness(name, want string) int {
	a, b := []rune(strings.ToLower(name)), []rune(want)
	best := 0
	prev := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
				best = max(best, cur[j])
			}
		}
		prev = cur
	}
	return best
}

func axNotFound(target Target, near []axNode) error {
	msg := "no element with that role and name"
	if target.Label != "" {
		msg = "no control with that label"
	} else if target.Name == "" {
		msg = "no element with that role"
	}
	var cands []Candidate
	for _, n := range near {
		cands = append(cands, Candidate{Tag: n.role, Label: n.name})
	}
	if len(cands) > 0 {
		msg += "; the closest are"
	}
	return &TargetError{Code: "not_found", Target: target.String(), Message: msg, Candidates: cands}
}

// adoptables gives each node's element as an object of the isolated world.
func (t *Tab) adoptables(ctx context.Context, worldID int, nodes []axNode) ([]runtime.RemoteObjectID, error) {
	nodes = nodes[:min(len(nodes), 64)] // more is ambiguous anyway
	objs := make([]runtime.RemoteObjectID, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := t.c.DOM.ResolveNode(ctx, dom.NewResolveNodeArgs().SetBackendNodeID(n.backend).
				SetExecutionContextID(runtime.ExecutionContextID(worldID)).SetObjectGroup(axGroup))
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
			return nil, t.fail(err)
		}
		if objs[i] != "" {
			out = append(out, objs[i])
		}
	}
	return out, nil
}

// elementOf reads the runtime's answer to adopt.
func elementOf(target Target, raw json.RawMessage) (*Element, error) {
	var res struct {
		OK         bool        `json:"ok"`
		Code       string      `json:"code"`
		Message    string      `json:"message"`
		Candidates []Candidate `json:"candidates"`
		Element
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("cdp: form runtime adopt: %w", err)
	}
	if !res.OK {
		return nil, &TargetError{Code: res.Code, Target: target.String(), Message: res.Message, Candidates: res.Candidates}
	}
	el := res.Element
	return &el, nil
}
