package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	devtools "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/errcode"
)

// Matching: every target, plain or composed, is looked up the same way in
// each frame. A lookup builds sets of elements in the frame's isolated
// world, one step at a time: the scope's matches (Within), the target's
// own matches inside it (from the accessibility tree for {role} and
// {label}, from the DOM otherwise), then the filters (HasText, Has), then
// the nth of an inner part. Resolve picks from the last set, Count counts
// it, so the two always agree.

// Resolve finds the element loc names, in the isolated world. Hidden and
// disabled matches are never picked: they are reported in Skipped, or as
// errcode.Hidden / errcode.Disabled when nothing else matches. More than
// one usable match is errcode.Ambiguous, listing the candidates, unless
// [Locator.Nth] picks one. A native select a component library hid
// behind its own combobox resolves to that combobox. Resolve looks once;
// the actions wait for their target.
//
// The main frame and every frame below it whose document the tab's sites
// allow are searched, same-site and cross-site (out-of-process) frames
// alike; matches in two frames are errcode.Ambiguous, and [Locator.Frame]
// narrows the search to some frames.
func (fm *forms) Resolve(ctx context.Context, loc Locator) (*Element, error) {
	return fm.resolve(ctx, loc, false)
}

// resolve is Resolve; with any, hidden and disabled matches may be
// picked, as the readers do.
func (fm *forms) resolve(ctx context.Context, loc Locator, any bool) (*Element, error) {
	if err := loc.validate(); err != nil {
		return nil, err
	}
	if loc.Ref != "" {
		return fm.resolveIn(ctx, fm.p.frameOfRef(loc.Ref), loc, any)
	}
	frames, skipped := fm.p.searchFrames(loc.Frame)
	frames, loc, err := fm.pinScopes(ctx, frames, loc)
	if err != nil {
		return nil, withSkipped(err, skipped)
	}
	switch {
	case len(frames) == 0:
		if err := fm.p.checkSomeDocument(ctx); err != nil && loc.Frame == "" {
			return nil, err
		}
		return nil, notInFrames(loc, skipped)
	case len(frames) == 1:
		el, err := fm.resolveIn(ctx, frames[0], loc, any)
		return el, withSkipped(err, skipped)
	case loc.nth() != nil:
		return fm.resolveNth(ctx, frames, skipped, loc, any)
	}
	type result struct {
		el  *Element
		err error
	}
	res := make([]result, len(frames))
	var wg sync.WaitGroup
	for i, fr := range frames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			el, err := fm.resolveIn(ctx, fr, loc, any)
			res[i] = result{el, err}
		}()
	}
	wg.Wait()
	var els []*Element
	var best *LocatorError
	rank := map[errcode.Code]int{errcode.NotFound: 1, errcode.Hidden: 2, errcode.Disabled: 2, errcode.Ambiguous: 3}
	for i, r := range res {
		var te *LocatorError
		switch {
		case r.err == nil:
			els = append(els, r.el)
		case errors.As(r.err, &te):
			if best == nil || rank[te.Code] > rank[best.Code] {
				best = te
			} else if te.Code == best.Code && te.Code == errcode.NotFound {
				cp := *best
				cp.Candidates = append(slices.Clip(cp.Candidates), te.Candidates...)
				best = &cp
			}
		case i == 0 && frames[0] == "":
			return nil, r.err // the main frame's own failure: the browser or the page
		}
	}
	switch {
	case len(els) == 1:
		return els[0], nil
	case len(els) > 1:
		cands := make([]Candidate, 0, len(els))
		for _, el := range els {
			cands = append(cands, el.Element)
		}
		return nil, &LocatorError{Code: errcode.Ambiguous, Target: loc.String(), Candidates: cands,
			Message: fmt.Sprintf("%d elements in different frames match; narrow the target (frame: names a frame), or pick one with nth", len(els))}
	case best != nil:
		return nil, withSkipped(best, skipped)
	}
	return nil, withSkipped(res[0].err, skipped)
}

// resolveNth resolves a target with Nth over several frames: the matches
// are counted in each, in order, and the one Nth names is picked where it
// is.
func (fm *forms) resolveNth(ctx context.Context, frames, skipped []string, loc Locator, any bool) (*Element, error) {
	fr, k, err := fm.nthFrame(ctx, frames, loc)
	if err != nil {
		return nil, withSkipped(err, skipped)
	}
	loc.local = &k
	return fm.resolveIn(ctx, fr, loc, any)
}

// nthFrame finds which of frames holds loc's Nth match, counting the
// matches of each frame in order (main frame first), and where in that
// frame it is. Past the last match it is a not_found.
func (fm *forms) nthFrame(ctx context.Context, frames []string, loc Locator) (string, int, error) {
	all := loc
	all.Nth, all.local = nil, nil
	counts := make([]int, len(frames))
	total := 0
	for i, fr := range frames {
		n, err := fm.countIn(ctx, fr, all)
		if err != nil {
			if i == 0 && fr == "" {
				return "", 0, err
			}
			continue // a frame that went or refused meanwhile holds none
		}
		counts[i] = n
		total += n
	}
	k := *loc.Nth
	if k < 0 {
		k += total
	}
	if k >= 0 && k < total {
		for i, fr := range frames {
			if k < counts[i] {
				return fr, k, nil
			}
			k -= counts[i]
		}
	}
	return "", 0, &LocatorError{Code: errcode.NotFound, Target: loc.String(),
		Message: fmt.Sprintf("nth %d is past the %d %s", *loc.Nth, total, plural(total, "element that matches", "elements that match"))}
}

// pinScopes makes the Nth of each within part of loc (and of theirs)
// count over every frame searched, as a target's own Nth does, rather than
// in each frame apart: the frame holding the match it names becomes the
// only one searched, with the Nth counted there. (A has part's Nth counts
// inside each element being filtered, so in its frame.)
func (fm *forms) pinScopes(ctx context.Context, frames []string, loc Locator) ([]string, Locator, error) {
	if loc.Within == nil || len(frames) < 2 {
		return frames, loc, nil
	}
	frames, w, err := fm.pinScopes(ctx, frames, *loc.Within)
	if err == nil && w.Nth != nil && len(frames) > 1 {
		var fr string
		var k int
		if fr, k, err = fm.nthFrame(ctx, frames, w); err == nil {
			frames, w.local = []string{fr}, &k
		}
	}
	var te *LocatorError
	if errors.As(err, &te) && te.Code == errcode.NotFound {
		return nil, loc, scopeMiss("within", loc, err)
	} else if err != nil {
		return nil, loc, err
	}
	loc.Within = &w
	return frames, loc, nil
}

// resolveIn is resolve in one frame.
func (fm *forms) resolveIn(ctx context.Context, fr string, loc Locator, any bool) (*Element, error) {
	el, err := fm.pickIn(ctx, fr, loc, any)
	if err != nil {
		return nil, fm.inFrame(fr, err)
	}
	el.frame = fr
	if fr != "" {
		el.Element.Frame = fm.p.frameOrigin(fr)
		fm.p.noteRef(fr, el.Ref)
	}
	return el, nil
}

// editTarget returns err with its LocatorError replaced by a copy that
// edit changed, when err holds one that keep accepts; errors are shared,
// so they are never changed in place.
func editTarget(err error, keep func(*LocatorError) bool, edit func(*LocatorError)) error {
	var te *LocatorError
	if !errors.As(err, &te) || !keep(te) {
		return err
	}
	cp := *te
	edit(&cp)
	return &cp
}

// named gives a LocatorError made without a description loc's
// description.
func named(err error, desc string) error {
	return editTarget(err, func(te *LocatorError) bool { return te.Target == "" },
		func(te *LocatorError) { te.Target = desc })
}

// inFrame marks the candidates of a subframe's LocatorError with the
// frame's address.
func (fm *forms) inFrame(fr string, err error) error {
	if fr == "" {
		return err
	}
	return editTarget(err, func(te *LocatorError) bool { return len(te.Candidates) > 0 }, func(te *LocatorError) {
		addr := fm.p.frameOrigin(fr)
		te.Candidates = slices.Clone(te.Candidates)
		for i := range te.Candidates {
			te.Candidates[i].Frame = addr
		}
	})
}

// withSkipped adds to a not_found the frames that were not searched
// because the tab's sites do not allow them.
func withSkipped(err error, skipped []string) error {
	if len(skipped) == 0 {
		return err
	}
	return editTarget(err, func(te *LocatorError) bool { return te.Code == errcode.NotFound }, func(te *LocatorError) {
		te.Message += fmt.Sprintf("; frames on sites the script may not act on were not searched: %s", strings.Join(skipped, ", "))
	})
}

// notInFrames is the not_found of a search that had no frame to look in.
func notInFrames(loc Locator, skipped []string) error {
	msg := "no frame to search"
	if loc.Frame != "" {
		msg = fmt.Sprintf("no frame named %q or at an address holding it", loc.Frame)
	}
	return withSkipped(&LocatorError{Code: errcode.NotFound, Target: loc.String(), Message: msg}, skipped)
}

// lookup is one search in one frame's isolated world. Its sets and
// protocol objects are released when it closes.
type lookup struct {
	fm    *forms
	fr    string
	desc  string // the target, described, for errors
	c     *devtools.Client
	uid   string
	world int
	group string   // the object group of its protocol objects
	sets  []string // the runtime's sets it made
	// all is set when every match matters (counting, nth); otherwise the
	// set a lookup picks from holds at most axAdoptLimit of a {role}
	// target's matches.
	all bool
	// dropped is set once the runtime dropped the lookup's sets itself.
	dropped bool
}

// axAdoptLimit is how many of a tree lookup's matches are handed to the
// runtime when only one is wanted: more than one usable is ambiguous
// anyway, and the error says how many matched.
const axAdoptLimit = 64

func (fm *forms) newLookup(ctx context.Context, fr string, loc Locator) (*lookup, error) {
	rm, err := fm.p.world(ctx, fr)
	if err != nil {
		return nil, named(err, loc.String())
	}
	return &lookup{
		fm: fm, fr: fr, desc: loc.String(), c: rm.s.c, uid: rm.uid, world: rm.id,
		group: fmt.Sprintf("tranquil-ax-%d", fm.axGroups.Add(1)),
		all:   loc.nth() != nil,
	}, nil
}

// close drops the lookup's sets and objects without waiting, so that a
// release never delays the caller.
func (lk *lookup) close(ctx context.Context) {
	sets := lk.sets
	if lk.dropped {
		sets = nil
	}
	lk.fm.p.goTask("lookup release", func(gctx context.Context) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		defer context.AfterFunc(gctx, cancel)()
		if cargs, err := callArgs([]any{formsHash, sets}); err == nil && len(sets) > 0 {
			// Straight to the world the sets are in: dropping them runs
			// nothing of the page's, whatever document it shows now.
			_, _ = lk.c.Runtime.CallFunctionOn(cctx, runtime.NewCallFunctionOnArgs(dropSetsFn).SetUniqueContextID(lk.uid).SetArguments(cargs))
		}
		_ = lk.c.Runtime.ReleaseObjectGroup(cctx, runtime.NewReleaseObjectGroupArgs(lk.group))
	})
}

const dropSetsFn = `function (hash, sets) {
  if (globalThis.__tqForms && globalThis.__tqFormsHash === hash) globalThis.__tqForms.dropSets(sets);
}`

// found is a set the runtime keeps: its token and size, and when it is
// empty, why.
type found struct {
	Set string `json:"set"`
	N   int    `json:"n"`
	// Of is, for an nth's set, how many it picked from (in the element
	// holding the most, when counted in each).
	Of int `json:"of"`
	// Near describes, for a filter that kept none of a few elements,
	// those elements.
	Near []Candidate `json:"near"`
	miss error
}

// call runs a runtime method that makes a set.
func (lk *lookup) call(ctx context.Context, method string, args ...any) (found, error) {
	var f found
	if err := lk.fm.formCallIn(ctx, lk.fr, lk.desc, &f, method, args...); err != nil {
		return found{}, err
	}
	lk.sets = append(lk.sets, f.Set)
	return f, nil
}

// match finds the elements loc names inside the elements of scope ("" for
// the whole document). final is set for the set the lookup picks from;
// a scope or a filter's inner set needs every match.
//
// Each level applies, in order, its scope (Within), its own way, its
// filters (HasText, Has) and its Nth; the last level's Nth is the pick's.
// An Nth counts in root: "" counts every match in the frame, as the chain
// locator("p").nth(0).locator("button") does in Playwright; inside a Has
// part, root is the set being filtered, and each of its elements counts
// the part's matches inside it afresh, as Playwright's filter({has})
// evaluates its locator in each element.
func (lk *lookup) match(ctx context.Context, loc Locator, scope, root string, final bool) (found, error) {
	if loc.Within != nil {
		sc, err := lk.match(ctx, *loc.Within, scope, root, false)
		if err != nil || sc.N == 0 {
			return found{miss: scopeMiss("within", loc, sc.miss)}, err
		}
		scope = sc.Set
	}
	filtered := loc.HasText != "" || loc.Has != nil
	f, err := lk.base(ctx, loc, scope, final && !filtered)
	if err != nil || f.N == 0 {
		return f, err
	}
	if filtered {
		has := ""
		if loc.Has != nil {
			h, err := lk.match(ctx, *loc.Has, f.Set, f.Set, false)
			if err != nil || h.N == 0 {
				return found{miss: scopeMiss("has", loc, h.miss)}, err
			}
			has = h.Set
		}
		n := f.N
		f, err = lk.call(ctx, "narrowSet", f.Set, loc.HasText, has)
		if err != nil || f.N == 0 {
			msg := fmt.Sprintf("%d %s the rest of the target but not its filters", n, plural(n, "element matches", "elements match"))
			if len(f.Near) > 0 { // few enough to name
				msg = plural(len(f.Near), "this element matches", "these elements match") + " the rest of the target but not its filters"
			}
			f.miss = &LocatorError{Code: errcode.NotFound, Target: lk.desc, Message: msg, Candidates: f.Near}
			return f, err
		}
	}
	if final || loc.nth() == nil {
		return f, nil // the pick applies the last level's nth
	}
	f, err = lk.call(ctx, "nthSet", f.Set, *loc.nth(), root)
	if err == nil && f.N == 0 {
		msg := fmt.Sprintf("nth %d is past the %d %s", *loc.Nth, f.Of, plural(f.Of, "element that matches", "elements that match"))
		if root != "" {
			msg = fmt.Sprintf("nth %d is past the matches inside each element it is counted in (%d at most)", *loc.Nth, f.Of)
		}
		f.miss = &LocatorError{Code: errcode.NotFound, Target: loc.String(), Message: msg}
	}
	return f, err
}

// scopeMiss is the not_found of a target whose within or has part found
// nothing.
func scopeMiss(part string, loc Locator, miss error) error {
	inner := loc.Within
	if part == "has" {
		inner = loc.Has
	}
	msg := fmt.Sprintf("nothing matches its %s part (%s)", part, inner)
	var te *LocatorError
	if errors.As(miss, &te) && te.Message != "" {
		msg += ": " + te.Message
		return &LocatorError{Code: te.Code, Target: loc.String(), Message: msg, Candidates: te.Candidates}
	}
	return &LocatorError{Code: errcode.NotFound, Target: loc.String(), Message: msg}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// base finds loc's own matches inside scope, before its filters.
func (lk *lookup) base(ctx context.Context, loc Locator, scope string, final bool) (found, error) {
	if axTarget(loc) {
		f, err := lk.ax(ctx, loc, scope, final)
		if err != nil || f.N > 0 || loc.Label == "" {
			return f, err
		}
		// A label that the tree does not give as the control's name (the
		// runtime reads labels its own way).
		g, err := lk.dom(ctx, loc, scope)
		if err == nil && g.N == 0 {
			g.miss = f.miss
		}
		return g, err
	}
	return lk.dom(ctx, loc, scope)
}

// dom finds loc's matches with the runtime's own reading of the DOM.
func (lk *lookup) dom(ctx context.Context, loc Locator, scope string) (found, error) {
	f, err := lk.call(ctx, "findSet", loc.plain(), scope)
	if err == nil && f.N == 0 {
		f.miss = &LocatorError{Code: errcode.NotFound, Target: loc.String(), Message: "no element matches"}
	}
	return f, err
}

// ax finds a {role[, name]} or {label} target's matches in the frame's
// accessibility tree: inside scope, the subtree of each scope element;
// else a quick look at the likely elements, or the whole tree.
func (lk *lookup) ax(ctx context.Context, loc Locator, scope string, final bool) (found, error) {
	roles, want := axQuery(loc)
	named := loc.Name != "" || loc.Label != ""
	var objs []runtime.RemoteObjectID
	var near []axNode
	total := 0
	done := false
	if scope != "" && lk.fr == "" {
		roots, hosts, err := lk.elements(ctx, scope)
		if err != nil {
			return found{}, err
		}
		if !hosts && len(roots) <= axScopeLimit {
			nodes, err := lk.queryUnder(ctx, roots, roles)
			if err != nil {
				return found{}, err
			}
			best, nr := axMatch(nodes, want, loc.Exact, named)
			near, total = nr, len(best)
			if objs, err = lk.fm.adoptables(ctx, lk.c, lk.world, lk.group, best); err != nil {
				return found{}, err
			}
			done = true
		}
	}
	if !done && named {
		// Asking the whole tree costs a walk of every node (hundreds of
		// milliseconds on a page of 10,000 elements), so first ask it
		// about the elements whose text or attributes could hold the
		// name; axFast answers only when it saw every such element.
		var err error
		if objs, err = lk.fm.axFast(ctx, lk.c, lk.uid, lk.world, lk.group, roles, want, loc.Exact); err != nil {
			return found{}, err
		}
		total = len(objs)
		done = len(objs) > 0
	}
	if !done {
		nodes, err := lk.fm.treeNodes(ctx, lk.c, lk.fr, roles)
		if err != nil {
			return found{}, err
		}
		best, nr := axMatch(nodes, want, loc.Exact, named)
		near, total = nr, len(best)
		if final && scope == "" && !lk.all && len(best) > axAdoptLimit {
			best = best[:axAdoptLimit]
		}
		if objs, err = lk.fm.adoptables(ctx, lk.c, lk.world, lk.group, best); err != nil {
			return found{}, err
		}
	}
	if len(objs) == 0 {
		return found{miss: axNotFound(loc, near)}, nil
	}
	opts := map[string]any{"total": total}
	if scope != "" {
		opts["scope"] = scope
	}
	f, err := lk.adopt(ctx, objs, opts)
	if err == nil && f.N == 0 {
		f.miss = axNotFound(loc, nil)
	}
	return f, err
}

// axScopeLimit is how many scope elements a {role} lookup asks the tree
// about one by one; past it, the whole tree is asked and the runtime
// keeps what is inside the scope.
const axScopeLimit = 64

// adopt hands elements (objects of the world) to the runtime's adoptSet.
func (lk *lookup) adopt(ctx context.Context, objs []runtime.RemoteObjectID, opts map[string]any) (found, error) {
	args := []runtime.CallArgument{{Value: mustJSON(formsHash)}, {Value: mustJSON("adoptSet")}, {Value: mustJSON(opts)}}
	for _, o := range objs {
		args = append(args, runtime.CallArgument{ObjectID: &o})
	}
	call := func(wrapper string) (*runtime.CallFunctionOnReply, error) {
		return lk.c.Runtime.CallFunctionOn(ctx, runtime.NewCallFunctionOnArgs(wrapper).
			SetExecutionContextID(runtime.ExecutionContextID(lk.world)).SetArguments(args).SetReturnByValue(true))
	}
	// The runtime's source goes along only when the document lacks it.
	r, err := call(formsElementsShortWrapper)
	if err == nil && r.ExceptionDetails == nil && string(r.Result.Value) == `{"ok":false,"code":"no_runtime"}` {
		r, err = call(formsElementsWrapper)
	}
	if err != nil {
		if contextGone(err) {
			return found{}, &LocatorError{Code: errcode.StaleRef, Target: lk.desc, Message: "the page navigated while the target was looked up; try again"}
		}
		return found{}, lk.fm.p.fail(err)
	}
	if r.ExceptionDetails != nil {
		return found{}, evalErrorOf(r.ExceptionDetails)
	}
	var res struct {
		OK         bool         `json:"ok"`
		Code       errcode.Code `json:"code"`
		Message    string       `json:"message"`
		Candidates []Candidate  `json:"candidates"`
		found
	}
	if err := json.Unmarshal(r.Result.Value, &res); err != nil {
		return found{}, fmt.Errorf("cdp: form runtime adoptSet: %w", err)
	}
	if !res.OK {
		return found{}, &LocatorError{Code: res.Code, Target: lk.desc, Message: res.Message, Candidates: res.Candidates}
	}
	lk.sets = append(lk.sets, res.Set)
	return res.found, nil
}

// elements returns a set's elements as objects of the world; hosts is
// set, and no element returned, when one of them is a shadow host.
func (lk *lookup) elements(ctx context.Context, set string) (els []runtime.RemoteObjectID, hosts bool, err error) {
	cargs, err := callArgs([]any{formsHash, set})
	if err != nil {
		return nil, false, err
	}
	r, err := lk.c.Runtime.CallFunctionOn(ctx, runtime.NewCallFunctionOnArgs(setElementsFn).
		SetExecutionContextID(runtime.ExecutionContextID(lk.world)).SetArguments(cargs).SetObjectGroup(lk.group))
	if err != nil {
		if contextGone(err) {
			return nil, false, &LocatorError{Code: errcode.StaleRef, Target: lk.desc, Message: "the page navigated while the target was looked up; try again"}
		}
		return nil, false, lk.fm.p.fail(err)
	}
	if r.ExceptionDetails != nil || r.Result.ObjectID == nil {
		return nil, string(r.Result.Value) == `"hosts"`, nil
	}
	els, err = lk.fm.nodeObjects(ctx, lk.c, *r.Result.ObjectID)
	return els, false, err
}

// setElementsFn returns a set of the runtime the document holds, or
// "hosts" when one of them is a shadow host: the tree's query of a host
// leaves out the host's own shadow tree, so such a scope is looked up in
// the whole tree.
const setElementsFn = `function (hash, set) {
  if (!globalThis.__tqForms || globalThis.__tqFormsHash !== hash) return [];
  const els = globalThis.__tqForms.setElements(set);
  return els.some((e) => e.shadowRoot) ? "hosts" : els;
}`

// nodeObjects lists the elements of an array object.
func (fm *forms) nodeObjects(ctx context.Context, c *devtools.Client, arr runtime.RemoteObjectID) ([]runtime.RemoteObjectID, error) {
	props, err := c.Runtime.GetProperties(ctx, runtime.NewGetPropertiesArgs(arr).SetOwnProperties(true))
	if err != nil {
		return nil, fm.p.fail(err)
	}
	var els []runtime.RemoteObjectID
	for _, p := range props.Result {
		if p.Value != nil && p.Value.ObjectID != nil && p.Value.Subtype != nil && *p.Value.Subtype == "node" {
			els = append(els, *p.Value.ObjectID)
		}
	}
	return els, nil
}

// queryUnder asks the tree for the nodes of roles under each root (the
// roots' own nodes included; the runtime keeps what is strictly inside).
func (lk *lookup) queryUnder(ctx context.Context, roots []runtime.RemoteObjectID, roles []string) ([]axNode, error) {
	var qs []*accessibility.QueryAXTreeArgs
	for _, o := range roots {
		if len(roles) > 1 {
			// One query for every role of a subtree.
			qs = append(qs, accessibility.NewQueryAXTreeArgs().SetObjectID(o))
			continue
		}
		for _, role := range withCells(roles) {
			qs = append(qs, accessibility.NewQueryAXTreeArgs().SetObjectID(o).SetRole(role))
		}
	}
	return lk.fm.queryMany(ctx, lk.c, qs, roles)
}

// pick picks the element a lookup's set names: resolve's rule, or with
// any, the readers' (hidden and disabled elements may be read).
func (lk *lookup) pick(ctx context.Context, f found, loc Locator, any bool) (*Element, error) {
	// The pick is the lookup's last step: the runtime drops its sets then,
	// which saves the lookup a call when it ends.
	var el Element
	lk.dropped = true
	if err := lk.fm.formCallIn(ctx, lk.fr, lk.desc, &el, "pickSet", f.Set, loc.nth(), any, lk.sets); err != nil {
		return nil, err
	}
	return &el, nil
}

// matchIn runs loc's lookup in frame fr and gives its set to use.
func (fm *forms) matchIn(ctx context.Context, fr string, loc Locator, all bool, use func(*lookup, found) error) error {
	lk, err := fm.newLookup(ctx, fr, loc)
	if err != nil {
		return err
	}
	defer lk.close(ctx)
	lk.all = lk.all || all
	f, err := lk.match(ctx, loc, "", "", true)
	if err != nil {
		return err
	}
	return use(lk, f)
}

// pickIn resolves loc in frame fr; with any, as the readers do.
func (fm *forms) pickIn(ctx context.Context, fr string, loc Locator, any bool) (*Element, error) {
	var el *Element
	err := fm.matchIn(ctx, fr, loc, false, func(lk *lookup, f found) (err error) {
		if f.N == 0 {
			return f.miss
		}
		el, err = lk.pick(ctx, f, loc, any)
		return err
	})
	return el, err
}

// countIn counts loc's matches in frame fr.
func (fm *forms) countIn(ctx context.Context, fr string, loc Locator) (int, error) {
	n := 0
	err := fm.matchIn(ctx, fr, loc, true, func(_ *lookup, f found) error {
		n = f.N
		return nil
	})
	return n, err
}
