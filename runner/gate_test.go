package runner

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/errcode"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/rpc/capnweb"
)

// Every method of every host object passes the run's gate before it does
// anything: called after the run has settled, each fails with code closed
// and reaches neither the host's interfaces nor the browser. The methods
// come from the objects a session gets (hostAPI), by reflection, so a new
// method is held to it with no new test code. (tabs.active, find, all,
// open, triggered and tab.url, title, close and evaluate skipped the gate.)
// Each is held to its row of the method table too: the gate policy it
// states, and the trace's record of the call under the row's name.
func TestEveryHostMethodPassesTheGate(t *testing.T) {
	// Arguments the generator cannot make well formed: a function stub.
	// What refuses the call is its argument check, before the gate.
	unmade := map[string]bool{"paneControls.Register": true}
	// Arguments that must be one of a few words.
	words := map[string]string{"forms.OnDialog": "accept"}
	host := &recordingHost{}
	e := newMgr(t, func(c *Config) { c.Host = Host{UI: host, Clipboard: host, Workspace: host, Tabs: recordingTabs{host}} })
	r, entry := e.run(t, Request{Script: e.script(t, "done.ts", "// @permissions none\nimport { context } from \"tranquil/automation\";\nawait context.result(1);\n")})
	require.Equal(t, history.StateSucceeded, entry.State, entry.Reason)
	ctxType := reflect.TypeFor[context.Context]()
	errType := reflect.TypeFor[error]()
	checked := 0
	for _, c := range hostAPI {
		obj := reflect.ValueOf(c.build(r))
		for i := range obj.NumMethod() {
			m, mt := obj.Method(i), obj.Type().Method(i)
			ft := m.Type()
			if ft.NumIn() == 0 || ft.In(0) != ctxType || ft.NumOut() == 0 || ft.Out(ft.NumOut()-1) != errType {
				continue // not a method scripts call
			}
			name := fmt.Sprintf("%s.%s", c.cap, mt.Name)
			id, ok := methodByWire[[2]string{string(c.cap), capnweb.JSName(mt.Name)}]
			if !assert.True(t, ok, "%s has no row", name) {
				continue
			}
			row := &methods[id]
			calls := len(r.trace.Trace().Calls)
			checked++
			args := []reflect.Value{reflect.ValueOf(context.Background())}
			for j := 1; j < ft.NumIn(); j++ {
				a := wellFormed(ft.In(j))
				if w, ok := words[name]; ok && ft.In(j) == reflect.TypeFor[capnweb.Value]() {
					a = reflect.ValueOf(capnweb.Value(w))
				}
				args = append(args, a)
			}
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panicked: %v", p)
					}
				}()
				out := m.Call(args)
				err, _ = out[len(out)-1].Interface().(error)
			}()
			recorded := r.trace.Trace().Calls[calls:]
			if row.untraced {
				assert.Empty(t, recorded, "%s is not traced", name)
			} else if assert.Len(t, recorded, 1, "%s is recorded once", name) {
				assert.Equal(t, row.api, recorded[0].Method, "%s is recorded under its row's name", name)
				if row.cap == capTab || row.cap == capPageJS || row.cap == capForms {
					assert.Equal(t, "x", recorded[0].Tab, "%s is recorded on its tab", name)
				}
			}
			switch {
			case unmade[name]:
				assert.Error(t, err, name)
			case row.gate == gateDrop:
				assert.NoError(t, err, "%s is a display: dropped once the run has ended", name)
			case assert.Equal(t, gated, row.gate, "%s returns an error: it is gated", name) &&
				assert.Error(t, err, "%s answered after the run ended", name):
				assert.Equal(t, errcode.Closed, errCodeOf(err), "%s: %v", name, err)
				assert.True(t, errors.Is(err, ErrRunEnded), "%s: %v", name, err)
			}
		}
	}
	host.mu.Lock()
	assert.Empty(t, host.calls, "no call reached the host's interfaces")
	host.mu.Unlock()
	assert.Greater(t, checked, 30, "the host objects' methods were found")
	t.Logf("%d methods checked", checked)
}

// recordingHost is every host interface, recording each call and
// answering it.
type recordingHost struct {
	mu    sync.Mutex
	calls []string
}

func (h *recordingHost) note(what string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, what)
}

func (h *recordingHost) Notify(context.Context, RunInfo, string, Level) error {
	h.note("notify")
	return nil
}

func (h *recordingHost) Open(context.Context, RunInfo, string, OpenOptions) error {
	h.note("ui open")
	return nil
}

func (h *recordingHost) Read(context.Context, RunInfo) (string, error) {
	h.note("clipboard read")
	return "", nil
}

func (h *recordingHost) Write(context.Context, RunInfo, string) error {
	h.note("clipboard write")
	return nil
}

func (h *recordingHost) ProjectDir(context.Context, RunInfo) (string, error) {
	h.note("project dir")
	return "", nil
}

func (h recordingTabs) Active(context.Context, RunInfo) (TabInfo, error) {
	h.note("tabs active")
	return TabInfo{ID: "t"}, nil
}

func (h recordingTabs) Find(context.Context, RunInfo, string) ([]TabInfo, error) {
	h.note("tabs find")
	return nil, nil
}

func (h recordingTabs) All(context.Context, RunInfo) ([]TabInfo, error) {
	h.note("tabs all")
	return nil, nil
}

// recordingTabs is Tabs over a recordingHost's record.
type recordingTabs struct{ *recordingHost }

func (h recordingTabs) Open(context.Context, RunInfo, string, TabOpenOptions) (TabInfo, error) {
	h.note("tabs open")
	return TabInfo{ID: "t"}, nil
}

func (h recordingTabs) Close(context.Context, RunInfo, string) error {
	h.note("tabs close")
	return nil
}

func (h recordingTabs) Focus(context.Context, RunInfo, string) error {
	h.note("tabs focus")
	return nil
}

func (h recordingTabs) Target(context.Context, RunInfo, string) (TabTarget, error) {
	h.note("tabs target")
	return TabTarget{}, errors.New("no browser")
}

// wellFormed is an argument of type t that a host method accepts, so that
// what refuses the call is the gate and not the argument's check.
func wellFormed(t reflect.Type) reflect.Value {
	switch t {
	case reflect.TypeFor[cdp.Locator]():
		return reflect.ValueOf(cdp.Locator{Selector: "a"})
	case reflect.TypeFor[capnweb.Value]():
		return reflect.ValueOf(capnweb.Value("a"))
	}
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Float64:
		v.Set(reflect.ValueOf(1).Convert(t))
	case reflect.Struct:
		// Options: zero is the default, but for what names the call's
		// kind (an expectation's).
		if f := v.FieldByName("Kind"); f.IsValid() && f.Kind() == reflect.String && f.CanSet() {
			f.SetString("visible")
		}
	case reflect.Interface:
		v.Set(reflect.ValueOf("a"))
	}
	return v
}
