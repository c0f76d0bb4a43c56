package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tranquil/automation/cdp"
)

// DefaultProbeTimeout bounds a [Launcher.Probe] given no timeout.
const DefaultProbeTimeout = 5 * time.Second

// firstPageWait bounds how long a read waits for a target that has not
// committed its first document: an app's window shows its page within a
// second or two of appearing as a target.
const firstPageWait = 3 * time.Second

// notYetAPage reports whether err refused a read of tab because its
// document is not a web page yet while the browser already says the
// target is one: the first commit has not reached the session.
func notYetAPage(ctx context.Context, tab *cdp.Tab, err error) bool {
	var se *cdp.SiteError
	if !errors.As(err, &se) || se.Sites != nil {
		return false
	}
	u, uerr := tab.URL(ctx)
	return uerr == nil && (strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://"))
}

// detachTimeout bounds the detach of a session opened for a read, which
// runs even when the read's own context has ended.
const detachTimeout = 5 * time.Second

// TargetType chooses the kind of target a launch hands off and Probe
// reads. Some Electron apps show their useful UI in a <webview> guest
// rather than the window's page.
type TargetType string

const (
	// TargetPage is the window's page (the default).
	TargetPage TargetType = "page"
	// TargetWebview is an Electron <webview> guest.
	TargetWebview TargetType = "webview"
	// TargetAny is a page, else a webview.
	TargetAny TargetType = "any"
)

// pick returns the first target of type tt, skipping DevTools' own pages;
// prefer, when still listed, wins.
func (tt TargetType) pick(targets []cdp.TargetInfo, prefer string) *cdp.TargetInfo {
	types := []string{"page"}
	switch tt {
	case TargetWebview:
		types = []string{"webview"}
	case TargetAny:
		types = []string{"page", "webview"}
	}
	ok := func(t cdp.TargetInfo) bool {
		return !strings.HasPrefix(t.URL, "devtools://") && slices.Contains(types, t.Type)
	}
	for i := range targets {
		if targets[i].ID == prefer && ok(targets[i]) {
			return &targets[i]
		}
	}
	for _, typ := range types {
		for i := range targets {
			if targets[i].Type == typ && ok(targets[i]) {
				return &targets[i]
			}
		}
	}
	return nil
}

// ProbeResult is one bounded read of a launch's state.
type ProbeResult struct {
	ID string
	// Active is the target the page fields describe: the target the
	// launch handed off while it is still listed, else the first of the
	// launch's TargetType (a page by default).
	Active  *cdp.TargetInfo
	Targets []cdp.TargetInfo
	Title   string
	URL     string
	// Focused describes document.activeElement, such as `input#email`.
	Focused string
	// Text is the start of the page's visible text, at most 500 characters.
	Text string
	// Snapshot lists the elements a person can act on, compactly.
	Snapshot *Snapshot
	// Mismatch, when set, says the launch's handed-off target is no longer
	// the one read (see [Status.Mismatch]).
	Mismatch string
	// Errors are the parts that could not be read; the rest is still
	// filled in.
	Errors []string
}

// Snapshot is a compact list of the visible elements a person can act on
// (links, buttons, fields, and anything with an interactive role), each
// with a short ref, its role and accessible name.
type Snapshot struct {
	// RefCount is how many such elements the page has.
	RefCount int
	// Refs are the first MaxSnapshotRefs of them, in document order.
	Refs []ElementRef
	// Omitted is how many were left out: RefCount - len(Refs).
	Omitted int
}

// MaxSnapshotRefs bounds Snapshot.Refs.
const MaxSnapshotRefs = 50

// ElementRef is one element of a [Snapshot].
type ElementRef struct {
	// Ref is "e1", "e2", … in document order, valid for this snapshot.
	Ref  string
	Role string
	Name string
}

// Locator returns the form-action target that finds the element again:
// its role and exact accessible name.
func (r ElementRef) Locator() cdp.Locator {
	return cdp.Locator{Role: r.Role, Name: r.Name, Exact: true}
}

// probeJS reads the page in one call.
const probeJS = `async (max) => {
	// A document still parsing shows only its first part: wait for the
	// rest (2 s at most, for a page whose parse never ends).
	if (document.readyState === "loading") {
		await new Promise((done) => { document.addEventListener("DOMContentLoaded", done, { once: true }); setTimeout(done, 2000); });
	}
	const a = document.activeElement;
	let focused = "";
	if (a && a !== document.body && a !== document.documentElement) {
		focused = a.tagName.toLowerCase() + (a.id ? "#" + a.id : "") +
			(a.getAttribute("name") ? "[name=" + JSON.stringify(a.getAttribute("name")) + "]" : "");
	}
	const text = document.body ? document.body.innerText : "";
	const roleOf = (el) => {
		const r = el.getAttribute("role");
		if (r) return r.split(/\s+/)[0];
		const t = el.tagName.toLowerCase();
		if (t === "a") return "link";
		if (t === "button" || t === "summary") return "button";
		if (t === "select") return el.multiple || el.size > 1 ? "listbox" : "combobox";
		if (t === "textarea") return "textbox";
		if (t === "input") {
			const ty = (el.getAttribute("type") || "text").toLowerCase();
			return {checkbox: "checkbox", radio: "radio", button: "button", submit: "button", reset: "button",
				image: "button", range: "slider", number: "spinbutton", search: "searchbox"}[ty] || "textbox";
		}
		return el.isContentEditable ? "textbox" : "generic";
	};
	const nameOf = (el) => {
		const by = el.getAttribute("aria-labelledby");
		if (by) {
			const s = by.split(/\s+/).map((id) => document.getElementById(id)?.textContent || "").join(" ").trim();
			if (s) return s;
		}
		const l = el.getAttribute("aria-label") || (el.labels && el.labels[0] && el.labels[0].textContent) ||
			(el.tagName === "INPUT" && ["button", "submit", "reset"].includes(el.type) ? el.value : "") ||
			el.getAttribute("alt") || el.innerText || el.getAttribute("placeholder") || el.getAttribute("title") || "";
		return l.replace(/\s+/g, " ").trim().slice(0, 80);
	};
	const sel = "a[href],button,input:not([type=hidden]),select,textarea,summary,[contenteditable=''],[contenteditable=true]," +
		"[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=switch]," +
		"[role=textbox],[role=combobox],[role=searchbox],[role=slider],[role=treeitem]";
	const refs = [];
	let count = 0;
	for (const el of document.querySelectorAll(sel)) {
		const box = el.getBoundingClientRect();
		if (box.width === 0 && box.height === 0) continue;
		if (getComputedStyle(el).visibility === "hidden") continue;
		count++;
		if (refs.length < max) refs.push({ref: "e" + count, role: roleOf(el), name: nameOf(el)});
	}
	return {title: document.title, url: location.href, focused, text: text.slice(0, 500), refs, count};
}`

// Probe reads a launch's state in one call bounded by timeout (zero means
// DefaultProbeTimeout): the targets, and the title, URL, focused element,
// start of the text and a compact snapshot of element refs of the active
// one. A launch whose process or port is gone is ErrTabDrift; parts that
// fail to read are listed in Errors.
func (l *Launcher) Probe(ctx context.Context, id string, timeout time.Duration) (ProbeResult, error) {
	insts, err := l.lookup([]string{id})
	if err != nil {
		return ProbeResult{}, err
	}
	inst := insts[0]
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := ProbeResult{ID: id}
	if st := l.status(ctx, inst); st.Stale || st.Cleaned || !st.Connected {
		return r, fmt.Errorf("%w: %s: process alive %t, port alive %t, connected %t, cleaned up %t",
			ErrTabDrift, id, st.ProcessAlive, st.PortAlive, st.Connected, st.Cleaned)
	}
	targets, err := inst.browser.Targets(ctx)
	if err != nil {
		return r, fmt.Errorf("%w: targets: %w", ErrUpstream, err)
	}
	r.Targets = targets
	r.Mismatch = inst.mismatch(targets)
	r.Active = inst.TargetType.pick(targets, inst.handedOff())
	if r.Active == nil {
		r.Errors = append(r.Errors, "no "+string(inst.targetType())+" target")
		return r, nil
	}
	page, err := readPage(ctx, inst.browser, r.Active.ID)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		r.Title, r.URL = r.Active.Title, r.Active.URL
		return r, nil
	}
	r.Title, r.URL, r.Focused, r.Text, r.Snapshot = page.Title, page.URL, page.Focused, page.Text, page.snapshot()
	return r, nil
}

// pageState is what probeJS returns.
type pageState struct {
	Title, URL, Focused, Text string
	Refs                      []ElementRef
	Count                     int
}

func (p pageState) snapshot() *Snapshot {
	return &Snapshot{RefCount: p.Count, Refs: p.Refs, Omitted: p.Count - len(p.Refs)}
}

// readPage attaches to a target, reads it with probeJS and detaches.
func readPage(ctx context.Context, b *cdp.Browser, targetID string) (pageState, error) {
	tab, err := b.Attach(ctx, targetID)
	if err != nil {
		return pageState{}, fmt.Errorf("attach: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), detachTimeout)
		defer cancel()
		_ = tab.Detach(dctx)
	}()
	v, err := tab.Evaluate(ctx, probeJS, MaxSnapshotRefs)
	// An app that has just started may not have committed its first page
	// yet: its realm is the initial empty document, which is no web page.
	// That passes in a moment, so the read waits for it, a while at most.
	wait := firstPageWait
	for pause := 25 * time.Millisecond; notYetAPage(ctx, tab, err) && wait > 0; pause = min(2*pause, 200*time.Millisecond) {
		select {
		case <-ctx.Done():
			return pageState{}, fmt.Errorf("read page: %w", err)
		case <-time.After(pause):
		}
		wait -= pause
		v, err = tab.Evaluate(ctx, probeJS, MaxSnapshotRefs)
	}
	if err != nil {
		return pageState{}, fmt.Errorf("read page: %w", err)
	}
	var page pageState
	if err := json.Unmarshal(v, &page); err != nil {
		return pageState{}, fmt.Errorf("read page: %w", err)
	}
	return page, nil
}
