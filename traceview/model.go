package traceview

import (
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/tranquil/automation/display"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/trace"
)

// runPage is what the run page shows.
type runPage struct {
	ID    string
	Entry *history.Entry // nil when the Source no longer lists the run
	Trace *trace.Trace
	// Start is the run's start, which the timeline's times count from;
	// Total its length, which the duration bars are shares of.
	Start time.Time
	Total time.Duration
	// Why and FirstError are the entry's, each "" when the other already
	// says it.
	Why, FirstError string
	Result          string // pretty and bounded
	Groups          []group
	Failures        []failure
	Accesses        accessView
}

// failure is one failed call's evidence on the page.
type failure struct {
	N       int // index in Trace.Failures, for the image's address
	Seq     int
	Method  string
	Image   bool
	Outline string
	Note    string
	// Retried marks a failure a retry of its step went past.
	Retried bool
}

func newRunPage(id string, e *history.Entry, t *trace.Trace, sdkRoot string, src *scripts) runPage {
	p := runPage{ID: id, Entry: e, Trace: t, Start: t.Start}
	if p.Start.IsZero() && e != nil {
		p.Start = e.Start
	}
	p.Total = runLength(t, p.Start)
	if e != nil {
		if e.Duration > p.Total {
			p.Total = e.Duration
		}
		p.Why, p.FirstError = e.Reason, e.FirstError
		if sameSentence(p.Why, p.FirstError) {
			// The longer says more; the shorter is within it.
			if len(p.FirstError) > len(p.Why) {
				p.Why = p.FirstError
			}
			p.FirstError = ""
		}
		p.Result = prettyJSON(e.Result)
	}
	p.Groups = timeline(t, p.Start, p.Total, tabNames(t))
	for _, g := range p.Groups {
		for i := range g.Rows {
			g.Rows[i].Source = src.line(g.Rows[i].file, g.Rows[i].line)
		}
	}
	p.Failures = failures(t)
	for _, g := range p.Groups {
		for _, r := range g.Rows {
			if r.Shot >= 0 && r.Shot < len(p.Failures) {
				p.Failures[r.Shot].Retried = r.Class == "retried"
			}
		}
	}
	p.Accesses = fold(t.Accesses, sdkRoot)
	return p
}

// runLength is how long the trace shows the run lasting: to the end of
// the last thing it holds.
func runLength(t *trace.Trace, start time.Time) time.Duration {
	end := start
	later := func(at time.Time) {
		if at.After(end) {
			end = at
		}
	}
	for _, c := range t.Calls {
		later(c.Start.Add(c.Duration))
	}
	for _, n := range t.Navigations {
		later(n.At)
	}
	for _, l := range t.Console {
		later(l.At)
	}
	for _, d := range t.Dialogs {
		later(d.At)
	}
	for _, s := range t.Steps {
		later(s.At)
	}
	return end.Sub(start)
}

func failures(t *trace.Trace) []failure {
	method := map[int]string{}
	for _, c := range t.Calls {
		method[c.Seq] = c.Method
	}
	var out []failure
	for i, f := range t.Failures {
		out = append(out, failure{N: i, Seq: f.Seq, Method: method[f.Seq], Image: f.Image != nil, Outline: f.Outline, Note: f.Note})
	}
	return out
}

// tabName is how the timeline names a tab: by its first page's title
// or host, with its id kept for a hover.
type tabName struct{ Name, ID string }

// maxTabName bounds a tab's name in the timeline; the hover has it all.
const maxTabName = 24

// tabNames names each tab by the title of its first page when the trace
// has it, else by the host of the first address the trace saw it at (its
// first navigation, or a call's page), numbered when two tabs share a
// name.
func tabNames(t *trace.Trace) map[string]tabName {
	titles := map[string]string{}
	for _, tt := range t.Tabs {
		if title := strings.TrimSpace(display.Line(tt.Title)); title != "" {
			titles[tt.Tab] = cutEnd(title, maxTabName)
		}
	}
	type first struct {
		at   time.Time
		addr string
	}
	firsts := map[string]first{}
	var order []string
	see := func(tab, addr string, at time.Time) {
		if tab == "" || addr == "" {
			return
		}
		f, ok := firsts[tab]
		if !ok {
			order = append(order, tab)
		}
		if !ok || at.Before(f.at) {
			firsts[tab] = first{at, addr}
		}
	}
	for _, n := range t.Navigations {
		see(n.Tab, n.URL, n.At)
	}
	for _, c := range t.Calls {
		see(c.Tab, c.Page, c.Start)
	}
	for _, tt := range t.Tabs {
		see(tt.Tab, "-", t.Start.Add(1<<62)) // a tab known by its title only
	}
	names := map[string]tabName{}
	used := map[string]int{}
	for _, id := range order {
		name, ok := titles[id]
		if !ok {
			name = hostOf(firsts[id].addr)
		}
		used[name]++
		if n := used[name]; n > 1 {
			name += " (" + strconv.Itoa(n) + ")"
		}
		names[id] = tabName{Name: name, ID: id}
	}
	// Tabs seen only in console lines and dialogs keep their id.
	for _, id := range tabsOf(t) {
		if _, ok := names[id]; !ok && id != "" {
			names[id] = tabName{Name: cutEnd(id, maxTabName), ID: id}
		}
	}
	return names
}

func tabsOf(t *trace.Trace) []string {
	var ids []string
	for _, l := range t.Console {
		ids = append(ids, l.Tab)
	}
	for _, d := range t.Dialogs {
		ids = append(ids, d.Tab)
	}
	return ids
}

// hostOf is an address's host, or the address itself cut short when it
// has none (about:blank, data:).
func hostOf(addr string) string {
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		return cutEnd(u.Host, maxTabName)
	}
	return cutEnd(addr, maxTabName)
}

// accessView is the run's accesses outside the browser: the SDK's own,
// folded into one line, and the script's, each listed.
type accessView struct {
	SDK         trace.Access // Count 0 when none was recognised
	SDKKinds    string       // e.g. "env, net, read"
	Script      []trace.Access
	Recognised  int // how many entries were folded
	HasAnything bool
}

// fold sets apart what the SDK itself asks deno for on every run: its
// TRANQUIL_* settings, reads of its own files under the data
// directory's sdk folder, and its connection to the host's bridge on a
// loopback address. The trace does not record the bridge's address, so
// the connection is recognised by when it comes: the SDK dials the
// bridge after reading its settings and before it loads the script, so
// it is the first loopback connection while everything before it was
// the SDK's own. A denied check is never folded: it is news.
func fold(as []trace.Access, sdkRoot string) accessView {
	v := accessView{HasAnything: len(as) > 0}
	onlySDK, settings, bridged := true, false, false
	kinds := map[string]bool{}
	for _, a := range as {
		own := false
		if a.Allowed {
			switch a.Kind {
			case "env":
				own = strings.HasPrefix(a.Value, "TRANQUIL_")
				settings = settings || own
			case "read", "import":
				own = sdkFile(a.Value, sdkRoot)
			case "net":
				own = onlySDK && settings && !bridged && loopbackHost(a.Value)
				bridged = bridged || own
			}
		}
		if !own {
			onlySDK = false
			v.Script = append(v.Script, a)
			continue
		}
		v.Recognised++
		kinds[a.Kind] = true
		if v.SDK.Count == 0 || a.First.Before(v.SDK.First) {
			v.SDK.First = a.First
		}
		if a.Last.After(v.SDK.Last) {
			v.SDK.Last = a.Last
		}
		v.SDK.Count += a.Count
	}
	var ks []string
	for _, k := range []string{"env", "net", "read", "import"} {
		if kinds[k] {
			ks = append(ks, k)
		}
	}
	v.SDKKinds = strings.Join(ks, ", ")
	v.SDK.Allowed = true
	return v
}

// sdkFile reports whether p is one of the SDK's files: under sdkRoot
// when the host said where that is, else within a folder named
// sdk-<hash> or "current" inside a folder named sdk, as the runner lays
// it out.
func sdkFile(p, sdkRoot string) bool {
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if sdkRoot != "" {
		root := strings.TrimSuffix(strings.ReplaceAll(sdkRoot, `\`, "/"), "/") + "/"
		return strings.HasPrefix(p, root)
	}
	parts := strings.Split(p, "/")
	for i := 0; i+1 < len(parts)-1; i++ {
		if parts[i] == "sdk" && (parts[i+1] == "current" || sdkBuild(parts[i+1])) {
			return true
		}
	}
	return false
}

// sdkBuild reports whether name is a build's folder: "sdk-" and 16 hex
// digits.
func sdkBuild(name string) bool {
	h, ok := strings.CutPrefix(name, "sdk-")
	if !ok || len(h) != 16 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
