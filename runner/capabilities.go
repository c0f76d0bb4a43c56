package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/internal/textcut"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc"
	"github.com/tranquil/automation/rpc/capnweb"

	"github.com/tranquil/automation/errcode"
)

// ErrNoHost reports a granted capability the host did not implement.
var ErrNoHost = errors.New("runner: the host does not provide this capability")

// registerCapabilities exposes the host API to runs. Each capability is
// registered for the runner audience only; the bridge gives a session only
// those its header granted.
func (m *Manager) registerCapabilities(reg *rpc.Registry) {
	for _, c := range hostAPI {
		reg.Register(c.cap, func(_ context.Context, p rpc.Principal) (any, error) {
			r, ok := m.Lookup(p.RunID)
			if !ok {
				return nil, fmt.Errorf("%w: %s", ErrUnknownRun, p.RunID)
			}
			return c.build(r), nil
		}, rpc.AudienceRunner)
	}
}

// hostAPI is every capability's object, built for the calling run. The
// contract test describes the same objects, by reflection, into
// runner/sdk/contract.json.
var hostAPI = []struct {
	cap   permissions.Capability
	build func(*Run) any
}{
	{permissions.CapUI, func(r *Run) any { return &uiAPI{r} }},
	{permissions.CapClipboard, func(r *Run) any { return &clipboardAPI{r} }},
	{permissions.CapWorkspace, func(r *Run) any { return &workspaceAPI{r} }},
	{permissions.CapConfig, func(r *Run) any { return &configAPI{r} }},
	{permissions.CapPaneControls, func(r *Run) any { return &paneAPI{r} }},
	{permissions.CapContext, func(r *Run) any { return &contextAPI{r} }},
	{permissions.CapTabs, func(r *Run) any { return &tabsAPI{r} }},
	{permissions.CapTab, func(r *Run) any { return &tabAPI{r} }},
	{permissions.CapPageJS, func(r *Run) any { return &pageJsAPI{r} }},
	{permissions.CapForms, func(r *Run) any { return &formsAPI{r} }},
}

func noHost(what string) error { return fmt.Errorf("%w: %s", ErrNoHost, what) }

// uiAPI is ui: notify and open.
type uiAPI struct{ r *Run }

// none is the result of a method that returns nothing but an error.
type none = struct{}

// Notify shows message at opts.level. A message past MaxLineBytes is cut,
// and notifications past the rate are dropped (see [ChannelLimits]).
func (a *uiAPI) Notify(ctx context.Context, message string, o notifyOptions) error {
	level := o.Level
	if level == "" {
		level = LevelInfo
	}
	var bad error
	switch level {
	case LevelInfo, LevelSuccess, LevelWarning, LevelError:
	default:
		bad = capnweb.Errorf(capnweb.NameRangeError, nil, "level must be info, success, warning or error, not %q", textcut.Cut(string(level), MaxReportBytes))
	}
	_, err := invoke(ctx, a.r, mUINotify, callReq{refused: bad}, func(c *call) (none, error) {
		return none{}, a.r.m.cfg.Host.UI.Notify(c.ctx, a.r.Info(), textcut.Cut(message, MaxLineBytes), level)
	})
	return err
}

// Open shows a file in the host; opts.split places it.
func (a *uiAPI) Open(ctx context.Context, path string, o OpenOptions) error {
	var bad error
	switch o.Split {
	case "", "left", "right", "up", "down":
		if len(path) > MaxOpenPathBytes {
			bad = limitErr(MaxOpenPathBytes, "ui.open takes a path of at most %d bytes; this one is %d", MaxOpenPathBytes, len(path))
		}
	default:
		bad = capnweb.Errorf(capnweb.NameRangeError, map[string]any{"code": string(errcode.Invalid)}, "ui.open: split must be left, right, up or down, not %q", textcut.Cut(o.Split, MaxReportBytes))
	}
	_, err := invoke(ctx, a.r, mUIOpen, callReq{refused: bad}, func(c *call) (none, error) {
		return none{}, a.r.m.cfg.Host.UI.Open(c.ctx, a.r.Info(), path, o)
	})
	return err
}

// clipboardAPI is clipboard: read and write.
type clipboardAPI struct{ r *Run }

func (a *clipboardAPI) Read(ctx context.Context) (string, error) {
	return invoke(ctx, a.r, mClipboardRead, callReq{}, func(c *call) (string, error) {
		return a.r.m.cfg.Host.Clipboard.Read(c.ctx, a.r.Info())
	})
}

func (a *clipboardAPI) Write(ctx context.Context, text string) error {
	var bad error
	if len(text) > MaxClipboardBytes {
		bad = limitErr(MaxClipboardBytes, "clipboard.write takes at most %d bytes; this text is %d", MaxClipboardBytes, len(text))
	}
	_, err := invoke(ctx, a.r, mClipboardWrite, callReq{refused: bad}, func(c *call) (none, error) {
		return none{}, a.r.m.cfg.Host.Clipboard.Write(c.ctx, a.r.Info(), text)
	})
	return err
}

// workspaceAPI is workspace: projectDir.
type workspaceAPI struct{ r *Run }

func (a *workspaceAPI) ProjectDir(ctx context.Context) (string, error) {
	return invoke(ctx, a.r, mWorkspaceProjectDir, callReq{}, func(c *call) (string, error) {
		return a.r.m.cfg.Host.Workspace.ProjectDir(c.ctx, a.r.Info())
	})
}

// configAPI is config: the script's own persistent state, never the
// host's configuration.
type configAPI struct{ r *Run }

func (a *configAPI) Get(ctx context.Context, key string) (any, error) {
	return invoke(ctx, a.r, mConfigGet, callReq{}, func(*call) (any, error) {
		raw, ok, err := a.r.m.state.get(a.r.key, key)
		if err != nil || !ok {
			return capnweb.Undefined{}, err
		}
		return capnweb.DecodeJSON(raw) // in the order the script stored it
	})
}

// Set stores value under key: data only (code not_serializable
// otherwise), at most MaxConfigValueBytes of JSON, at the config rate
// (code limit_exceeded past either).
func (a *configAPI) Set(ctx context.Context, key string, value capnweb.Value) error {
	raw, bad := dataJSON("config.set", "the value", value)
	if bad == nil && len(raw) > MaxConfigValueBytes {
		bad = limitErr(MaxConfigValueBytes, "config.set takes a value of at most %d bytes of JSON; this one is %d", MaxConfigValueBytes, len(raw))
	}
	_, err := invoke(ctx, a.r, mConfigSet, callReq{refused: bad}, func(c *call) (none, error) {
		return none{}, a.update(c.ctx, key, raw)
	})
	return err
}

// Delete removes key; it counts against the config rate like Set.
func (a *configAPI) Delete(ctx context.Context, key string) error {
	_, err := invoke(ctx, a.r, mConfigDelete, callReq{}, func(c *call) (none, error) {
		return none{}, a.update(c.ctx, key, nil)
	})
	return err
}

func (a *configAPI) update(ctx context.Context, key string, raw json.RawMessage) error {
	err := a.r.m.state.update(ctx, a.r.key, key, raw)
	if errors.Is(err, errStateFull) {
		return limitErr(maxStateFile, "%v", err)
	}
	return err
}

func (a *configAPI) Keys(ctx context.Context) ([]string, error) {
	return invoke(ctx, a.r, mConfigKeys, callReq{}, func(*call) ([]string, error) {
		return a.r.m.state.keys(a.r.key)
	})
}

// paneAPI is paneControls: actions a script offers the host's UI. The host
// keeps a duplicate of each action stub and releases it when the run ends.
// A run has at most MaxPaneControls at once, each named in at most
// MaxPaneNameBytes, and registers at the rate ChannelLimits gives; past
// any of them a registration is refused with a RangeError whose code is
// errcode.LimitExceeded.
type paneAPI struct{ r *Run }

func (a *paneAPI) Register(ctx context.Context, name string, action *capnweb.Stub) error {
	var bad error
	switch {
	case name == "":
		bad = codeErr(errcode.Invalid, capnweb.NameRangeError, "paneControls.register: a control needs a name")
	case len(name) > MaxPaneNameBytes:
		bad = limitErr(MaxPaneNameBytes, "paneControls.register takes a name of at most %d bytes; this one is %d", MaxPaneNameBytes, len(name))
	case action == nil:
		bad = capnweb.Errorf(capnweb.NameTypeError, nil, "register(%q, action): action must be a function", name)
	}
	_, err := invoke(ctx, a.r, mPaneRegister, callReq{refused: bad}, func(*call) (none, error) {
		a.r.mu.Lock()
		old := a.r.panes[name]
		if old == nil && len(a.r.panes) >= MaxPaneControls {
			a.r.mu.Unlock()
			return none{}, limitErr(MaxPaneControls, "a run may have at most %d pane controls; unregister one before registering %q", MaxPaneControls, name)
		}
		a.r.panes[name] = action.Dup()
		a.r.mu.Unlock()
		if old != nil {
			old.Release()
		}
		a.r.scriptEvent("", Event{RunID: a.r.id, Time: time.Now(), Kind: EventPaneControls, Stream: "register", Line: name}, nil)
		return none{}, nil
	})
	return err
}

func (a *paneAPI) Unregister(ctx context.Context, name string) {
	_, _ = invoke(ctx, a.r, mPaneUnregister, callReq{}, func(*call) (none, error) {
		a.r.mu.Lock()
		old := a.r.panes[name]
		delete(a.r.panes, name)
		a.r.mu.Unlock()
		if old != nil {
			old.Release()
			a.r.scriptEvent("", Event{RunID: a.r.id, Time: time.Now(), Kind: EventPaneControls, Stream: "unregister", Line: name}, nil)
		}
		return none{}, nil
	})
}

// contextAPI is context: the run's result and its log. A result is at most
// MaxResultBytes of JSON; a larger one is refused with a RangeError whose
// code is errcode.LimitExceeded, and the earlier result stays.
type contextAPI struct{ r *Run }

func (a *contextAPI) Result(ctx context.Context, value any) error {
	_, err := invoke(ctx, a.r, mContextResult, callReq{}, func(*call) (none, error) {
		raw, err := dataJSON("context.result", "the value", value)
		if err != nil {
			return none{}, err
		}
		if len(raw) > MaxResultBytes {
			return none{}, limitErr(MaxResultBytes, "context.result takes at most %d bytes of JSON; this value is %d", MaxResultBytes, len(raw))
		}
		a.r.mu.Lock()
		a.r.result = raw
		a.r.mu.Unlock()
		return none{}, nil
	})
	return err
}

// Log is a line of the run's log: an event, and a line of the output the
// history keeps. A line past MaxLineBytes is cut, and lines past the rate
// are dropped (see [ChannelLimits]): it is fire-and-forget, so a refusal
// would reach no one.
func (a *contextAPI) Log(ctx context.Context, message string) {
	_, _ = invoke(ctx, a.r, mContextLog, callReq{}, func(*call) (none, error) {
		line := textcut.Cut(message, MaxLineBytes)
		a.r.scriptEvent("", Event{RunID: a.r.id, Time: time.Now(), Kind: EventLog, Line: line}, func() { a.r.writeOutput(line) })
		return none{}, nil
	})
}

// Payload is the trigger's payload, which the bootstrap reads once before
// the script starts; undefined for none.
func (a *contextAPI) Payload(ctx context.Context) (any, error) {
	return invoke(ctx, a.r, mContextPayload, callReq{}, func(*call) (any, error) {
		if len(a.r.req.TriggerPayload) == 0 {
			return capnweb.Undefined{}, nil
		}
		return payloadValue(a.r.req.TriggerPayload)
	})
}

// Step reports a step's phase as a run event. It is a display: a report
// with a phase or kind it does not know is dropped (a malformed one is
// refused as any request is, and the SDK drops refusals).
func (a *contextAPI) Step(ctx context.Context, st StepEvent) {
	switch st.Phase {
	case "start", "retry", "end":
	default:
		return
	}
	switch st.Kind {
	case "do", "sleep", "waitForEvent":
	default:
		return
	}
	st.Name, st.Error = textcut.Cut(st.Name, MaxStepNameBytes), textcut.Cut(st.Error, MaxReportBytes)
	if st.Attempt < 0 || st.Attempt >= 1<<31 {
		st.Attempt = 0
	}
	_, _ = invoke(ctx, a.r, mContextStep, callReq{}, func(*call) (none, error) {
		a.r.scriptEvent("", Event{RunID: a.r.id, Time: time.Now(), Kind: EventStep, Step: &st, Line: st.Name, Fraction: -1}, nil)
		return none{}, nil
	})
}

// Progress reports how far the run is as a run event.
func (a *contextAPI) Progress(ctx context.Context, p ProgressEvent) {
	f := -1.0
	if p.Fraction != nil && *p.Fraction >= 0 && *p.Fraction <= 1 {
		f = *p.Fraction
	}
	_, _ = invoke(ctx, a.r, mContextProgress, callReq{}, func(*call) (none, error) {
		a.r.scriptEvent("", Event{RunID: a.r.id, Time: time.Now(), Kind: EventProgress, Line: textcut.Cut(p.Message, MaxReportBytes), Fraction: f}, nil)
		return none{}, nil
	})
}

// PaneControl is an action a live run registered.
type PaneControl struct {
	RunID  string
	Script string
	Name   string
}

// PaneControls lists the actions live runs have registered, sorted.
func (m *Manager) PaneControls() []PaneControl {
	var out []PaneControl
	for _, r := range m.Runs() {
		r.mu.Lock()
		for name := range r.panes {
			out = append(out, PaneControl{RunID: r.id, Script: r.req.Script, Name: name})
		}
		r.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].RunID != out[j].RunID {
			return out[i].RunID < out[j].RunID
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// InvokePaneControl calls a registered action of a live run, as when the
// user clicks it, and returns what the action returned: data only. A
// value holding a function fails with [ErrNotSerializable], one past
// MaxPaneResultBytes of JSON with [ErrLimitExceeded] (the references in
// either are released), and an action that threw fails with a
// [*capnweb.RemoteError] holding only its name and message, cut at
// MaxLineBytes. The call is cancelled when the run ends, and fails with
// [ErrRunEnded] once it has.
func (m *Manager) InvokePaneControl(ctx context.Context, runID, name string, args ...any) (any, error) {
	r, ok := m.Lookup(runID)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownRun, runID)
	}
	ctx, leave, err := r.enter(ctx, "")
	if err != nil {
		return nil, err
	}
	defer leave()
	r.mu.Lock()
	st := r.panes[name]
	if st != nil {
		st = st.Dup()
	}
	r.mu.Unlock()
	if st == nil {
		return nil, fmt.Errorf("runner: run %s has no action %q", runID, textcut.Cut(name, MaxPaneNameBytes))
	}
	defer st.Release()
	v, err := st.Call(ctx, args...)
	if err != nil {
		return nil, paneErr(name, err)
	}
	if releaseStubs(v) {
		return nil, fmt.Errorf("%w: pane control %q returned a function", ErrNotSerializable, name)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: pane control %q returned a value JSON cannot hold: %w", ErrNotSerializable, name, err)
	}
	if len(raw) > MaxPaneResultBytes {
		return nil, fmt.Errorf("%w: pane control %q returned %d bytes of JSON; at most %d pass", ErrLimitExceeded, name, len(raw), MaxPaneResultBytes)
	}
	return v, nil
}

// paneErr is what the host gets for a pane control that failed: a thrown
// error keeps only its name and message, cut, since its properties or a
// thrown value could hold anything (functions, megabytes).
func paneErr(name string, err error) error {
	var re *capnweb.RemoteError
	if !errors.As(err, &re) {
		return fmt.Errorf("runner: pane control %q: %w", name, err)
	}
	releaseStubs(re)
	msg := re.Message
	if !re.IsError {
		msg = re.Error()
	}
	short := &capnweb.RemoteError{Name: textcut.Cut(re.Name, MaxPaneNameBytes), Message: textcut.Cut(msg, MaxLineBytes), IsError: true}
	return fmt.Errorf("runner: pane control %q failed: %w", name, short)
}

// recordAction appends to the run's action log (method, target, site and
// outcome; never a value).
func (r *Run) recordAction(a history.Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.entry.Actions)
	switch {
	case n < MaxActions-1:
		r.entry.Actions = append(r.entry.Actions, a)
	case n == MaxActions-1:
		r.entry.Actions = append(r.entry.Actions, history.Action{At: a.At, Method: "…", Outcome: "1 more action not kept"})
		r.actionsDropped = 1
	default:
		r.actionsDropped++
		last := &r.entry.Actions[n-1]
		last.At = a.At
		last.Outcome = fmt.Sprintf("%d more actions not kept", r.actionsDropped)
	}
}
