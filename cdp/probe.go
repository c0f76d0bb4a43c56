package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// DefaultProbeTimeout bounds a [Launcher.Probe] given no timeout.
const DefaultProbeTimeout = 5 * time.Second

// ProbeResult is one bounded read of a launch's state.
type ProbeResult struct {
	ID string
	// Active is the target the page fields describe: the first page (or
	// Electron webview) the browser lists.
	Active  *TargetInfo
	Targets []TargetInfo
	Title   string
	URL     string
	// Focused describes document.activeElement, such as `input#email`.
	Focused string
	// Text is the start of the page's visible text, at most 500 characters.
	Text string
	// Errors are the parts that could not be read; the rest is still
	// filled in.
	Errors []string
}

// probeJS reads the page in one call.
const probeJS = `() => {
	const a = document.activeElement;
	let focused = "";
	if (a && a !== document.body && a !== document.documentElement) {
		focused = a.tagName.toLowerCase() + (a.id ? "#" + a.id : "") +
			(a.getAttribute("name") ? "[name=" + JSON.stringify(a.getAttribute("name")) + "]" : "");
	}
	const text = document.body ? document.body.innerText : "";
	return {title: document.title, url: location.href, focused, text: text.slice(0, 500)};
}`

// Probe reads a launch's state in one call bounded by timeout (zero means
// DefaultProbeTimeout): the targets, and the title, URL, focused element
// and start of the text of the active one. A launch whose process or port
// is gone is ErrTabDrift; parts that fail to read are listed in Errors.
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
	targets, err := inst.Browser.Targets(ctx)
	if err != nil {
		return r, fmt.Errorf("%w: targets: %w", ErrUpstream, err)
	}
	r.Targets = targets
	for _, typ := range []string{"page", "webview"} {
		for i := range targets {
			if targets[i].Type == typ && !strings.HasPrefix(targets[i].URL, "devtools://") {
				r.Active = &targets[i]
				break
			}
		}
		if r.Active != nil {
			break
		}
	}
	if r.Active == nil {
		r.Errors = append(r.Errors, "no page target")
		return r, nil
	}
	tab, err := inst.Browser.Attach(ctx, r.Active.ID)
	if err != nil {
		r.Errors = append(r.Errors, "attach: "+err.Error())
		return r, nil
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultCleanupTimeout)
		defer cancel()
		_ = tab.Detach(dctx)
	}()
	v, err := tab.Evaluate(ctx, probeJS)
	if err != nil {
		r.Errors = append(r.Errors, "read page: "+err.Error())
		r.Title, r.URL = r.Active.Title, r.Active.URL
		return r, nil
	}
	var page struct{ Title, URL, Focused, Text string }
	if err := json.Unmarshal(v, &page); err != nil {
		r.Errors = append(r.Errors, "read page: "+err.Error())
		return r, nil
	}
	r.Title, r.URL, r.Focused, r.Text = page.Title, page.URL, page.Focused, page.Text
	return r, nil
}
